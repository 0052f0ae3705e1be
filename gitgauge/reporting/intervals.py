"""Interval estimators: how sure is a resolve rate or an average? Wilson, the bootstrap over
tasks, pass@k and pass^k, and the `Interval` they return.

Pure functions; nothing here reads files or prints. Outcomes always come *per task*:
`per_task[i]` holds task i's attempts, one bool each (True = resolved). Tasks, not attempts, are
the independent units (attempts at one task share its difficulty), so every resampling keeps a
task's attempts together.

Standard library only, no SciPy or numpy: gitgauge is a CLI that should install light, and the
samples are tens of tasks, so exact methods (binomial sums in integer arithmetic) and a
2,000-resample bootstrap take milliseconds in pure Python.

- A rate with one attempt per task: Wilson score interval. With repeats: percentile bootstrap
  over tasks. Means of cost, time and diff size: the same bootstrap, tasks without a value left out.
- pass@k (Chen et al. 2021) and pass^k, both unbiased estimators from n attempts per task.

Comparing two configs on the same tasks is `reporting.paired`, built on these. Invalid input (a
task without attempts, k larger than the attempts) is a caller's bug, not a user's mistake, so it
raises ValueError rather than a GitGaugeError. docs/statistics.md explains each method, why it was
chosen, and its limits.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist, fmean
from typing import TypeVar

T = TypeVar("T")

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    """A confidence interval and the point estimate it surrounds."""

    low: float
    high: float
    estimate: float | None
    """None when there is nothing to estimate from (no tasks)."""

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def wilson_interval(successes: int, n: int, *, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson score interval for `successes` out of `n`.

    n == 0 returns Interval(0, 1, estimate=None): nothing was observed, so every rate is
    plausible; a report prints the rate as unknown instead of failing.
    """
    check_confidence(confidence)
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return Interval(0.0, 1.0, None)
    z = _z(confidence)
    rate = successes / n
    shrink = 1 + z * z / n
    center = (rate + z * z / (2 * n)) / shrink
    half_width = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / shrink
    # At 0/n and n/n the bound is exactly 0 or 1; pin it so float noise never shows as 0.0000001.
    low = 0.0 if successes == 0 else max(0.0, center - half_width)
    high = 1.0 if successes == n else min(1.0, center + half_width)
    return Interval(low, high, rate)


def resolve_rate(per_task: Sequence[Sequence[bool]]) -> float:
    """Mean over tasks of the fraction of the task's attempts that resolved it."""
    fractions = task_fractions(per_task)
    if not fractions:
        raise ValueError("resolve rate of no tasks")
    return float(sum(fractions, Fraction(0)) / len(fractions))


def pass_at_k(per_task: Sequence[Sequence[bool]], k: int) -> float:
    """pass@k: chance that at least one of k attempts resolves a task, averaged over tasks.

    The unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on
    Code"): 1 - C(n-c, k) / C(n, k) per task with c of n attempts resolved. Needs n >= k.
    """
    return float(
        _mean_over_tasks(
            per_task, k, lambda n, c: 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        )
    )


def pass_hat_k(per_task: Sequence[Sequence[bool]], k: int) -> float:
    """pass^k: chance that all k attempts resolve a task, averaged over tasks.

    Unbiased estimate C(c, k) / C(n, k) per task (sampling k of the n attempts without
    replacement). Needs n >= k.
    """
    return float(
        _mean_over_tasks(per_task, k, lambda n, c: Fraction(math.comb(c, k), math.comb(n, k)))
    )


def bootstrap_interval(
    per_task_values: Sequence[T | None],
    statistic: Callable[[Sequence[T]], float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """Percentile bootstrap interval of `statistic`, resampling tasks with replacement.

    One value per task (a task's attempts travel together as one value); None values (a task
    that reported no cost, say) are left out before resampling. Seeded with random.Random(seed),
    so the same values give the same interval.
    """
    check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    values = [value for value in per_task_values if value is not None]
    if not values:
        raise ValueError("no task has a value to resample")
    if all(value == values[0] for value in values):
        # Every resample is this very list (a column that cannot vary: no cost reported as 0,
        # every task resolved): the same interval as resampling gives, without 2,000 resamples
        # per column on every `report`.
        point = statistic(values)
        return Interval(point, point, point)
    rng = random.Random(seed)
    replicates = sorted(statistic(rng.choices(values, k=len(values))) for _ in range(resamples))
    alpha = alpha_of(confidence)
    return Interval(
        _quantile(replicates, alpha / 2), _quantile(replicates, 1 - alpha / 2), statistic(values)
    )


def mean_interval(
    per_task_values: Sequence[float | None],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Mean of the non-None values with its bootstrap interval; None when there are none.

    For AVG COST / AVG TIME / AVG DIFF: a config with no reported cost prints `-`, not a number.
    """
    if all(value is None for value in per_task_values):
        return None
    return bootstrap_interval(
        per_task_values, fmean, resamples=resamples, seed=seed, confidence=confidence
    )


def rate_interval(
    per_task: Sequence[Sequence[bool]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The resolve rate with its interval: Wilson for one attempt per task, else bootstrap.

    With repeats the attempts of a task are correlated, so Wilson over all attempts would be too
    narrow; the bootstrap resamples whole tasks instead. No tasks -> Interval(0, 1, None).
    """
    check_confidence(confidence)
    if not per_task:
        return Interval(0.0, 1.0, None)
    fractions = task_fractions(per_task)
    if all(len(attempts) == 1 for attempts in per_task):
        resolved = sum(1 for attempts in per_task if attempts[0])
        return wilson_interval(resolved, len(per_task), confidence=confidence)
    return bootstrap_mean_of_fractions(
        fractions, resamples=resamples, seed=seed, confidence=confidence
    )


def task_fractions(per_task: Sequence[Sequence[bool]]) -> list[Fraction]:
    """Each task's share of resolved attempts, exact; ValueError for a task without attempts."""
    fractions = []
    for index, attempts in enumerate(per_task):
        if not attempts:
            raise ValueError(f"task {index} has no attempts")
        fractions.append(Fraction(sum(1 for resolved in attempts if resolved), len(attempts)))
    return fractions


def _mean_over_tasks(
    per_task: Sequence[Sequence[bool]], k: int, per_task_estimate: Callable[[int, int], Fraction]
) -> Fraction:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not per_task:
        raise ValueError("no tasks")
    total = Fraction(0)
    for index, attempts in enumerate(per_task):
        if len(attempts) < k:
            raise ValueError(f"task {index} has {len(attempts)} attempts, fewer than k = {k}")
        total += per_task_estimate(len(attempts), sum(1 for resolved in attempts if resolved))
    return total / len(per_task)


def bootstrap_mean_of_fractions(
    fractions: Sequence[Fraction], *, resamples: int, seed: int, confidence: float
) -> Interval:
    """The mean of per-task fractions (or of their paired differences) with its bootstrap
    interval over tasks."""
    # Scaled to integers so each replicate's mean is exact before the one final rounding: a
    # mathematically zero bound stays 0.0 instead of 1e-17 that would "exclude" 0.
    scale = math.lcm(*(fraction.denominator for fraction in fractions))
    scaled = [int(fraction * scale) for fraction in fractions]
    interval = bootstrap_interval(
        scaled,
        lambda sample: sum(sample) / (len(sample) * scale),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
    return Interval(
        interval.low, interval.high, float(sum(fractions, Fraction(0)) / len(fractions))
    )


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (Hyndman & Fan type 7, numpy's default)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(1 - alpha_of(confidence) / 2)


def alpha_of(confidence: float) -> float:
    # Rounded so 1 - 0.95 is 0.05 exactly, not 0.050000000000000044.
    return round(1 - confidence, 12)


def check_confidence(confidence: float) -> None:
    """ValueError unless 0 < confidence < 1."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
