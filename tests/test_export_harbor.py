"""Harbor's test.sh grades per-test tasks by their names, end to end: a real repository with a
hold-out test (one that fails at every commit after it) and five fixes after it, mined by the real
CLI, exported with `--format harbor`, and each folder's `tests/test.sh` run for real on a copy of
its base (no Docker), with and without `solution/solve.sh`, the reward read back.

The suite reports per test three ways, one module-scoped repository each: pytest (JUnit XML where
test.sh points `--junitxml`), a runner printing TAP on stdout, and a runner writing JUnit XML into
the checkout (`tests.junit`). Every fix is a task (the hold-out test fails at the fix too: by the
exit code the reference solution would score 0), all five are exported, and each scores 1 with
its solution and 0 without. Then agents test.sh must give 0 even where the exit code would say
otherwise: one that breaks a PASS_TO_PASS test, one that hides a FAIL_TO_PASS test from the run
(missing from the report is not a pass), one that makes it skip, one that switches the report off,
and an image without python3.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolated
from helpers.harbor import check_harbor_folders, grading_of, verify
from helpers.pytest_project import CLAMP, SLUG, first_files
from helpers.repos import GitRepo, new_repo
from helpers.results import load_tasks

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

HOLD_OUT = "def test_service_is_reachable():\n    raise AssertionError('no service here')\n"
RUNNER = '''\
"""The sample's own runner: every test_* function of tests/test_*.py, reported as TAP on stdout
(--tap) or as JUnit XML written to a file (--junit PATH)."""
import runpy
import sys
import traceback
from pathlib import Path
from xml.sax.saxutils import quoteattr

sys.path.insert(0, "src")
results = []
for path in sorted(Path("tests").glob("test_*.py")):
    for name, check in sorted(runpy.run_path(str(path)).items()):
        if name.startswith("test_") and callable(check):
            try:
                check()
                results.append((path.stem, name, True))
            except Exception:
                traceback.print_exc()
                results.append((path.stem, name, False))
if sys.argv[1] == "--tap":
    print("TAP version 13")
    for number, (module, name, ok) in enumerate(results, 1):
        print(("ok" if ok else "not ok") + f" {number} - {module}.{name}")
    print(f"1..{len(results)}")
else:
    cases = "".join(
        f"<testcase classname={quoteattr(module)} name={quoteattr(name)}>"
        + ("" if ok else '<failure message="failed"/>')
        + "</testcase>"
        for module, name, ok in results
    )
    out = Path(sys.argv[2])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f'<testsuite tests="{len(results)}">{cases}</testsuite>')
sys.exit(0 if all(ok for _, _, ok in results) else 1)
'''


@dataclass(frozen=True)
class Bug:
    name: str
    buggy: str
    fixed: str
    test: str
    """Its first test fails before the fix; any other passes on both sides."""
    subject: str


BUGS = [
    Bug(*CLAMP, "Fix clamp ignoring the upper bound"),
    Bug(*SLUG, "Fix slug keeping capitals"),
    Bug(
        "sign",
        "def sign(x):\n    return 1 if x > 0 else -1\n",
        "def sign(x):\n    return (x > 0) - (x < 0)\n",
        "from sign import sign\n\n\ndef test_sign_of_zero():\n    assert sign(0) == 0\n\n\n"
        "def test_sign_of_negative():\n    assert sign(-4) == -1\n",
        "Fix sign of zero",
    ),
    Bug(
        "mean",
        "def mean(xs):\n    return sum(xs) / len(xs)\n",
        "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
        "from mean import mean\n\n\ndef test_mean_of_nothing():\n    assert mean([]) == 0.0\n",
        "Fix mean crashing on an empty list",
    ),
    Bug(
        "initials",
        "def initials(name):\n    return name[0]\n",
        "def initials(name):\n    return ''.join(word[0] for word in name.split())\n",
        "from initials import initials\n\n\ndef test_initials_of_every_word():\n"
        "    assert initials('Ada King') == 'AK'\n",
        "Fix initials dropping the last name",
    ),
]

# How each repository's suite reports per test, and its testCommand (this interpreter).
PYTHON = shlex.quote(sys.executable)
COMMANDS = {
    "pytest": f"{PYTHON} -m pytest -q -p no:cacheprovider",
    "tap": f"{PYTHON} run_tests.py --tap",
    "junit-in-checkout": f"{PYTHON} run_tests.py --junit reports/junit.xml",
}
NAMES = {
    # pytest names a test `<module path>::<function>`; the runner `<module>.<function>` (TAP)
    # or classname `<module>` (JUnit).
    "pytest": "tests.test_{bug}::{test}",
    "tap": "test_{bug}.{test}",
    "junit-in-checkout": "test_{bug}::{test}",
}
HOLD_OUT_NAME = {
    "pytest": "tests.test_service::test_service_is_reachable",
    "tap": "test_service.test_service_is_reachable",
    "junit-in-checkout": "test_service::test_service_is_reachable",
}


def build(root: Path, reporter: str) -> GitRepo:
    repo = new_repo(root)
    repo.commit("Initial commit", files=first_files({"run_tests.py": RUNNER}))
    # The hold-out: a test that fails at every commit after it.
    repo.commit("Add a check of the service", files={"tests/test_service.py": HOLD_OUT})
    for bug in BUGS:
        repo.commit(f"Add {bug.name} helper", files={f"src/{bug.name}.py": bug.buggy})
        repo.commit(
            bug.subject,
            files={f"src/{bug.name}.py": bug.fixed, f"tests/test_{bug.name}.py": bug.test},
        )
    config: dict[str, object] = {
        "testCommand": COMMANDS[reporter],
        "mine": {"reruns": 0},
        "run": {"sandbox": "none"},
    }
    if reporter == "junit-in-checkout":
        config["tests"] = {"junit": "reports/*.xml"}
    (root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo


@dataclass(frozen=True)
class Exported:
    reporter: str
    repo: GitRepo
    out: Path
    stdout: str
    stderr: str
    folders: dict[str, Path]
    """Bug name -> its Harbor folder."""


def mine_and_export(base: Path, reporter: str) -> Exported:
    with isolated(base):
        repo = build(base / "repo", reporter)
        mined = run_gitgauge("mine", cwd=repo.root)
        assert mined.returncode == 0, mined.stderr
        out = base / "harbor"
        done = run_gitgauge("export", "--format", "harbor", "--out", str(out), cwd=repo.root)
        assert done.returncode == 0, done.stderr
    subjects = {task["subject"]: task["id"] for task in load_tasks(repo).values()}
    folders = {bug.name: out / subjects[bug.subject] for bug in BUGS if bug.subject in subjects}
    return Exported(reporter, repo, out, done.stdout, done.stderr, folders)


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Exported]:
    """One repository per reporter, mined and exported the first time a test asks for it."""
    made: dict[str, Exported] = {}

    def get(reporter: str) -> Exported:
        if reporter not in made:
            base = tmp_path_factory.mktemp(f"holdout-{reporter}")
            made[reporter] = mine_and_export(base, reporter)
        return made[reporter]

    return get


@pytest.fixture(params=sorted(COMMANDS))
def exported(request: pytest.FixtureRequest, exports: Callable[[str], Exported]) -> Exported:
    return exports(str(request.param))


@pytest.fixture
def with_pytest(exports: Callable[[str], Exported]) -> Exported:
    return exports("pytest")


def name_of(exported: Exported, bug: str, test: str) -> str:
    return NAMES[exported.reporter].format(bug=bug, test=test)


def test_every_fix_after_the_hold_out_is_exported(exported: Exported) -> None:
    tasks = load_tasks(exported.repo)
    assert len(tasks) == len(BUGS) and sorted(exported.folders) == sorted(b.name for b in BUGS)
    for task in tasks.values():
        # Each is a task by its tests; by the suite's exit code, none would be.
        assert task["failingBoth"] == [HOLD_OUT_NAME[exported.reporter]], task
    assert f"wrote {len(BUGS)} Harbor tasks" in exported.stdout
    assert "skipping" not in exported.stderr
    assert sorted(p.name for p in exported.out.iterdir()) == sorted(
        p.name for p in exported.folders.values()
    )
    check_harbor_folders(sorted(exported.folders.values()))
    for bug in BUGS:
        folder = exported.folders[bug.name]
        assert grading_of(folder) == "per-test"
        lists = json.loads((folder / "tests/grading/tests.json").read_text(encoding="utf-8"))
        first_test = bug.test.split("def ")[1].split("(")[0]
        assert lists["failToPass"] == [name_of(exported, bug.name, first_test)]
        assert name_of(exported, "calc", "test_add") in lists["passToPass"]
        assert HOLD_OUT_NAME[exported.reporter] not in lists["passToPass"]


def break_add(checkout: Path) -> None:
    (checkout / "src/calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")


def test_the_solution_scores_1_the_base_0_and_a_broken_pass_to_pass_test_0(
    exported: Exported, tmp_path: Path
) -> None:
    for bug in BUGS:
        folder = exported.folders[bug.name]
        base = verify(folder, tmp_path / bug.name / "base", solve=False)
        assert base.reward == "0", (bug.name, base)
        solved = verify(folder, tmp_path / bug.name / "solved", solve=True)
        assert solved.reward == "1", (bug.name, solved)
        assert "gitgauge grading: FAIL_TO_PASS 1 of 1 pass" in solved.stdout
        # The solution fixes the bug and breaks `add` (a PASS_TO_PASS test): 0.
        broken = verify(folder, tmp_path / bug.name / "broken", solve=True, agent=break_add)
        assert broken.reward == "0", (bug.name, broken)
        assert (
            f"PASS_TO_PASS broken: {name_of(exported, 'calc', 'test_add')} (failed)"
            in broken.stdout
        )


# -- what must score 0 where the exit code says otherwise (pytest) --------------------------------


def conftest(text: str) -> Callable[[Path], None]:
    """An agent that writes a conftest.py at the checkout's root (the fix touched none)."""

    def agent(checkout: Path) -> None:
        (checkout / "conftest.py").write_text(text, encoding="utf-8")

    return agent


IGNORE_TESTS = 'collect_ignore = ["tests/test_clamp.py", "tests/test_service.py"]\n'
SKIP_CLAMP = (
    "import pytest\n\n\n"
    "def pytest_collection_modifyitems(items):\n"
    "    for item in items:\n"
    '        if "clamp_high" in item.name or "service" in item.name:\n'
    '            item.add_marker(pytest.mark.skip(reason="not today"))\n'
)
NO_REPORT = IGNORE_TESTS + (
    "\n\ndef pytest_configure(config):\n"
    "    config.option.xmlpath = None  # pytest's --junitxml, switched off\n"
)


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        # The FAIL_TO_PASS test (and the hold-out) never run: every test that ran passed.
        (IGNORE_TESTS, "FAIL_TO_PASS not passing: tests.test_clamp::test_clamp_high (missing"),
        (SKIP_CLAMP, "FAIL_TO_PASS not passing: tests.test_clamp::test_clamp_high (skipped)"),
        (NO_REPORT, "reward 0: testCommand wrote no JUnit XML report and printed no TAP"),
    ],
    ids=["missing", "skipped", "no-report"],
)
def test_an_agent_that_keeps_the_fail_to_pass_test_from_passing_scores_0(
    with_pytest: Exported, tmp_path: Path, agent: str, says: str
) -> None:
    folder = with_pytest.folders["clamp"]
    # Without the bug fixed, the suite the agent leaves exits 0: the exit code would reward 1.
    attempt = verify(folder, tmp_path, solve=False, agent=conftest(agent))
    assert attempt.reward == "0", attempt
    assert says in attempt.stdout
    assert " failed" not in attempt.stdout and " passed" in attempt.stdout, attempt.stdout


def test_an_image_without_python3_scores_0_and_says_why(
    with_pytest: Exported, tmp_path: Path
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "sh", "cp", "rm", "mkdir", "dirname"):
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    env = dict(os.environ, PATH=str(tools))
    attempt = verify(with_pytest.folders["clamp"], tmp_path / "try", solve=True, env=env)
    assert attempt.reward == "0"
    assert "no python3 in the image" in attempt.stderr
