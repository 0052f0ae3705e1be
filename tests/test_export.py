"""`gitgauge export` through the real CLI, on the demo repository mined once per session.

SWE-bench: the file loads with the `swebench` package's own dataset loader (the `export-check`
extra; without it the tests that import it skip, and fail with CI=true) and every instance has
exactly the fields of its `SWEbenchInstance`; `patch` and `test_patch` apply with `git apply` at
`base_commit`, the tests fail with `test_patch` alone and pass with both. FAIL_TO_PASS and
PASS_TO_PASS are the mined per-test verdicts named as pytest node ids: every name is a line of
`pytest -rA` in those checkouts, and SWE-bench's own log parser and grading call the gold patch
resolved and the test patch alone not. A module-scoped copy of the demo gets one more fix, whose
tests are methods of a class in `tests/unit/` (parametrized) and whose suite also has a test that
fails at every commit; `gitgauge mine` verifies just that commit there.

Harbor (`helpers/harbor.py`): every folder loads with Harbor's own task model where
`$GITGAUGE_HARBOR_PYTHON` names a Python with harbor (required in CI), and `tests/test.sh` and
`solution/solve.sh` run directly on a copy of the base (no Docker): reward 0 without the solution,
1 with it. Per-test tasks are graded by their names, the one whose suite fails at the fix too
included; without its PASS_TO_PASS names a task falls back to the exit code, and is skipped when
that would give the solution 0. `tests/test_export_harbor.py` has the hold-out repository and
the agents test.sh must give 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolate
from helpers.harbor import check_harbor_folders, grading_of, verify

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

DEMO_TASKS = 3
# The demo's fixes (by subject) and the tests they make pass, as pytest names them.
DEMO_FAIL_TO_PASS = {
    "fix: slugify drops digits": ["tests/test_slug.py::test_keeps_digits"],
    "fix(parser): crash on empty input": [
        "tests/test_parser.py::test_empty_input_gives_empty_dict"
    ],
    "Fix off-by-one error in pagination": ["tests/test_pages.py::test_last_partial_page_is_kept"],
}


@pytest.fixture
def demo(demo_repository: tuple[Path, Path]) -> tuple[Path, Path]:
    """The demo repository, built and mined once per session (conftest.py)."""
    return demo_repository


@pytest.fixture
def repo(demo: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate(demo[1], monkeypatch)
    return demo[0]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def demo_test_command(repo: Path) -> str:
    return str(yaml.safe_load((repo / "gitgauge.yaml").read_text())["testCommand"])


def suite_passes(checkout: Path, command: str) -> bool:
    return subprocess.run(command, shell=True, cwd=checkout, capture_output=True).returncode == 0


def pytest_log(checkout: Path, command: str) -> str:
    """The suite's output with pytest's `-rA` summary: `PASSED <node id>` per test."""
    run = subprocess.run(f"{command} -rA", shell=True, cwd=checkout, capture_output=True)
    return run.stdout.decode("utf-8", "replace")


def outcomes(log: str) -> dict[str, str]:
    """node id -> PASSED / FAILED / ERROR / SKIPPED, from `pytest -rA`'s summary lines."""
    found: dict[str, str] = {}
    for line in log.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] in ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL"):
            found[words[1]] = words[0]
    return found


def task_files(repo: Path) -> list[Path]:
    return sorted((repo / ".gitgauge/tasks").glob("*.yaml"))


def load_task(path: Path) -> dict[str, Any]:
    task: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return task


def first_task_of_a_copy(repo: Path, copy: Path) -> tuple[Path, dict[str, Any]]:
    """`repo` copied to `copy` (its links kept) for a test to change: its first task file, and
    that task."""
    shutil.copytree(repo, copy, symlinks=True)
    task_file = task_files(copy)[0]
    return task_file, load_task(task_file)


def point_at(task_file: Path, task: dict[str, Any], fix: str) -> None:
    """The task file of `task` made to name `fix` as its fix commit."""
    task_file.write_text(task_file.read_text().replace(task["fix"], fix), encoding="utf-8")


@contextmanager
def on_a_new_fix(copy: Path, task_file: Path, task: dict[str, Any], message: str) -> Iterator[None]:
    """The task's fix checked out for the block; what the block changes (or adds to the index)
    is then committed on top, and the task file made to name that commit as its fix."""
    git(copy, "checkout", "-q", "--detach", task["fix"])
    yield
    git(copy, "commit", "-qam", message)
    point_at(task_file, task, git(copy, "rev-parse", "HEAD").stdout.strip())


def p2p_names(repo: Path, task_id: str) -> list[str]:
    """The task's PASS_TO_PASS names as mined (JUnit `classname::name`)."""
    names: list[str] = json.loads(
        (repo / ".gitgauge/tasks" / f"{task_id}.tests.json").read_text(encoding="utf-8")
    )["passToPass"]
    return names


def as_node_id(junit_name: str) -> str:
    """`tests.test_x::test_y` -> `tests/test_x.py::test_y` (the demo's tests are functions in
    tests/*.py)."""
    module, name = junit_name.split("::")
    return f"{module.replace('.', '/')}.py::{name}"


def clone_at(repo: Path, commit: str, checkout: Path) -> Path:
    git(repo.parent, "clone", "-q", "--no-checkout", str(repo), str(checkout))
    git(checkout, "checkout", "-q", commit)
    return checkout


def apply(checkout: Path, patch: str, scratch: Path) -> None:
    scratch.write_text(patch, encoding="utf-8")
    git(checkout, "apply", str(scratch))


def export_rows(repo: Path) -> tuple[list[dict[str, Any]], str]:
    exported = run_gitgauge("export", "--format", "swebench", cwd=repo)
    assert exported.returncode == 0, exported.stderr
    return [json.loads(line) for line in exported.stdout.splitlines()], exported.stderr


# -- SWE-bench ------------------------------------------------------------------------------------


def test_swebench_instances_apply_at_base_and_fail_then_pass(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    exported = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert exported.returncode == 0, exported.stderr
    assert f"wrote {DEMO_TASKS} SWE-bench instances" in exported.stdout

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == DEMO_TASKS
    tasks = {t["id"]: t for t in map(load_task, task_files(repo))}
    command = demo_test_command(repo)
    for row in rows:
        task = tasks[row["instance_id"].removeprefix("local__sample-")]
        assert row["repo"] == "local/sample"
        assert row["instance_id"] == f"local__sample-{task['id']}"
        assert row["base_commit"] == row["environment_setup_commit"] == task["base"]
        assert row["problem_statement"] == task["prompt"]
        fail_to_pass = json.loads(row["FAIL_TO_PASS"])
        pass_to_pass = json.loads(row["PASS_TO_PASS"])
        assert fail_to_pass == DEMO_FAIL_TO_PASS[task["subject"]]
        # PASS_TO_PASS: the names of <id>.tests.json (not the count in the task file), as pytest
        # node ids.
        assert pass_to_pass == [as_node_id(n) for n in p2p_names(repo, task["id"])]
        assert len(pass_to_pass) == task["passToPass"] > 0
        assert "tests/test_slug.py::test_lowercases_and_joins_words" in pass_to_pass
        assert row["created_at"].startswith("2024-01-01T")
        assert "tests/" in row["test_patch"] and "tests/" not in row["patch"]

        checkout = clone_at(repo, row["base_commit"], tmp_path / task["id"])
        for name in ("test_patch", "patch"):
            (tmp_path / name).write_text(row[name], encoding="utf-8")
        assert git(checkout, "apply", "--check", str(tmp_path / "patch")).returncode == 0
        git(checkout, "apply", str(tmp_path / "test_patch"))
        assert not suite_passes(checkout, command), task["id"]
        # The names are the ones `pytest -rA` prints (what SWE-bench's pytest log parser reads).
        before = outcomes(pytest_log(checkout, command))
        assert [before.get(name) for name in fail_to_pass] == ["FAILED"], task["id"]
        assert {before.get(name) for name in pass_to_pass} == {"PASSED"}, task["id"]
        git(checkout, "apply", str(tmp_path / "patch"))
        assert suite_passes(checkout, command), task["id"]
        after = outcomes(pytest_log(checkout, command))
        assert {after.get(name) for name in fail_to_pass + pass_to_pass} == {"PASSED"}
        # Applied together they give the fix's tree exactly: nothing after the fix, nothing lost.
        git(checkout, "add", "-A")
        assert (
            git(checkout, "diff", "--cached", "--quiet", task["fix"], check=False).returncode == 0
        )


def test_swebench_file_loads_with_the_swebench_loader(repo: Path, tmp_path: Path) -> None:
    if os.environ.get("CI") != "true":
        pytest.importorskip("swebench", reason="pip install -e '.[export-check]'")
    from swebench.harness.utils import load_swebench_dataset
    from swebench.types import SWEbenchInstance

    out = tmp_path / "tasks.jsonl"
    exported = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert exported.returncode == 0, exported.stderr

    instances = load_swebench_dataset(str(out))
    assert len(instances) == DEMO_TASKS
    for instance in instances:
        assert set(instance) == set(SWEbenchInstance.__annotations__)
        assert all(isinstance(value, str) for value in instance.values())


def test_swebench_to_stdout(repo: Path) -> None:
    exported = run_gitgauge("export", "--format", "swebench", cwd=repo)
    assert exported.returncode == 0, exported.stderr
    assert len([json.loads(line) for line in exported.stdout.splitlines()]) == DEMO_TASKS


# -- per-test names beyond the demo ---------------------------------------------------------------

COUNT_BUGGY = """\
def count_words(text: str) -> dict:
    counts: dict = {}
    for word in text.split(" "):
        counts[word] = counts.get(word, 0) + 1
    return counts
"""
COUNT_TEST = """\
from textkit.count import count_words


class TestCountWords:
    def test_counts_repeats(self):
        assert count_words("a b a") == {"a": 2, "b": 1}
"""
COUNT_TEST_FIXED = (
    COUNT_TEST.replace("from textkit", "import pytest\n\nfrom textkit")
    + """
    @pytest.mark.parametrize("text", ["a  b", " a b "], ids=["double-space", "edges"])
    def test_ignores_extra_spaces(self, text):
        assert count_words(text) == {"a": 1, "b": 1}
"""
)
ALWAYS_FAILS = (
    "def test_needs_a_service():\n    raise AssertionError('missing here at every commit')\n"
)
COUNT_SUBJECT = "fix: count_words counts empty words"
COUNT_FAIL_TO_PASS = [
    "tests/unit/test_count.py::TestCountWords::test_ignores_extra_spaces[double-space]",
    "tests/unit/test_count.py::TestCountWords::test_ignores_extra_spaces[edges]",
]


@pytest.fixture(scope="module")
def extended(demo_repository: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo with one more fix, mined (only that commit is judged): its tests are
    methods of a class in tests/unit/, and a test in tests/ fails at every commit."""
    repo = tmp_path_factory.mktemp("extended") / "sample"
    shutil.copytree(demo_repository[0], repo, symlinks=True)
    with pytest.MonkeyPatch.context() as patch:
        isolate(demo_repository[1], patch)
        for path, text in {
            "textkit/count.py": COUNT_BUGGY,
            "tests/unit/test_count.py": COUNT_TEST,
            "tests/test_environment.py": ALWAYS_FAILS,
        }.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text, encoding="utf-8")
        git(repo, "add", "textkit", "tests")
        git(repo, "commit", "-qm", "feat: count words")
        (repo / "textkit/count.py").write_text(
            COUNT_BUGGY.replace('split(" ")', "split()"), "utf-8"
        )
        (repo / "tests/unit/test_count.py").write_text(COUNT_TEST_FIXED, encoding="utf-8")
        git(repo, "commit", "-qam", COUNT_SUBJECT, "-m", "Two spaces in a row counted a word ''.")
        mined = run_gitgauge("mine", cwd=repo)
        assert mined.returncode == 0, mined.stderr
    assert len(task_files(repo)) == DEMO_TASKS + 1, mined.stdout
    return repo


def test_class_methods_and_parameters_are_named_as_pytest_names_them(extended: Path) -> None:
    rows, _ = export_rows(extended)
    assert len(rows) == DEMO_TASKS + 1
    row = next(r for r in rows if "count-words" in r["instance_id"])
    task = load_task(next(p for p in task_files(extended) if "count-words" in p.name))
    assert task["failToPass"] == [
        "tests.unit.test_count.TestCountWords::test_ignores_extra_spaces[double-space]",
        "tests.unit.test_count.TestCountWords::test_ignores_extra_spaces[edges]",
    ]
    assert task["failingBoth"] == ["tests.test_environment::test_needs_a_service"]
    assert json.loads(row["FAIL_TO_PASS"]) == COUNT_FAIL_TO_PASS
    pass_to_pass = json.loads(row["PASS_TO_PASS"])
    assert "tests/unit/test_count.py::TestCountWords::test_counts_repeats" in pass_to_pass
    assert "tests/test_words.py::test_joins_with_spaces" in pass_to_pass
    assert not [name for name in pass_to_pass if "test_environment" in name]


def test_swebench_grading_resolves_the_gold_patch_only(extended: Path, tmp_path: Path) -> None:
    """SWE-bench's own pytest log parser and grading, on `pytest -rA` logs of each instance:
    resolved with `test_patch` and `patch` (even where a test fails on both sides, which the
    suite's exit code would count), not resolved with `test_patch` alone."""
    if os.environ.get("CI") != "true":
        pytest.importorskip("swebench", reason="pip install -e '.[export-check]'")
    from swebench.harness.constants import FAIL_TO_PASS, PASS_TO_PASS, ResolvedStatus
    from swebench.harness.grading import get_eval_tests_report, get_resolution_status
    from swebench.harness.log_parsers.python import parse_log_pytest

    command = demo_test_command(extended)
    rows, _ = export_rows(extended)
    assert len(rows) == DEMO_TASKS + 1
    for row in rows:
        gold = {
            FAIL_TO_PASS: json.loads(row[FAIL_TO_PASS]),
            PASS_TO_PASS: json.loads(row[PASS_TO_PASS]),
        }
        checkout = clone_at(extended, row["base_commit"], tmp_path / row["instance_id"])
        statuses = []
        for patch in ("test_patch", "patch"):
            apply(checkout, row[patch], tmp_path / f"{patch}.diff")
            log = pytest_log(checkout, command)
            report = get_eval_tests_report(parse_log_pytest(log, None), gold)
            statuses.append(get_resolution_status(report))
        assert statuses == [ResolvedStatus.NO.value, ResolvedStatus.FULL.value], row["instance_id"]
        assert report[PASS_TO_PASS]["failure"] == [] and report[FAIL_TO_PASS]["failure"] == []


def test_harbor_grades_a_task_whose_suite_fails_at_the_fix_by_test_names(
    extended: Path, tmp_path: Path
) -> None:
    """The count-words task has a test that fails at the fix too: test.sh grades it by names
    (1 for the reference solution, 0 without), so it is exported with the demo's tasks."""
    out = tmp_path / "harbor"
    exported = run_gitgauge("export", "--format", "harbor", "--out", str(out), cwd=extended)
    assert exported.returncode == 0, exported.stderr
    assert exported.stderr == ""
    task_id = next(p.stem for p in task_files(extended) if "count-words" in p.name)
    assert sorted(p.name for p in out.iterdir()) == [p.stem for p in task_files(extended)]
    folder = out / task_id
    check_harbor_folders([folder])
    lists = json.loads((folder / "tests/grading/tests.json").read_text(encoding="utf-8"))
    assert "tests.test_environment::test_needs_a_service" not in lists["passToPass"]
    for solved in (False, True):
        verified = verify(folder, tmp_path / f"solved-{solved}", solve=solved)
        assert verified.reward == ("1" if solved else "0"), verified
    assert "FAIL_TO_PASS 2 of 2 pass" in verified.stdout


def test_harbor_skips_a_task_whose_suite_fails_at_the_fix_without_its_names(
    extended: Path, tmp_path: Path
) -> None:
    """Without its PASS_TO_PASS names test.sh falls back to the exit code, which the test that
    fails at every commit makes 1: the task is skipped, with a warning."""
    copy = tmp_path / "sample"
    shutil.copytree(extended, copy, symlinks=True)
    task_id = next(p.stem for p in task_files(copy) if "count-words" in p.name)
    (copy / ".gitgauge/tasks" / f"{task_id}.tests.json").unlink()
    out = tmp_path / "harbor"
    exported = run_gitgauge("export", "--format", "harbor", "--out", str(out), cwd=copy)
    assert exported.returncode == 0, exported.stderr
    assert (
        f"task {task_id}: .gitgauge/tasks/{task_id}.tests.json, its PASS_TO_PASS test names, "
        "is missing: test.sh rewards testCommand's exit code"
    ) in exported.stderr
    assert (
        f"skipping task {task_id}: tests fail at the fix too "
        "(tests.test_environment::test_needs_a_service), so test.sh, which rewards "
        "testCommand's exit code, would give the reference solution 0"
    ) in exported.stderr
    others = [p.stem for p in task_files(copy) if p.stem != task_id]
    assert sorted(p.name for p in out.iterdir()) == others and len(others) == DEMO_TASKS
    assert {grading_of(out / name) for name in others} == {"per-test"}


def test_a_task_mined_by_exit_code_exports_empty_lists(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "exit-code"
    task_file, task = first_task_of_a_copy(repo, copy)
    # What a task file says when its suite wrote no per-test report at mine time.
    task["failToPass"] = task["passToPass"] = None
    task_file.write_text(yaml.safe_dump(task), encoding="utf-8")
    (copy / ".gitgauge/tasks" / f"{task['id']}.tests.json").unlink()

    rows, warnings = export_rows(copy)
    assert len(rows) == DEMO_TASKS and warnings == ""
    by_id = {r["instance_id"].removeprefix("local__exit-code-"): r for r in rows}
    assert by_id[task["id"]]["FAIL_TO_PASS"] == by_id[task["id"]]["PASS_TO_PASS"] == "[]"
    others = [r for key, r in by_id.items() if key != task["id"]]
    assert all(json.loads(r["FAIL_TO_PASS"]) and json.loads(r["PASS_TO_PASS"]) for r in others)


def test_a_task_whose_pass_to_pass_names_are_lost_is_skipped(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "lost"
    shutil.copytree(repo, copy, symlinks=True)
    missing, corrupt, kept = (load_task(path)["id"] for path in task_files(copy))
    (copy / ".gitgauge/tasks" / f"{missing}.tests.json").unlink()
    (copy / ".gitgauge/tasks" / f"{corrupt}.tests.json").write_text('{"passToPass": [1, ')

    rows, warnings = export_rows(copy)
    assert [r["instance_id"] for r in rows] == [f"local__lost-{kept}"]
    for task_id, state in ((missing, "is missing"), (corrupt, "cannot be read")):
        assert (
            f"skipping task {task_id}: .gitgauge/tasks/{task_id}.tests.json, its PASS_TO_PASS "
            f"test names, {state}; to get it back delete .gitgauge/tasks/{task_id}.yaml and run "
            "`gitgauge mine --force`"
        ) in warnings
    # Harbor falls back to the exit code for the two without names: every task is exported.
    harbor = run_gitgauge("export", "--format", "harbor", "--out", str(tmp_path / "h"), cwd=copy)
    assert harbor.returncode == 0, harbor.stderr
    assert len(list((tmp_path / "h").iterdir())) == DEMO_TASKS
    gradings = {task_id: grading_of(tmp_path / "h" / task_id) for task_id in (missing, corrupt)}
    assert gradings == {missing: "exit-code", corrupt: "exit-code"}
    assert grading_of(tmp_path / "h" / kept) == "per-test"
    for task_id in (missing, corrupt):
        verified = verify(tmp_path / "h" / task_id, tmp_path / task_id, solve=True)
        assert verified.reward == "1", verified


def test_names_no_file_matches_are_kept_as_reported(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "other-runner"
    task_file, task = first_task_of_a_copy(repo, copy)
    # A name as a JUnit runner of another language writes it: no file at the fix is its module.
    foreign = "com.example.SlugTest::keepsDigits"
    task["failToPass"] = [*task["failToPass"], foreign]
    task_file.write_text(yaml.safe_dump(task), encoding="utf-8")

    rows, warnings = export_rows(copy)
    row = next(r for r in rows if r["instance_id"].endswith(task["id"]))
    assert json.loads(row["FAIL_TO_PASS"]) == [
        *DEMO_FAIL_TO_PASS[task["subject"]],
        foreign,
    ]
    total = len(task["failToPass"]) + task["passToPass"]
    assert (
        f"task {task['id']}: 1 of {total} test names are exported as the JUnit report names them "
        f"(classname::name), not as pytest node ids: no one file at the fix matches their "
        f"classname ({foreign})"
    ) in warnings


# -- Harbor ---------------------------------------------------------------------------------------


def test_harbor_folders_load_and_reward_the_solution_only(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "harbor"
    exported = run_gitgauge(
        "export", "--format", "harbor", "--out", str(out), "--image", "python:3.11", cwd=repo
    )
    assert exported.returncode == 0, exported.stderr
    folders = sorted(out.iterdir())
    assert len(folders) == DEMO_TASKS
    check_harbor_folders(folders)
    for folder in folders:
        task = yaml.safe_load((repo / ".gitgauge/tasks" / f"{folder.name}.yaml").read_text())
        assert (folder / "instruction.md").read_text(encoding="utf-8") == task[
            "prompt"
        ].rstrip() + "\n"
        dockerfile = (folder / "environment/Dockerfile").read_text(encoding="utf-8")
        assert dockerfile.startswith("FROM python:3.11\n")
        # The environment holds the base's files, byte for byte, and no history.
        tree = git(repo, "ls-tree", "-r", "--name-only", task["base"]).stdout.split()
        base_files = folder / "environment/repo"
        found = [p for p in base_files.rglob("*") if p.is_file()]
        repo_files = sorted(str(p.relative_to(base_files)) for p in found)
        assert repo_files == sorted(tree)

        # The demo's tasks have per-test lists: test.sh grades by their names.
        assert grading_of(folder) == "per-test"
        lists = json.loads((folder / "tests/grading/tests.json").read_text(encoding="utf-8"))
        assert lists["failToPass"] == task["failToPass"]
        assert lists["passToPass"] == p2p_names(repo, folder.name)
        for solved in (False, True):
            verified = verify(folder, tmp_path / f"{folder.name}-{solved}", solve=solved)
            assert verified.reward == ("1" if solved else "0"), (folder.name, solved, verified)


# -- bad input ------------------------------------------------------------------------------------


def test_existing_output_is_refused_unless_force(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    refused = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert refused.returncode == 1
    assert f"{out} already exists" in refused.stderr and "--force" in refused.stderr
    assert out.read_text(encoding="utf-8") == "mine\n"

    folder = tmp_path / "taken"
    (folder / "keep").mkdir(parents=True)
    refused = run_gitgauge("export", "--format", "harbor", "--out", str(folder), cwd=repo)
    assert refused.returncode == 1 and (folder / "keep").is_dir()
    forced = run_gitgauge("export", "--format", "harbor", "--out", str(folder), "--force", cwd=repo)
    assert forced.returncode == 0, forced.stderr
    assert not (folder / "keep").exists() and len(list(folder.iterdir())) == DEMO_TASKS
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".gitgauge-export")] == []


def test_harbor_needs_out_and_swebench_takes_no_image(repo: Path) -> None:
    no_out = run_gitgauge("export", "--format", "harbor", cwd=repo)
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    image = run_gitgauge("export", "--format", "swebench", "--image", "x", cwd=repo)
    assert image.returncode == 2 and "--image" in image.stderr


def test_no_tasks_is_an_error(git_repo_with_commit: Path) -> None:
    outcome = run_gitgauge("export", "--format", "swebench", cwd=git_repo_with_commit)
    assert outcome.returncode == 1
    assert "no tasks to export" in outcome.stderr and "gitgauge mine" in outcome.stderr


@pytest.fixture
def git_repo_with_commit(tmp_path: Path) -> Path:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "first")
    return root


def test_a_task_whose_commits_are_gone_is_skipped_with_a_warning(
    repo: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    task_file, task = first_task_of_a_copy(repo, copy)
    gone = "deadbeef" * 5
    point_at(task_file, task, gone)
    outcome = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert outcome.returncode == 0, outcome.stderr
    assert f"skipping task {task['id']}: commit {gone} is not in this repository" in outcome.stderr
    assert len(outcome.stdout.splitlines()) == DEMO_TASKS - 1


def test_non_utf8_text_is_skipped_for_swebench_and_kept_for_harbor(
    repo: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "latin1"
    task_file, task = first_task_of_a_copy(repo, copy)
    # A fix commit whose test file is Latin-1 text, on top of the task's base.
    test_path = next(p for p in task["testFiles"])
    with on_a_new_fix(copy, task_file, task, "latin-1 comment"):
        (copy / test_path).write_bytes((copy / test_path).read_bytes() + b"# caf\xe9\n")

    swebench = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert swebench.returncode == 0, swebench.stderr
    assert f"skipping task {task['id']}: {test_path} is text that is not UTF-8" in swebench.stderr
    assert len(swebench.stdout.splitlines()) == DEMO_TASKS - 1

    harbor = run_gitgauge("export", "--format", "harbor", "--out", str(tmp_path / "h"), cwd=copy)
    assert harbor.returncode == 0, harbor.stderr
    laid = tmp_path / "h" / task["id"] / "tests/files" / test_path
    assert laid.read_bytes().endswith(b"# caf\xe9\n")


def test_binary_test_fixtures_travel_as_git_binary_patches(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "binary"
    task_file, task = first_task_of_a_copy(repo, copy)
    fixture = bytes(range(256)) * 4  # NUL bytes and every other byte value
    with on_a_new_fix(copy, task_file, task, "binary fixture"):
        (copy / "tests/fixtures").mkdir(parents=True, exist_ok=True)
        (copy / "tests/fixtures/blob.bin").write_bytes(fixture)
        git(copy, "add", "tests/fixtures/blob.bin")

    exported = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert exported.returncode == 0, exported.stderr
    row = next(json.loads(line) for line in exported.stdout.splitlines() if task["id"] in line)
    assert "GIT binary patch" in row["test_patch"]
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(copy), str(checkout))
    git(checkout, "checkout", "-q", task["base"])
    (tmp_path / "test.patch").write_text(row["test_patch"], encoding="utf-8")
    git(checkout, "apply", str(tmp_path / "test.patch"))
    assert (checkout / "tests/fixtures/blob.bin").read_bytes() == fixture


def test_the_checkout_is_untouched(repo: Path, tmp_path: Path) -> None:
    before = git(repo, "status", "--porcelain").stdout
    run_gitgauge("export", "--format", "harbor", "--out", str(tmp_path / "h"), cwd=repo)
    assert git(repo, "status", "--porcelain").stdout == before
