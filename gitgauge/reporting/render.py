"""`gitgauge report`'s summary: its rows as a table, markdown, csv or json, with the kinds' own
columns and the footnote that says what the counts and intervals mean.

Pure functions from `reporting.rows` to strings; the column definitions are in that module's
docstring and docs/guide/comparing.md, "Metrics table". The HTML report reuses the cells and the
footnote. The per-task matrix's text is `reporting.matrix_render`; how numbers are written,
`reporting.formatting`.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from tabulate import tabulate

from gitgauge.core import kinds
from gitgauge.core.kinds import ReportColumns
from gitgauge.reporting.behaviour import BEHAVIOUR_METRICS, BehaviourSummary
from gitgauge.reporting.formatting import compact, csv_text, with_interval

# Imports written `name as name` are re-exports: the CLI, `benchmarks` and `compare_render`
# import the number formats and the matrix's text (which lived here) from this module.
from gitgauge.reporting.formatting import format_duration as format_duration
from gitgauge.reporting.formatting import format_rate as format_rate
from gitgauge.reporting.intervals import Interval
from gitgauge.reporting.matrix_render import render_matrix as render_matrix
from gitgauge.reporting.matrix_render import render_series as render_series
from gitgauge.reporting.rows import CONFIDENCE, FEW_TASKS, ReportRow

HEADERS = (
    "CONFIG",
    "RESOLVED",
    "ERRORS",
    "REGRESS",
    "AVG COST",
    "AVG TIME",
    "TOTAL TIME",
    "AVG DIFF",
)
RATE_HEADER = "RATE"
FORMATS = ("table", "markdown", "csv", "json")
NO_RUNS_HINT = "no runs yet: run `gitgauge run -c <agent config>.yaml` first"
FOOTNOTE_WIDTH = 100


def render_table(
    rows: Sequence[ReportRow], *, with_run: bool = False, markdown: bool = False
) -> str:
    table = tabulate(
        [summary_cells(row, rows, with_run=with_run) for row in rows],
        headers=summary_headers(rows, with_run=with_run),
        tablefmt="github" if markdown else "simple",
        disable_numparse=True,
    )
    return f"{table}\n\n{footnote(rows)}"


def summary_headers(rows: Sequence[ReportRow], *, with_run: bool = False) -> list[str]:
    """The spec's columns, then RATE, then PASS@k and PASS^k when some row has repeats; KIND
    and each kind's own columns (after RESOLVED) when a kind of the rows has some."""
    pass_k = _pass_k_header(rows)
    headers = [*(("RUN",) if with_run else ()), *HEADERS, RATE_HEADER]
    columns = kind_columns(rows)
    if columns:
        headers[headers.index("CONFIG") + 1 : headers.index("CONFIG") + 1] = ["KIND"]
        after = headers.index("RESOLVED") + 1
        headers[after:after] = [header for own in columns for header in own.headers]
    if pass_k is not None:
        headers += [f"PASS@{pass_k}", f"PASS^{pass_k}"]
    return headers


def summary_cells(
    row: ReportRow, rows: Sequence[ReportRow], *, with_run: bool = False
) -> list[str]:
    """`row`'s cells under `summary_headers(rows)`."""
    cells = _cells(row, pass_k=_pass_k_header(rows))
    columns = kind_columns(rows)
    if not columns and len({other.kind for other in rows}) > 1:
        cells[0] = row.name  # no KIND column to tell a fixture row from a fix row
    if columns:
        own = kinds.get(row.kind).report_columns
        kind_cells = [
            cell
            for one in columns
            for cell in (
                one.cells(row.counts, row.attempts) if one is own else ["-"] * len(one.headers)
            )
        ]
        cells = [cells[0], row.kind, cells[1], *kind_cells, *cells[2:]]
    return ([row.run_id] if with_run else []) + cells


def kind_columns(rows: Sequence[ReportRow]) -> list[ReportColumns]:
    """The own columns of the kinds of `rows` that have some, in the kinds' order (the chain
    kinds share theirs)."""
    present = {row.kind for row in rows}
    return _distinct(kinds.get(name).report_columns for name in kinds.names() if name in present)


def every_kind_column() -> list[ReportColumns]:
    """The own columns of every registered kind (the JSON and CSV rows hold all their keys)."""
    return _distinct(kinds.get(name).report_columns for name in kinds.names())


def _distinct(found: Iterable[ReportColumns | None]) -> list[ReportColumns]:
    distinct: list[ReportColumns] = []
    for columns in found:
        if columns is not None and all(columns is not seen for seen in distinct):
            distinct.append(columns)
    return distinct


def footnote(rows: Sequence[ReportRow]) -> str:
    """What the counts and the bracketed intervals mean, in words, under the table."""
    if not any(row.interval_method == "bootstrap" for row in rows):
        text = (
            "RESOLVED, ERRORS and REGRESS count tasks; an error counts as unresolved. "
            "RATE: resolved / tasks. [low, high]: 95% interval, Wilson for RATE, bootstrap over "
            "tasks for the averages."
        )
    else:
        text = (
            "RESOLVED, ERRORS and REGRESS count attempts; an error counts as an unresolved "
            "attempt. RATE: mean over tasks of the share of each task's attempts resolved. "
        )
        if any(row.k is not None for row in rows):
            text += (
                "PASS@k: chance that at least one of k attempts resolves a task; PASS^k: all k. "
            )
        text += "[low, high]: 95% interval, bootstrap over tasks (a task's attempts kept together)"
        if not all(row.interval_method == "bootstrap" for row in rows):
            text += "; Wilson for the RATE of a row with one attempt per task"
        text += "."
    for columns in kind_columns(rows):
        text += " " + columns.footnote
    text += "".join(f" {sentence}" for sentence in kind_footnotes(rows))
    checks = sorted({row.judge_check for row in rows if row.judge_check})
    text += "".join(f" {check[0].upper()}{check[1:]}." for check in checks)
    text += " " + TIME_NOTE
    if any(row.tasks < FEW_TASKS for row in rows):
        text += (
            f" A bootstrap over fewer than {FEW_TASKS} tasks is too narrow (it cannot see "
            "variation the few tasks lack): read those intervals with care."
        )
    unscored = [
        f"{row.name}: {', '.join(sorted({r.task for r in row.unscored}))}"
        for row in rows
        if row.unscored
    ]
    if unscored:
        text += (
            " Left out of every count (unscored: no LLM judge could score them): "
            + "; ".join(unscored)
            + "."
        )
    dropped = [
        f"{row.name}: "
        + ", ".join(
            f"{result.task} {path} ({short_reason(why)})"
            for result in row.results
            for path, why in sorted(result.dropped.items())
        )
        for row in rows
        if any(result.dropped for result in row.results)
    ]
    if dropped:
        text += (
            " Left out of grading, as not the agent's own code (the result's `dropped` says "
            "why in full): " + "; ".join(dropped) + "."
        )
    unpriced = [row.config for row in rows if _tokens_without_cost(row)]
    if unpriced:
        text += (
            f" AVG COST is - for {', '.join(sorted(set(unpriced)))}: its agent reports tokens "
            "but no cost; add `pricing:` to its agent config to count it."
        )
    # Never inside a word: a task id (`gitbench-config-g002`) must stay whole to be copied.
    return textwrap.fill(text, width=FOOTNOTE_WIDTH, break_on_hyphens=False, break_long_words=False)


def kind_footnotes(rows: Sequence[ReportRow]) -> list[str]:
    """What each kind of the rows says of its results (`TaskKind.footnotes`), in the kinds'
    order."""
    sentences: list[str] = []
    for name in kinds.names():
        results = [result for row in rows if row.kind == name for result in row.results]
        if results:
            sentences += kinds.get(name).footnotes(results)
    return sentences


TIME_NOTE = (
    "AVG TIME: the agent's own run (the adapter's wall time), mean per task. TOTAL TIME: the "
    "wall-clock time of the row's pairs summed, each from its workspace to its grade (setup, "
    "agent and grading: in JSON and CSV apart); pairs run at once with -j overlap, so the run "
    "itself took less."
)


def short_reason(why: str) -> str:
    """The kind of a drop's reason (`a test file`, `configuration of pytest`, `stands in for
    the module `pytest``): its words before the first explanation."""
    for mark in (":", ", which", " ("):
        why = why.split(mark, 1)[0]
    return why.strip()


def _tokens_without_cost(row: ReportRow) -> bool:
    """The row's agent reported tokens on some pair but no pair has a cost (codex unpriced)."""
    return row.avg_cost_usd is None and any(r.inputTokens is not None for r in row.results)


def render_json(rows: Sequence[ReportRow]) -> str:
    return json.dumps([json_row(row) for row in rows], indent=2)


def render_csv(rows: Sequence[ReportRow]) -> str:
    records = [json_row(row) for row in rows]
    return csv_text(list(records[0]) if records else list(CSV_FIELDS), records)


def render(rows: Sequence[ReportRow], *, output_format: str, with_run: bool = False) -> str:
    if output_format == "json":
        return render_json(rows)
    if output_format == "csv":
        return render_csv(rows)
    return render_table(rows, with_run=with_run, markdown=output_format == "markdown")


def json_row(row: ReportRow) -> dict[str, Any]:
    """One summary row as flat JSON (the csv columns are the same keys)."""
    return {
        "config": row.config,
        "run": row.run_id,
        "kind": row.kind,
        "tasks": row.tasks,
        "attempts": row.attempts,
        "resolved": row.resolved,
        "errors": row.errors,
        "regressed": row.regressed,
        "avgCostUsd": row.avg_cost_usd,
        "avgAdapterSeconds": row.avg_adapter_seconds,
        "avgDiff": row.avg_diff,
        **interval_fields("resolveRate", row.resolve_rate),
        "intervalMethod": row.interval_method,
        **_bounds("avgCostUsd", row.cost_interval),
        **_bounds("avgAdapterSeconds", row.time_interval),
        **_bounds("avgDiff", row.diff_interval),
        "k": row.k,
        **interval_fields("passAtK", row.pass_at_k),
        **interval_fields("passHatK", row.pass_hat_k),
        "confidence": CONFIDENCE,
        **_kind_fields(row),
        "judgeCheck": row.judge_check,
        "totalWallSeconds": row.total_wall_seconds,
        **{
            f"total{phase.title()}Seconds": row.phase_seconds.get(phase)
            for phase in ("setup", "agent", "grading")
        },
        **behaviour_fields(row.behaviour),
    }


def _kind_fields(row: ReportRow) -> dict[str, Any]:
    """Every kind's own JSON keys (`exact`, `checksHeld`, ...): the row's kind's counts, null
    for the others."""
    own = kinds.get(row.kind).report_columns
    return {
        key: row.counts.get(count) if columns is own else None
        for columns in every_kind_column()
        for count, key in columns.json
    }


def behaviour_fields(summary: BehaviourSummary | None) -> dict[str, Any]:
    """A row's behaviour as flat JSON: the tasks measured, those where the suite ran, and the
    median of each metric over tasks (`medianTurns`, `medianFilesRead`, ...)."""
    medians = summary.medians if summary is not None else {}
    return {
        "behaviourTasks": summary.tasks if summary is not None else 0,
        "ranTestsTasks": summary.ran_tests_tasks if summary is not None else None,
        **{
            f"median{metric.key[0].upper()}{metric.key[1:]}": medians.get(metric.key)
            for metric in BEHAVIOUR_METRICS
        },
    }


def interval_fields(key: str, interval: Interval | None) -> dict[str, float | None]:
    """An interval as flat JSON: its estimate at `key`, its bounds at `keyLow` and `keyHigh`."""
    return {key: interval.estimate if interval else None, **_bounds(key, interval)}


def _bounds(key: str, interval: Interval | None) -> dict[str, float | None]:
    return {
        f"{key}Low": interval.low if interval else None,
        f"{key}High": interval.high if interval else None,
    }


def _pass_k_header(rows: Sequence[ReportRow]) -> str | None:
    """`3` when every repeated row has 3 attempts per task, `k` when they differ, None without
    repeats (then there are no pass@k columns)."""
    ks = {row.k for row in rows if row.k is not None}
    if not ks:
        return None
    return str(next(iter(ks))) if len(ks) == 1 else "k"


def _cells(row: ReportRow, *, pass_k: str | None) -> list[str]:
    cells = [
        row.config,
        f"{row.resolved}/{row.attempts}",
        str(row.errors),
        "-" if row.regressed is None else str(row.regressed),
        with_interval(row.avg_cost_usd, row.cost_interval, "${:.4f}", compact),
        with_interval(row.avg_adapter_seconds, row.time_interval, "{:.1f}s", "{:.1f}".format),
        "-" if row.total_wall_seconds is None else format_duration(row.total_wall_seconds),
        with_interval(row.avg_diff, row.diff_interval, "{:.1f} lines", "{:.1f}".format),
        format_rate(row.resolve_rate),
    ]
    if pass_k is not None:
        for interval in (row.pass_at_k, row.pass_hat_k):
            text = "-" if interval is None else format_rate(interval)
            if interval is not None and pass_k == "k":
                text += f" (k={row.k})"
            cells.append(text)
    return cells


CSV_FIELDS = (
    "config", "run", "kind", "tasks", "attempts", "resolved", "errors", "regressed", "avgCostUsd",
    "avgAdapterSeconds", "avgDiff", "resolveRate", "resolveRateLow", "resolveRateHigh",
)  # fmt: skip
"""Header of an empty csv summary (no rows to take the keys from)."""
