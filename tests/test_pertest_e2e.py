"""Per-test verdicts end to end with real pytest, through the CLI as a user runs it.

The sample repository's suite has a test that fails at every commit (an environment problem, not
a bug) and a test that fails every other run (driven by a counter file). With an unchanged
`pytest -q` testCommand, `gitgauge mine` verifies the real fixes with exactly the tests they make
pass, sets the flaky ones aside, and `gitgauge run` scores gold 100%, noop 0%, no regressions; an
agent that fixes the bug but breaks an old test is resolved *and* regressed, that test named.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolated
from helpers.pytest_project import CALC_TEST, CLAMP, SLUG, first_files
from helpers.repos import GitRepo, new_repo
from helpers.results import load_tasks

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

ALWAYS_BROKEN = (
    "def test_environment():\n"
    "    raise AssertionError('broken in today\\'s environment at every commit')\n"
)
# One counter per checkout (gitgauge verifies a candidate in one worktree), so that candidates
# verified side by side (`-j 2`) do not share one.
COUNTER_TEST = """\
import hashlib
import os
from pathlib import Path


def test_{name}():
    where = hashlib.sha256(os.getcwd().encode()).hexdigest()[:12]
    counter = Path(os.environ["FLAKY_COUNTER_DIR"]) / f"{name}-{{where}}"
    runs = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(runs + 1))
    assert runs % 2 == 0, "fails every other run"
"""
F2P = {
    "clamp": ["tests.test_clamp::test_clamp_high"],
    "slug": ["tests.test_slug::test_slug_lowercases"],
}


def build(root: Path) -> tuple[GitRepo, dict[str, str]]:
    repo = new_repo(root)
    shas: dict[str, str] = {}
    repo.commit(
        "Initial commit",
        files=first_files(
            {
                "tests/test_env.py": ALWAYS_BROKEN,
                "tests/test_flaky.py": COUNTER_TEST.format(name="sometimes"),
            }
        ),
    )
    repo.commit("Add clamp helper", files={"src/clamp.py": CLAMP.buggy})
    shas["clamp"] = repo.commit(
        "Fix clamp ignoring the upper bound",
        "clamp(9, 0, 5) returned 9: the upper bound was never applied.",
        files={"src/clamp.py": CLAMP.fixed, "tests/test_clamp.py": CLAMP.test},
    )
    repo.commit("Add slug helper", files={"src/slug.py": SLUG.buggy})
    shas["slug"] = repo.commit(
        "Fix slug keeping capitals",
        "Slugs must be lower case so that URLs do not depend on a title's capitals.",
        files={"src/slug.py": SLUG.fixed, "tests/test_slug.py": SLUG.test},
    )
    # Its only new test is flaky: nothing is proved.
    shas["retry"] = repo.commit(
        "Fix retry counter",
        files={
            "src/retry.py": "ATTEMPTS = 3\n",
            "tests/test_retry.py": COUNTER_TEST.format(name="retry"),
        },
    )
    # Touches a test and the source, but its new test passes before it too.
    shas["noop"] = repo.commit(
        "Fix comment in calc",
        files={
            "src/calc.py": "def add(a, b):\n    # the sum\n    return a + b\n",
            "tests/test_calc.py": CALC_TEST
            + "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n",
        },
    )
    # No sandbox: the flaky test counts its runs in a directory outside the checkout, which the
    # sandbox would hide (tests/test_sandbox.py grades per test in the sandbox).
    config = {
        "testCommand": f"{shlex.quote(sys.executable)} -m pytest -q",
        "run": {"sandbox": "none"},
        "env": {"FLAKY_COUNTER_DIR": None},
    }
    (root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo, shas


def cli_env(base: Path) -> dict[str, str]:
    counters = base / "counters"
    counters.mkdir(exist_ok=True)
    private = base / "tmp"
    private.mkdir(exist_ok=True)
    return dict(os.environ, FLAKY_COUNTER_DIR=str(counters), TMPDIR=str(private))


class Mined:
    def __init__(self, base: Path, repo: GitRepo, shas: dict[str, str], stdout: str, stderr: str):
        self.base = base
        self.repo = repo
        self.shas = shas
        self.stdout = stdout
        self.stderr = stderr
        self.tasks = load_tasks(repo)


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mined]:
    base = tmp_path_factory.mktemp("pertest")
    with isolated(base):
        repo, shas = build(base / "repo")
        result = run_gitgauge("mine", "-j", "2", cwd=repo.root, env=cli_env(base))
        assert result.returncode == 0, result.stderr
        yield Mined(base, repo, shas, result.stdout, result.stderr)


def test_real_fixes_are_verified_with_exactly_their_fail_to_pass(mined: Mined) -> None:
    assert set(mined.tasks) == {mined.shas["clamp"], mined.shas["slug"]}, mined.stdout
    for name in ("clamp", "slug"):
        task = mined.tasks[mined.shas[name]]
        assert task["failToPass"] == F2P[name]
        assert task["failingBoth"] == ["tests.test_env::test_environment"]
        assert task["noTestPassedAtParent"] is False
        assert "tests.test_flaky::test_sometimes" in task["flaky"]
    clamp = mined.tasks[mined.shas["clamp"]]
    assert clamp["passToPass"] == 2  # test_add, and test_clamp_inside (passes at the parent too)
    names = json.loads(
        (mined.repo.root / ".gitgauge" / "tasks" / clamp["_file"])
        .with_suffix(".tests.json")
        .read_text(encoding="utf-8")
    )["passToPass"]
    assert names == ["tests.test_calc::test_add", "tests.test_clamp::test_clamp_inside"]
    assert "F2P 1 / P2P 2" in mined.stdout
    assert "JUnit XML" not in mined.stderr  # every run reported: no exit-code fallback


def test_flaky_only_and_no_fail_to_pass_candidates_are_rejected(mined: Mined) -> None:
    lines = mined.stdout.splitlines()
    retry = next(  # its verdict line, not a "still at it" progress line
        line for line in lines if "Fix retry counter" in line and "(still at it, " not in line
    )
    assert "[flaky:" in retry and "tests.test_retry::test_retry" in retry
    noop = next(line for line in lines if "Fix comment in calc" in line)
    assert "[passes before the fix:" in noop
    assert "flaky: 1" in mined.stdout


def test_one_worktree_per_candidate_and_nothing_left(mined: Mined) -> None:
    assert os.listdir(mined.base / "tmp") == []
    assert mined.repo.git("worktree", "list").count("\n") == 1


def write_configs(folder: Path) -> dict[str, Path]:
    configs = {
        "gold": {"name": "gold", "adapter": "gold"},
        "noop": {"name": "noop", "adapter": "noop"},
        # Fixes clamp, and breaks add on the way.
        "breaker": {
            "name": "breaker",
            "adapter": "script",
            "command": f"printf %s {shlex.quote(CLAMP.fixed)} > src/clamp.py && "
            "printf 'def add(a, b):\\n    return a - b\\n' > src/calc.py",
        },
    }
    paths = {}
    for name, config in configs.items():
        paths[name] = folder / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(config), encoding="utf-8")
    return paths


def results(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[record["config"], record["task"]] = record
    return found


def test_gold_resolves_all_noop_none_and_a_breaking_agent_is_named(
    mined: Mined, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(mined.repo.root, root, symlinks=True)
    configs = write_configs(tmp_path)
    env = cli_env(tmp_path)
    ran = run_gitgauge(
        "run", "-c", str(configs["gold"]), "-c", str(configs["noop"]), cwd=root, env=env
    )
    assert ran.returncode == 0, ran.stderr
    found = results(root)
    assert len(found) == 4
    for (config, _task), result in found.items():
        assert result["status"] == ("resolved" if config == "gold" else "unresolved"), result
        assert result["regressed"] is False
        assert result["passToPassFailed"] == []
        if config == "noop":
            assert result["failToPassFailed"] and not set(result["failToPassFailed"]) - set(
                F2P["clamp"] + F2P["slug"]
            )
    clamp_id = mined.tasks[mined.shas["clamp"]]["id"]
    broke = run_gitgauge(
        "run", "-c", str(configs["breaker"]), "--task", clamp_id, cwd=root, env=env
    )
    assert broke.returncode == 0, broke.stderr
    result = results(root)["breaker", clamp_id]
    assert result["status"] == "resolved"
    assert result["regressed"] is True
    assert result["failToPassFailed"] == []
    assert result["passToPassFailed"] == ["tests.test_calc::test_add"]
    report = run_gitgauge("report", "--tasks", cwd=root, env=env)
    assert report.returncode == 0, report.stderr
    assert "tests.test_calc::test_add" in report.stdout


def test_without_reports_a_suite_verdict_that_flips_is_flaky(tmp_path: Path) -> None:
    """A suite with no per-test report: the fix's run passes, its rerun fails, so nothing is
    proved and the candidate is rejected as flaky (never verified on a lucky run)."""
    repo = new_repo(tmp_path / "repo")
    runner = (
        "import os, sys\nfrom pathlib import Path\n"
        "counter = Path(os.environ['FLAKY_COUNTER_DIR']) / 'suite'\n"
        "runs = int(counter.read_text()) if counter.exists() else 0\n"
        "counter.write_text(str(runs + 1))\n"
        "sys.exit(runs % 2)\n"
    )
    repo.commit("Initial commit", files={"run.py": runner, "src/a.py": "A = 1\n"})
    repo.commit(
        "Fix value of A",
        files={"src/a.py": "A = 2\n", "tests/test_a.py": "assert True\n"},
    )
    (repo.root / "gitgauge.yaml").write_text(
        yaml.safe_dump(
            {
                "testCommand": f"{shlex.quote(sys.executable)} run.py",
                "run": {"sandbox": "none"},
                "env": {"FLAKY_COUNTER_DIR": None},
            }
        ),
        encoding="utf-8",
    )
    result = run_gitgauge("mine", cwd=repo.root, env=cli_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "[flaky: the suite verdict flipped between runs at the fix" in result.stdout
    assert result.stderr.count("wrote no JUnit XML report") == 1  # said once, not per run
    assert load_tasks(repo) == {}


def test_the_mine_summary_counts_tasks_whose_parent_passed_no_test(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from gitgauge.cli.mine import print_mine_summary
    from gitgauge.core.records import Task
    from gitgauge.core.store import Store
    from gitgauge.mining.mine import MineSummary

    def task(flag: bool) -> Task:
        return Task(
            id=f"t{flag}", base="b", fix="f", subject="s", prompt="p", testFiles=[],
            promptQuality="rich", minedAt="now", failToPass=["x"], passToPass=0,
            noTestPassedAtParent=flag,
        )  # fmt: skip

    summary = MineSummary(scanned=2, candidates=2, tasks=[task(True), task(False)])
    print_mine_summary(summary, Store(tmp_path))
    assert (
        "  no test passed at the parent: 1 (may repair the environment" in capsys.readouterr().out
    )
