"""`gitgauge report`: fixed results -> the exact table, the JSON rows, latest run per config,
`--all`, and the hint when there are no runs."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from pathlib import Path
from statistics import NormalDist, fmean
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.records import result
from helpers.repos import GitRepo

from gitgauge.core.records import RunManifest, RunResult
from gitgauge.core.schema import AgentConfig, Timeouts
from gitgauge.core.store import Store, StoredRun
from gitgauge.reporting.matrix import build_matrix
from gitgauge.reporting.matrix_render import render_matrix
from gitgauge.reporting.render import render, render_table
from gitgauge.reporting.rows import build_rows, describe_pair


def manifest(run_id: str, configs: list[str], started: str) -> RunManifest:
    return RunManifest(
        runId=run_id,
        gitgaugeVersion="0.1.0",
        configs=[AgentConfig(name=name, adapter="noop") for name in configs],
        configFiles=[f"{name}.yaml" for name in configs],
        tasks=["t1", "t2", "t3", "t4", "t5"],
        testCommand="pytest",
        timeouts=Timeouts(),
        startedAt=started,
    )


# Five tasks for "sonnet": 3 resolved, 1 unresolved that regressed, 1 adapter timeout that still
# reported a cost. "script" reports no cost and no regression status (baseSuitePasses unknown).
SONNET = [
    result("sonnet", "t1", "resolved", costUsd=0.10, adapterSeconds=10.0, diffInsertions=3,
           diffDeletions=1, regressed=False),
    result("sonnet", "t2", "resolved", costUsd=0.20, adapterSeconds=20.0, diffInsertions=5,
           diffDeletions=5, regressed=False),
    result("sonnet", "t3", "resolved", costUsd=0.30, adapterSeconds=30.0, diffInsertions=1,
           diffDeletions=0, regressed=False),
    result("sonnet", "t4", "unresolved", costUsd=0.40, adapterSeconds=40.0, diffInsertions=10,
           diffDeletions=2, regressed=True),
    result("sonnet", "t5", "error", errorKind="adapter-timeout", costUsd=0.50,
           adapterSeconds=900.0, diffInsertions=100, diffDeletions=100),
]  # fmt: skip
SCRIPT = [
    result("my script", "t1", "unresolved", adapterSeconds=1.25, diffInsertions=0,
           diffDeletions=0),
    result("my script", "t2", "error", errorKind="setup"),
]  # fmt: skip

# The intervals: RATE is Wilson (3 of 5: 23% to 88%); the averages' are the exact bootstrap
# percentiles of the five per-task values (see test_average_intervals_are_the_bootstrap_...).
EXPECTED_TABLE = """\
CONFIG     RESOLVED    ERRORS    REGRESS    AVG COST              AVG TIME              TOTAL TIME    AVG DIFF               RATE
---------  ----------  --------  ---------  --------------------  --------------------  ------------  ---------------------  ------------
sonnet     3/5         1         1          $0.3000 [0.18, 0.42]  200.0s [18.0, 552.0]  5m00s         6.8 lines [2.5, 11.0]  60% [23, 88]
my script  0/2         1         -          -                     1.2s                  2m00s         0.0 lines              0% [0, 66]

RESOLVED, ERRORS and REGRESS count tasks; an error counts as unresolved. RATE: resolved / tasks.
[low, high]: 95% interval, Wilson for RATE, bootstrap over tasks for the averages. AVG TIME: the
agent's own run (the adapter's wall time), mean per task. TOTAL TIME: the wall-clock time of the
row's pairs summed, each from its workspace to its grade (setup, agent and grading: in JSON and CSV
apart); pairs run at once with -j overlap, so the run itself took less. A bootstrap over fewer than
10 tasks is too narrow (it cannot see variation the few tasks lack): read those intervals with care."""  # noqa: E501


def test_the_rendered_table_for_fixed_results_is_exact() -> None:
    run = StoredRun("20240101T000000Z-aaaaaa", None, SONNET + SCRIPT)

    rows = build_rows([run])

    # RESOLVED counts errors in the denominator; AVG COST averages every reported cost (0.1..0.5);
    # AVG TIME every adapter run ((10+20+30+40+900)/5); AVG DIFF only the non-error pairs
    # ((4+10+1+12)/4 = 6.75). A column that does not vary (my script's one time, its empty
    # diffs) shows no interval; every average has its unit.
    assert render_table(rows) == EXPECTED_TABLE


def test_rows_as_json_carry_the_same_numbers() -> None:
    rows = build_rows([StoredRun("20240101T000000Z-aaaaaa", None, SONNET)])

    (row,) = rows
    assert (row.config, row.tasks, row.resolved, row.errors, row.regressed) == (
        "sonnet",
        5,
        3,
        1,
        1,
    )
    assert row.avg_cost_usd is not None and abs(row.avg_cost_usd - 0.30) < 1e-9
    assert row.avg_adapter_seconds == 200.0
    assert row.avg_diff == 6.75


def test_each_config_shows_its_latest_run_and_all_shows_every_run() -> None:
    old = StoredRun(
        "20240101T000000Z-aaaaaa",
        manifest("20240101T000000Z-aaaaaa", ["gold", "noop"], "2024-01-01T00:00:00.000+00:00"),
        [result("gold", "t1", "resolved"), result("noop", "t1", "unresolved")],
    )
    # Same second as `old` (ids sort the other way round): the manifest's start time decides.
    new_id = "20240101T000000Z-000000"
    new = StoredRun(
        new_id,
        manifest(new_id, ["gold"], "2024-01-01T00:00:00.500+00:00"),
        [result("gold", "t1", "unresolved", run_id=new_id)],
    )
    runs = sorted([new, old], key=lambda run: run.sort_key)

    latest = build_rows(runs)
    every = build_rows(runs, all_runs=True)

    assert [(row.config, row.run_id, row.resolved) for row in latest] == [
        ("noop", old.run_id, 0),
        ("gold", new_id, 0),
    ]
    assert [(row.config, row.run_id) for row in every] == [
        ("gold", old.run_id),
        ("noop", old.run_id),
        ("gold", new_id),
    ]
    assert render_table(every, with_run=True).splitlines()[0].split() == [
        "RUN", "CONFIG", "RESOLVED", "ERRORS", "REGRESS", "AVG", "COST", "AVG", "TIME", "TOTAL",
        "TIME", "AVG", "DIFF", "RATE",
    ]  # fmt: skip


def test_a_pair_line_says_status_cost_time_and_diff() -> None:
    line = describe_pair(
        result("sonnet", "t4", "unresolved", costUsd=0.4, adapterSeconds=40.0, diffFiles=2,
               diffInsertions=10, diffDeletions=2, regressed=True, reverted=["pytest.ini"])
    )  # fmt: skip

    assert line == (
        "sonnet  t4  unresolved, regressed  cost $0.4000  time 40.0s  diff 2 files +10 -2"
        "  reverted: pytest.ini"
    )


def write_run(store: Store, run: StoredRun) -> None:
    assert run.manifest is not None
    store.save_manifest(run.manifest)
    for item in run.results:
        store.save_result(item)


def test_report_command_reads_stored_runs(git_repo: GitRepo) -> None:
    git_repo.commit("initial", files={"README.md": "hello\n"})
    store = Store(git_repo.root)
    run_id = "20240101T000000Z-aaaaaa"
    write_run(
        store,
        StoredRun(
            run_id, manifest(run_id, ["sonnet", "my script"], "2024-01-01T00:00:00+00:00"),
            SONNET + SCRIPT,
        ),
    )  # fmt: skip
    # A corrupt result file is skipped with a warning naming it; the others still count.
    broken = store.run_dir(run_id) / "results" / "sonnet" / "t9.json"
    broken.write_text("{not json", encoding="utf-8")

    table = run_gitgauge("report", cwd=git_repo.root)
    as_json = run_gitgauge("report", "--format", "json", cwd=git_repo.root / ".gitgauge")
    with_runs = run_gitgauge("report", "--all", cwd=git_repo.root)

    assert table.returncode == 0, table.stderr
    assert table.stdout == EXPECTED_TABLE + "\n"
    assert "t9.json" in table.stderr
    rows = json.loads(as_json.stdout)
    assert [(row["config"], row["resolved"], row["tasks"], row["errors"]) for row in rows] == [
        ("sonnet", 3, 5, 1),
        ("my script", 0, 2, 1),
    ]
    assert rows[0]["regressed"] == 1 and rows[1]["regressed"] is None
    assert rows[1]["avgCostUsd"] is None
    assert with_runs.stdout.splitlines()[2].startswith(f"{run_id}  sonnet")


def test_report_without_runs_prints_a_hint(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("initial", files={"README.md": "hello\n"})

    outcome = run_gitgauge("report", cwd=git_repo.root)
    as_json = run_gitgauge("report", "--format", "json", cwd=git_repo.root)

    assert outcome.returncode == 0
    assert outcome.stdout.strip() == "no runs yet: run `gitgauge run -c <agent config>.yaml` first"
    assert json.loads(as_json.stdout) == []


def test_report_rejects_an_unknown_format(git_repo: GitRepo) -> None:
    git_repo.commit("initial", files={"README.md": "hello\n"})

    outcome = run_gitgauge("report", "--format", "xml", cwd=git_repo.root)

    assert outcome.returncode == 2
    assert "xml" in outcome.stderr


# -- intervals, repeats, pass@k: reference values computed here, independently ----------------

Z95 = NormalDist().inv_cdf(0.975)


def wilson_by_formula(successes: int, n: int) -> tuple[float, float]:
    """Wilson (1927): the roots of |p̂ - p| = z·sqrt(p(1-p)/n), solved as a quadratic in p."""
    p_hat, z2 = successes / n, Z95 * Z95
    a, b, c = 1 + z2 / n, -(2 * p_hat + z2 / n), p_hat * p_hat
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def exact_bootstrap_percentiles(
    values: list[float], low: float, high: float
) -> tuple[float, float]:
    """The percentiles of the mean over every one of the n^n equally likely resamples."""
    means = sorted(fmean(sample) for sample in itertools.product(values, repeat=len(values)))
    return means[math.ceil(low * len(means)) - 1], means[math.ceil(high * len(means)) - 1]


def attempts(config: str, task: str, statuses: list[str], **fields: Any) -> list[RunResult]:
    return [
        result(config, task, status, attempt=number, **fields)
        for number, status in enumerate(statuses, start=1)
    ]


def test_the_resolve_rate_of_one_attempt_per_task_has_a_wilson_interval() -> None:
    (sonnet,) = build_rows([StoredRun("r", None, SONNET)])
    # Newcombe's published example (1998): 81 of 263, 95% Wilson interval 0.2553 to 0.3662.
    published = [
        result("big", f"t{i:03}", "resolved" if i < 81 else "unresolved") for i in range(263)
    ]
    (big,) = build_rows([StoredRun("r", None, published)])

    assert sonnet.interval_method == "Wilson"
    assert sonnet.resolve_rate.estimate == pytest.approx(3 / 5)
    assert (sonnet.resolve_rate.low, sonnet.resolve_rate.high) == pytest.approx(
        wilson_by_formula(3, 5)
    )
    assert big.resolve_rate.low == pytest.approx(0.2553, abs=5e-5)
    assert big.resolve_rate.high == pytest.approx(0.3662, abs=5e-5)


def test_average_intervals_are_the_bootstrap_percentiles_over_tasks() -> None:
    (sonnet,) = build_rows([StoredRun("r", None, SONNET)])

    # 5 tasks: the 3,125 resamples can be listed; 2,000 seeded draws land on the same percentiles.
    costs = [0.10, 0.20, 0.30, 0.40, 0.50]
    times = [10.0, 20.0, 30.0, 40.0, 900.0]
    assert sonnet.cost_interval is not None and sonnet.time_interval is not None
    assert (sonnet.cost_interval.low, sonnet.cost_interval.high) == pytest.approx(
        exact_bootstrap_percentiles(costs, 0.025, 0.975)
    )
    assert (sonnet.time_interval.low, sonnet.time_interval.high) == pytest.approx(
        exact_bootstrap_percentiles(times, 0.025, 0.975)
    )
    # AVG DIFF leaves the error (t5) out: four tasks.
    assert sonnet.diff_interval is not None
    assert (sonnet.diff_interval.low, sonnet.diff_interval.high) == pytest.approx(
        exact_bootstrap_percentiles([4, 10, 1, 12], 0.025, 0.975)
    )
    # Seeded: the same results always give the same numbers.
    assert build_rows([StoredRun("r", None, SONNET)]) == [sonnet]


# Six tasks, three attempts each. An error is an attempt that did not resolve the task.
REPEATED = [
    *attempts("rep", "t1", ["resolved", "resolved", "unresolved"], costUsd=0.3),
    *attempts("rep", "t2", ["unresolved", "error", "unresolved"], costUsd=0.6),
    *attempts("rep", "t3", ["resolved", "resolved", "resolved"], costUsd=0.3),
    *attempts("rep", "t4", ["resolved", "error", "error"], costUsd=0.9),
    *attempts("rep", "t5", ["unresolved", "unresolved", "unresolved"], costUsd=0.3),
    *attempts("rep", "t6", ["resolved", "resolved", "resolved"], costUsd=0.6, regressed=True),
]
FRACTIONS = [2 / 3, 0, 1, 1 / 3, 0, 1]


def test_repeats_count_attempts_and_average_per_task_fractions() -> None:
    (row,) = build_rows([StoredRun("r", None, REPEATED)])

    assert (row.tasks, row.attempts, row.resolved, row.errors, row.regressed) == (6, 18, 9, 3, 3)
    assert row.resolve_rate.estimate == pytest.approx(fmean(FRACTIONS))
    assert row.interval_method == "bootstrap"
    # The 2,000 seeded draws land on the exact percentiles of the 6^6 resamples: no tolerance.
    low, high = exact_bootstrap_percentiles(FRACTIONS, 0.025, 0.975)
    assert (low, high) == pytest.approx((1 / 6, 5 / 6))
    assert (row.resolve_rate.low, row.resolve_rate.high) == pytest.approx((low, high))
    # pass@3: at least one of the 3 attempts resolved (t1 t3 t4 t6); pass^3: all 3 (t3 t6).
    assert row.k == 3
    assert row.pass_at_k is not None and row.pass_hat_k is not None
    assert row.pass_at_k.estimate == pytest.approx(4 / 6)
    assert row.pass_hat_k.estimate == pytest.approx(2 / 6)
    low, high = exact_bootstrap_percentiles([1, 0, 1, 1, 0, 1], 0.025, 0.975)
    assert (row.pass_at_k.low, row.pass_at_k.high) == pytest.approx((low, high))
    assert (low, high) == pytest.approx((1 / 3, 1))
    low, high = exact_bootstrap_percentiles([0, 0, 1, 0, 0, 1], 0.025, 0.975)
    assert (row.pass_hat_k.low, row.pass_hat_k.high) == pytest.approx((low, high))
    assert (low, high) == pytest.approx((0, 2 / 3))
    assert row.avg_cost_usd == pytest.approx(0.5)


def test_the_table_with_repeats_adds_pass_at_k_and_says_what_it_counts() -> None:
    rows = build_rows([StoredRun("r", None, REPEATED + SONNET)])

    text = render_table(rows)
    header, _, rep, sonnet = text.splitlines()[:4]

    assert header.split()[-3:] == ["RATE", "PASS@3", "PASS^3"]
    # 9 of 18 attempts; RATE is the mean of the six fractions (also 50% here); PASS@3 4/6,
    # PASS^3 2/6. A row without repeats has no pass@k.
    assert rep.split() == [
        "rep", "9/18", "3", "3", "$0.5000", "[0.35,", "0.7]", "-", "18m00s", "-", "50%", "[17,",
        "83]", "67%", "[33,", "100]", "33%", "[0,", "67]",
    ]  # fmt: skip
    assert sonnet.split()[-5:] == ["60%", "[23,", "88]", "-", "-"]
    assert "count attempts; an error counts as an unresolved attempt" in text
    assert "Wilson for the RATE of a row with one attempt per task" in text


def test_the_task_matrix_shows_each_configs_outcome_per_task() -> None:
    results = [
        result("gold", "t1", "resolved", regressed=False),
        result("gold", "t2", "resolved", regressed=True),
        result("noop", "t1", "unresolved"),
        result("noop", "t3", "error", errorKind="setup"),
        *attempts("rep", "t1", ["resolved", "error", "unresolved"]),
        *attempts("rep", "t2", ["resolved", "resolved", "resolved"], regressed=True),
    ]
    matrix = build_matrix(build_rows([StoredRun("r", None, results)]))

    assert render_matrix(matrix, output_format="table") == (
        "TASK    gold                 noop        rep\n"
        "------  -------------------  ----------  ----------------\n"
        "t1      resolved             unresolved  1/3, 1 error\n"
        "t2      resolved, regressed  -           3/3, 3 regressed\n"
        "t3      -                    error       -"
    )
    records = json.loads(render_matrix(matrix, output_format="json"))
    assert {"task": "t1", "config": "rep", "run": "r", "attempts": 3, "resolved": 1,
            "errors": 1, "regressed": 0, "failToPassFailed": [], "passToPassFailed": [],
            "cell": "1/3, 1 error", "measured": 0, "ranTests": None, "turns": None,
            "testRuns": None, "shellCommands": None, "filesRead": None, "filesEdited": None,
            "tokensPerTurn": None, "costPerTurn": None, "firstEditSeconds": None,
            "wallSeconds": 180.0} in records  # fmt: skip
    assert len(records) == 6  # missing pairs are not records
    # Each config's cell, then its behaviour (none here: no transcripts) and wall time apart.
    table = list(csv.reader(io.StringIO(render_matrix(matrix, output_format="csv"))))
    assert table[0][:4] == ["task", "gold", "noop", "rep"]
    assert table[0][4:12] == [
        "gold turns", "gold test runs", "gold ran tests", "gold files read", "gold files edited",
        "gold shell commands", "gold first edit s", "gold wall s",
    ]  # fmt: skip
    assert [line[:4] for line in table[1:]] == [
        ["t1", "resolved", "unresolved", "1/3, 1 error"],
        ["t2", "resolved, regressed", "-", "3/3, 3 regressed"],
        ["t3", "-", "error", "-"],
    ]
    assert table[1][table[0].index("rep wall s")] == "180.0"


def test_csv_and_markdown_carry_the_same_rows() -> None:
    rows = build_rows([StoredRun("r", None, SONNET + SCRIPT)])

    table = list(csv.DictReader(io.StringIO(render(rows, output_format="csv"))))
    markdown = render(rows, output_format="markdown").splitlines()

    assert [(line["config"], line["resolved"], line["tasks"]) for line in table] == [
        ("sonnet", "3", "5"),
        ("my script", "0", "2"),
    ]
    low, high = wilson_by_formula(3, 5)
    assert float(table[0]["resolveRateLow"]) == pytest.approx(low)
    assert float(table[0]["resolveRateHigh"]) == pytest.approx(high)
    assert table[1]["avgCostUsd"] == "" and table[1]["regressed"] == ""
    assert markdown[0].startswith("| CONFIG ") and markdown[0].endswith("| RATE         |")
    assert set(markdown[1]) <= {"|", "-", ":"}
    assert markdown[2].startswith("| sonnet ") and "| 60% [23, 88] |" in markdown[2]


def test_report_command_prints_the_task_matrix_and_csv(git_repo: GitRepo) -> None:
    git_repo.commit("initial", files={"README.md": "hello\n"})
    run_id = "20240101T000000Z-aaaaaa"
    write_run(
        Store(git_repo.root),
        StoredRun(run_id, manifest(run_id, ["sonnet", "rep"], "2024-01-01T00:00:00+00:00"),
                  SONNET + [item.model_copy(update={"runId": run_id}) for item in REPEATED]),
    )  # fmt: skip

    matrix = run_gitgauge("report", "--tasks", cwd=git_repo.root)
    as_csv = run_gitgauge("report", "--format", "csv", cwd=git_repo.root)
    matrix_md = run_gitgauge("report", "--tasks", "--format", "markdown", cwd=git_repo.root)

    assert matrix.returncode == 0, matrix.stderr
    assert matrix.stdout.splitlines()[0].split() == ["TASK", "sonnet", "rep"]
    assert matrix.stdout.splitlines()[3].split() == ["t2", "resolved", "0/3,", "1", "error"]
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [(row["config"], row["attempts"], row["k"]) for row in rows] == [
        ("sonnet", "5", ""),
        ("rep", "18", "3"),
    ]
    assert float(rows[1]["passHatK"]) == pytest.approx(2 / 6)
    assert matrix_md.stdout.startswith("| TASK ")
