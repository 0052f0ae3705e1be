"""Harbor task folders (Terminal-Bench 2's format), one per task:

```
<task id>/
  task.toml              schema_version, [metadata] (base, fix, repo, grading...), timeouts
  instruction.md         the task prompt
  environment/Dockerfile FROM <image>, the repository's files at `base` in /app, setupCommand
  environment/repo/      those files, byte for byte
  tests/test.sh          lays tests/files/ over the checkout, deletes what tests/deleted lists,
                         runs testCommand, writes 1 or 0 to Harbor's reward file
  tests/grading/         per-test tasks: the lists (tests.json) and their grader (grade.py)
  solution/solve.sh      the same with the fix's source changes (solution/files/, solution/deleted)
```

Files travel as files (binary fixtures and non-UTF-8 text included), never as patches, so the
scripts need neither git nor a clean checkout. The folder is built beside `--out` and renamed
into place: an interrupted export leaves no half-written folder.

How test.sh rewards (`grading` in task.toml's metadata):

- `per-test`, a task mined with per-test verdicts whose lists are all there (`failToPass` and the
  PASS_TO_PASS names of `<id>.tests.json`): by test names, as `gitgauge run` grades it and as the
  SWE-bench export does. test.sh points the suite at a JUnit XML report outside the checkout, as
  gitgauge's runs do, and `tests/grading/grade.py` (`harbor_grade`, with copies of gitgauge's own
  JUnit and TAP readers: python3 in the image, nothing else) gives 1 when every FAIL_TO_PASS test
  passed and every PASS_TO_PASS test passed. Tests failing at the fix too are in neither list.
- `exit-code`, any other task (proved by exit codes, or a per-test task whose PASS_TO_PASS names
  are lost): testCommand's exit code. A task whose tests fail at the fix too (`failingBoth`)
  would give the reference solution 0 there: it is skipped, with a warning.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

from gitgauge.core.config import load_repo_config
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.worktree import lay_files
from gitgauge.exporting.formats import Exported, ExportFormat, ExportOptions, register
from gitgauge.exporting.swebench import (
    ExportError,
    Warn,
    few_names,
    fix_changes,
    repository_name,
    tree_paths,
)

DEFAULT_IMAGE = "python:3.12-slim"
REWARD_FILE = "/logs/verifier/reward.txt"
"""Where Harbor's verifier reads the reward (`EnvironmentPaths.reward_text_path`)."""
WORKDIR = "/app"
Grading = Literal["per-test", "exit-code"]
GRADING_DIR = "grading"
"""`tests/grading/`: a per-test task's lists and the program that judges a run by them."""
_GRADER_MODULES = ("junit.py", "tap.py")
"""gitgauge's report readers (`gitgauge/core/`), copied beside the grader: it names tests as
they do, and imports nothing else of gitgauge."""

_LAY_FILES = """here="$(cd "$(dirname "$0")" && pwd)"
# Files exactly as they are at the fix (added or changed), then the ones the fix deleted.
if [ -d "$here/files" ]; then cp -a "$here/files/." .; fi
while IFS= read -r -d '' path; do rm -rf -- "$path"; done < "$here/deleted"
"""


_PER_TEST_PREAMBLE = """grading="$here/grading"
if ! command -v python3 >/dev/null 2>&1; then
  echo "test.sh: no python3 in the image to read the per-test report (grading/grade.py)" >&2
  echo 0 > "$reward_file"
  exit 0
fi
grade() { PYTHONPATH="$grading${PYTHONPATH:+:$PYTHONPATH}" python3 "$grading/grade.py" "$@"; }
reports="$(mktemp -d)"
trap 'rm -rf "$reports"' EXIT
grade clean "$grading/tests.json" .
"""
_PER_TEST_JUDGE = """if grade judge "$grading/tests.json" . "$reports"; then
  echo 1 > "$reward_file"
else
  echo 0 > "$reward_file"
fi
if [ -f "$reports/report.xml" ]; then
  cp "$reports/report.xml" "$(dirname "$reward_file")/test-report.xml" 2>/dev/null || true
fi
"""


def write_harbor_tasks(
    tasks: Sequence[Task],
    repo: Repository,
    config: RepoConfig,
    *,
    out: Path,
    image: str = DEFAULT_IMAGE,
    force: bool = False,
    warn: Warn,
) -> list[Path]:
    """Write one folder per task under `out` (replaced as a whole with `force`); tasks an
    exit-code reward cannot judge are skipped with a warning (`harbor_exportable`)."""
    tasks = harbor_exportable(tasks, repo, warn=warn)
    out = out.absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".gitgauge-export-", dir=out.parent))
    try:
        folders = [_write_task(task, repo, config, staging / task.id, image) for task in tasks]
        if force and (out.exists() or out.is_symlink()):
            if out.is_dir() and not out.is_symlink():
                shutil.rmtree(out)
            else:
                out.unlink()
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return [out / folder.name for folder in folders]


def grading(task: Task) -> Grading:
    """`per-test` when the task has both per-test lists, else `exit-code`."""
    has_lists = task.failToPass is not None and task.passToPassTests is not None
    return "per-test" if has_lists else "exit-code"


def harbor_exportable(tasks: Sequence[Task], repo: Repository, *, warn: Warn) -> list[Task]:
    """The tasks whose reference solution test.sh rewards with 1. Per-test tasks all are (tests
    failing at the fix too are in neither list); of the others, not those with tests that fail
    at the fix too (the suite's exit code is not 0 there). Flaky tests only get a warning."""
    kept: list[Task] = []
    for task in tasks:
        if grading(task) == "per-test":
            kept.append(task)
            continue
        if task.failToPass is not None:
            path = Store(repo.root).task_tests_path(task.id)
            shown = path.relative_to(repo.root) if path.is_relative_to(repo.root) else path
            state = "cannot be read" if path.exists() else "is missing"
            warn(
                f"task {task.id}: {shown}, its PASS_TO_PASS test names, {state}: test.sh "
                f"rewards testCommand's exit code (delete .gitgauge/tasks/{task.id}.yaml and run "
                f"`gitgauge mine --force` to grade it by test names)"
            )
        if task.failingBoth:
            warn(
                f"skipping task {task.id}: tests fail at the fix too "
                f"({few_names(task.failingBoth)}), so test.sh, which rewards testCommand's exit "
                f"code, would give the reference solution 0 (--format swebench grades by test "
                f"names and exports it)"
            )
            continue
        if task.flaky:
            warn(
                f"task {task.id}: flaky tests ({few_names(task.flaky)}) may change test.sh's "
                f"reward from one run to the next"
            )
        kept.append(task)
    if not kept:
        raise ExportError("no task could be exported (see the warnings above)")
    return kept


def _write_task(task: Task, repo: Repository, config: RepoConfig, folder: Path, image: str) -> Path:
    changes = fix_changes(repo, task)
    folder.mkdir(parents=True)
    (folder / "instruction.md").write_text(task.prompt.rstrip("\n") + "\n", encoding="utf-8")
    (folder / "task.toml").write_text(_task_toml(task, repo, config), encoding="utf-8")

    environment = folder / "environment"
    lay_files(repo, task.base, tree_paths(repo, task.base), environment / "repo")
    (environment / "repo").mkdir(parents=True, exist_ok=True)
    (environment / "Dockerfile").write_text(_dockerfile(task, image), encoding="utf-8")

    _write_overlay(repo, task, changes.tests, folder / "tests")
    test_command = task.testCommand or config.testCommand
    if grading(task) == "per-test":
        _write_grading(task, config, folder / "tests" / GRADING_DIR)
        verdict = _per_test_verdict(test_command)
    else:
        verdict = _exit_code_verdict(test_command)
    _script(
        folder / "tests" / "test.sh",
        "# Harbor verifier: the fix's tests over the agent's work, then testCommand.\n"
        + _LAY_FILES
        + f'reward_file="${{GITGAUGE_REWARD_FILE:-{REWARD_FILE}}}"\n'
        + 'mkdir -p "$(dirname "$reward_file")"\n'
        + verdict,
    )
    _write_overlay(repo, task, changes.source, folder / "solution")
    _script(
        folder / "solution" / "solve.sh",
        "# Harbor oracle: the fix's source changes (what `gitgauge run` calls gold).\n"
        + _LAY_FILES,
    )
    return folder


def _exit_code_verdict(test_command: str) -> str:
    return (
        f"if sh -c {shlex.quote(test_command)}; then\n"
        '  echo 1 > "$reward_file"\nelse\n  echo 0 > "$reward_file"\nfi\n'
    )


def _per_test_verdict(test_command: str) -> str:
    """testCommand pointed at a JUnit XML report outside the checkout (pytest through
    `PYTEST_ADDOPTS`, other runners through `$GITGAUGE_JUNIT_XML`), as `core.suite` points it,
    its stdout kept for TAP; then grade.py judges the names (`harbor_grade`)."""
    return (
        _PER_TEST_PREAMBLE
        + 'GITGAUGE_JUNIT_XML="$reports/report.xml" '
        + "PYTEST_ADDOPTS=\"${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }--junitxml='$reports/report.xml' "
        + '--continue-on-collection-errors" \\\n'
        + f'  sh -c {shlex.quote(test_command)} </dev/null | tee "$reports/stdout"\n'
        + _PER_TEST_JUDGE
    )


def _write_grading(task: Task, config: RepoConfig, grading_dir: Path) -> None:
    """`tests.json` (the lists as mined, and `tests.junit`), grade.py and the readers it uses."""
    assert task.failToPass is not None and task.passToPassTests is not None
    lists = {
        "failToPass": task.failToPass,
        "passToPass": task.passToPassTests,
        "junit": config.tests.junit,
    }
    package = grading_dir / "gitgauge"
    (package / "core").mkdir(parents=True)
    (grading_dir / "tests.json").write_text(
        json.dumps(lists, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    grader = resources.files("gitgauge.exporting").joinpath("harbor_grade.py")
    (grading_dir / "grade.py").write_bytes(grader.read_bytes())
    for init in (package / "__init__.py", package / "core" / "__init__.py"):
        init.write_text('"""gitgauge\'s report readers, copied for grade.py."""\n', "utf-8")
    for name in _GRADER_MODULES:
        source = resources.files("gitgauge.core").joinpath(name)
        (package / "core" / name).write_bytes(source.read_bytes())


def _write_overlay(repo: Repository, task: Task, paths: Sequence[str], folder: Path) -> None:
    """`folder/files/`: `paths` as they are at the fix; `folder/deleted`: those it deleted."""
    present = [path for path in paths if repo.read_blob(task.fix, path) is not None]
    deleted = [path for path in paths if path not in present]
    lay_files(repo, task.fix, present, folder / "files")
    (folder / "deleted").write_bytes(b"".join(path.encode() + b"\0" for path in deleted))


def _script(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\nset -u\n" + body, encoding="utf-8")
    path.chmod(0o755)


def _dockerfile(task: Task, image: str) -> str:
    lines = [
        f"FROM {image}",
        f"WORKDIR {WORKDIR}",
        f"# The repository's files at {task.base} (the task's base); no git history.",
        f"COPY repo/ {WORKDIR}/",
    ]
    if task.setupCommand:
        lines.append(f"RUN {task.setupCommand}")
    return "\n".join(lines) + "\n"


def _task_toml(task: Task, repo: Repository, config: RepoConfig) -> str:
    def quoted(value: str) -> str:
        # A JSON string is a valid TOML basic string (same escapes).
        return json.dumps(value, ensure_ascii=False)

    timeouts = config.timeouts
    metadata = {
        "gitgauge_task": task.id,
        "repo": repository_name(repo),
        "base": task.base,
        "fix": task.fix,
        "subject": task.subject,
        "test_command": task.testCommand or config.testCommand,
        "grading": grading(task),
    }
    lines = ['schema_version = "1.4"', 'source = "gitgauge"', "", "[metadata]"]
    lines += [f"{key} = {quoted(value)}" for key, value in metadata.items()]
    lines += [
        "",
        "[verifier]",
        f"timeout_sec = {timeouts.test / 1000:.1f}",
        "",
        "[agent]",
        f"timeout_sec = {timeouts.adapter / 1000:.1f}",
        "",
        "[environment]",
        f"build_timeout_sec = {max(600.0, timeouts.setup / 1000 + 300):.1f}",
        f'workdir = "{WORKDIR}"',
    ]
    return "\n".join(lines) + "\n"


@register
class HarborFormat(ExportFormat):
    """Harbor task folders (Terminal-Bench 2), one per task, under `--out`."""

    name = "harbor"
    needs_out = True
    takes_image = True

    def export(self, tasks: Sequence[Task], repo: Repository, options: ExportOptions) -> Exported:
        out = options.out
        assert out is not None
        config = load_repo_config(repo.root)
        folders = write_harbor_tasks(
            tasks,
            repo,
            config,
            out=out,
            image=options.image or DEFAULT_IMAGE,
            force=options.force,
            warn=options.warn,
        )
        return Exported(said=f"wrote {len(folders)} Harbor tasks to {out}")
