"""`gitgauge report`: pure functions from stored results to rows to text (table, markdown, json).

One row per agent config, from that config's latest run (or one per config and run with `--all`).
The definitions (README, "Metrics table"):

- RESOLVED `r/n`: pairs whose status is resolved, out of every pair of the row (errors included:
  a config whose agent crashes on a task did not resolve it).
- ERRORS: pairs whose setup, adapter or workspace failed; they are neither resolved nor unresolved.
- REGRESS: pairs whose base suite failed after the agent's work; `-` when no pair of the row has
  a known regression status.
- AVG COST: mean `costUsd` over the pairs that report one (errors included: their cost was spent).
- AVG TIME: mean adapter wall time over the pairs whose adapter ran.
- AVG DIFF: mean insertions + deletions over the pairs that are not errors.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from tabulate import tabulate

from gitgauge.records import RunResult
from gitgauge.store import StoredRun

HEADERS = ("CONFIG", "RESOLVED", "ERRORS", "REGRESS", "AVG COST", "AVG TIME", "AVG DIFF")
FORMATS = ("table", "markdown", "json")
NO_RUNS_HINT = "no runs yet: run `gitgauge run -c <agent config>.yaml` first"


@dataclass(frozen=True)
class ReportRow:
    config: str
    run_id: str
    tasks: int
    """Pairs of this config in this run."""
    resolved: int
    errors: int
    regressed: int | None
    """None when no pair has a known regression status."""
    avg_cost_usd: float | None
    avg_adapter_seconds: float | None
    avg_diff: float | None


def build_rows(runs: Sequence[StoredRun], *, all_runs: bool = False) -> list[ReportRow]:
    """Rows for `runs` (oldest first): every config of every run, or each config's latest run.

    Rows follow the runs' order, and within a run the configs' `-c` order.
    """
    rows: list[ReportRow] = []
    for run in runs:
        for config in _configs_in_order(run):
            results = [result for result in run.results if result.config == config]
            if results:
                rows.append(summarize(config, run.run_id, results))
    if all_runs:
        return rows
    latest = {row.config: row for row in rows}  # later runs overwrite earlier ones
    return [row for row in rows if latest[row.config] is row]


def summarize(config: str, run_id: str, results: Sequence[RunResult]) -> ReportRow:
    regress_known = [result.regressed for result in results if result.regressed is not None]
    costs = [result.costUsd for result in results if result.costUsd is not None]
    seconds = [result.adapterSeconds for result in results if result.adapterSeconds is not None]
    diffs = [
        (result.diffInsertions or 0) + (result.diffDeletions or 0)
        for result in results
        if result.status != "error" and result.diffInsertions is not None
    ]
    return ReportRow(
        config=config,
        run_id=run_id,
        tasks=len(results),
        resolved=sum(1 for result in results if result.status == "resolved"),
        errors=sum(1 for result in results if result.status == "error"),
        regressed=sum(regress_known) if regress_known else None,
        avg_cost_usd=fmean(costs) if costs else None,
        avg_adapter_seconds=fmean(seconds) if seconds else None,
        avg_diff=fmean(diffs) if diffs else None,
    )


def render_table(
    rows: Sequence[ReportRow], *, with_run: bool = False, markdown: bool = False
) -> str:
    headers = (("RUN",) if with_run else ()) + HEADERS
    body = [([row.run_id] if with_run else []) + _cells(row) for row in rows]
    return tabulate(
        body,
        headers=headers,
        tablefmt="github" if markdown else "simple",
        disable_numparse=True,
    )


def render_json(rows: Sequence[ReportRow]) -> str:
    return json.dumps([_json_row(row) for row in rows], indent=2)


def render(rows: Sequence[ReportRow], *, output_format: str, with_run: bool = False) -> str:
    if output_format == "json":
        return render_json(rows)
    return render_table(rows, with_run=with_run, markdown=output_format == "markdown")


def describe_pair(result: RunResult) -> str:
    """One line for a finished pair: config, task, status, cost, time, diff (and what went wrong
    or was reverted)."""
    status: str = result.status
    if result.status == "error":
        status = f"error ({result.errorKind})"
    elif result.regressed:
        status += ", regressed"
    cost = "-" if result.costUsd is None else f"${result.costUsd:.4f}"
    seconds = "-" if result.adapterSeconds is None else f"{result.adapterSeconds:.1f}s"
    diff = "-"
    if result.diffFiles is not None:
        files = "file" if result.diffFiles == 1 else "files"
        diff = f"{result.diffFiles} {files} +{result.diffInsertions} -{result.diffDeletions}"
    line = f"{result.config}  {result.task}  {status}  cost {cost}  time {seconds}  diff {diff}"
    if result.reverted:
        line += f"  reverted: {', '.join(result.reverted)}"
    if result.deleted:
        line += f"  deleted: {', '.join(result.deleted)}"
    if result.errorMessage:
        line += f"\n    {' '.join(result.errorMessage.split())[:300]}"
    return line


def _cells(row: ReportRow) -> list[str]:
    return [
        row.config,
        f"{row.resolved}/{row.tasks}",
        str(row.errors),
        "-" if row.regressed is None else str(row.regressed),
        "-" if row.avg_cost_usd is None else f"${row.avg_cost_usd:.4f}",
        "-" if row.avg_adapter_seconds is None else f"{row.avg_adapter_seconds:.1f}s",
        "-" if row.avg_diff is None else f"{row.avg_diff:.1f}",
    ]


def _json_row(row: ReportRow) -> dict[str, Any]:
    return {
        "config": row.config,
        "run": row.run_id,
        "tasks": row.tasks,
        "resolved": row.resolved,
        "errors": row.errors,
        "regressed": row.regressed,
        "avgCostUsd": row.avg_cost_usd,
        "avgAdapterSeconds": row.avg_adapter_seconds,
        "avgDiff": row.avg_diff,
    }


def _configs_in_order(run: StoredRun) -> list[str]:
    names = [config.name for config in run.manifest.configs] if run.manifest else []
    for result in run.results:
        if result.config not in names:
            names.append(result.config)
    return names
