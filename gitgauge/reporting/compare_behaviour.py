"""`gitgauge compare` on what the agents did, beside the outcome: over the tasks both sides
measured (scored attempts with transcripts), "ran the tests" with the resolve rate's paired test
and every other behaviour metric with the exact Wilcoxon signed-rank test of the per-task means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from gitgauge.core.records import RunResult
from gitgauge.reporting.attempts import task_mean
from gitgauge.reporting.behaviour import BEHAVIOUR_METRICS, BehaviourMetric, measured, ran_tests
from gitgauge.reporting.paired import PairedComparison, paired_comparison
from gitgauge.reporting.power import too_few, wilcoxon_signed_rank
from gitgauge.reporting.rows import CONFIDENCE, SEED


@dataclass(frozen=True)
class BehaviourDifference:
    """One behaviour metric, B against A, over the tasks both sides measured it on."""

    metric: BehaviourMetric
    tasks: int
    """Tasks with a value on both sides."""
    median_a: float | None
    median_b: float | None
    p_value: float
    test: str
    too_few: bool
    """Fewer differing tasks than any outcome could make p < 0.05."""


@dataclass(frozen=True)
class BehaviourComparison:
    """Behaviour beside the outcome, paired per task (the scored attempts with transcripts)."""

    tasks: int
    """Compared tasks measured on both sides."""
    repeated: bool
    """Some task has more than one measured attempt on a side: counts are attempts."""
    ran_tests_a: int
    """Tasks (attempts, with repeats) where A ran the suite, of `units_a`."""
    ran_tests_b: int
    units_a: int
    units_b: int
    ran_tests: PairedComparison
    """The paired test of "ran the tests" (exact McNemar, or sign flips with repeats)."""
    differences: list[BehaviourDifference]


def compare_behaviour(
    by_task_a: Sequence[Sequence[RunResult]], by_task_b: Sequence[Sequence[RunResult]]
) -> BehaviourComparison | None:
    """B against A on what the agents did, over the tasks both sides measured: "ran the tests"
    with the resolve rate's paired test, every other metric with the exact Wilcoxon
    signed-rank test of the per-task means."""
    pairs = [
        ([x for x in a if measured(x)], [y for y in b if measured(y)])
        for a, b in zip(by_task_a, by_task_b, strict=True)
    ]
    pairs = [(a, b) for a, b in pairs if a and b]
    if not pairs:
        return None
    repeated = any(len(a) > 1 or len(b) > 1 for a, b in pairs)
    ran_a = [[bool(ran_tests(x)) for x in a] for a, _ in pairs]
    ran_b = [[bool(ran_tests(y)) for y in b] for _, b in pairs]
    if repeated:
        counts = (sum(map(sum, ran_a)), sum(map(sum, ran_b)))
        units = (sum(map(len, ran_a)), sum(map(len, ran_b)))
    else:
        counts = (sum(any(x) for x in ran_a), sum(any(y) for y in ran_b))
        units = (len(pairs), len(pairs))
    differences = []
    for metric in BEHAVIOUR_METRICS:
        if metric.key == "testRuns":
            continue  # "ran the tests" is tested on its own, above
        values = [(task_mean(a, metric.value), task_mean(b, metric.value)) for a, b in pairs]
        known = [(x, y) for x, y in values if x is not None and y is not None]
        if not known:
            continue
        test = wilcoxon_signed_rank([x for x, _ in known], [y for _, y in known])
        differences.append(
            BehaviourDifference(
                metric=metric,
                tasks=len(known),
                median_a=median(x for x, _ in known),
                median_b=median(y for _, y in known),
                p_value=test.p_value,
                test="Wilcoxon signed-rank",
                too_few=too_few(test.nonzero),
            )
        )
    return BehaviourComparison(
        tasks=len(pairs),
        repeated=repeated,
        ran_tests_a=counts[0],
        ran_tests_b=counts[1],
        units_a=units[0],
        units_b=units[1],
        ran_tests=paired_comparison(ran_a, ran_b, confidence=CONFIDENCE, seed=SEED),
        differences=differences,
    )
