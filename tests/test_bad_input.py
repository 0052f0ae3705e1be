"""The README's "Bad input" table, one test per row, through the real CLI.

Each test asserts the exit code, the one-line error (naming the file, key, commit or flag), and
that nothing is left behind: no worktree registered in the repository, nothing in gitgauge's
private temporary directory, the user's checkout unchanged.

One small sample project is built per module: `check.py` runs every `test_*` function of every
`tests/**/test_*.py` (no pytest, so each run takes a few milliseconds). Two fixes touch unusual
test files: one at a deep path full of spaces, quotes and non-ASCII characters, one with binary
fixtures containing NUL bytes; HEAD is a fix, for the shallow-clone row.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import GITGAUGE, run_gitgauge
from helpers.environment import isolated
from helpers.repos import GitRepo, new_repo, runner_source

from gitgauge.core.records import RunResult

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

CHECK_PY = runner_source(
    '"""Every test_* function of tests/**/test_*.py, with src/ importable; exit 1 on any."""\n'
    "import runpy\nimport sys\nimport traceback\nfrom pathlib import Path\n\n"
    'sys.path.insert(0, "src")\n',
    recursive=True,
)
TEST_COMMAND = f"{sys.executable} check.py"

ODD_DIR = 'tests/odd name/it\'s "quoted"/ünïcödé 수정/d1/d2/d3/d4/d5/d6'
ODD_TEST = f"{ODD_DIR}/test_mul ü.py"
ODD_DATA = f"{ODD_DIR}/cases 'x' \"y\".txt"
ODD_TEST_TEXT = f"""\
import pathlib

from mul import mul


def test_mul():
    # Laid at the wrong path or under another name, this file would not find its data.
    assert __file__ == {ODD_TEST!r}
    here = pathlib.Path(__file__).parent
    for line in (here / {ODD_DATA.rsplit("/", 1)[1]!r}).read_text(encoding="utf-8").split():
        a, b, product = map(int, line.split(","))
        assert mul(a, b) == product
"""

# NUL bytes, CR LF, every byte value: any text-mode or newline-converting copy changes them.
DATA_BIN = bytes(range(256)) + b"\r\n\x00\n\r\x00\x00"
PIXEL_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x00\x00\x00\x00"
    b"IEND\xaeB`\x82"
)
BLOB_TEST_TEXT = f"""\
from blob import header, read_all


def test_header_and_bytes():
    assert header("tests/fixtures/pixel.png") == {PIXEL_PNG[:8]!r}
    assert read_all("tests/fixtures/pixel.png") == {PIXEL_PNG!r}
    assert read_all("tests/fixtures/data.bin") == {DATA_BIN!r}
"""
BLOB_FIX_TEST_FILES = ["tests/fixtures/data.bin", "tests/fixtures/pixel.png", "tests/test_blob.py"]

NOOP = "name: noop\nadapter: noop\n"
GOLD = "name: gold\nadapter: gold\n"


# -- helpers ---------------------------------------------------------------------------------------


def write_yaml(repo: GitRepo, text: str | None = None) -> None:
    """gitgauge.yaml, untracked, as `gitgauge init` leaves it (default: the working config)."""
    if text is None:
        text = f"testCommand: {json.dumps(TEST_COMMAND)}\n"
    (repo.root / "gitgauge.yaml").write_text(text, encoding="utf-8")


def agent_configs(repo: GitRepo, **configs: str) -> list[str]:
    """Write agent config files outside the repository; return `-c path` arguments."""
    folder = repo.root.parent / "agents"
    folder.mkdir(exist_ok=True)
    args: list[str] = []
    for name, text in configs.items():
        path = folder / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        args += ["-c", str(path)]
    return args


def one_error(result: subprocess.CompletedProcess[str], *names: str) -> str:
    """The single `gitgauge: error:` line that is all of stderr, naming each of `names`."""
    # The sample suites report no per-test results: the exit-code fallback is said once. A test
    # that runs under another testCommand than the tasks were mined with is warned about that.
    lines = [
        line
        for line in result.stderr.strip().splitlines()
        if not line.startswith("warning: testCommand wrote no JUnit XML report")
        and not (line.startswith("warning: ") and "were mined with testCommand" in line)
    ]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("gitgauge: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def worktrees(repo: GitRepo) -> list[str]:
    listing = repo.git("worktree", "list", "--porcelain").splitlines()
    return [line for line in listing if line.startswith("worktree ")]


def assert_untouched(repo: GitRepo, before: dict[str, str]) -> None:
    assert repo.snapshot() == before
    assert worktrees(repo) == [f"worktree {repo.root}"]


def copy_repo(source: Path, target: Path) -> GitRepo:
    shutil.copytree(source, target, symlinks=True)
    return GitRepo(target)


def task_files(repo: GitRepo) -> dict[str, dict[str, Any]]:
    """Every task file that gitgauge wrote, keyed by the fix's subject."""
    tasks: dict[str, dict[str, Any]] = {}
    for path in sorted((repo.root / ".gitgauge" / "tasks").glob("*.yaml")):
        if path.name.startswith("broken-"):  # planted by a test
            continue
        task = yaml.safe_load(path.read_text(encoding="utf-8"))
        tasks[task["subject"]] = task
    return tasks


def results(repo: GitRepo) -> dict[tuple[str, str], RunResult]:
    """Every result file of every run, validated, keyed by (config, task subject)."""
    subjects = {task["id"]: subject for subject, task in task_files(repo).items()}
    found: dict[tuple[str, str], RunResult] = {}
    for path in sorted((repo.root / ".gitgauge" / "runs").glob("*/results/*/*.json")):
        result = RunResult.model_validate_json(path.read_text(encoding="utf-8"))
        found[(result.config, subjects[result.task])] = result
    return found


def stray_files(repo: GitRepo) -> list[str]:
    """Half-written files: atomic writes leave none, whatever failed."""
    return sorted(p.name for p in (repo.root / ".gitgauge").rglob("*") if p.name.endswith(".tmp"))


# -- the sample project, built once ----------------------------------------------------------------


def build_sample(repo: GitRepo) -> None:
    repo.commit(
        "Initial project",
        files={
            "check.py": CHECK_PY,
            "src/calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5\n",
        },
    )
    repo.commit("Add mul helper", files={"src/mul.py": "def mul(a, b):\n    return a * abs(b)\n"})
    repo.commit(
        "Fix mul for negative numbers",
        files={
            "src/mul.py": "def mul(a, b):\n    return a * b\n",
            ODD_TEST: ODD_TEST_TEXT,
            ODD_DATA: "2,3,6\n2,-3,-6\n",
        },
    )
    repo.commit(
        "Add blob reader",
        files={
            "src/blob.py": "def header(path):\n    with open(path, encoding='latin-1') as f:\n"
            "        return f.read(8).encode('latin-1')\n\n\n"
            "def read_all(path):\n    with open(path, encoding='latin-1') as f:\n"
            "        return f.read().encode('latin-1')\n"
        },
    )
    # Text mode turns \r\n into \n: the fix reads bytes.
    repo.commit(
        "Fix blob reader mangling line endings",
        files={
            "src/blob.py": "def header(path):\n    with open(path, 'rb') as f:\n"
            "        return f.read(8)\n\n\n"
            "def read_all(path):\n    with open(path, 'rb') as f:\n        return f.read()\n",
            "tests/fixtures/data.bin": DATA_BIN,
            "tests/fixtures/pixel.png": PIXEL_PNG,
            "tests/test_blob.py": BLOB_TEST_TEXT,
        },
    )


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample repository, never mined and never changed: tests copy or clone it."""
    base = tmp_path_factory.mktemp("bad-input-sample")
    with isolated(base):
        repo = new_repo(base / "sample")
        build_sample(repo)
    return repo.root


@dataclass(frozen=True)
class Mined:
    root: Path
    mine: subprocess.CompletedProcess[str]
    run: subprocess.CompletedProcess[str]
    before: dict[str, str]
    after: dict[str, str]
    left_in_tmp: list[str]


@pytest.fixture(scope="module")
def mined(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Mined:
    """A copy of the sample mined and run with gold and noop once, by the real CLI."""
    base = tmp_path_factory.mktemp("bad-input-mined")
    private_tmp = base / "tmp"
    private_tmp.mkdir()
    with isolated(base):
        repo = copy_repo(sample, base / "repo")
        write_yaml(repo)
        before = repo.snapshot()
        env = dict(os.environ, TMPDIR=str(private_tmp))
        mine = run_gitgauge("mine", cwd=repo.root, env=env)
        run = run_gitgauge(
            "run", *agent_configs(repo, gold=GOLD, noop=NOOP), cwd=repo.root, env=env
        )
        after = repo.snapshot()
    return Mined(repo.root, mine, run, before, after, sorted(p.name for p in private_tmp.iterdir()))


@pytest.fixture
def mined_copy(mined: Mined, tmp_path: Path) -> GitRepo:
    """A mined repository of this test's own, without the runs of the module fixture."""
    assert mined.mine.returncode == 0, mined.mine.stderr
    repo = copy_repo(mined.root, tmp_path / "repo")
    shutil.rmtree(repo.root / ".gitgauge" / "runs", ignore_errors=True)
    return repo


@pytest.fixture
def fresh(sample: Path, tmp_path: Path) -> GitRepo:
    """An unmined copy of the sample, with a working gitgauge.yaml."""
    repo = copy_repo(sample, tmp_path / "repo")
    write_yaml(repo)
    return repo


# -- rows ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["mine"], ["run", "-c", "noop.yaml"], ["report"], ["rewrite"]], ids=" ".join
)
def test_not_a_git_repository(tmp_path: Path, no_stray_worktrees: None, command: list[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "gitgauge.yaml").write_text(f"testCommand: {TEST_COMMAND}\n", encoding="utf-8")
    (plain / "noop.yaml").write_text(NOOP, encoding="utf-8")

    result = run_gitgauge(*command, cwd=plain)

    assert result.returncode == 1
    one_error(result, str(plain), "not inside a git repository")
    assert sorted(p.name for p in plain.iterdir()) == ["gitgauge.yaml", "noop.yaml"]


def test_git_not_on_path(fresh: GitRepo, tmp_path: Path, no_stray_worktrees: None) -> None:
    no_git = tmp_path / "no-git"
    no_git.mkdir()
    before = fresh.snapshot()

    result = run_gitgauge("mine", cwd=fresh.root, env=dict(os.environ, PATH=str(no_git)))

    assert result.returncode == 1
    one_error(result, "git was not found on PATH")
    assert not (fresh.root / ".gitgauge").exists()
    assert_untouched(fresh, before)


def test_empty_repository(git_repo: GitRepo, no_stray_worktrees: None) -> None:
    write_yaml(git_repo)
    before = git_repo.snapshot()

    mine = run_gitgauge("mine", cwd=git_repo.root)
    run = run_gitgauge("run", *agent_configs(git_repo, noop=NOOP), cwd=git_repo.root)

    assert mine.returncode == 1
    one_error(mine, str(git_repo.root), "no commits")
    assert run.returncode == 1
    one_error(run, "no tasks", "gitgauge mine")
    assert_untouched(git_repo, before)


def test_shallow_clone_without_the_fixs_parent(
    sample: Path, tmp_path: Path, no_stray_worktrees: None
) -> None:
    clone = GitRepo(tmp_path / "clone")
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", sample.as_uri(), str(clone.root)],
        check=True,
        capture_output=True,
    )
    write_yaml(clone)
    before = clone.snapshot()

    shallow = run_gitgauge("mine", cwd=clone.root)

    assert shallow.returncode == 0, shallow.stderr
    assert "Traceback" not in shallow.stderr
    out = shallow.stdout
    # The boundary commit looks like a root commit, but it is a candidate, rejected for its reason.
    assert "not considered" not in out
    assert "candidates:        1" in out
    assert "rejected  " in out and "Fix blob reader" in out
    assert "  no parent commit available: 1" in out
    assert task_files(clone) == {}
    assert_untouched(clone, before)

    # The verdict is about the clone, not the commit: once the history is there, it is verified.
    clone.git("fetch", "-q", "--unshallow")
    deepened = run_gitgauge("mine", cwd=clone.root)

    assert deepened.returncode == 0, deepened.stderr
    assert "judged before" not in deepened.stdout
    assert set(task_files(clone)) == {
        "Fix blob reader mangling line endings",
        "Fix mul for negative numbers",
    }


def test_detached_head(fresh: GitRepo, no_stray_worktrees: None) -> None:
    fresh.git("checkout", "-q", "--detach", "HEAD~2")  # at "Fix mul for negative numbers"
    before = fresh.snapshot()

    result = run_gitgauge("mine", cwd=fresh.root)

    assert result.returncode == 0, result.stderr
    assert set(task_files(fresh)) == {"Fix mul for negative numbers"}
    assert_untouched(fresh, before)
    assert fresh.git("symbolic-ref", "-q", "HEAD", check=False) == ""  # still detached


@pytest.mark.parametrize("value", ["0", "-3"])
def test_last_zero_or_negative(fresh: GitRepo, no_stray_worktrees: None, value: str) -> None:
    before = fresh.snapshot()

    result = run_gitgauge("mine", "--last", value, cwd=fresh.root)

    assert result.returncode == 2
    one_error(result, "--last", value)
    assert not (fresh.root / ".gitgauge" / "judged").exists()
    assert_untouched(fresh, before)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", ["the file is empty", "testCommand"]),
        ("# testCommand: pytest\n", ["only comments", "testCommand"]),
        ("testCommand: [unclosed\n", ["invalid YAML", "line"]),
        ("testCommand: pytest\nmine:\n  last: ten\n", ["mine.last", "whole number", "'ten'"]),
        ("testCommand: 5\n", ["testCommand", "expected a string"]),
        ("testCommand: pytest\ntimeouts:\n  tset: 10\n", ["timeouts.tset", "'test'"]),
    ],
    ids=["empty", "comments-only", "invalid-yaml", "wrong-type-last", "wrong-type-cmd", "unknown"],
)
def test_gitgauge_yaml_empty_invalid_wrong_types_or_unknown_keys(
    fresh: GitRepo, no_stray_worktrees: None, text: str, names: list[str]
) -> None:
    write_yaml(fresh, text)
    before = fresh.snapshot()

    result = run_gitgauge("mine", cwd=fresh.root)

    assert result.returncode == 1
    one_error(result, "gitgauge.yaml", *names)
    assert not (fresh.root / ".gitgauge" / "tasks").exists()
    assert_untouched(fresh, before)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("name: x\nadapter: aider\n", ["adapter", "'aider'", "claude-code, codex, gold, noop"]),
        ("name: x\nadapter: script\n", ["command", "script"]),
        ("name: x\nadapter: script\ncommand: '  '\n", ["command", "script"]),
    ],
    ids=["unknown-adapter", "script-without-command", "script-with-blank-command"],
)
def test_agent_config_with_unknown_adapter_or_script_without_command(
    mined_copy: GitRepo, no_stray_worktrees: None, text: str, names: list[str]
) -> None:
    before = mined_copy.snapshot()
    # The bad config comes second: nothing runs, not even the good one.
    args = agent_configs(mined_copy, noop=NOOP, bad=text)

    result = run_gitgauge("run", *args, cwd=mined_copy.root)

    assert result.returncode == 1
    one_error(result, "bad.yaml", *names)
    assert not (mined_copy.root / ".gitgauge" / "runs").exists()
    assert_untouched(mined_copy, before)


@pytest.mark.parametrize("problem", ["missing", "not-executable", "not-on-path"])
def test_claude_binary_missing_or_not_executable(
    mined_copy: GitRepo, tmp_path: Path, no_stray_worktrees: None, problem: str
) -> None:
    env = dict(os.environ)
    if problem == "missing":
        env["GITGAUGE_CLAUDE_BIN"] = str(tmp_path / "no-such-claude")
        names = ["GITGAUGE_CLAUDE_BIN", "no-such-claude", "no such file"]
    elif problem == "not-executable":
        binary = tmp_path / "claude"
        binary.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        binary.chmod(0o644)
        env["GITGAUGE_CLAUDE_BIN"] = str(binary)
        names = ["GITGAUGE_CLAUDE_BIN", str(binary), "not an executable"]
    else:
        only_git = tmp_path / "only-git"
        only_git.mkdir()
        (only_git / "git").symlink_to(shutil.which("git") or "git")
        env["PATH"] = str(only_git)
        names = ["claude", "PATH", "GITGAUGE_CLAUDE_BIN"]
    before = mined_copy.snapshot()
    args = agent_configs(mined_copy, claude="name: claude\nadapter: claude-code\n")

    result = run_gitgauge("run", *args, cwd=mined_copy.root, env=env)

    assert result.returncode == 1
    one_error(result, "claude.yaml", "claude-code", *names)
    assert not (mined_copy.root / ".gitgauge" / "runs").exists()
    assert_untouched(mined_copy, before)


def test_task_that_matches_nothing(mined_copy: GitRepo, no_stray_worktrees: None) -> None:
    before = mined_copy.snapshot()
    known = sorted(task["id"] for task in task_files(mined_copy).values())

    result = run_gitgauge(
        "run", *agent_configs(mined_copy, noop=NOOP), "--task", "no-such-task", cwd=mined_copy.root
    )

    assert result.returncode == 1
    one_error(result, "'no-such-task'", *known)
    assert not (mined_copy.root / ".gitgauge" / "runs").exists()
    assert_untouched(mined_copy, before)


def test_task_file_corrupt_or_from_a_newer_schema(
    mined_copy: GitRepo, no_stray_worktrees: None
) -> None:
    tasks_dir = mined_copy.root / ".gitgauge" / "tasks"
    real = sorted(tasks_dir.glob("*.yaml"))
    assert len(real) == 2
    (tasks_dir / "broken-corrupt.yaml").write_text("id: [unclosed\nbase: {\n", encoding="utf-8")
    future = yaml.safe_load(real[0].read_text(encoding="utf-8"))
    future.update(id="broken-from-the-future", schemaVersion=99, newField="?")
    (tasks_dir / "broken-from-the-future.yaml").write_text(yaml.safe_dump(future), encoding="utf-8")
    (tasks_dir / "broken-binary.yaml").write_bytes(b"\xff\xfe\x00garbage")
    before = mined_copy.snapshot()

    result = run_gitgauge("run", *agent_configs(mined_copy, noop=NOOP), cwd=mined_copy.root)

    assert result.returncode == 0, result.stderr
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 3, result.stderr
    assert all(line.startswith("warning: skipping ") for line in warnings)
    for name, why in (
        ("broken-corrupt.yaml", "cannot read"),
        ("broken-from-the-future.yaml", "schemaVersion 99"),
        ("broken-binary.yaml", "cannot read"),
    ):
        assert any(name in line and why in line for line in warnings), (name, result.stderr)
    # The good tasks still ran.
    assert {subject for _, subject in results(mined_copy)} == set(task_files(mined_copy))
    assert len(results(mined_copy)) == 2
    assert_untouched(mined_copy, before)


# Hand-edited task files (issue 21, row 10): each entry is (file stem, the key its warning names,
# what the file changes in a copy of a real task). `{victim}` is a file next to the repository,
# `../../../victim` the same file seen from a workspace (TMPDIR/gitgauge-wt-*/w*).
POISONED_TASKS: list[tuple[str, str, dict[str, Any]]] = [
    ("deadbeef-climbs-out", "testFiles.2", {"testFiles": [ODD_TEST, ODD_DATA, "../../../victim"]}),
    ("deadbeef-absolute", "testFiles.0", {"testFiles": ["{victim}"]}),
    ("deadbeef-into-git", "testFiles.0", {"testFiles": [".GIT/hooks/pre-commit"]}),
    ("deadbeef-empty-segment", "testFiles.0", {"testFiles": ["tests//test_mul.py"]}),
    (
        "deadbeef-conflicts-out",
        "conflictFiles.0",
        {"kind": "merge", "other": "{fix}", "merge": "{fix}", "conflictFiles": ["../../../victim"]},
    ),
    ("deadbeef-option-as-base", "base", {"base": "--output=../../../victim"}),
    (
        "deadbeef-option-in-chain",
        "chain.1",
        {"kind": "commits", "chain": ["{fix}", "--output=../../../victim"], "chainParent": "{fix}"},
    ),
    (
        "deadbeef-option-as-chain-parent",
        "chainParent",
        {"kind": "commits", "chain": ["{fix}"], "chainParent": "--output=../../../victim"},
    ),
    (
        "deadbeef-chain-file-out",
        "file",
        {"kind": "rebase", "chain": ["{fix}"], "chainParent": "{fix}", "file": "../../../victim"},
    ),
    # Written outside .gitgauge/: results/gold/<id>.json and logs/gold/<id>/ six levels up.
    ("deadbeef-escaping-id", "id", {"id": "../../../../../../x"}),
    ("deadbeef-not-its-name", "id", {"id": "{real_id}"}),
]


def files_outside_state(root: Path) -> dict[str, bytes]:
    """Every file under `root` but the repository's `.gitgauge/` and gitgauge's TMPDIR."""
    skipped = (root / "repo" / ".gitgauge", root / "gitgauge-tmp")
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not any(path.is_relative_to(folder) for folder in skipped)
    }


def test_task_file_with_an_id_or_path_that_is_not_data(
    mined_copy: GitRepo, tmp_path: Path, no_stray_worktrees: None
) -> None:
    tasks_dir = mined_copy.root / ".gitgauge" / "tasks"
    real = task_files(mined_copy)
    template = real["Fix mul for negative numbers"]
    victim = tmp_path / "victim"
    victim.write_bytes(b"the user's own file\x00\n")
    fields = {"victim": str(victim), "fix": template["fix"], "real_id": template["id"]}
    for stem, _, changes in POISONED_TASKS:
        task = {**template, "subject": f"poisoned: {stem}"}
        for key, value in changes.items():
            task[key] = (
                [item.format(**fields) for item in value]
                if isinstance(value, list)
                else value.format(**fields)
            )
        if "id" not in changes:
            task["id"] = stem
        (tasks_dir / f"{stem}.yaml").write_text(yaml.safe_dump(task), encoding="utf-8")
    args = agent_configs(mined_copy, gold=GOLD)
    before = mined_copy.snapshot()
    outside = files_outside_state(tmp_path)

    result = run_gitgauge("run", *args, cwd=mined_copy.root)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [
        line
        for line in result.stderr.splitlines()
        if not line.startswith("warning: testCommand wrote no JUnit XML report")
    ]
    assert len(warnings) == len(POISONED_TASKS), result.stderr
    for stem, key, _ in POISONED_TASKS:
        (line,) = [line for line in warnings if f"{stem}.yaml" in line]
        assert line.startswith("warning: skipping ") and f"{stem}.yaml: {key}: " in line, line
    # The real tasks ran, and resolved; nothing outside the repository was deleted or written.
    found = [
        RunResult.model_validate_json(path.read_text(encoding="utf-8"))
        for path in (mined_copy.root / ".gitgauge" / "runs").glob("*/results/*/*.json")
    ]
    assert sorted((item.config, item.task, item.status) for item in found) == sorted(
        ("gold", task["id"], "resolved") for task in real.values()
    )
    assert victim.read_bytes() == b"the user's own file\x00\n"
    assert files_outside_state(tmp_path) == outside
    assert_untouched(mined_copy, before)

    # --task with a skipped file's id says it cannot be used; an id that is a path is unknown.
    skipped = run_gitgauge("run", *args, "--task", "deadbeef-climbs-out", cwd=mined_copy.root)
    unknown = run_gitgauge("run", *args, "--task", "../../../../../../x", cwd=mined_copy.root)

    for outcome, words in (
        (skipped, ["'deadbeef-climbs-out' cannot be used", "deadbeef-climbs-out.yaml"]),
        (unknown, ["unknown task '../../../../../../x'", template["id"]]),
    ):
        assert outcome.returncode == 1, outcome.stderr
        (error,) = [line for line in outcome.stderr.splitlines() if line.startswith("gitgauge:")]
        assert all(word in error for word in words), error
        assert "Traceback" not in outcome.stderr

    # export skips them too: a Harbor folder named after `id: ../../x` would land outside --out.
    out = tmp_path / "harbor"
    exported = run_gitgauge("export", "--format", "harbor", "--out", str(out), cwd=mined_copy.root)

    assert exported.returncode == 0, exported.stderr
    assert exported.stderr.count("warning: skipping ") == len(POISONED_TASKS), exported.stderr
    assert sorted(path.name for path in out.iterdir()) == sorted(
        task["id"] for task in real.values()
    )
    assert victim.read_bytes() == b"the user's own file\x00\n"
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.json").exists()
    assert_untouched(mined_copy, before)


def test_result_file_with_impossible_numbers_or_in_another_configs_folder(
    mined: Mined, tmp_path: Path, no_stray_worktrees: None
) -> None:
    assert mined.run.returncode == 0, mined.run.stderr
    repo = copy_repo(mined.root, tmp_path / "repo")
    (run_dir,) = (repo.root / ".gitgauge" / "runs").iterdir()
    real = sorted(task["id"] for task in task_files(repo).values())
    nan_cost = run_dir / "results" / "gold" / f"{real[0]}.json"
    # gold's result laid over noop's: counted, it would make noop resolve a task it did not.
    misplaced = run_dir / "results" / "noop" / f"{real[0]}.json"
    shutil.copyfile(nan_cost, misplaced)
    # Python's json reads NaN; a NaN cost would make every average it joins NaN.
    nan_cost.write_text(
        nan_cost.read_text(encoding="utf-8").replace('"costUsd": null', '"costUsd": NaN'),
        encoding="utf-8",
    )
    expected = {nan_cost: "costUsd: nan is not a finite number", misplaced: "config: 'gold'"}
    before = repo.snapshot()

    def skipped(stderr: str) -> None:
        warnings = [line for line in stderr.splitlines() if line.startswith("warning: skipping")]
        assert len(warnings) == len(expected), stderr
        for path, words in expected.items():
            assert any(f"{path}: {words}" in line for line in warnings), (path, stderr)
        assert "Traceback" not in stderr

    report = run_gitgauge("report", "--format", "json", cwd=repo.root)
    compare = run_gitgauge("compare", "noop", "gold", "--format", "json", cwd=repo.root)

    assert report.returncode == 0, report.stderr
    skipped(report.stderr)
    rows = {row["config"]: row for row in json.loads(report.stdout)}
    assert (rows["gold"]["tasks"], rows["gold"]["resolved"]) == (1, 1)
    assert (rows["noop"]["tasks"], rows["noop"]["resolved"]) == (1, 0)
    assert compare.returncode == 0, compare.stderr
    skipped(compare.stderr)
    assert json.loads(compare.stdout)["tasks"] == [real[1]]  # the one whose results both stand
    assert_untouched(repo, before)

    # --resume runs the two pairs again, and their new results count.
    resumed = run_gitgauge("run", "--resume", cwd=repo.root)

    assert resumed.returncode == 0, resumed.stderr
    assert all(
        any(str(path) in line and "runs again" in line for line in resumed.stderr.splitlines())
        for path in expected
    ), resumed.stderr
    again = run_gitgauge("report", "--format", "json", cwd=repo.root)
    assert "warning: skipping" not in again.stderr, again.stderr
    assert {row["config"]: row["resolved"] for row in json.loads(again.stdout)} == {
        "gold": 2,
        "noop": 0,
    }
    assert json.loads(misplaced.read_text(encoding="utf-8"))["config"] == "noop"
    assert_untouched(repo, before)


@pytest.mark.parametrize("command", ["mine", "run"])
def test_a_timeout_past_a_day(mined_copy: GitRepo, no_stray_worktrees: None, command: str) -> None:
    write_yaml(
        mined_copy, f"testCommand: {json.dumps(TEST_COMMAND)}\ntimeouts:\n  adapter: 90000000\n"
    )
    before = mined_copy.snapshot()
    args = ["run", *agent_configs(mined_copy, noop=NOOP)] if command == "run" else ["mine"]

    result = run_gitgauge(*args, cwd=mined_copy.root)

    assert result.returncode == 1
    one_error(result, "gitgauge.yaml", "timeouts.adapter", "90000000 ms", "milliseconds")
    assert not (mined_copy.root / ".gitgauge" / "runs").exists()
    assert_untouched(mined_copy, before)


def test_test_command_that_does_not_exist(fresh: GitRepo, no_stray_worktrees: None) -> None:
    write_yaml(fresh, "testCommand: gitgauge-no-such-test-runner --all\n")

    def rejections(stdout: str) -> list[str]:
        lines = [line for line in stdout.splitlines() if line.startswith("rejected")]
        assert all("[test command failed to start" in line for line in lines), stdout
        return lines

    few = run_gitgauge("mine", cwd=fresh.root)

    # Two candidates, both exit 127 at the fix: fewer than three in a row, still one error.
    assert few.returncode == 1
    one_error(few, "testCommand", "gitgauge-no-such-test-runner", "every candidate (2)")
    assert len(rejections(few.stdout)) == 2
    assert task_files(fresh) == {}

    for name in ("one", "two", "three"):
        fresh.commit(
            f"Fix {name}",
            files={
                f"src/{name}.py": "X = 1\n",
                f"tests/test_{name}.py": "def test_x():\n    pass\n",
            },
        )
    before = fresh.snapshot()

    many = run_gitgauge("mine", cwd=fresh.root)

    # Five candidates: mining stops after the third in a row.
    assert many.returncode == 1
    one_error(many, "testCommand", "gitgauge-no-such-test-runner", "3 candidates in a row")
    assert len(rejections(many.stdout)) == 3
    assert task_files(fresh) == {}
    assert_untouched(fresh, before)

    # Nothing about the commits was remembered: with the command fixed, the fixes are verified.
    write_yaml(fresh)
    fixed = run_gitgauge("mine", cwd=fresh.root)
    assert fixed.returncode == 0, fixed.stderr
    assert set(task_files(fresh)) == {
        "Fix blob reader mangling line endings",
        "Fix mul for negative numbers",
    }
    assert "passes before the fix: 3" in fixed.stdout


def test_file_names_with_spaces_quotes_non_ascii_and_deep_paths(mined: Mined) -> None:
    assert mined.mine.returncode == 0, mined.mine.stderr
    assert mined.run.returncode == 0, mined.run.stderr
    repo = GitRepo(mined.root)
    task = task_files(repo)["Fix mul for negative numbers"]
    assert sorted(task["testFiles"]) == sorted([ODD_TEST, ODD_DATA])
    found = results(repo)
    # Gold resolves only if the overlay laid both files at exactly these paths; noop proves the
    # test needs the fix.
    assert found[("gold", "Fix mul for negative numbers")].status == "resolved"
    assert found[("noop", "Fix mul for negative numbers")].status == "unresolved"
    assert mined.after == mined.before
    assert worktrees(repo) == [f"worktree {repo.root}"]
    assert mined.left_in_tmp == []


def test_binary_test_fixtures(mined: Mined) -> None:
    assert mined.mine.returncode == 0, mined.mine.stderr
    assert mined.run.returncode == 0, mined.run.stderr
    repo = GitRepo(mined.root)
    subject = "Fix blob reader mangling line endings"
    assert sorted(task_files(repo)[subject]["testFiles"]) == BLOB_FIX_TEST_FILES
    found = results(repo)
    # The test compares every byte of both fixtures: gold resolves only on a byte-exact overlay.
    assert found[("gold", subject)].status == "resolved"
    assert found[("gold", subject)].diffFiles == 1
    assert found[("noop", subject)].status == "unresolved"
    assert mined.after == mined.before
    assert mined.left_in_tmp == []


def test_submodules(tmp_path: Path, no_stray_worktrees: None) -> None:
    library = new_repo(tmp_path / "library")
    library.commit("v1", files={"VERSION": "1\n"})
    repo = new_repo(tmp_path / "repo")
    repo.commit(
        "Initial project",
        files={
            "check.py": CHECK_PY,
            "src/neg.py": "def neg(a):\n    return a\n",
            "tests/test_ok.py": "def test_ok():\n    pass\n",
        },
    )
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.root), "lib")
    repo.commit("Add the library as a submodule")

    def bump_library(version: str) -> None:
        library.commit(f"v{version}", files={"VERSION": f"{version}\n"})
        GitRepo(repo.root / "lib").git("-c", "protocol.file.allow=always", "pull", "-q")

    # A fix of the source that also moves the submodule pointer.
    bump_library("2")
    repo.commit(
        "Fix neg and bump the library",
        files={
            "src/neg.py": "def neg(a):\n    return -a\n",
            "tests/test_neg.py": "from neg import neg\n\n\ndef test_neg():\n"
            "    assert neg(3) == -3\n",
        },
    )
    # A "fix" that moves only the submodule pointer (and adds a test): judged, never a crash.
    bump_library("3")
    repo.commit(
        "Fix crash by bumping the library",
        files={"tests/test_lib.py": "def test_lib():\n    pass\n"},
    )
    bump_library("4")
    repo.commit("Fix: bump the library")  # the pointer alone: not even a candidate
    write_yaml(repo)
    submodule_before = repo.git("submodule", "status")
    before = repo.snapshot()

    mine = run_gitgauge("mine", cwd=repo.root)

    assert mine.returncode == 0, mine.stderr
    assert "Traceback" not in mine.stderr
    assert set(task_files(repo)) == {"Fix neg and bump the library"}
    assert "candidates:        2" in mine.stdout
    assert "passes before the fix: 1" in mine.stdout

    run = run_gitgauge("run", *agent_configs(repo, gold=GOLD, noop=NOOP), cwd=repo.root)

    assert run.returncode == 0, run.stderr
    found = results(repo)
    gold = found[("gold", "Fix neg and bump the library")]
    assert gold.status == "resolved"
    # Worktrees have no submodule checkout: gold leaves the pointer alone instead of deleting it.
    assert gold.diffFiles == 1
    (patch,) = (repo.root / ".gitgauge" / "runs").glob("*/logs/gold/*/agent.patch")
    patch_text = patch.read_text(encoding="utf-8")
    assert "src/neg.py" in patch_text
    assert "Subproject commit" not in patch_text and "a/lib" not in patch_text
    assert found[("noop", "Fix neg and bump the library")].status == "unresolved"
    assert repo.git("submodule", "status") == submodule_before
    assert_untouched(repo, before)


def _limit_file_size() -> None:
    # Like a full disk for any file that grows past 3000 bytes: write() fails with EFBIG (Python
    # ignores SIGXFSZ). Everything else gitgauge writes here is smaller.
    resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))


def test_full_disk_while_writing_a_result(mined_copy: GitRepo, no_stray_worktrees: None) -> None:
    # A failing suite prints 1800 bytes to stdout and stderr (each log file stays small), which
    # makes a failing pair's result (with its output tail) larger than the limit; a passing
    # pair's result is not.
    noisy = (
        f"{TEST_COMMAND} || {{ {sys.executable} -c \"import sys; print('o' * 1800); "
        "print('e' * 1800, file=sys.stderr)\"; exit 1; }"
    )
    write_yaml(mined_copy, f"testCommand: {json.dumps(noisy)}\n")
    before = mined_copy.snapshot()
    args = agent_configs(mined_copy, gold=GOLD, noop=NOOP)

    full = subprocess.run(
        [*GITGAUGE, "run", *args],
        cwd=mined_copy.root,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=_limit_file_size,
    )

    assert full.returncode == 1, full.stdout + full.stderr
    # `run` works on tasks oldest base first.
    first_task = min(
        task_files(mined_copy).values(),
        key=lambda task: int(mined_copy.git("log", "-1", "--format=%ct", task["base"])),
    )["id"]
    line = one_error(full, f"results/noop/{first_task}.json", "--resume")
    assert "File too large" in line
    assert "were mined with testCommand" in full.stderr  # the noisy command is not the mined one
    # The pair finished before the failure is on disk and valid; the failed one left nothing.
    written = sorted((mined_copy.root / ".gitgauge" / "runs").glob("*/results/*/*.json"))
    assert [path.relative_to(path.parents[2]).as_posix() for path in written] == [
        f"results/gold/{first_task}.json"
    ]
    assert RunResult.model_validate_json(written[0].read_text(encoding="utf-8")).status == (
        "resolved"
    )
    assert stray_files(mined_copy) == []
    assert_untouched(mined_copy, before)

    # With room again, the run continues where it stopped.
    resumed = run_gitgauge("run", "--resume", cwd=mined_copy.root)

    assert resumed.returncode == 0, resumed.stderr
    statuses = {key: result.status for key, result in results(mined_copy).items()}
    assert sorted(statuses.values()) == ["resolved", "resolved", "unresolved", "unresolved"]
    assert stray_files(mined_copy) == []
    assert_untouched(mined_copy, before)


def test_state_directory_that_cannot_be_written(fresh: GitRepo, no_stray_worktrees: None) -> None:
    state = fresh.root / ".gitgauge"
    state.mkdir()
    (state / "tasks").write_text("not a directory\n", encoding="utf-8")
    before = fresh.snapshot()

    result = run_gitgauge("mine", "--last", "1", cwd=fresh.root)

    assert result.returncode == 1
    one_error(result, "could not write", str(state / "tasks"))
    assert (state / "tasks").read_text(encoding="utf-8") == "not a directory\n"
    # Not remembered as verified: once the directory is usable, the fix is verified and saved.
    assert stray_files(fresh) == []
    (state / "tasks").unlink()
    again = run_gitgauge("mine", "--last", "1", cwd=fresh.root)
    assert again.returncode == 0, again.stderr
    assert set(task_files(fresh)) == {"Fix blob reader mangling line endings"}
    assert_untouched(fresh, before)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "mine:\n  fixTypes: [BUG]\n  nonFixTypes: [bug]\n",
            ["mine", "bug is both in fixTypes and nonFixTypes"],
        ),
        ("mine:\n  fixTypes: ['fix it']\n", ["mine.fixTypes", "'fix it' is not a commit type"]),
        ("tests:\n  patterns: ['  ']\n", ["tests.patterns", "must not be empty"]),
    ],
    ids=["type-in-both-lists", "type-not-a-word", "empty-test-pattern"],
)
def test_commit_types_in_both_lists_or_not_words_and_empty_test_patterns(
    fresh: GitRepo, no_stray_worktrees: None, text: str, names: list[str]
) -> None:
    write_yaml(fresh, f"testCommand: {json.dumps(TEST_COMMAND)}\n{text}")
    before = fresh.snapshot()

    result = run_gitgauge("mine", cwd=fresh.root)

    assert result.returncode == 1
    one_error(result, "gitgauge.yaml", *names)
    assert_untouched(fresh, before)


@pytest.mark.parametrize("command", ["mine", "run"])
def test_link_directory_pointing_into_an_untracked_part_of_the_checkout(
    fresh: GitRepo, no_stray_worktrees: None, command: str
) -> None:
    site = fresh.root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (fresh.root / "build" / "lib").mkdir(parents=True)
    (site / "__editable__.mypkg-1.0.pth").write_text(f"{fresh.root / 'build' / 'lib'}\n")
    write_yaml(fresh, f"testCommand: {json.dumps(TEST_COMMAND)}\nworktree:\n  link: [.venv]\n")
    (fresh.root / "noop.yaml").write_text(NOOP, encoding="utf-8")
    (fresh.root / ".gitgauge" / "tasks").mkdir(parents=True)
    fix = fresh.git("rev-parse", "HEAD").strip()
    (fresh.root / ".gitgauge" / "tasks" / f"{fix[:8]}-s.yaml").write_text(
        yaml.safe_dump(
            {"id": f"{fix[:8]}-s", "base": fresh.git("rev-parse", "HEAD~1").strip(),
             "fix": fix, "subject": "s", "body": "",
             "prompt": "p", "testFiles": [], "promptQuality": "title-only",
             "testCommand": TEST_COMMAND, "minedAt": "2024-01-01T00:00:00+00:00"}
        )
    )  # fmt: skip
    before = fresh.snapshot()

    args = ["run", "-c", "noop.yaml"] if command == "run" else ["mine"]
    result = run_gitgauge(*args, cwd=fresh.root)

    assert result.returncode == 1
    one_error(
        result,
        ".venv/lib/python3.11/site-packages/__editable__.mypkg-1.0.pth imports from your "
        "checkout (build/lib), which git does not track",
        "setupCommand",
    )
    assert not (fresh.root / ".gitgauge" / "runs").exists()
    assert not (fresh.root / ".gitgauge" / "judged").exists()
    assert_untouched(fresh, before)


def test_explain_with_a_revision_that_is_not_a_commit(
    fresh: GitRepo, no_stray_worktrees: None
) -> None:
    before = fresh.snapshot()

    result = run_gitgauge("mine", "--explain", "no-such-rev", cwd=fresh.root)

    assert result.returncode == 1
    one_error(result, "'no-such-rev' is not a commit of")
    assert_untouched(fresh, before)
