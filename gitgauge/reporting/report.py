"""`gitgauge report`: pure functions from stored results to rows to text (table, markdown, csv,
json).

One row per agent config, from that config's latest run (or one per config and run with `--all`).
A run with `--repeat N` holds N attempts per config x task pair; tasks, not attempts, are the
units of every average and interval (attempts at one task share its difficulty). The definitions
(README, "Metrics table"):

- RESOLVED `r/n`: resolved attempts out of every attempt of the row (errors included: a config
  whose agent crashes on a task did not resolve it).
- ERRORS: attempts whose setup, adapter or workspace failed; they were not scored.
- REGRESS: attempts whose base suite failed after the agent's work; `-` when no attempt of the row
  has a known regression status.
- AVG COST: mean over tasks of the task's mean `costUsd` over its attempts that report one (errors
  included: their cost was spent).
- AVG TIME: the same for the adapter's wall time, over the attempts whose adapter ran.
- AVG DIFF: the same for insertions + deletions, over the attempts that are not errors.
- RATE: mean over tasks of the fraction of the task's attempts that resolved it (errors count as
  unresolved attempts), with a 95% interval: Wilson with one attempt per task, else a bootstrap
  over tasks. The averages carry bootstrap intervals over tasks. Everything is seeded.
- PASS@k / PASS^k (only with repeats, k = the attempts per task): the chance that at least one /
  all of k attempts resolve a task.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Literal

from tabulate import tabulate

from gitgauge.core.records import RunResult
from gitgauge.core.store import StoredRun
from gitgauge.reporting import stats
from gitgauge.reporting.stats import Interval

HEADERS = ("CONFIG", "RESOLVED", "ERRORS", "REGRESS", "AVG COST", "AVG TIME", "AVG DIFF")
RATE_HEADER = "RATE"
FORMATS = ("table", "markdown", "csv", "json")
NO_RUNS_HINT = "no runs yet: run `gitgauge run -c <agent config>.yaml` first"
CONFIDENCE = stats.DEFAULT_CONFIDENCE
SEED = 0
"""Every bootstrap in the report uses this seed: the same results always print the same numbers."""

FOOTNOTE_WIDTH = 100
FEW_TASKS = 10
"""Below this many tasks a bootstrap interval is optimistic (docs/statistics.md, "Limits")."""

IntervalMethod = Literal["Wilson", "bootstrap"]


@dataclass(frozen=True)
class ReportRow:
    config: str
    run_id: str
    tasks: int
    """Distinct tasks of this config in this run."""
    attempts: int
    """Results of this config in this run (tasks x attempts; equal to `tasks` without repeats)."""
    resolved: int
    """Resolved attempts."""
    errors: int
    regressed: int | None
    """None when no attempt has a known regression status."""
    avg_cost_usd: float | None
    avg_adapter_seconds: float | None
    avg_diff: float | None
    resolve_rate: Interval
    """Mean over tasks of the per-task fraction resolved, with its 95% interval."""
    interval_method: IntervalMethod
    cost_interval: Interval | None = None
    time_interval: Interval | None = None
    diff_interval: Interval | None = None
    k: int | None = None
    """Attempts per task used for pass@k and pass^k; None with one attempt per task."""
    pass_at_k: Interval | None = None
    pass_hat_k: Interval | None = None
    results: tuple[RunResult, ...] = field(default=(), repr=False, compare=False)
    """The row's results, for the per-task matrix and the HTML report's links."""

    @property
    def label(self) -> str:
        """`RUN:CONFIG`, the form `gitgauge compare` accepts."""
        return f"{self.run_id}:{self.config}"


def build_rows(runs: Sequence[StoredRun], *, all_runs: bool = False) -> list[ReportRow]:
    """Rows for `runs` (oldest first): every config of every run, or each config's latest run.

    Rows follow the runs' order, and within a run the configs' `-c` order.
    """
    rows: list[ReportRow] = []
    for run in runs:
        for config in configs_in_order(run):
            results = [result for result in run.results if result.config == config]
            if results:
                rows.append(summarize(config, run.run_id, results))
    if all_runs:
        return rows
    latest = {row.config: row for row in rows}  # later runs overwrite earlier ones
    return [row for row in rows if latest[row.config] is row]


# -- per-task views of results, shared with `compare` and the HTML report --


def attempts_by_task(results: Sequence[RunResult]) -> dict[str, list[RunResult]]:
    """Each task's attempts, tasks sorted by id and attempts by number."""
    grouped: dict[str, list[RunResult]] = {}
    for result in results:
        grouped.setdefault(result.task, []).append(result)
    return {
        task: sorted(grouped[task], key=lambda result: result.attempt) for task in sorted(grouped)
    }


def outcomes(attempts: Sequence[RunResult]) -> list[bool]:
    """Resolved or not, per attempt: an error is an attempt that did not resolve the task."""
    return [attempt.status == "resolved" for attempt in attempts]


def cost_of(result: RunResult) -> float | None:
    return result.costUsd


def seconds_of(result: RunResult) -> float | None:
    return result.adapterSeconds


def diff_of(result: RunResult) -> float | None:
    """Inserted + deleted lines; None for errors, which were not scored."""
    if result.status == "error" or result.diffInsertions is None:
        return None
    return float(result.diffInsertions + (result.diffDeletions or 0))


def task_mean(
    attempts: Sequence[RunResult], value: Callable[[RunResult], float | None]
) -> float | None:
    """The mean of `value` over a task's attempts that have one; None when none does."""
    values = [found for found in map(value, attempts) if found is not None]
    return fmean(values) if values else None


def summarize(config: str, run_id: str, results: Sequence[RunResult]) -> ReportRow:
    by_task = attempts_by_task(results)
    per_task = [outcomes(attempts) for attempts in by_task.values()]
    regress_known = [result.regressed for result in results if result.regressed is not None]
    cost = _mean_interval([task_mean(a, cost_of) for a in by_task.values()])
    seconds = _mean_interval([task_mean(a, seconds_of) for a in by_task.values()])
    diff = _mean_interval([task_mean(a, diff_of) for a in by_task.values()])
    fewest = min(len(attempts) for attempts in per_task)
    repeated = any(len(attempts) > 1 for attempts in per_task)
    k = fewest if fewest > 1 else None
    return ReportRow(
        config=config,
        run_id=run_id,
        tasks=len(by_task),
        attempts=len(results),
        resolved=sum(1 for result in results if result.status == "resolved"),
        errors=sum(1 for result in results if result.status == "error"),
        regressed=sum(regress_known) if regress_known else None,
        avg_cost_usd=cost.estimate if cost else None,
        avg_adapter_seconds=seconds.estimate if seconds else None,
        avg_diff=diff.estimate if diff else None,
        resolve_rate=stats.rate_interval(per_task, confidence=CONFIDENCE, seed=SEED),
        interval_method="bootstrap" if repeated else "Wilson",
        cost_interval=cost,
        time_interval=seconds,
        diff_interval=diff,
        k=k,
        pass_at_k=_pass_interval(per_task, k, stats.pass_at_k) if k else None,
        pass_hat_k=_pass_interval(per_task, k, stats.pass_hat_k) if k else None,
        results=tuple(results),
    )


def _mean_interval(values: Sequence[float | None]) -> Interval | None:
    return stats.mean_interval(values, confidence=CONFIDENCE, seed=SEED)


def _pass_interval(
    per_task: Sequence[Sequence[bool]],
    k: int,
    estimator: Callable[[Sequence[Sequence[bool]], int], float],
) -> Interval:
    # Whole tasks are resampled: a task's attempts travel together.
    return stats.bootstrap_interval(
        list(per_task),
        lambda sample: estimator(sample, k),
        confidence=CONFIDENCE,
        seed=SEED,
    )


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
    if pass_k is not None:
        headers += [f"PASS@{pass_k}", f"PASS^{pass_k}"]
    return headers


def summary_cells(
    row: ReportRow, rows: Sequence[ReportRow], *, with_run: bool = False
) -> list[str]:
    """`row`'s cells under `summary_headers(rows)`."""
    return ([row.run_id] if with_run else []) + _cells(row, pass_k=_pass_k_header(rows))


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
    if any(row.tasks < FEW_TASKS for row in rows):
        text += (
            f" A bootstrap over fewer than {FEW_TASKS} tasks is too narrow (it cannot see "
            "variation the few tasks lack): read those intervals with care."
        )
    return textwrap.fill(text, width=FOOTNOTE_WIDTH)


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
        _with_interval(row.avg_diff, row.diff_interval, "{:.1f}", "{:.1f}".format),
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
    """`$0.3000 [0.18, 0.42]`, `200.0s [22.4, 548.0]`: the average, then its interval."""
    if value is None:
        return "-"
    text = point.format(value)
    if interval is not None:
        text += f" [{bound(interval.low)}, {bound(interval.high)}]"
    return text


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


@dataclass(frozen=True)
class MatrixCell:
    """One config's attempts at one task."""

    attempts: int
    resolved: int
    errors: int
    regressed: int

    @property
    def text(self) -> str:
        """`resolved` / `unresolved` / `error` (`, regressed` when the base suite broke); with
        repeats `k/N` resolved and the errors and regressions among the N."""
        if self.attempts == 1:
            status = "resolved" if self.resolved else "error" if self.errors else "unresolved"
            return status + (", regressed" if self.regressed else "")
        parts = [f"{self.resolved}/{self.attempts}"]
        if self.errors:
            parts.append(f"{self.errors} error" + ("s" if self.errors > 1 else ""))
        if self.regressed:
            parts.append(f"{self.regressed} regressed")
        return ", ".join(parts)

    @property
    def kind(self) -> Literal["resolved", "partial", "unresolved", "error", "regressed"]:
        """The cell's dominant outcome, for colouring."""
        if self.regressed:
            return "regressed"
        if self.errors == self.attempts:
            return "error"
        if self.resolved == self.attempts:
            return "resolved"
        return "partial" if self.resolved else "unresolved"


@dataclass(frozen=True)
class TaskMatrix:
    columns: list[ReportRow]
    tasks: list[str]
    """Every task any column ran, sorted by id."""
    cells: dict[tuple[str, int], MatrixCell]
    """(task, column index) -> cell; missing when that column did not run the task."""

    def cell(self, task: str, column: int) -> MatrixCell | None:
        return self.cells.get((task, column))


def build_matrix(rows: Sequence[ReportRow]) -> TaskMatrix:
    cells: dict[tuple[str, int], MatrixCell] = {}
    for index, row in enumerate(rows):
        for task, attempts in attempts_by_task(row.results).items():
            cells[(task, index)] = MatrixCell(
                attempts=len(attempts),
                resolved=sum(1 for attempt in attempts if attempt.status == "resolved"),
                errors=sum(1 for attempt in attempts if attempt.status == "error"),
                regressed=sum(1 for attempt in attempts if attempt.regressed),
            )
    tasks = sorted({task for task, _ in cells})
    return TaskMatrix(columns=list(rows), tasks=tasks, cells=cells)


def column_labels(matrix: TaskMatrix, *, with_run: bool) -> list[str]:
    return [row.label if with_run else row.config for row in matrix.columns]


def render_matrix(matrix: TaskMatrix, *, output_format: str, with_run: bool = False) -> str:
    labels = column_labels(matrix, with_run=with_run)
    if output_format == "json":
        return json.dumps(_matrix_records(matrix), indent=2)
    body = [
        [task, *(_cell_text(matrix.cell(task, index)) for index in range(len(labels)))]
        for task in matrix.tasks
    ]
    if output_format == "csv":
        return _csv(
            ["task", *labels], [dict(zip(["task", *labels], line, strict=True)) for line in body]
        )
    return tabulate(
        body,
        headers=["TASK", *labels],
        tablefmt="github" if output_format == "markdown" else "simple",
        disable_numparse=True,
    )


def _cell_text(cell: MatrixCell | None) -> str:
    return "-" if cell is None else cell.text


def _matrix_records(matrix: TaskMatrix) -> list[dict[str, Any]]:
    """Long form, one record per task x column that ran it: easy to filter in a script."""
    records = []
    for task in matrix.tasks:
        for index, row in enumerate(matrix.columns):
            cell = matrix.cell(task, index)
            if cell is None:
                continue
            records.append(
                {
                    "task": task,
                    "config": row.config,
                    "run": row.run_id,
                    "attempts": cell.attempts,
                    "resolved": cell.resolved,
                    "errors": cell.errors,
                    "regressed": cell.regressed,
                    "cell": cell.text,
                }
            )
    return records


CSV_FIELDS = (
    "config", "run", "tasks", "attempts", "resolved", "errors", "regressed", "avgCostUsd",
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


# -- one finished pair, for `gitgauge run`'s progress --


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
    task = result.task if result.attempt == 1 else f"{result.task} #{result.attempt}"
    line = f"{result.config}  {task}  {status}  cost {cost}  time {seconds}  diff {diff}"
    if result.reverted:
        line += f"  reverted: {', '.join(result.reverted)}"
    if result.deleted:
        line += f"  deleted: {', '.join(result.deleted)}"
    if result.errorMessage:
        line += f"\n    {' '.join(result.errorMessage.split())[:300]}"
    return line


def configs_in_order(run: StoredRun) -> list[str]:
    """The run's config names in `-c` order, then any config with results but not in the
    manifest (a missing or older run.json)."""
    names = [config.name for config in run.manifest.configs] if run.manifest else []
    for result in run.results:
        if result.config not in names:
            names.append(result.config)
    return names
