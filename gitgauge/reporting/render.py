"""`gitgauge report`'s text: rows and the per-task matrix as a table, markdown, csv or json.

Pure functions from `reporting.rows` to strings; the column definitions are in that module's
docstring and docs/guide/comparing.md, "Metrics table". The HTML report reuses the cells and the
footnote.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from tabulate import tabulate

from gitgauge.reporting.intervals import Interval
from gitgauge.reporting.rows import (
    BEHAVIOUR_METRICS,
    CONFIDENCE,
    FEW_TASKS,
    BehaviourSummary,
    MatrixCell,
    ReportRow,
    TaskMatrix,
    series_views,
)

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


# -- the summary: table, markdown, csv, json --


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
    """The spec's columns, then RATE, then PASS@k and PASS^k when some row has repeats."""
    pass_k = _pass_k_header(rows)
    headers = [*(("RUN",) if with_run else ()), *HEADERS, RATE_HEADER]
    if has_merge_rows(rows) or has_chain_rows(rows):
        headers[headers.index("CONFIG") + 1 : headers.index("CONFIG") + 1] = ["KIND"]
    if has_merge_rows(rows):
        headers[headers.index("RESOLVED") + 1 : headers.index("RESOLVED") + 1] = ["EXACT"]
    if has_chain_rows(rows):
        after = headers.index("EXACT" if has_merge_rows(rows) else "RESOLVED") + 1
        headers[after:after] = list(CHAIN_HEADERS)
    if pass_k is not None:
        headers += [f"PASS@{pass_k}", f"PASS^{pass_k}"]
    return headers


def summary_cells(
    row: ReportRow, rows: Sequence[ReportRow], *, with_run: bool = False
) -> list[str]:
    """`row`'s cells under `summary_headers(rows)`."""
    cells = _cells(row, pass_k=_pass_k_header(rows))
    merge, chain = has_merge_rows(rows), has_chain_rows(rows)
    if not (merge or chain) and len({other.kind for other in rows}) > 1:
        cells[0] = row.name  # no KIND column to tell a fixture row from a fix row
    if merge or chain:
        exact = ["-" if row.exact is None else f"{row.exact}/{row.attempts}"] if merge else []
        cells = [
            cells[0],
            row.kind,
            cells[1],
            *exact,
            *(chain_cells(row) if chain else []),
            *cells[2:],
        ]
    return ([row.run_id] if with_run else []) + cells


CHAIN_HEADERS = ("CHECKS", "SOLVED", "WIN/TIE/LOSS")
"""Commit-history rows: the checks that held, the judge's SOLVED, and its verdicts."""


def has_chain_rows(rows: Sequence[ReportRow]) -> bool:
    """Whether the CHECKS, SOLVED and WIN/TIE/LOSS columns are shown (a kind with checks)."""
    return any(row.checks_asked is not None for row in rows)


def chain_cells(row: ReportRow) -> list[str]:
    """CHECKS `held/asked`, SOLVED `solved/attempts` and WIN/TIE/LOSS; `-` where they do not
    apply or no judge ran."""
    if row.checks_asked is None:
        return ["-", "-", "-"]
    checks = f"{row.checks_held}/{row.checks_asked}"
    if not row.judged:
        return [checks, "-", "-"]
    return [checks, f"{row.solved}/{row.attempts}", f"{row.wins}/{row.ties}/{row.losses}"]


def has_merge_rows(rows: Sequence[ReportRow]) -> bool:
    """Whether the KIND and EXACT columns are shown (only when some row counts exact matches:
    a kind graded against a recorded answer tree, like merge tasks)."""
    return any(row.exact is not None for row in rows)


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
    if has_merge_rows(rows):
        text += (
            " KIND merge: merge-conflict tasks; EXACT: attempts whose conflicted files all equal "
            "the recorded merge's (GitGoodBench's exact match)."
        )
    if has_chain_rows(rows):
        text += (
            " KIND rebase / commits: commit-history tasks, RESOLVED when every check holds; "
            "CHECKS: checks that held over those asked (6 per attempt: tree, nothing in "
            "progress, nothing uncommitted, series length, distinct subjects, branch); SOLVED: "
            "attempts the judge preferred to the original in both orders (GitGoodBench's "
            "measure; - without a judge); WIN/TIE/LOSS: its verdicts over both orders."
        )
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
    return _csv(list(records[0]) if records else list(CSV_FIELDS), records)


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
        "resolveRate": row.resolve_rate.estimate,
        "resolveRateLow": row.resolve_rate.low,
        "resolveRateHigh": row.resolve_rate.high,
        "intervalMethod": row.interval_method,
        **_bounds("avgCostUsd", row.cost_interval),
        **_bounds("avgAdapterSeconds", row.time_interval),
        **_bounds("avgDiff", row.diff_interval),
        "k": row.k,
        "passAtK": row.pass_at_k.estimate if row.pass_at_k else None,
        **_bounds("passAtK", row.pass_at_k),
        "passHatK": row.pass_hat_k.estimate if row.pass_hat_k else None,
        **_bounds("passHatK", row.pass_hat_k),
        "confidence": CONFIDENCE,
        "exact": row.exact,
        "exactTree": row.exact_tree,
        "checksHeld": row.checks_held,
        "checksAsked": row.checks_asked,
        "solved": row.solved,
        "judged": row.judged,
        "wins": row.wins,
        "ties": row.ties,
        "losses": row.losses,
        "judgeCheck": row.judge_check,
        "totalWallSeconds": row.total_wall_seconds,
        **{
            f"total{phase.title()}Seconds": row.phase_seconds.get(phase)
            for phase in ("setup", "agent", "grading")
        },
        **behaviour_fields(row.behaviour),
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
        _with_interval(row.avg_cost_usd, row.cost_interval, "${:.4f}", compact),
        _with_interval(row.avg_adapter_seconds, row.time_interval, "{:.1f}s", "{:.1f}".format),
        "-" if row.total_wall_seconds is None else format_duration(row.total_wall_seconds),
        _with_interval(row.avg_diff, row.diff_interval, "{:.1f} lines", "{:.1f}".format),
        format_rate(row.resolve_rate),
    ]
    if pass_k is not None:
        for interval in (row.pass_at_k, row.pass_hat_k):
            text = "-" if interval is None else format_rate(interval)
            if interval is not None and pass_k == "k":
                text += f" (k={row.k})"
            cells.append(text)
    return cells


def format_rate(interval: Interval) -> str:
    """`60% [23, 88]`: the rate and its interval in percent."""
    if interval.estimate is None:
        return "-"
    return f"{percent(interval.estimate)} [{interval.low * 100:.0f}, {interval.high * 100:.0f}]"


def percent(rate: float) -> str:
    return f"{rate * 100:.0f}%"


def _with_interval(
    value: float | None, interval: Interval | None, point: str, bound: Callable[[float], str]
) -> str:
    """`$0.3000 [0.18, 0.42]`, `200.0s [22.4, 548.0]`: the average, then its interval; no
    interval when it has no width at the precision shown (`0.0s`, not `0.0s [0.0, 0.0]`: a
    column that did not vary)."""
    if value is None:
        return "-"
    text = point.format(value)
    if interval is not None and bound(interval.low) != bound(interval.high):
        text += f" [{bound(interval.low)}, {bound(interval.high)}]"
    return text


def format_duration(seconds: float) -> str:
    """`12.3s`, `2m04s`, `1h02m`: a wall time a person reads at a glance."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def compact(value: float) -> str:
    """A cost bound in few characters: two significant digits, at most four decimals
    (0.18, 0.0081, 2.5, 12), whole dollars from 100."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    text = f"{value:.2g}"
    if "e" in text or len(text.split(".")[-1]) > 4:
        text = f"{value:.4f}"
    return text


# -- the per-task matrix: rows tasks, columns configs --


def column_labels(matrix: TaskMatrix, *, with_run: bool) -> list[str]:
    # `row.name` is the config for fix rows; merge rows say `(merge)`.
    return [f"{row.run_id}:{row.name}" if with_run else row.name for row in matrix.columns]


def render_matrix(matrix: TaskMatrix, *, output_format: str, with_run: bool = False) -> str:
    labels = column_labels(matrix, with_run=with_run)
    if output_format == "json":
        return json.dumps(_matrix_records(matrix), indent=2)
    # What the agent did goes under the outcome (beside it in markdown, whose cells hold one
    # line): a cell says both what came out and how.
    joiner = "; " if output_format in ("markdown", "csv") else "\n"
    body = [
        [task, *(_cell_text(matrix.cell(task, index), joiner) for index in range(len(labels)))]
        for task in matrix.tasks
    ]
    if output_format == "csv":
        return _matrix_csv(matrix, labels)
    return tabulate(
        body,
        headers=["TASK", *labels],
        tablefmt="github" if output_format == "markdown" else "simple",
        disable_numparse=True,
    )


def _cell_text(cell: MatrixCell | None, joiner: str = "") -> str:
    if cell is None:
        return "-"
    behaviour = cell.behaviour_text
    return cell.text + (joiner + behaviour if behaviour and joiner else "")


MATRIX_CSV_EXTRA = (
    ("turns", "turns"),
    ("test runs", "testRuns"),
    ("ran tests", None),
    ("files read", "filesRead"),
    ("files edited", "filesEdited"),
    ("shell commands", "shellCommands"),
    ("first edit s", "firstEditSeconds"),
    ("wall s", None),
)
"""The behaviour columns the csv matrix adds per config (`<config> turns`, ...)."""


def _matrix_csv(matrix: TaskMatrix, labels: Sequence[str]) -> str:
    """Rows tasks; per config its cell, then its behaviour in columns of their own."""
    fields = ["task", *labels]
    fields += [f"{label} {name}" for label in labels for name, _ in MATRIX_CSV_EXTRA]
    records = []
    for task in matrix.tasks:
        record: dict[str, Any] = {"task": task}
        for index, label in enumerate(labels):
            cell = matrix.cell(task, index)
            record[label] = _cell_text(cell)
            for name, key in MATRIX_CSV_EXTRA:
                value: Any = None
                if cell is not None and key is not None:
                    value = cell.behaviour.get(key)
                elif cell is not None and name == "ran tests" and cell.measured:
                    value = cell.ran_tests
                elif cell is not None and name == "wall s":
                    value = cell.wall_seconds
                record[f"{label} {name}"] = value
        records.append(record)
    return _csv(fields, records)


def _matrix_records(matrix: TaskMatrix) -> list[dict[str, Any]]:
    """Long form, one record per task x column that ran it: easy to filter in a script."""
    records = []
    for task in matrix.tasks:
        for index, row in enumerate(matrix.columns):
            cell = matrix.cell(task, index)
            if cell is None:
                continue
            record: dict[str, Any] = {
                "task": task,
                "config": row.config,
                "run": row.run_id,
                "attempts": cell.attempts,
                "resolved": cell.resolved,
                "errors": cell.errors,
                "regressed": cell.regressed,
                "failToPassFailed": list(cell.fail_to_pass_failed),
                "passToPassFailed": list(cell.pass_to_pass_failed),
                "cell": cell.text,
                "measured": cell.measured,
                "ranTests": cell.ran_tests if cell.measured else None,
                **{metric.key: cell.behaviour.get(metric.key) for metric in BEHAVIOUR_METRICS},
                "wallSeconds": cell.wall_seconds,
            }
            if cell.exact is not None:
                record.update(kind=row.kind, exact=cell.exact)
            if cell.checks is not None:
                record.update(
                    kind=row.kind,
                    checksHeld=cell.checks[0],
                    checksAsked=cell.checks[1],
                    solved=cell.solved,
                    series=[None if one is None else list(one) for one in cell.series],
                    originalSeries=list(cell.original),
                )
            records.append(record)
    return records


def render_series(matrix: TaskMatrix, *, output_format: str, with_run: bool = False) -> str:
    """Each commit-history task's series beside the original: a column per config (and
    attempt), a row per commit, subjects oldest first; "" when no cell holds one."""
    labels = column_labels(matrix, with_run=with_run)
    blocks: list[str] = []
    for view in series_views(matrix):
        headers = ["original"]
        columns: list[Sequence[str]] = [view.original]
        for index, attempt, series in view.columns:
            repeated = sum(1 for other, _, _ in view.columns if other == index) > 1
            headers.append(labels[index] + (f" #{attempt}" if repeated else ""))
            columns.append(("(no series)",) if series is None else series)
        depth = max(len(column) for column in columns)
        body = [[column[n] if n < len(column) else "" for column in columns] for n in range(depth)]
        table = tabulate(
            body,
            headers=headers,
            tablefmt="github" if output_format == "markdown" else "simple",
            disable_numparse=True,
        )
        blocks.append(f"{view.task}:\n{table}")
    return "\n\n".join(blocks)


CSV_FIELDS = (
    "config", "run", "kind", "tasks", "attempts", "resolved", "errors", "regressed", "avgCostUsd",
    "avgAdapterSeconds", "avgDiff", "resolveRate", "resolveRateLow", "resolveRateHigh",
)  # fmt: skip
"""Header of an empty csv summary (no rows to take the keys from)."""


def _csv(fields: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: "" if value is None else value for key, value in record.items()})
    return buffer.getvalue().rstrip("\n")
