"""`gitgauge compare A B`: did B do better than A, or could the difference be chance?

A side is a config name (its latest run) or `RUN:CONFIG` (a run id, or a unique start of one). Only
the tasks both sides ran are compared, paired by task; every difference is B - A. The statistics are
`reporting.paired` and `reporting.intervals` (docs/statistics.md): exact McNemar and Newcombe's
interval with one attempt per task, a paired permutation test and a bootstrap over tasks with
repeats, paired bootstrap intervals for cost, time and diff, and one verdict sentence that never
claims more than the numbers. What could make the comparison unfair (other timeouts, test commands,
task sets, gitgauge versions, history modes) is listed as warnings from the runs' manifests
(`reporting.compare_warnings`); what the agents did is compared in `reporting.compare_behaviour`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gitgauge.core import fingerprint, kinds
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.harness_diff import differences as harness_differences
from gitgauge.core.records import RunResult
from gitgauge.core.store import StoredRun
from gitgauge.reporting.attempts import (
    attempts_by_task,
    cost_of,
    diff_of,
    outcomes,
    scored,
    seconds_of,
    status_count,
    task_mean,
)

# Imports written `name as name` are re-exports: `compare_render` imports the behaviour
# comparison and `counts_text` (which lived here) from this module.
from gitgauge.reporting.compare_behaviour import BehaviourComparison as BehaviourComparison
from gitgauge.reporting.compare_behaviour import BehaviourDifference as BehaviourDifference
from gitgauge.reporting.compare_behaviour import compare_behaviour
from gitgauge.reporting.compare_warnings import counts_text as counts_text
from gitgauge.reporting.compare_warnings import error_warnings, no_verdict, side_warnings
from gitgauge.reporting.intervals import Interval, rate_interval
from gitgauge.reporting.paired import (
    PairedComparison,
    PairedMean,
    paired_comparison,
    paired_mean_difference,
    verdict_sentence,
)
from gitgauge.reporting.power import RepeatedPower, repeated_tasks_for_power, tasks_for_power
from gitgauge.reporting.rows import CONFIDENCE, SEED, configs_in_order

SHOWN_NAMES = 10
"""How many known names an error message lists."""


class CompareError(GitGaugeError):
    """A side of `gitgauge compare` names nothing stored, or the sides share no task."""


@dataclass(frozen=True)
class Side:
    config: str
    run: StoredRun
    results: list[RunResult]
    """This config's results in this run."""

    @property
    def label(self) -> str:
        return f"{self.run.run_id}:{self.config}"


@dataclass(frozen=True)
class MeanDifference:
    """Cost, time or diff: B - A over the compared tasks where both sides have a value."""

    metric: str
    unit: str
    paired: PairedMean


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    name_a: str
    name_b: str
    tasks: list[str]
    """The compared tasks: those both sides ran, sorted by id."""
    only_in_a: list[str]
    only_in_b: list[str]
    attempts_a: int
    attempts_b: int
    errors_a: int
    """Errored attempts of A on the compared tasks (counted as unresolved)."""
    errors_b: int
    rate_a: Interval
    rate_b: Interval
    paired: PairedComparison
    means: list[MeanDifference]
    verdict: str
    warnings: list[str]
    harness: str | None = None
    """What differs between the two sides' harnesses (`same harness`); None: not recorded."""
    behaviour: BehaviourComparison | None = None
    """What the agents did, B against A; None when no compared task has a transcript on both."""
    refusal: str | None = None
    """Why there is no verdict (a side has no scored pair); None: `verdict` stands."""
    power: PowerNote | None = None
    """How many tasks the observed difference would need to be conclusive."""
    solved: JudgedComparison | None = None
    """Commit-history tasks: the judge's SOLVED, paired over the tasks both sides had judged
    in every attempt; None when no such task."""


@dataclass(frozen=True)
class JudgedComparison:
    """The judge's SOLVED of both sides on the tasks judged on both, paired like RESOLVED."""

    tasks: list[str]
    rate_a: Interval
    rate_b: Interval
    paired: PairedComparison


@dataclass(frozen=True)
class PowerNote:
    """Tasks at which the exact McNemar test would reach p < 0.05 with 80% power, if the
    observed discordance is the truth (`reporting.power`)."""

    only_a: int
    only_b: int
    tasks: int
    needed: int | None
    """Tasks needed (one attempt each); None: no number would do."""
    repeated: RepeatedPower | None = None
    """With repeats: attempt pairs needed and tasks at 1, k, 2k attempts per task."""


def pick_side(runs: Sequence[StoredRun], spec: str) -> Side:
    """The side `spec` names: a config's latest run, else `RUN:CONFIG`."""
    latest: Side | None = None
    for run in runs:  # oldest first: the last match is the latest run
        results = [result for result in run.results if result.config == spec]
        if results:
            latest = Side(spec, run, results)
    if latest is not None:
        return latest
    if ":" in spec:
        run_part, config = spec.split(":", 1)
        named = _find_run(runs, run_part, spec)
        if named is not None:
            results = [result for result in named.results if result.config == config]
            if not results:
                raise CompareError(
                    f"run {named.run_id} has no results for config {config!r}; its configs: "
                    + _names(configs_in_order(named))
                )
            return Side(config, named, results)
    known = list(dict.fromkeys(name for run in runs for name in configs_in_order(run)))
    if not known:
        raise CompareError("no runs yet: run `gitgauge run -c a.yaml -c b.yaml` first")
    raise CompareError(
        f"no config named {spec!r} has results; known configs: {_names(known)} "
        "(or RUN:CONFIG with a run id from `gitgauge report --all`)"
    )


def _find_run(runs: Sequence[StoredRun], run_part: str, spec: str) -> StoredRun | None:
    exact = [run for run in runs if run.run_id == run_part]
    if exact:
        return exact[0]
    matching = [run for run in runs if run_part and run.run_id.startswith(run_part)]
    if len(matching) > 1:
        raise CompareError(
            f"{spec!r}: {run_part!r} starts several run ids: "
            + _names([run.run_id for run in matching])
        )
    return matching[0] if matching else None


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")


def compare(
    runs: Sequence[StoredRun], spec_a: str, spec_b: str, *, runs_dir: Path | None = None
) -> Comparison:
    """B against A; with `runs_dir`, also what differs between their recorded harnesses."""
    a, b = pick_side(runs, spec_a), pick_side(runs, spec_b)
    # Attempts nothing could score are no outcome to pair (a fixture without its LLM judge).
    a, b = replace(a, results=scored(a.results)), replace(b, results=scored(b.results))
    # One config on both sides (two of its runs): the header lines say which run is which.
    name_a, name_b = (
        (f"{a.config} (A)", f"{b.config} (B)") if a.config == b.config else (a.config, b.config)
    )
    by_task_a, by_task_b = attempts_by_task(a.results), attempts_by_task(b.results)
    tasks = sorted(set(by_task_a) & set(by_task_b))
    only_in_a = sorted(set(by_task_a) - set(by_task_b))
    only_in_b = sorted(set(by_task_b) - set(by_task_a))
    if not tasks:
        raise CompareError(
            f"{name_a} and {name_b} share no task ({name_a} ran {len(by_task_a)}, {name_b} ran "
            f"{len(by_task_b)}, none in common): run both on the same tasks, e.g. "
            "`gitgauge run -c a.yaml -c b.yaml`"
        )
    per_task_a = [outcomes(by_task_a[task]) for task in tasks]
    per_task_b = [outcomes(by_task_b[task]) for task in tasks]
    paired = paired_comparison(per_task_a, per_task_b, confidence=CONFIDENCE, seed=SEED)

    def paired_mean(value: Callable[[RunResult], float | None]) -> PairedMean:
        return paired_mean_difference(
            [task_mean(by_task_a[task], value) for task in tasks],
            [task_mean(by_task_b[task], value) for task in tasks],
            confidence=CONFIDENCE,
            seed=SEED,
        )

    compared_a = [attempt for task in tasks for attempt in by_task_a[task]]
    compared_b = [attempt for task in tasks for attempt in by_task_b[task]]
    means = [
        MeanDifference("cost", "$", paired_mean(cost_of)),
        MeanDifference("time", "s", paired_mean(seconds_of)),
        MeanDifference("diff", " lines", paired_mean(diff_of)),
    ]
    if any(checks_of(attempt) is not None for attempt in (*compared_a, *compared_b)):
        # Commit-history tasks: RESOLVED is "every check held"; how many held is paired too.
        means.append(MeanDifference("checks", " checks", paired_mean(checks_of)))
    warnings = side_warnings(a, b, name_a, name_b, by_task_a, by_task_b, len(tasks))
    warnings += error_warnings(
        ((name_a, compared_a), (name_b, compared_b)),
    )
    refusal = no_verdict(((name_a, a, compared_a), (name_b, b, compared_b)))
    return Comparison(
        a=a,
        b=b,
        name_a=name_a,
        name_b=name_b,
        tasks=tasks,
        only_in_a=only_in_a,
        only_in_b=only_in_b,
        attempts_a=len(compared_a),
        attempts_b=len(compared_b),
        errors_a=status_count(compared_a, "error"),
        errors_b=status_count(compared_b, "error"),
        rate_a=rate_interval(per_task_a, confidence=CONFIDENCE, seed=SEED),
        rate_b=rate_interval(per_task_b, confidence=CONFIDENCE, seed=SEED),
        paired=paired,
        means=means,
        verdict=refusal or verdict_sentence(paired, name_a, name_b, len(tasks)),
        warnings=warnings,
        harness=_harness(runs_dir, a, b) if runs_dir is not None else None,
        solved=_judged(tasks, by_task_a, by_task_b),
        behaviour=compare_behaviour(
            [by_task_a[task] for task in tasks], [by_task_b[task] for task in tasks]
        ),
        refusal=refusal,
        power=None
        if refusal
        else power_note(
            paired, [by_task_a[task] for task in tasks], [by_task_b[task] for task in tasks]
        ),
    )


def checks_of(result: RunResult) -> float | None:
    """How many of its kind's checks a pair held (an error before grading: none); None for a
    kind without checks."""
    counted = kinds.get(result.kind).checks(result)
    return None if counted is None else float(counted[0])


def _judged(
    tasks: Sequence[str],
    by_task_a: dict[str, list[RunResult]],
    by_task_b: dict[str, list[RunResult]],
) -> JudgedComparison | None:
    judged = [
        task
        for task in tasks
        if all(attempt.solved is not None for attempt in (*by_task_a[task], *by_task_b[task]))
    ]
    if not judged:
        return None
    per_task_a = [[attempt.solved is True for attempt in by_task_a[task]] for task in judged]
    per_task_b = [[attempt.solved is True for attempt in by_task_b[task]] for task in judged]
    return JudgedComparison(
        tasks=judged,
        rate_a=rate_interval(per_task_a, confidence=CONFIDENCE, seed=SEED),
        rate_b=rate_interval(per_task_b, confidence=CONFIDENCE, seed=SEED),
        paired=paired_comparison(per_task_a, per_task_b, confidence=CONFIDENCE, seed=SEED),
    )


def power_note(
    paired: PairedComparison,
    by_task_a: Sequence[Sequence[RunResult]],
    by_task_b: Sequence[Sequence[RunResult]],
) -> PowerNote:
    """How many tasks the observed paired difference needs (see `reporting.power`)."""
    if not paired.repeated:
        return PowerNote(
            only_a=paired.only_a,
            only_b=paired.only_b,
            tasks=paired.tasks,
            needed=tasks_for_power(paired.only_a, paired.only_b, paired.tasks),
        )
    # Attempt i of A against attempt i of B, as many as both sides have.
    differences = []
    for a, b in zip(by_task_a, by_task_b, strict=True):
        outcome_a, outcome_b = outcomes(a), outcomes(b)
        differences.append([int(y) - int(x) for x, y in zip(outcome_a, outcome_b, strict=False)])
    attempts = min(min(len(a), len(b)) for a, b in zip(by_task_a, by_task_b, strict=True))
    shown = sorted({1, attempts, 2 * attempts})
    repeated = repeated_tasks_for_power(differences, attempts_shown=shown)
    pairs = [d for task in differences for d in task]
    return PowerNote(
        only_a=sum(1 for d in pairs if d < 0),
        only_b=sum(1 for d in pairs if d > 0),
        tasks=len(pairs),
        needed=repeated.tasks_by_attempts.get(1),
        repeated=repeated,
    )


def _harness(runs_dir: Path, a: Side, b: Side) -> str | None:
    stored_a = fingerprint.load(runs_dir / a.run.run_id, a.config)
    stored_b = fingerprint.load(runs_dir / b.run.run_id, b.config)
    if stored_a is None or stored_b is None:
        return None
    return harness_differences(stored_a, stored_b)


# -- rendering --
