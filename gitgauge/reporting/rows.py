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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from gitgauge.core import kinds
from gitgauge.core.records import RunResult, wall_seconds
from gitgauge.core.store import StoredRun
from gitgauge.reporting import intervals

# Imports written `name as name` are re-exports: the CLI, `benchmarks` and `compare_render`
# import the per-task views and the matrix (which lived here) from this module.
from gitgauge.reporting.attempts import attempts_by_task as attempts_by_task
from gitgauge.reporting.attempts import (
    cost_of,
    diff_of,
    scored,
    seconds_of,
    tally,
    task_mean,
    total_of,
)
from gitgauge.reporting.attempts import outcomes as outcomes
from gitgauge.reporting.behaviour import BehaviourSummary, summarize_behaviour
from gitgauge.reporting.intervals import Interval
from gitgauge.reporting.matrix import build_matrix as build_matrix
from gitgauge.reporting.matrix import few

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
    counts: dict[str, int] = field(default_factory=dict)
    """The kind's own counts over the row's attempts (`TaskKind.row_counts`: merge's `exact`,
    the chain kinds' `checks_held`, ...), for the kind's report columns."""
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
        **tally(results),
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
        counts=counts,
        unscored=tuple(unscored),
        total_wall_seconds=total_of(results, wall_seconds),
        phase_seconds={
            phase: total
            for phase, value in PHASES.items()
            if (total := total_of(results, value)) is not None
        },
        behaviour=summarize_behaviour(by_task),
    )


PHASES: dict[str, Callable[[RunResult], float | None]] = {
    "setup": lambda result: result.setupSeconds,
    "agent": lambda result: result.agentSeconds,
    "grading": lambda result: result.gradingSeconds,
}


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
            status += f" ({few(result.passToPassFailed)})"
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
    for label, paths in (
        ("reverted", result.reverted),
        ("deleted", result.deleted),
        ("dropped", sorted(result.dropped)),
    ):
        if paths:
            line += f"  {label}: {', '.join(paths)}"
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
