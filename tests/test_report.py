"""`gitgauge report`: fixed results -> the exact table, the JSON rows, latest run per config,
`--all`, and the hint when there are no runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import GitRepo, run_gitgauge

from gitgauge.records import AgentConfig, RunManifest, RunResult, Timeouts
from gitgauge.report import build_rows, describe_pair, render_table
from gitgauge.store import Store, StoredRun


def result(
    config: str, task: str, status: str, run_id: str = "20240101T000000Z-aaaaaa", **fields: Any
) -> RunResult:
    return RunResult(
        runId=run_id,
        config=config,
        task=task,
        status=status,  # type: ignore[arg-type]
        startedAt="2024-01-01T00:00:00.000+00:00",
        finishedAt="2024-01-01T00:01:00.000+00:00",
        **fields,
    )


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

EXPECTED_TABLE = """\
CONFIG     RESOLVED    ERRORS    REGRESS    AVG COST    AVG TIME    AVG DIFF
---------  ----------  --------  ---------  ----------  ----------  ----------
sonnet     3/5         1         1          $0.3000     200.0s      6.8
my script  0/2         1         -          -           1.2s        0.0"""


def test_the_rendered_table_for_fixed_results_is_exact() -> None:
    run = StoredRun("20240101T000000Z-aaaaaa", None, SONNET + SCRIPT)

    rows = build_rows([run])

    # RESOLVED counts errors in the denominator; AVG COST averages every reported cost (0.1..0.5);
    # AVG TIME every adapter run ((10+20+30+40+900)/5); AVG DIFF only the non-error pairs
    # ((4+10+1+12)/4 = 6.75).
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
        "RUN", "CONFIG", "RESOLVED", "ERRORS", "REGRESS", "AVG", "COST", "AVG", "TIME", "AVG",
        "DIFF",
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
