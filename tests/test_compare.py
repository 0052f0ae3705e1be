"""`gitgauge compare A B` through the real CLI: results with known answers are written into
`.gitgauge/runs/` and the printed counts, intervals, p-values and verdicts are checked against a
published example and against values computed here, independently; then the demo's gold and noop,
run for real."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist, fmean
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.records import result as outcome
from helpers.repos import GitRepo

from gitgauge.core.records import RunManifest, RunResult
from gitgauge.core.schema import AgentConfig, Timeouts
from gitgauge.core.store import Store

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RUN_1 = "20240101T000000Z-aaaaaa"
RUN_2 = "20240102T000000Z-bbbbbb"
Z95 = NormalDist().inv_cdf(0.975)


def store_run(
    repo: GitRepo,
    run_id: str,
    results: list[RunResult],
    *,
    timeouts: Timeouts | None = None,
    test_command: str = "pytest -q",
    version: str = "0.1.0",
    sandbox: str = "none",
) -> None:
    configs = list(dict.fromkeys(item.config for item in results))
    store = Store(repo.root)
    store.save_manifest(
        RunManifest(
            runId=run_id,
            gitgaugeVersion=version,
            configs=[AgentConfig(name=name, adapter="script", command="true") for name in configs],
            configFiles=[f"{name}.yaml" for name in configs],
            tasks=sorted({item.task for item in results}),
            testCommand=test_command,
            timeouts=timeouts or Timeouts(),
            sandbox=sandbox,
            startedAt=f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00.000+00:00",
        )
    )
    for item in results:
        store.save_result(item.model_copy(update={"runId": run_id}))


def paired_results(
    *, both: int, only_a: int, only_b: int, neither: int, a: str = "A", b: str = "B"
) -> list[RunResult]:
    """A 2x2 table of tasks, one attempt each, as results of configs `a` and `b`."""
    results = []
    kinds = [(True, True)] * both + [(True, False)] * only_a + [(False, True)] * only_b
    kinds += [(False, False)] * neither
    for index, (resolved_a, resolved_b) in enumerate(kinds):
        task = f"t{index:03}"
        results.append(outcome(a, task, "resolved" if resolved_a else "unresolved"))
        results.append(outcome(b, task, "resolved" if resolved_b else "unresolved"))
    return results


def compare_json(repo: GitRepo, *sides: str) -> dict[str, Any]:
    finished = run_gitgauge("compare", *sides, "--format", "json", cwd=repo.root)
    assert finished.returncode == 0, finished.stderr
    value: dict[str, Any] = json.loads(finished.stdout)
    return value


@pytest.fixture
def repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", files={"README.md": "hello\n"})
    return git_repo


def test_a_published_paired_example_gives_the_published_p_value_and_interval(
    repo: GitRepo,
) -> None:
    # Cavo et al. 2012, 161 patients, table [[59, 6], [16, 80]] (Fagerland, Lydersen & Laake,
    # "Statistical Analysis of Contingency Tables", ch. 8): exact conditional McNemar P = 0.052479;
    # Newcombe square-and-add interval -0.0621 (95% CI -0.1186 to -0.0046). B is the row variable.
    store_run(repo, RUN_1, paired_results(both=59, only_a=16, only_b=6, neither=80))

    value = compare_json(repo, "A", "B")
    text = run_gitgauge("compare", "A", "B", cwd=repo.root).stdout

    assert len(value["tasks"]) == 161
    assert (value["both"], value["onlyA"], value["onlyB"], value["neither"]) == (59, 16, 6, 80)
    assert value["test"] == "exact McNemar" and value["intervalMethod"] == "Newcombe"
    assert value["pValue"] == pytest.approx(0.052479, abs=5e-7)
    assert value["difference"]["estimate"] == pytest.approx(-0.0621, abs=5e-5)
    assert value["difference"]["low"] == pytest.approx(-0.1186, abs=5e-5)
    assert value["difference"]["high"] == pytest.approx(-0.0046, abs=5e-5)
    # The interval excludes 0 but p > 0.05: the verdict claims nothing.
    assert value["unlikelyChance"] is False
    assert "Compared on the 161 tasks both ran, one attempt each." in text
    assert "tasks resolved by both: 59, only A: 16, only B: 6, neither: 80" in text
    assert "exact McNemar, p = 0.05" in text
    verdict, why, power = text.rstrip().splitlines()[-3:]
    assert verdict == (
        "B resolved 10 fewer of 161 tasks than A; the difference, -6 points "
        "[95% CI -12, -0.5], could be chance (p = 0.05)."
    )
    assert why == (
        "Why both: the exact McNemar test decides whether it could be chance (p = 0.0525, not "
        "below 0.05); the interval is shown for the size of the difference."
    )
    assert power.startswith("Tasks for a verdict: the exact McNemar test reaches p < 0.05")


def test_a_clear_difference_is_called_unlikely_to_be_chance(repo: GitRepo) -> None:
    store_run(repo, RUN_1, paired_results(both=3, only_a=0, only_b=9, neither=8))

    value = compare_json(repo, "A", "B")

    # Exact McNemar by hand: the 9 discordant tasks all favour B, p = 2 * (1/2)^9.
    assert value["pValue"] == pytest.approx(2 * Fraction(1, 2**9))
    assert value["pValue"] == pytest.approx(2 * math.comb(9, 0) / 2**9)
    # Each side's rate with its Wilson interval (3/20 and 12/20), computed from the formula.
    for side, resolved in (("rateA", 3), ("rateB", 12)):
        p_hat, n = resolved / 20, 20
        center = (p_hat + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
        half = Z95 * math.sqrt(p_hat * (1 - p_hat) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
        assert (value[side]["low"], value[side]["high"]) == pytest.approx(
            (center - half, center + half)
        )
    assert value["difference"]["estimate"] == pytest.approx(9 / 20)
    assert value["difference"]["low"] > 0
    assert value["unlikelyChance"] is True
    assert value["verdict"].startswith("B resolved 9 more of 20 tasks than A; the difference, +45")
    assert value["verdict"].endswith("is unlikely to be chance (p = 0.004).")


def test_two_configs_with_identical_results_could_be_chance(repo: GitRepo) -> None:
    results = paired_results(both=4, only_a=0, only_b=0, neither=6, a="first", b="second")
    store_run(repo, RUN_1, results)

    value = compare_json(repo, "first", "second")
    text = run_gitgauge("compare", "first", "second", cwd=repo.root).stdout

    assert value["pValue"] == 1.0 and value["difference"]["estimate"] == 0
    assert value["unlikelyChance"] is False
    assert value["warnings"] == []
    assert "could be chance" in value["verdict"] and "could be chance" in text
    assert "first and second resolved the same number of the 10 tasks" in text


def test_repeats_use_the_paired_permutation_test_over_tasks(repo: GitRepo) -> None:
    statuses_a = [[1, 0, 0], [0, 0, 0], [1, 1, 0], [0, 0, 0], [1, 0, 1], [0, 1, 0]]
    statuses_b = [[1, 1, 1], [1, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 1], [1, 1, 1]]
    results = []
    for index, (runs_a, runs_b) in enumerate(zip(statuses_a, statuses_b, strict=True)):
        for config, runs in (("A", runs_a), ("B", runs_b)):
            for attempt, resolved in enumerate(runs, start=1):
                status = "resolved" if resolved else "unresolved"
                results.append(outcome(config, f"t{index}", status, attempt=attempt))
    store_run(repo, RUN_1, results)

    value = compare_json(repo, "A", "B")

    # Every sign assignment of the per-task differences of resolve fractions, counted here.
    differences = [
        Fraction(sum(b), 3) - Fraction(sum(a), 3)
        for a, b in zip(statuses_a, statuses_b, strict=True)
    ]
    nonzero = [abs(difference) for difference in differences if difference]
    observed = abs(sum(differences, Fraction(0)))
    extreme = sum(
        abs(sum((sign * size for sign, size in zip(signs, nonzero, strict=True)), Fraction(0)))
        >= observed
        for signs in itertools.product((1, -1), repeat=len(nonzero))
    )
    assert value["repeated"] is True and value["test"] == "paired permutation"
    assert value["pValue"] == pytest.approx(extreme / 2 ** len(nonzero))
    assert value["difference"]["estimate"] == pytest.approx(float(fmean(differences)))
    assert value["attemptsA"] == value["attemptsB"] == 18
    assert value["warnings"] == [
        "only 6 tasks: a bootstrap interval over fewer than 10 tasks is too narrow; go by the "
        "p-value"
    ]
    # Counted by per-task fractions: B higher on 5 tasks, equal (and non-zero) on 1.
    assert (value["onlyA"], value["onlyB"], value["both"], value["neither"]) == (0, 5, 1, 0)
    text = run_gitgauge("compare", "A", "B", cwd=repo.root).stdout
    assert "(3 attempts per task for A, 3 for B)" in text
    assert "paired permutation, p = " in text


def test_cost_time_and_diff_differences_are_paired_by_task(repo: GitRepo) -> None:
    results = []
    times_a, times_b = [10.0, 30.0, 20.0, 50.0, 40.0], [12.0, 30.0, 29.0, 51.0, 48.0]
    for index in range(5):
        task = f"t{index}"
        results.append(
            outcome("A", task, "resolved", costUsd=0.1 * (index + 1), adapterSeconds=times_a[index],
                    diffInsertions=10, diffDeletions=2)
        )  # fmt: skip
        results.append(
            outcome("B", task, "resolved", costUsd=0.1 * (index + 1) + 0.05,
                    adapterSeconds=times_b[index], diffInsertions=3, diffDeletions=1)
        )  # fmt: skip
    # A sixth task where B errored before its adapter ran: no time or diff to pair there.
    results.append(outcome("A", "t5", "resolved", costUsd=0.2, adapterSeconds=5.0,
                           diffInsertions=1, diffDeletions=0))  # fmt: skip
    results.append(outcome("B", "t5", "error", errorKind="setup"))
    store_run(repo, RUN_1, results)

    value = compare_json(repo, "A", "B")

    # Every task costs B exactly $0.05 more: the mean difference and its interval are 0.05.
    cost = value["cost"]
    assert cost["tasks"] == 5
    assert cost["difference"]["estimate"] == pytest.approx(0.05)
    assert (cost["difference"]["low"], cost["difference"]["high"]) == pytest.approx((0.05, 0.05))
    assert value["diff"]["difference"]["estimate"] == pytest.approx(-8.0)
    # Time: differences 2, 0, 9, 1, 8; the bootstrap percentiles over the 5^5 resamples.
    deltas = [b - a for a, b in zip(times_a, times_b, strict=True)]
    means = sorted(fmean(sample) for sample in itertools.product(deltas, repeat=5))
    time = value["time"]
    assert time["tasks"] == 5 and time["difference"]["estimate"] == pytest.approx(4.0)
    assert time["difference"]["low"] == pytest.approx(means[math.ceil(0.025 * len(means)) - 1])
    assert time["difference"]["high"] == pytest.approx(means[math.ceil(0.975 * len(means)) - 1])
    assert value["errorsB"] == 1 and value["onlyA"] == 1
    text = run_gitgauge("compare", "A", "B", cwd=repo.root).stdout
    # The same difference on every task: no interval beside it.
    assert "cost          +$0.0500                      over 5 tasks, the same on each" in text
    assert "errors (count as unresolved)  0" in text


def test_both_sides_error_counts_are_their_own_and_count_as_unresolved(repo: GitRepo) -> None:
    statuses = {
        "A": ["resolved", "error", "unresolved", "resolved"],
        "B": ["error", "error", "resolved", "unresolved"],
    }
    store_run(
        repo,
        RUN_1,
        [
            outcome(
                config, f"t{index}", status, errorKind="adapter-exit" if status == "error" else None
            )
            for config, column in statuses.items()
            for index, status in enumerate(column)
        ],
    )

    value = compare_json(repo, "A", "B")

    assert (value["errorsA"], value["errorsB"]) == (1, 2)
    # Errors are unresolved attempts: t1 (error on both sides) is resolved by neither.
    assert (value["both"], value["onlyA"], value["onlyB"], value["neither"]) == (0, 2, 1, 1)
    text = run_gitgauge("compare", "A", "B", cwd=repo.root).stdout
    assert re.search(r"^errors \(count as unresolved\)\s+1\s+2$", text, re.MULTILINE), text
    assert re.search(r"^resolved\s+2/4\s+1/4$", text, re.MULTILINE), text


def test_a_side_mostly_errors_is_warned_about_and_one_all_errors_gets_no_verdict(
    repo: GitRepo,
) -> None:
    mostly = {"A": ["resolved", "unresolved", "resolved", "resolved"],
              "B": ["error", "error", "error", "resolved"]}  # fmt: skip
    store_run(
        repo,
        RUN_1,
        [
            outcome(config, f"t{index}", status, errorKind="adapter-exit" if status == "error"
                    else None, errorMessage="claude: Not logged in: run `claude /login`"
                    if status == "error" else None)
            for config, column in mostly.items()
            for index, status in enumerate(column)
        ],
    )  # fmt: skip

    value = compare_json(repo, "A", "B")

    assert value["refused"] is None
    assert any(
        warning.startswith("B: 3 of its 4 pairs are errors and only 1 scored")
        for warning in value["warnings"]
    ), value["warnings"]
    assert not any(warning.startswith("A:") for warning in value["warnings"])

    store_run(
        repo,
        RUN_2,
        [outcome("C", "t0", "resolved")]
        + [outcome("D", "t0", "error", errorKind="adapter-exit",
                   errorMessage="claude: Not logged in: run `claude /login`")],
    )  # fmt: skip
    refused = run_gitgauge("compare", "C", "D", cwd=repo.root)

    assert refused.returncode == 1
    assert (
        "No verdict: every pair of D is an error (claude: Not logged in: run `claude /login`)"
    ) in refused.stdout
    assert "could be chance" not in refused.stdout
    assert "Tasks for a verdict" not in refused.stdout


def test_differences_between_the_runs_are_warned_about(repo: GitRepo) -> None:
    store_run(
        repo,
        RUN_1,
        [outcome("A", task, "resolved") for task in ("t1", "t2", "t3")],
        timeouts=Timeouts(test=60_000),
    )
    store_run(
        repo,
        RUN_2,
        [outcome("B", task, "unresolved", run_id=RUN_2) for task in ("t2", "t3", "t4", "t5")],
        test_command="pytest -x",
        version="0.2.0",
    )

    text = run_gitgauge("compare", "A", "B", cwd=repo.root).stdout
    value = compare_json(repo, "A", "B")

    assert "Compared on the 2 tasks both ran, one attempt each." in text
    assert (value["tasks"], value["onlyInA"], value["onlyInB"]) == (
        ["t2", "t3"],
        ["t1"],
        ["t4", "t5"],
    )
    warnings = "\n".join(line for line in text.splitlines() if line.startswith("warning: "))
    assert "different task sets: A ran 3 tasks, B 4; only the 2 both ran are compared" in warnings
    assert "different timeouts: test 60000 ms (A) vs 300000 ms (B)" in warnings
    assert "different test commands: 'pytest -q' (A) vs 'pytest -x' (B)" in warnings
    assert "different gitgauge versions: 0.1.0 (A) vs 0.2.0 (B)" in warnings
    assert len(value["warnings"]) == 5  # the four above and the planned task sets


def test_pairs_of_one_ray_run_that_got_different_sandboxes_are_warned_about(
    repo: GitRepo,
) -> None:
    # Under run.sandbox: auto on Ray each node decides: a node without bwrap ran one of A's pairs
    # unsandboxed, and a pair that never ran (an error on a node) counts nowhere.
    boxes = {"t1": "bwrap", "t2": "bwrap", "t3": "none"}
    results = [outcome("A", task, "resolved", sandbox=box) for task, box in boxes.items()]
    results += [outcome("B", task, "resolved", sandbox="bwrap") for task in ("t1", "t2")]
    results.append(outcome("B", "t3", "error", errorKind="internal"))
    store_run(repo, RUN_1, results, sandbox="auto")
    value = compare_json(repo, "A", "B")
    assert (
        "different run.sandbox: bwrap for 2 pairs, none for 1 pair (A) vs bwrap (B); without a "
        "sandbox an agent can read your repository and the fix"
    ) in value["warnings"]
    # Alike pairs: no warning.
    store_run(repo, RUN_2, [outcome(c, "t1", "resolved", sandbox="bwrap") for c in "AB"])
    assert not [w for w in compare_json(repo, "A", "B")["warnings"] if "sandbox" in w]


def test_sides_can_name_a_run_and_unknown_names_are_listed(repo: GitRepo) -> None:
    no_runs = run_gitgauge("compare", "gold", "noop", cwd=repo.root)
    store_run(repo, RUN_1, [outcome("gold", "t1", "resolved"), outcome("noop", "t1", "unresolved")])
    store_run(repo, RUN_2, [outcome("gold", "t1", "unresolved", run_id=RUN_2)])

    latest = compare_json(repo, "noop", "gold")
    older = compare_json(repo, f"{RUN_1}:gold", "gold")
    by_prefix = compare_json(repo, "20240101:gold", "noop")
    unknown = run_gitgauge("compare", "gold", "silver", cwd=repo.root)
    wrong_run = run_gitgauge("compare", f"{RUN_2}:noop", "gold", cwd=repo.root)

    assert latest["b"] == {"config": "gold", "run": RUN_2, "name": "gold"}
    assert older["a"]["run"] == RUN_1 and older["b"]["run"] == RUN_2
    assert (older["a"]["name"], older["b"]["name"]) == ("gold (A)", "gold (B)")
    assert older["onlyA"] == 1
    assert by_prefix["a"] == {"config": "gold", "run": RUN_1, "name": "gold"}
    assert no_runs.returncode == 1 and "no runs yet" in no_runs.stderr
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert "no config named 'silver'" in unknown.stderr
    assert "known configs: gold, noop" in unknown.stderr
    assert wrong_run.returncode == 1
    assert f"run {RUN_2} has no results for config 'noop'; its configs: gold" in wrong_run.stderr


def test_sides_without_a_shared_task_are_an_error(repo: GitRepo) -> None:
    store_run(repo, RUN_1, [outcome("A", "t1", "resolved"), outcome("B", "t2", "resolved")])

    finished = run_gitgauge("compare", "A", "B", cwd=repo.root)

    assert finished.returncode == 1 and finished.stdout == ""
    assert "A and B share no task (A ran 1, B ran 1, none in common)" in finished.stderr


# -- the demo, run for real: gold against noop on its three tasks ------------------------------


@pytest.fixture(scope="module")
def demo_run(demo_repository: tuple[Path, Path]) -> Iterator[tuple[Path, dict[str, str]]]:
    """`gitgauge demo` (once per session, tests/conftest.py): the sample repository mined, and
    gold and noop run on its 3 tasks. Only read here."""
    root, home = demo_repository
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GIT_"))}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    yield root, env


def test_gold_against_noop_on_three_tasks_could_still_be_chance(
    demo_run: tuple[Path, dict[str, str]],
) -> None:
    root, env = demo_run

    finished = run_gitgauge("compare", "noop", "gold", cwd=root, env=env)
    as_json = run_gitgauge("compare", "noop", "gold", "--format", "json", cwd=root, env=env)

    assert finished.returncode == 0, finished.stderr
    value = json.loads(as_json.stdout)
    # Gold resolves all 3, noop none: 3 discordant tasks, exact McNemar p = 2 / 2^3 = 0.25.
    # Even a perfect agent against a useless one cannot be told apart on 3 tasks.
    assert (value["both"], value["onlyA"], value["onlyB"], value["neither"]) == (0, 0, 3, 0)
    assert value["pValue"] == 0.25
    assert value["warnings"] == []
    assert "Compared on the 3 tasks both ran, one attempt each." in finished.stdout
    verdict, why, power = finished.stdout.rstrip().splitlines()[-3:]
    assert verdict == (
        "gold resolved 3 more of 3 tasks than noop; the difference, +100 points "
        f"[95% CI {value['difference']['low'] * 100:+.0f}, +100], could be chance (p = 0.25)."
    )
    assert why == (
        "Why both: the exact McNemar test decides whether it could be chance (p = 0.25, not "
        "below 0.05); the interval is shown for the size of the difference."
    )
    # 3 of 3 for B: 6 tasks all one way give p = 2 / 2^6 < 0.05 (5 give 0.0625).
    assert power == (
        "Tasks for a verdict: the exact McNemar test reaches p < 0.05 with 80% power at 6 tasks, "
        "if the discordance observed holds (only A 0, only B 3 of 3 tasks)."
    )
    assert value["tasksForVerdict"]["tasks"] == 6
