"""`gitgauge report`'s numbers: stored results -> one row per config (counts, averages, rates
and their intervals), the per-task matrix, and the one-line summary of a finished pair. Pure
functions; `reporting.render` turns rows into text.

One row per agent config, from that config's latest run (or one per config and run with `--all`).
A run with `--repeat N` holds N attempts per config x task pair; tasks, not attempts, are the
units of every average and interval (attempts at one task share its difficulty). The definitions
(docs/guide/comparing.md, "Metrics table"):

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
- TOTAL TIME: the wall-clock time of every pair of the row, summed (setup, agent and grading;
  `wall_seconds`): what the row cost in time on one slot.
- Behaviour (JSON and CSV, `report --tasks`, the HTML page, `compare`): what the agents did, from
  their transcripts (`BEHAVIOUR_METRICS`), over the attempts that were scored and left one
  (an error is not measured: an agent that never started did nothing). Per task the mean over
  its attempts; per row the median over tasks, and the tasks where the suite was run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean, median
from typing import Any, Literal

from gitgauge.core import kinds
from gitgauge.core.records import RunResult, wall_seconds
from gitgauge.core.store import StoredRun
from gitgauge.reporting import intervals
from gitgauge.reporting.intervals import Interval

CONFIDENCE = intervals.DEFAULT_CONFIDENCE
SEED = 0
"""Every bootstrap in the report uses this seed: the same results always print the same numbers."""

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
    kind: str = "fix"
    """Which tasks the row counts: fix or merge (a config that ran both has a row of each)."""
    exact: int | None = None
    """Merge rows: attempts whose conflicted files all equal the recorded merge's."""
    exact_tree: int | None = None
    """Merge rows: attempts whose whole tree equals the recorded merge's."""
    checks_held: int | None = None
    """Rows of a kind with checks (rebase, commits): checks that held, over every attempt."""
    checks_asked: int | None = None
    """The checks asked over every attempt (each attempt asks all of its kind's)."""
    solved: int | None = None
    """Judged rows: attempts the judge preferred in both orders."""
    judged: int | None = None
    """Judged rows: attempts with a verdict in both orders; 0 without a judge."""
    wins: int | None = None
    """Judged rows: verdicts over both orders, win / tie / loss from the agent's side."""
    ties: int | None = None
    losses: int | None = None
    judge_check: str | None = None
    """Judged rows: the run's judge position-bias check, in words (None: not made)."""
    unscored: tuple[RunResult, ...] = field(default=(), repr=False, compare=False)
    """Attempts nothing could score (a fixture's LLM judge unavailable): left out of every
    count and rate of the row, listed under the table."""
    total_wall_seconds: float | None = None
    """The wall-clock time of the row's pairs, summed (None: no pair has one)."""
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """Of that: `setup`, `agent` and `grading`, summed over the pairs that recorded them."""
    behaviour: BehaviourSummary | None = None
    """What the agents did, over the tasks with a scored attempt that left a transcript."""

    @property
    def label(self) -> str:
        """`RUN:CONFIG`, the form `gitgauge compare` accepts."""
        return f"{self.run_id}:{self.config}"

    @property
    def name(self) -> str:
        """The config, with `(merge)` on a merge row: a column or chart label."""
        return self.config + kinds.get(self.kind).row_suffix


def build_rows(
    runs: Sequence[StoredRun], *, all_runs: bool = False, kind: str | None = None
) -> list[ReportRow]:
    """Rows for `runs` (oldest first): every config of every run, or each config's latest run;
    one row per config and task kind (fix, merge) it ran, or only `kind`'s.

    Rows follow the runs' order, and within a run the configs' `-c` order, fix before merge.
    """
    rows: list[ReportRow] = []
    for run in runs:
        for config in configs_in_order(run):
            for row_kind in kinds.names():
                if kind is not None and row_kind != kind:
                    continue
                results = [r for r in run.results if r.config == config and r.kind == row_kind]
                kept = scored(results)
                if kept:
                    left_out = [r for r in results if r.status == "unscored"]
                    row = summarize(config, run.run_id, kept, kind=row_kind, unscored=left_out)
                    check = run.manifest.judgeCheck if run.manifest else None
                    if check is not None and kinds.get(row_kind).judged:
                        row = replace(row, judge_check=check.describe())
                    rows.append(row)
    if all_runs:
        return rows
    # Later runs overwrite earlier ones.
    latest = {(row.config, row.kind): row for row in rows}
    return [row for row in rows if latest[(row.config, row.kind)] is row]


# -- per-task views of results, shared with `compare` and the HTML report --


def scored(results: Sequence[RunResult]) -> list[RunResult]:
    """The results that count: an `unscored` one (nothing could score it) is left out of every
    total, rate and comparison, and listed instead."""
    return [result for result in results if result.status != "unscored"]


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


def summarize(
    config: str,
    run_id: str,
    results: Sequence[RunResult],
    *,
    kind: str = "fix",
    unscored: Sequence[RunResult] = (),
) -> ReportRow:
    by_task = attempts_by_task(results)
    per_task = [outcomes(attempts) for attempts in by_task.values()]
    counts = kinds.get(kind).row_counts(results)
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
        resolve_rate=intervals.rate_interval(per_task, confidence=CONFIDENCE, seed=SEED),
        interval_method="bootstrap" if repeated else "Wilson",
        cost_interval=cost,
        time_interval=seconds,
        diff_interval=diff,
        k=k,
        pass_at_k=_pass_interval(per_task, k, intervals.pass_at_k) if k else None,
        pass_hat_k=_pass_interval(per_task, k, intervals.pass_hat_k) if k else None,
        results=tuple(results),
        kind=kind,
        exact=counts.get("exact"),
        exact_tree=counts.get("exact_tree"),
        checks_held=counts.get("checks_held"),
        checks_asked=counts.get("checks_asked"),
        solved=counts.get("solved"),
        judged=counts.get("judged"),
        wins=counts.get("wins"),
        ties=counts.get("ties"),
        losses=counts.get("losses"),
        unscored=tuple(unscored),
        total_wall_seconds=_total(results, wall_seconds),
        phase_seconds={
            phase: total
            for phase, value in PHASES.items()
            if (total := _total(results, value)) is not None
        },
        behaviour=summarize_behaviour(by_task),
    )


PHASES: dict[str, Callable[[RunResult], float | None]] = {
    "setup": lambda result: result.setupSeconds,
    "agent": lambda result: result.agentSeconds,
    "grading": lambda result: result.gradingSeconds,
}


def _total(
    results: Sequence[RunResult], value: Callable[[RunResult], float | None]
) -> float | None:
    values = [found for found in map(value, results) if found is not None]
    return sum(values) if values else None


# -- behaviour: what the agents did, from their transcripts --


@dataclass(frozen=True)
class BehaviourMetric:
    """One number counted from a pair's transcript."""

    key: str
    """Its JSON key (`turns`, `filesRead`)."""
    label: str
    """How `compare` and the report name it (`turns`, `files read`)."""
    value: Callable[[RunResult], float | None]
    unit: str = ""


def measured(result: RunResult) -> bool:
    """A scored attempt with a transcript: its behaviour counts (errors are not measured)."""
    return result.behaviour is not None and result.status != "error"


def _behaviour_value(name: str) -> Callable[[RunResult], float | None]:
    def value(result: RunResult) -> float | None:
        if not measured(result) or result.behaviour is None:
            return None
        found = getattr(result.behaviour, name)
        return None if found is None else float(found)

    return value


def tokens_per_turn(result: RunResult) -> float | None:
    """Tokens the agent used per turn: input and output (and, for claude, the prompt cache)."""
    behaviour = result.behaviour
    if not measured(result) or behaviour is None or not behaviour.turns:
        return None
    if result.inputTokens is None and result.outputTokens is None:
        return None
    tokens = (result.inputTokens or 0) + (result.outputTokens or 0)
    if behaviour.source == "claude":  # codex counts its cached tokens among the input ones
        tokens += (result.cacheCreationInputTokens or 0) + (result.cacheReadInputTokens or 0)
    return tokens / behaviour.turns


def cost_per_turn(result: RunResult) -> float | None:
    behaviour = result.behaviour
    if not measured(result) or behaviour is None or not behaviour.turns:
        return None
    return None if result.costUsd is None else result.costUsd / behaviour.turns


BEHAVIOUR_METRICS: tuple[BehaviourMetric, ...] = (
    BehaviourMetric("turns", "turns", _behaviour_value("turns")),
    BehaviourMetric("testRuns", "test runs", _behaviour_value("testRuns")),
    BehaviourMetric("shellCommands", "shell commands", _behaviour_value("shellCommands")),
    BehaviourMetric("filesRead", "files read", _behaviour_value("filesRead")),
    BehaviourMetric("filesEdited", "files edited", _behaviour_value("filesEdited")),
    BehaviourMetric("tokensPerTurn", "tokens per turn", tokens_per_turn),
    BehaviourMetric("costPerTurn", "cost per turn", cost_per_turn, unit="$"),
    BehaviourMetric(
        "firstEditSeconds", "seconds to first edit", _behaviour_value("firstEditSeconds"), "s"
    ),
)
"""What `compare` tests B against A on, per task, and the report carries."""


def ran_tests(result: RunResult) -> bool | None:
    """Whether a measured attempt ran the suite; None when it is not measured."""
    if not measured(result) or result.behaviour is None:
        return None
    return result.behaviour.ran_tests


@dataclass(frozen=True)
class BehaviourSummary:
    """A row's (or a side's) behaviour over its tasks."""

    tasks: int
    """Tasks with at least one measured attempt."""
    attempts: int
    """Measured attempts."""
    ran_tests_tasks: int
    """Tasks where some measured attempt ran the suite."""
    ran_tests_attempts: int
    medians: dict[str, float | None]
    """Per metric key: the median over tasks of each task's mean over its measured attempts."""


def summarize_behaviour(by_task: dict[str, list[RunResult]]) -> BehaviourSummary | None:
    measured_by_task = {
        task: [attempt for attempt in attempts if measured(attempt)]
        for task, attempts in by_task.items()
    }
    measured_by_task = {task: found for task, found in measured_by_task.items() if found}
    if not measured_by_task:
        return None
    medians: dict[str, float | None] = {}
    for metric in BEHAVIOUR_METRICS:
        means = [task_mean(found, metric.value) for found in measured_by_task.values()]
        known = [mean for mean in means if mean is not None]
        medians[metric.key] = median(known) if known else None
    return BehaviourSummary(
        tasks=len(measured_by_task),
        attempts=sum(len(found) for found in measured_by_task.values()),
        ran_tests_tasks=sum(
            1 for found in measured_by_task.values() if any(ran_tests(a) for a in found)
        ),
        ran_tests_attempts=sum(
            1 for found in measured_by_task.values() for a in found if ran_tests(a)
        ),
        medians=medians,
    )


def _mean_interval(values: Sequence[float | None]) -> Interval | None:
    return intervals.mean_interval(values, confidence=CONFIDENCE, seed=SEED)


def _pass_interval(
    per_task: Sequence[Sequence[bool]],
    k: int,
    estimator: Callable[[Sequence[Sequence[bool]], int], float],
) -> Interval:
    # Whole tasks are resampled: a task's attempts travel together.
    return intervals.bootstrap_interval(
        list(per_task),
        lambda sample: estimator(sample, k),
        confidence=CONFIDENCE,
        seed=SEED,
    )


# -- the per-task matrix: rows tasks, columns configs --


@dataclass(frozen=True)
class MatrixCell:
    """One config's attempts at one task."""

    attempts: int
    resolved: int
    errors: int
    regressed: int
    fail_to_pass_failed: tuple[str, ...] = ()
    """FAIL_TO_PASS tests that did not pass in some attempt (per-test scoring)."""
    pass_to_pass_failed: tuple[str, ...] = ()
    """PASS_TO_PASS tests that did not pass in some attempt: the regressions, by name."""
    exact: int | None = None
    """Merge tasks: attempts that matched the recorded merge exactly."""
    checks: tuple[int, int] | None = None
    """Chain tasks: (held, asked) checks over the attempts."""
    solved: int | None = None
    """Chain tasks: attempts the judge preferred in both orders (None: none judged)."""
    series: tuple[tuple[str, ...] | None, ...] = ()
    """Chain tasks: each attempt's series (its subjects, oldest first; None: none found)."""
    original: tuple[str, ...] = ()
    """Chain tasks: the original series' subjects."""
    unscored: int = 0
    """Attempts nothing could score (left out of the counts)."""
    behaviour: dict[str, float | None] = field(default_factory=dict)
    """Per behaviour metric key: the mean over the cell's measured attempts (empty: none)."""
    ran_tests: int = 0
    """Measured attempts that ran the suite."""
    measured: int = 0
    """Attempts whose behaviour was measured (scored, with a transcript)."""
    wall_seconds: float | None = None
    """The wall-clock time of the cell's attempts, summed."""

    @property
    def behaviour_text(self) -> str:
        """`9 turns, tests run, 5 read, 1 edited`; empty when nothing was measured."""
        if not self.measured:
            return ""
        turns = self.behaviour.get("turns")
        parts = [] if turns is None else [f"{_number(turns)} turns"]
        if self.measured == 1:
            parts.append("ran the tests" if self.ran_tests else "no test run")
        else:
            parts.append(f"ran the tests {self.ran_tests}/{self.measured}")
        for key, word in (("filesRead", "read"), ("filesEdited", "edited")):
            found = self.behaviour.get(key)
            if found is not None:
                parts.append(f"{_number(found)} {word}")
        return ", ".join(parts)

    @property
    def text(self) -> str:
        """`resolved` / `unresolved` / `error` (`, regressed` when the base suite broke,
        `, exact` when a merge matched the recorded one); with repeats `k/N` resolved and the
        errors, regressions and exact matches among the N. Per-test tasks name the failing tests
        (`F2P failed: ...`, `P2P failed: ...`)."""
        return self._status_text() + self._tests_text()

    def _status_text(self) -> str:
        checks = f", {self.checks[0]}/{self.checks[1]} checks" if self.checks else ""
        if self.unscored and self.unscored == self.attempts:
            return "unscored"
        if self.attempts == 1:
            status = "resolved" if self.resolved else "error" if self.errors else "unresolved"
            return (
                status
                + (", regressed" if self.regressed else "")
                + (", exact" if self.exact else "")
                + checks
                + (", solved" if self.solved else "")
            )
        parts = [f"{self.resolved}/{self.attempts}" + checks]
        if self.exact:
            parts.append(f"{self.exact} exact")
        if self.solved:
            parts.append(f"{self.solved} solved")
        if self.errors:
            parts.append(f"{self.errors} error" + ("s" if self.errors > 1 else ""))
        if self.regressed:
            parts.append(f"{self.regressed} regressed")
        return ", ".join(parts)

    def _tests_text(self) -> str:
        parts = [
            f"{label} failed: {_few(names)}"
            for label, names in (
                ("F2P", self.fail_to_pass_failed),
                ("P2P", self.pass_to_pass_failed),
            )
            if names
        ]
        return f" ({'; '.join(parts)})" if parts else ""

    @property
    def kind(
        self,
    ) -> Literal["resolved", "partial", "unresolved", "error", "regressed", "unscored"]:
        """The cell's dominant outcome, for colouring."""
        if self.unscored and self.unscored == self.attempts:
            return "unscored"
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
    groups: dict[str, str] = field(default_factory=dict)
    """task -> its benchmark, for fixture tasks (the HTML page groups the matrix by it)."""

    def cell(self, task: str, column: int) -> MatrixCell | None:
        return self.cells.get((task, column))


def build_matrix(rows: Sequence[ReportRow]) -> TaskMatrix:
    cells: dict[tuple[str, int], MatrixCell] = {}
    groups: dict[str, str] = {}
    for index, row in enumerate(rows):
        for result in (*row.results, *row.unscored):
            if result.benchmark:
                groups[result.task] = result.benchmark
        for task, attempts in attempts_by_task(row.unscored).items():
            cells[(task, index)] = MatrixCell(
                attempts=len(attempts), resolved=0, errors=0, regressed=0, unscored=len(attempts)
            )
        for task, attempts in attempts_by_task(row.results).items():
            cells[(task, index)] = MatrixCell(
                attempts=len(attempts),
                resolved=sum(1 for attempt in attempts if attempt.status == "resolved"),
                errors=sum(1 for attempt in attempts if attempt.status == "error"),
                regressed=sum(1 for attempt in attempts if attempt.regressed),
                fail_to_pass_failed=_failed(attempt.failToPassFailed for attempt in attempts),
                pass_to_pass_failed=_failed(attempt.passToPassFailed for attempt in attempts),
                exact=kinds.get(row.kind).row_counts(attempts).get("exact"),
                **_chain_cell(row.kind, attempts),
                behaviour={
                    metric.key: task_mean(attempts, metric.value) for metric in BEHAVIOUR_METRICS
                },
                ran_tests=sum(1 for attempt in attempts if ran_tests(attempt)),
                measured=sum(1 for attempt in attempts if measured(attempt)),
                wall_seconds=_total(attempts, wall_seconds),
            )
    tasks = sorted({task for task, _ in cells})
    return TaskMatrix(columns=list(rows), tasks=tasks, cells=cells, groups=groups)


def _chain_cell(kind: str, attempts: Sequence[RunResult]) -> dict[str, Any]:
    """A chain task's cell: its checks, judge and each attempt's series beside the original."""
    counts = kinds.get(kind).row_counts(attempts)
    if "checks_asked" not in counts:
        return {}
    return {
        "checks": (counts["checks_held"], counts["checks_asked"]),
        "solved": counts["solved"] if counts["judged"] else None,
        "series": tuple(
            None if attempt.series is None else tuple(attempt.series) for attempt in attempts
        ),
        "original": tuple(next((a.originalSeries for a in attempts if a.originalSeries), [])),
    }


@dataclass(frozen=True)
class SeriesView:
    """One chain task: the original series and each column's series beside it."""

    task: str
    original: tuple[str, ...]
    columns: list[tuple[int, int, tuple[str, ...] | None]]
    """(column index, attempt number, series) for every attempt that ran the task."""


def series_views(matrix: TaskMatrix) -> list[SeriesView]:
    """The chain tasks of `matrix`, each with the series every column's attempts made."""
    views: list[SeriesView] = []
    for task in matrix.tasks:
        original: tuple[str, ...] = ()
        columns: list[tuple[int, int, tuple[str, ...] | None]] = []
        for index in range(len(matrix.columns)):
            cell = matrix.cell(task, index)
            if cell is None or cell.checks is None:
                continue
            original = original or cell.original
            columns += [(index, number, series) for number, series in enumerate(cell.series, 1)]
        if columns:
            views.append(SeriesView(task, original, columns))
    return views


def _failed(lists: Iterable[list[str] | None]) -> tuple[str, ...]:
    return tuple(sorted({name for names in lists for name in names or ()}))


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _few(names: Sequence[str], shown: int = 2) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


# -- one finished pair, for `gitgauge run`'s progress --


def describe_pair(result: RunResult) -> str:
    """One line for a finished pair: config, task, status, cost, time, diff (and what went wrong
    or was reverted)."""
    status: str = result.status
    if result.status == "error":
        status = f"error ({result.errorKind})"
    elif result.regressed:
        status += ", regressed"
        if result.passToPassFailed:
            status += f" ({_few(result.passToPassFailed)})"
    status += kinds.get(result.kind).describe(result)
    cost = "-" if result.costUsd is None else f"${result.costUsd:.4f}"
    seconds = "-" if result.adapterSeconds is None else f"{result.adapterSeconds:.1f}s"
    if result.wallSeconds is not None:
        seconds += f" (wall {result.wallSeconds:.1f}s)"
    diff = "-"
    if result.diffFiles is not None:
        files = "file" if result.diffFiles == 1 else "files"
        diff = f"{result.diffFiles} {files} +{result.diffInsertions} -{result.diffDeletions}"
    task = result.task if result.attempt == 1 else f"{result.task} #{result.attempt}"
    line = f"{result.config}  {task}  {status}  cost {cost}  time {seconds}  diff {diff}"
    if result.behaviour is not None:
        done = result.behaviour
        tests = f"ran the tests {done.testRuns}x" if done.testRuns else "no test run"
        line += f"  {done.turns} turns, {tests}"
    if result.reverted:
        line += f"  reverted: {', '.join(result.reverted)}"
    if result.deleted:
        line += f"  deleted: {', '.join(result.deleted)}"
    if result.dropped:
        line += f"  dropped: {', '.join(sorted(result.dropped))}"
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
