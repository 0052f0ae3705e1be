"""Verdicts that count only what ran, each case a real repository mined by the real CLI with real
pytest: a test missing from the parent's report is failing there only when it is one of the
fix's own tests; a parent that wrote no report is judged from the fix's own tests; a suite that
runs nothing, a timeout and a failing suite say their true reason.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo, new_repo
from helpers.results import load_tasks, summary

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
PYTEST_INI = "[pytest]\npythonpath = src\n"
CALC = "def add(a, b):\n    return a + b\n"
BROKEN_CALC = "def add(a, b):\n    return a - b\n"
CALC_TESTS = (
    "from calc import add\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "class TestAdd:\n    def test_zero(self):\n        assert add(0, 0) == 0\n"
)
OTHER_TESTS = "def test_true():\n    assert True\n"
# Every test that passes at the base.
BASE_PASSING = [
    "tests.test_calc.TestAdd::test_zero",
    "tests.test_calc::test_add",
    "tests.test_other::test_true",
]
SIGN = "\n\ndef sign(x):\n    return (x > 0) - (x < 0)\n"
SIGN_TESTS = (
    "from calc import sign\n\n\n"
    "def test_sign_negative():\n    assert sign(-2) == -1\n\n\n"
    "def test_sign_positive():\n    assert sign(7) == 1\n"
)
SIGN_F2P = ["tests.test_sign::test_sign_negative", "tests.test_sign::test_sign_positive"]
SIGN_FIX: dict[str, str | bytes | None] = {
    "src/calc.py": CALC + SIGN,
    "tests/test_sign.py": SIGN_TESTS,
}
"""The fix that adds sign and its tests."""


def base_repo(
    root: Path, *, ini: str | None = PYTEST_INI, other: bool = True, calc: str = CALC
) -> GitRepo:
    repo = new_repo(root)
    files: dict[str, str | bytes | None] = {"src/calc.py": calc, "tests/test_calc.py": CALC_TESTS}
    if other:
        files["tests/test_other.py"] = OTHER_TESTS
    if ini is not None:
        files["pytest.ini"] = ini
    repo.commit("Initial commit", files=files)
    return repo


def configure(repo: GitRepo, **settings: Any) -> None:
    """No reruns: no case here is about flaky tests, and each run of pytest takes a while."""
    config = {"testCommand": PYTEST, "mine": {"reruns": 0}, **settings}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def mine(repo: GitRepo, tmp_path: Path, *args: str) -> Any:
    private = tmp_path / "tmp"
    private.mkdir(exist_ok=True)
    return run_gitgauge("mine", *args, cwd=repo.root, env=dict(os.environ, TMPDIR=str(private)))


def mine_fix(
    repo: GitRepo,
    tmp_path: Path,
    files: dict[str, str | bytes | None] = SIGN_FIX,
    subject: str = "Fix sign missing from calc",
    **settings: Any,
) -> tuple[str, Any]:
    """Commit the fix, configure gitgauge with `settings`, mine: the fix's sha and the mine,
    which succeeded."""
    fix = repo.commit(subject, files=files)
    configure(repo, **settings)
    result = mine(repo, tmp_path)
    assert result.returncode == 0, result.stderr
    return fix, result


def line_of(stdout: str, sha: str) -> str:
    """The candidate's verdict line (not a "still at it" progress line, printed under load)."""
    return next(
        line for line in stdout.splitlines() if sha[:8] in line and "(still at it, " not in line
    )


def pass_to_pass_names(repo: GitRepo, task: dict[str, Any]) -> list[str]:
    path = repo.root / ".gitgauge" / "tasks" / task["_file"]
    names: list[str] = json.loads(path.with_suffix(".tests.json").read_text())["passToPass"]
    return names


def test_a_new_module_importing_a_new_name_keeps_the_other_tests_pass_to_pass(
    tmp_path: Path,
) -> None:
    """At the parent `tests/test_sign.py` cannot import `sign`: the other modules still run
    (--continue-on-collection-errors), and only the fix's own tests are FAIL_TO_PASS."""
    repo = base_repo(tmp_path / "repo")
    fix, result = mine_fix(repo, tmp_path)
    task = load_tasks(repo)[fix]
    assert task["failToPass"] == SIGN_F2P
    assert task["passToPass"] == 3
    assert pass_to_pass_names(repo, task) == BASE_PASSING
    assert task["notRunAtParent"] == 0
    assert task["noTestPassedAtParent"] is False
    assert task["failToPassOutsideFix"] is False
    assert task["testCommand"] == PYTEST
    assert "F2P 2 / P2P 3" in line_of(result.stdout, fix)


def test_a_fix_whose_own_test_fails_at_it_is_rejected_as_failing_at_the_fix(
    tmp_path: Path,
) -> None:
    """The other tests pass on both sides; the fix's new test fails at the fix and is missing
    at the parent: no test passes only with the fix, and the reason names the failing test."""
    repo = base_repo(tmp_path / "repo")
    wrong_sign = "\n\ndef sign(x):\n    return 1\n"
    fix, result = mine_fix(
        repo,
        tmp_path,
        {
            "src/calc.py": CALC + wrong_sign,
            "tests/test_sign.py": "from calc import sign\n\n\n"
            "def test_sign():\n    assert sign(-2) == -1\n",
        },
    )
    assert load_tasks(repo) == {}
    assert (
        f"rejected  {fix[:8]} Fix sign missing from calc  [fails at the fix: no test passes "
        "only with the fix; failing: tests.test_sign::test_sign]"
    ) in result.stdout
    assert summary(result.stdout)["fails at the fix"] == "1"


def test_a_conftest_needing_a_new_name_is_judged_from_the_fixs_own_tests(tmp_path: Path) -> None:
    """At the parent the conftest does not import: pytest exits 4 before writing a report. The
    fix's own tests are FAIL_TO_PASS, nothing is PASS_TO_PASS, and that is said once, on the
    candidate's line, as the crash it is (no warning about exit codes or a report option)."""
    repo = base_repo(tmp_path / "repo")
    fix, result = mine_fix(
        repo,
        tmp_path,
        {
            "src/calc.py": CALC + SIGN,
            "tests/conftest.py": "import pytest\nfrom calc import sign\n\n\n"
            "@pytest.fixture\ndef signer():\n    return sign\n",
            "tests/test_sign.py": "def test_sign(signer):\n    assert signer(-2) == -1\n",
        },
    )
    task = load_tasks(repo)[fix]
    assert task["failToPass"] == ["tests.test_sign::test_sign"]
    assert task["passToPass"] == 0
    assert pass_to_pass_names(repo, task) == []
    assert task["notRunAtParent"] == 3
    assert task["noTestPassedAtParent"] is False
    assert task["baseSuitePasses"] is None  # per test: no exit-code base run
    line = line_of(result.stdout, fix)
    assert line.endswith(
        "(F2P 1 / P2P 0, the suite crashed before running tests at the parent (exit 4): "
        "FAIL_TO_PASS is the fix's own tests, nothing is PASS_TO_PASS, 3 not run at the parent)"
    ), line
    assert "JUnit XML" not in result.stderr


def test_with_x_the_tests_after_the_first_failure_are_not_run_not_failing(tmp_path: Path) -> None:
    """`pytest -x` stops the parent's run at the fix's first test: the fix's second test (its
    own, missing) is FAIL_TO_PASS, the other modules (missing) did not run."""
    repo = base_repo(tmp_path / "repo")
    repo.commit("Add sign", files={"src/calc.py": CALC + "\n\ndef sign(x):\n    return 1\n"})
    fix, result = mine_fix(
        repo,
        tmp_path,
        # tests/test_a_sign.py sorts first: pytest runs it before the other modules.
        {"src/calc.py": CALC + SIGN, "tests/test_a_sign.py": SIGN_TESTS},
        "Fix sign of negative numbers",
        testCommand=f"{PYTEST} -x",
    )
    task = load_tasks(repo)[fix]
    assert task["failToPass"] == [
        "tests.test_a_sign::test_sign_negative",
        "tests.test_a_sign::test_sign_positive",
    ]
    assert task["passToPass"] == 0
    assert task["notRunAtParent"] == 3
    assert "F2P 2 / P2P 0, 3 not run at the parent" in line_of(result.stdout, fix)
    assert "stops early (-x)" in result.stderr


def test_fail_to_pass_outside_the_fixs_tests_is_flagged(tmp_path: Path) -> None:
    """The fix repairs add, whose old test failed before it, and adds an unrelated test that
    passes on both sides: FAIL_TO_PASS holds none of its own tests, which a reviewer sees."""
    repo = base_repo(tmp_path / "repo", other=False, calc=BROKEN_CALC)
    fix, result = mine_fix(
        repo,
        tmp_path,
        {"src/calc.py": CALC, "tests/test_more.py": OTHER_TESTS},
        "Fix add subtracting",
    )
    task = load_tasks(repo)[fix]
    assert task["failToPass"] == ["tests.test_calc::test_add"]
    assert task["failToPassOutsideFix"] is True
    assert "the failing tests live in files the fix did not change: review it" in line_of(
        result.stdout, fix
    )
    assert summary(result.stdout)["FAIL_TO_PASS in files the fix did not change"].startswith("1 ")


def test_a_suite_that_collects_nothing_says_so_and_stops_after_three(tmp_path: Path) -> None:
    """Without `pythonpath = src` no test module imports: every candidate is rejected as running
    no test (not as "passes before the fix"), and mine stops after three in a row, naming the
    likely cause. The oldest candidate is never tried; none of the three is remembered."""
    repo = base_repo(tmp_path / "repo", ini=None, other=False)
    shas = []
    for name in ("one", "two", "three", "four"):
        shas.append(
            repo.commit(
                f"Fix {name}",
                files={
                    f"src/{name}.py": "X = 1\n",
                    f"tests/test_{name}.py": f"from {name} import X\n\n\n"
                    "def test_x():\n    assert X == 1\n",
                },
            )
        )
    configure(repo)
    result = mine(repo, tmp_path)
    assert result.returncode == 1, result.stdout
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 3
    for line, sha in zip(lines, reversed(shas[1:]), strict=True):
        assert line.startswith(f"rejected  {sha[:8]} ")
        assert "[runs no test at the fix: no test passed at the fix (of " in line
        assert "; failing: tests.test_calc, " in line
        assert line.endswith("): E   ModuleNotFoundError: No module named 'two']"), line
    assert "passes before the fix" not in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("gitgauge: error")]
    assert len(errors) == 1
    assert "passed no test at the fix of 3 candidates in a row" in errors[0]
    assert "PYTHONPATH=src" in errors[0]
    assert not list((repo.root / ".gitgauge" / "judged").glob("*.json"))


def test_a_run_that_collects_no_test_at_all_runs_no_test(tmp_path: Path) -> None:
    """`-k` that selects nothing: pytest exits 5 with an empty report."""
    repo = base_repo(tmp_path / "repo")
    fix, result = mine_fix(repo, tmp_path, testCommand=f"{PYTEST} -k no_such_test")
    line = line_of(result.stdout, fix)
    assert "[runs no test at the fix: the suite ran no test at the fix (exit 5): " in line, line
    assert "deselected" in line
    assert summary(result.stdout)["runs no test at the fix"] == "1"


def test_a_timeout_names_its_limit_and_unit(tmp_path: Path) -> None:
    """`timeouts.test: 300` meant as seconds: the rejection says 0.3 s and 300 ms, and mine's
    closing advice names the key to raise (one candidate: one candidate, not "1 candidates")."""
    repo = base_repo(tmp_path / "repo")
    fix, result = mine_fix(
        repo,
        tmp_path,
        {
            "src/calc.py": CALC + SIGN,
            "tests/test_sign.py": "import time\n\n\ndef test_slow():\n    time.sleep(5)\n",
        },
        "Fix slow sign",
        timeouts={"test": 300},
    )
    assert line_of(result.stdout, fix).endswith(
        "[timed out: the suite timed out at the fix after 0.3 s (timeouts.test: 300 ms)]"
    )
    why, try_next = result.stdout.splitlines()[-2:]
    assert why == "no tasks: 1 candidate was rejected (1 timed out)."
    assert (
        "a longer timeouts.test in gitgauge.yaml (now 300 ms = 0.3 s; 1 candidate timed out at "
        "the fix)"
    ) in try_next


RUNNER = """\
import sys
from pathlib import Path

failed = "return a - b" in Path("src/calc.py").read_text()
if failed:
    print("test_add ... AssertionError: expected 5, got -1")
print(f"{int(failed)} failed, 1 passed")
print("-------|---------|")
print("File   | % Stmts |")
print("-------|---------|")
print("=======================")
sys.exit(1 if failed else 0)
"""


def test_a_reason_quotes_a_telling_line_not_a_decoration(tmp_path: Path) -> None:
    """Without reports a rejection quotes the run's output: its error line when it failed, its
    summary when it passed, never the coverage table's border it ends with."""
    repo = new_repo(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        files={"run.py": RUNNER, "src/calc.py": BROKEN_CALC},
    )
    broken = repo.commit(
        "Fix add, not quite",
        files={"src/calc.py": "def add(a, b):\n    return a - b  # fixed\n", "tests/t.py": "#\n"},
    )
    repo.commit("Break add again", files={"src/calc.py": "def add(a, b):\n    return a + b\n"})
    noop = repo.commit(
        "Fix add comment",
        files={"src/calc.py": "def add(a, b):\n    return a + b  # sum\n", "tests/t.py": "##\n"},
    )
    configure(repo, testCommand=f"{shlex.quote(sys.executable)} run.py")
    result = mine(repo, tmp_path)
    assert result.returncode == 0, result.stderr
    assert line_of(result.stdout, broken).endswith(
        "[fails at the fix: exit 1: test_add ... AssertionError: expected 5, got -1]"
    )
    assert line_of(result.stdout, noop).endswith(
        "[passes before the fix: suite passed at the parent: 0 failed, 1 passed]"
    )


def test_a_suite_that_crashes_at_the_fix_is_said_to_crash_not_to_lack_a_report(
    tmp_path: Path,
) -> None:
    """A conftest that imports what is not installed: pytest exits 4 before any test, at the fix.
    The warning says the suite crashed and quotes why; it sends no one to the report options."""
    repo = base_repo(tmp_path / "repo")
    fix, result = mine_fix(
        repo, tmp_path, {**SIGN_FIX, "tests/conftest.py": "import gitgauge_not_installed\n"}
    )
    crash = "E   ModuleNotFoundError: No module named 'gitgauge_not_installed'"
    assert line_of(result.stdout, fix).endswith(f"[fails at the fix: exit 4: {crash}]")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: the suite crashed before running tests (exit 4; verdicts fall back to the "
        f"exit code): {crash}"
    ], result.stderr
    assert "per-test-verdicts.md" not in result.stderr and "JUnit" not in result.stderr


TAP_RUNNER = """\
import runpy
import sys
from pathlib import Path

sys.path.insert(0, "src")
print("TAP version 13")
number = 0
for path in sorted(Path("tests").glob("test_*.py")):
    try:
        tests = runpy.run_path(str(path))
    except ImportError:
        continue  # a module that does not import at this commit: its tests are missing
    for name, test in sorted(tests.items()):
        if not name.startswith("test_"):
            continue
        try:
            test()
            outcome = "ok"
        except AssertionError:
            outcome = "not ok"
        for _ in range(2):  # two assertions of one test, as TAP runners print them
            number += 1
            print(f"{outcome} {number} - {name}")
print(f"1..{number}")
"""


def test_a_suite_reporting_by_tap_is_warned_about_in_tap_words(tmp_path: Path) -> None:
    """A runner that prints TAP, naming each test twice: the notice and the duplicates warning
    speak of the TAP it prints, never of a JUnit XML report."""
    repo = base_repo(tmp_path / "repo", ini=None)
    repo.commit("Add the TAP runner", files={"tap.py": TAP_RUNNER})
    fix, result = mine_fix(repo, tmp_path, testCommand=f"{shlex.quote(sys.executable)} tap.py")
    assert load_tasks(repo)[fix]["failToPass"] == ["test_sign_negative", "test_sign_positive"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: testCommand reports by TAP: per-test outcomes are read from the TAP it prints",
        "warning: the TAP testCommand prints names some tests more than once (e.g. 'test_add'); "
        "the worst outcome of each is kept",
    ], result.stderr
