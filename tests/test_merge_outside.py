"""A recorded merge that did more than resolve is said to be so (issue 36), through the real CLI:
`gitgauge mine --merges`, `gitgauge run` with gold and with scripts that resolve the conflicts
as the merge did (and nothing else), then `gitgauge report`.

The histories are real-project-like: each merge commit resolves a conflict and also changes
files outside it, as GitGoodBench's merge_0001 (spring-data-elasticsearch) does.

| merge        | beyond the conflict in src/calc.py                                          |
| ------------ | --------------------------------------------------------------------------- |
| issue        | renames a test file (and the renamed test needs the next change), deletes   |
|              | a test file, adds a function to src/util.py                                 |
| undoes-other | renames and deletes test files `other` added, undoes `other`'s src/util.py  |
| clean-both   | fixes src/shapes.py, which both sides changed cleanly and which git's merge |
|              | leaves broken (`other`'s new test fails on it)                              |
| plain        | in a project without tests: bumps VERSION, makes tools/run.sh executable    |

Gold must be `exact` and `exactTree` on each; a script that writes the recorded resolution of
the conflicted file only is resolved and `exact` (not `exactTree`), and the report says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.configs import configs_args, write_configs
from helpers.environment import isolated
from helpers.repos import RUN_TESTS, TEST_COMMAND, GitRepo, new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RESOLVE = 'cp -R "$RESOLVED/$GITGAUGE_TASK_ID/." . && git add -A'
"""Writes the recorded merge's version of each conflicted file (laid out per task by the
fixture), nothing else, and marks the conflicts resolved."""
OWN_FIX = (
    f"{RESOLVE} && if grep -q 'return square(side) [*] side' src/shapes.py; then "
    "printf '\\nsquare = squared\\n' >> src/shapes.py; fi"
)
"""The same, and its own repair of src/shapes.py where git's clean merge left it broken."""

SHAPES = (
    "def square(x):\n    return x * x\n\n\ndef area(side):\n    return square(side)\n\n\n"
    "def perimeter(side):\n    return 4 * side\n"
)
SHAPES_MAIN = SHAPES.replace("square", "squared")
VOLUME = "\n\ndef volume(side):\n    return {}(side) * side\n"
TEST_CALC = "from calc import greet\n\n\ndef test_greet():\n    assert greet('Bo')[-2:] == 'Bo'\n"
UTIL = "def one():\n    return 1\n"
TEST_OLD = "from util import one\n\n\ndef test_one():\n    assert one() == 1\n"
TEST_TWO = "\n\ndef test_two():\n    from util import two\n\n    assert two() == 2\n"


def calc(word: str) -> str:
    return f"def greet(name):\n    return '{word} ' + name\n"


def _sides(repo: GitRepo, name: str, *, other: dict[str, str | None], main: dict[str, str]) -> None:
    """Branch `name` rewords greet and makes `other`'s changes; main rewords greet differently
    and makes `main`'s: merging them conflicts in src/calc.py."""
    repo.git("checkout", "-q", "-b", name)
    repo.commit(f"{name}: informal greeting", files={"src/calc.py": calc("Hi"), **other})
    repo.git("checkout", "-q", "main")
    repo.commit(f"{name}: formal greeting", files={"src/calc.py": calc("Dear"), **main})


def _merge(repo: GitRepo, name: str, beyond: dict[str, str | None]) -> str:
    """Merge `name`, resolve the conflict with a third wording and make `beyond`'s changes in
    the same commit (None: delete)."""
    resolved: dict[str, str | None] = {"src/calc.py": calc(f"Hey {name}"), **beyond}
    return repo.merge([name], f"Merge branch '{name}'", resolved=resolved, day="2024-03-01")


def build_project(root: Path) -> dict[str, str]:
    """The project with tests; scenario -> merge sha."""
    repo = new_repo(root)
    repo.commit(
        "Initial project",
        files={
            "run_tests.py": RUN_TESTS,
            "src/calc.py": calc("Hello"),
            "src/util.py": UTIL,
            "src/shapes.py": SHAPES,
            "tests/test_calc.py": TEST_CALC,
            "tests/test_old.py": TEST_OLD,
            "tests/test_doomed.py": "def test_doomed():\n    assert True\n",
            ".gitignore": "__pycache__/\n",
            "gitgauge.yaml": f"testCommand: {TEST_COMMAND}\n",
        },
    )
    merges: dict[str, str] = {}
    _sides(repo, "issue", other={}, main={})
    merges["issue"] = _merge(
        repo,
        "issue",
        {
            "tests/test_old.py": None,
            "tests/test_renamed.py": TEST_OLD + TEST_TWO,
            "tests/test_doomed.py": None,
            "src/util.py": UTIL + "\n\ndef two():\n    return 2\n",
        },
    )
    util = (root / "src" / "util.py").read_text()
    side = "def test_side():\n    assert True\n"
    _sides(
        repo,
        "undoes-other",
        other={
            "tests/test_side.py": side,
            "tests/test_side2.py": side.replace("side", "side2"),
            "src/util.py": util.replace("return 1", "return 1  # other's"),
        },
        main={},
    )
    merges["undoes-other"] = _merge(
        repo,
        "undoes-other",
        {
            "tests/test_side.py": None,
            "tests/test_side_renamed.py": side,
            "tests/test_side2.py": None,
            "src/util.py": util,
        },
    )
    # Both sides change src/shapes.py cleanly; merged, `volume` calls what main renamed.
    _sides(
        repo,
        "clean-both",
        other={
            "src/shapes.py": SHAPES + VOLUME.format("square"),
            "tests/test_shapes.py": (
                "from shapes import volume\n\n\ndef test_volume():\n    assert volume(2) == 8\n"
            ),
        },
        main={"src/shapes.py": SHAPES_MAIN},
    )
    merges["clean-both"] = _merge(
        repo, "clean-both", {"src/shapes.py": SHAPES_MAIN + VOLUME.format("squared")}
    )
    return merges


def build_plain(root: Path) -> str:
    """A project without tests (its testCommand: `true`); the merge's sha."""
    repo = new_repo(root)
    repo.commit(
        "Initial app",
        files={
            "src/calc.py": calc("Hello"),
            "VERSION": "1.0\n",
            "tools/run.sh": "#!/bin/sh\necho run\n",
            "gitgauge.yaml": "testCommand: 'true'\n",
        },
    )
    _sides(repo, "plain", other={}, main={})
    repo.git("merge", "--no-ff", "-q", "-m", "Merge branch 'plain'", "plain", check=False)
    repo.write("src/calc.py", calc("Hey plain"))
    repo.write("VERSION", "1.1\n")
    (root / "tools" / "run.sh").chmod(0o755)
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-edit", "--no-verify")
    return repo.git("rev-parse", "HEAD").strip()


@dataclass(frozen=True)
class Ran:
    roots: dict[str, Path]
    """Scenario -> the repository its merge is in."""
    merges: dict[str, str]
    tasks: dict[str, dict[str, Any]]
    """Scenario -> task record."""
    results: dict[tuple[str, str], dict[str, Any]]
    """(config, scenario) -> result record."""
    mined: dict[str, str]
    """Repository name -> what `mine` printed."""
    reports: dict[str, str]
    """Repository name -> `report`'s table."""
    rows: dict[str, dict[str, Any]]
    """`project:CONFIG` and `plain:CONFIG` -> the report's JSON row."""
    matrix: dict[tuple[str, str], dict[str, Any]]
    """(config, scenario) -> `report --tasks --format json`'s record."""


def _lay_resolutions(root: Path, into: Path) -> None:
    """For each merge task of `root`: the recorded merge's conflicted files, under its id."""
    for path in (root / ".gitgauge" / "tasks").glob("*.yaml"):
        task = yaml.safe_load(path.read_text())
        for name in task["conflictFiles"]:
            shown = subprocess.run(
                ["git", "show", f"{task['merge']}:{name}"],
                cwd=root, capture_output=True, check=True,
            )  # fmt: skip
            target = into / task["id"] / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(shown.stdout)


def _mine_run_report(root: Path, configs: list[str], env: dict[str, str]) -> dict[str, Any]:
    mined = run_gitgauge("mine", "--merges", cwd=root, env=env)
    assert mined.returncode == 0, mined.stderr
    _lay_resolutions(root, Path(env["RESOLVED"]))
    # No sandbox: the scripts read their resolutions outside the workspace.
    done = run_gitgauge("run", "--sandbox", "none", *configs_args(*configs), cwd=root, env=env)
    assert done.returncode == 0, done.stderr + done.stdout
    outputs: dict[str, Any] = {"mine": mined.stdout}
    for name, args in {
        "table": (),
        "json": ("--format", "json"),
        "matrix": ("--tasks", "--format", "json"),
    }.items():
        report = run_gitgauge("report", *args, cwd=root, env=env)
        assert report.returncode == 0, report.stderr
        outputs[name] = report.stdout
    return outputs


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    base = tmp_path_factory.mktemp("merge-outside")
    with isolated(base):
        roots = {"project": base / "project", "plain": base / "plain"}
        merges = build_project(roots["project"])
        merges["plain"] = build_plain(roots["plain"])
        agents = {
            "gold": {"adapter": "gold"},
            "resolver": {"adapter": "script", "command": RESOLVE},
            "own-fix": {"adapter": "script", "command": OWN_FIX},
        }
        configs = write_configs(base / "configs", agents)
        env = {**os.environ, "RESOLVED": str(base / "resolved")}
        outputs = {
            "project": _mine_run_report(roots["project"], list(configs.values()), env),
            "plain": _mine_run_report(roots["plain"], [configs["gold"], configs["resolver"]], env),
        }
    by_sha = {sha: scenario for scenario, sha in merges.items()}
    tasks: dict[str, dict[str, Any]] = {}
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for root in roots.values():
        ids: dict[str, str] = {}
        for path in (root / ".gitgauge" / "tasks").glob("*.yaml"):
            record = yaml.safe_load(path.read_text())
            tasks[by_sha[record["merge"]]] = record
            ids[record["id"]] = by_sha[record["merge"]]
        for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
            result = json.loads(path.read_text())
            results[(result["config"], ids[result["task"]])] = result
    ids = {task["id"]: scenario for scenario, task in tasks.items()}
    return Ran(
        roots={
            scenario: roots["plain" if scenario == "plain" else "project"] for scenario in merges
        },
        merges=merges,
        tasks=tasks,
        results=results,
        mined={name: out["mine"] for name, out in outputs.items()},
        reports={name: out["table"] for name, out in outputs.items()},
        rows={
            f"{name}:{row['config']}": row
            for name, out in outputs.items()
            for row in json.loads(out["json"])
        },
        matrix={
            (record["config"], ids[record["task"]]): record
            for out in outputs.values()
            for record in json.loads(out["matrix"])
        },
    )


OUTSIDE = {
    "issue": ["src/util.py", "tests/test_doomed.py", "tests/test_old.py", "tests/test_renamed.py"],
    "undoes-other": [
        "src/util.py",
        "tests/test_side.py",
        "tests/test_side2.py",
        "tests/test_side_renamed.py",
    ],
    "clean-both": ["src/shapes.py"],
    "plain": ["VERSION", "tools/run.sh"],
}
"""What each recorded merge changed beyond git's merge of its parents (both paths of a rename)."""


def test_mine_records_what_each_merge_changed_outside_its_conflicts(ran: Ran) -> None:
    for scenario, outside in OUTSIDE.items():
        task = ran.tasks[scenario]
        assert (task["kind"], task["conflictFiles"]) == ("merge", ["src/calc.py"]), scenario
        assert task["outsideConflicts"] == outside, scenario
        assert task["testsAtMerge"] is True, scenario
    said = ran.mined["project"]
    assert "the merge also changed 4 files outside the conflicts" in said, said
    assert "the merge also changed 1 file outside the conflicts" in said, said
    assert "merge tasks:       3" in said, said


def test_gold_is_exact_and_exact_tree_on_every_task(ran: Ran) -> None:
    for scenario in OUTSIDE:
        gold = ran.results[("gold", scenario)]
        # The error's kind and message first: pytest cuts a long record short.
        assert (gold["status"], gold["exact"], gold["exactTree"]) == ("resolved", True, True), (
            scenario,
            gold.get("errorKind"),
            gold.get("errorMessage"),
            gold,
        )
        assert gold["testExitCode"] == 0, gold
        # It wrote the merge's own test files: nothing of it was put back or left out.
        assert (gold["reverted"], gold["dropped"]) == ([], {}), gold
        assert gold["outsideChanges"] == OUTSIDE[scenario]
        assert gold["outsideConflicts"] == OUTSIDE[scenario]


def test_an_agent_that_resolves_the_conflicts_exactly_is_resolved_and_exact(ran: Ran) -> None:
    """The suite needs the merge's outside changes (the renamed test calls the function the
    merge added; `other`'s test calls what git's merge broke): they are laid over the agent's
    result, so only the resolution is judged."""
    for scenario in OUTSIDE:
        resolver = ran.results[("resolver", scenario)]
        assert (resolver["status"], resolver["exact"], resolver["exactTree"]) == (
            "resolved",
            True,
            False,
        ), (scenario, resolver)
        assert resolver["testExitCode"] == 0, resolver["testOutputTail"]
        assert resolver["outsideChanges"] == [], resolver
        assert (resolver["reverted"], resolver["dropped"]) == ([], {}), resolver


def test_an_agent_that_repairs_an_outside_file_itself_keeps_its_own_version(ran: Ran) -> None:
    own = ran.results[("own-fix", "clean-both")]
    assert (own["status"], own["exact"], own["exactTree"]) == ("resolved", True, False), own
    assert own["outsideChanges"] == ["src/shapes.py"]
    log = next(
        ran.roots["clean-both"].glob(f".gitgauge/runs/*/logs/own-fix/{own['task']}/agent.patch")
    )
    assert "+square = squared" in log.read_text()


def test_the_report_says_why_exact_tree_is_out_of_reach_and_counts_the_rest(ran: Ran) -> None:
    table = " ".join(ran.reports["project"].split())
    counted = ", ".join(
        f"{ran.tasks[scenario]['id']} ({len(OUTSIDE[scenario])} file"
        + ("s)" if len(OUTSIDE[scenario]) > 1 else ")")
        for scenario in sorted(
            ("issue", "undoes-other", "clean-both"), key=lambda s: ran.tasks[s]["id"]
        )
    )
    assert (
        "exactTree: the recorded merges of 3 tasks changed files outside the conflicts, which no "
        "agent can be expected to match (RESOLVED and EXACT do not ask for them): " + counted
    ) in table, table
    plain = " ".join(ran.reports["plain"].split())
    assert (
        f"exactTree of {ran.tasks['plain']['id']}: the recorded merge changed 2 files outside "
        "the conflicts: no agent can be expected to match them"
    ) in plain, plain
    for config in ("gold", "resolver", "own-fix"):
        row = ran.rows[f"project:{config}"]
        expected = {"tasks": 3, "resolved": 3, "exact": 3, "outsideConflictAttempts": 3}
        assert {key: row[key] for key in expected} == expected, row
        assert row["exactTree"] == (3 if config == "gold" else 0), row
    assert ran.matrix[("resolver", "issue")]["outsideConflicts"] == 4
    assert ran.matrix[("resolver", "issue")]["exactTree"] == 0
    assert ran.matrix[("gold", "plain")]["exactTree"] == 1


def test_a_task_file_mined_before_outside_conflicts_still_runs(ran: Ran, tmp_path: Path) -> None:
    """Without the key the task reads as one whose merge changed nothing beyond its conflicts:
    it runs and gold still resolves it exactly; what gold cannot know then is the undoing of
    `other`'s files (mine the task again for its `exactTree`)."""
    root = tmp_path / "project"
    shutil.copytree(ran.roots["undoes-other"], root, symlinks=True)
    shutil.rmtree(root / ".gitgauge" / "runs")
    task = ran.tasks["undoes-other"]
    path = root / ".gitgauge" / "tasks" / f"{task['id']}.yaml"
    old = yaml.safe_load(path.read_text())
    del old["outsideConflicts"]
    path.write_text(yaml.safe_dump(old, sort_keys=False))
    configs = write_configs(tmp_path / "configs", {"gold": {"adapter": "gold"}})
    with isolated(tmp_path):
        done = run_gitgauge(
            "run", "--sandbox", "none", "--task", task["id"], "-c", configs["gold"], cwd=root
        )
    assert done.returncode == 0, done.stderr + done.stdout
    (found,) = (root / ".gitgauge" / "runs").glob("*/results/gold/*.json")
    gold = json.loads(found.read_text())
    assert (gold["status"], gold["exact"], gold["outsideConflicts"]) == ("resolved", True, [])
    assert gold["exactTree"] is False
