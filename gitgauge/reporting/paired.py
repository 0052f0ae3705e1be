"""Paired tests: did config B do better than config A on the same tasks, or could the
difference be chance? The tests, the paired intervals, and one verdict sentence.

Pure functions; nothing here reads files or prints. Outcomes come per task, as in
`reporting.intervals`: `a[i]` and `b[i]` hold the two configs' attempts at task i, and every
difference is B - A. Tasks are the units, so every pairing and resampling keeps a task's attempts
together. Standard library only: the p-values are exact (binomial sums and complete enumeration
of sign flips in integer arithmetic) wherever that is cheap, which it is at tens of tasks.

- One attempt per task on both sides: exact McNemar test and Newcombe's hybrid score interval
  (method 10 of Newcombe 1998) for the paired difference.
- With repeats: exact paired permutation (sign-flip) test and a bootstrap interval of the
  per-task differences.
- Cost, time and diff size: a bootstrap interval of the per-task differences.

Invalid input (sides of different lengths, a task without attempts) is a caller's bug and raises
ValueError. docs/statistics.md explains each method, why it was chosen, and its limits.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import fmean
from typing import Literal

from gitgauge.reporting.intervals import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    Interval,
    alpha_of,
    bootstrap_interval,
    bootstrap_mean_of_fractions,
    check_confidence,
    resolve_rate,
    task_fractions,
    wilson_interval,
)

DEFAULT_PERMUTATIONS = 20_000
# Exact sign-flip enumeration costs about (sum of scaled |differences|) x (non-zero tasks) steps;
# with equal attempt counts on both sides that stays in the thousands. Only unusual mixes of
# attempt counts (a resumed, partial run) exceed this and fall back to seeded random flips.
EXACT_PERMUTATION_LIMIT = 2_000_000


@dataclass(frozen=True)
class PairedComparison:
    """Config A against config B on the same tasks; every difference is B - A.

    The four counts partition the tasks by their per-task resolve fractions. With one attempt per
    task they are the usual 2x2 table (resolved by both / only A / only B / neither). With repeats
    `only_a` counts tasks where A's fraction is higher than B's (B may still have resolved the task
    sometimes), `only_b` the reverse, `both` tasks with equal non-zero fractions, and `neither`
    tasks no attempt of either side resolved.
    """

    tasks: int
    repeated: bool
    """False when every task has exactly one attempt on each side."""
    both: int
    only_a: int
    only_b: int
    neither: int
    rate_a: float
    rate_b: float
    difference: Interval
    """B's resolve rate minus A's, with its paired interval."""
    p_value: float
    test: Literal["exact McNemar", "paired permutation"]
    interval_method: Literal["Newcombe", "bootstrap"]
    confidence: float

    @property
    def unlikely_chance(self) -> bool:
        """p below 1 - confidence AND an interval that excludes 0.

        The test and the interval are different methods and can disagree near the threshold;
        requiring both keeps the verdict from claiming more than either number supports.
        """
        return self.p_value < alpha_of(self.confidence) and not self.difference.contains(0.0)


@dataclass(frozen=True)
class PairedMean:
    """The mean of B - A over the tasks where both sides have a value (cost, time, diff)."""

    n: int
    """Tasks where both values exist."""
    mean_a: float | None
    mean_b: float | None
    difference: Interval | None
    """None when no task has both values."""


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    Under "no difference" each discordant task is equally likely to favour either side, so
    only_b ~ Binomial(only_a + only_b, 1/2); p = min(1, 2 x the smaller tail). No discordant
    task -> 1.0.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"counts must be non-negative, got {only_a} and {only_b}")
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, i) for i in range(min(only_a, only_b) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**discordant)))


def sign_flip_p_value(
    differences: Sequence[Fraction | int],
    *,
    seed: int = 0,
    permutations: int = DEFAULT_PERMUTATIONS,
    exact_limit: int = EXACT_PERMUTATION_LIMIT,
) -> float:
    """Two-sided paired permutation test of "mean difference is 0" by flipping signs.

    Under no difference, each task's B - A difference is as likely to have either sign; p is the
    share of the 2^m sign assignments (m non-zero differences) whose |sum| is at least the
    observed one. The exact distribution is counted with integer arithmetic (differences scaled
    by the common denominator), so it is the complete enumeration without 2^m steps. Beyond
    `exact_limit` steps, `permutations` seeded random flips estimate p as (1 + hits) /
    (1 + permutations), which is never 0. With one attempt per task this equals `mcnemar_exact`.
    """
    nonzero = [Fraction(difference) for difference in differences if difference != 0]
    if not nonzero:
        return 1.0
    scale = math.lcm(*(difference.denominator for difference in nonzero))
    weights = [int(abs(difference) * scale) for difference in nonzero]
    observed = abs(int(sum(nonzero, Fraction(0)) * scale))
    if sum(weights) * len(weights) <= exact_limit:
        return _exact_sign_flip(weights, observed)
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    rng = random.Random(seed)
    hits = 0
    for _ in range(permutations):
        signs = rng.getrandbits(len(weights))
        total = sum(weight if signs >> i & 1 else -weight for i, weight in enumerate(weights))
        hits += abs(total) >= observed
    return (1 + hits) / (1 + permutations)


def newcombe_paired_interval(
    *, both: int, only_a: int, only_b: int, neither: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval:
    """Newcombe's hybrid score interval (1998, method 10) for B's rate minus A's on paired data.

    Square-and-add of the two Wilson intervals, corrected for the correlation of the pairs
    (phi, with Newcombe's continuity correction when it is positive). It stays inside [-1, 1],
    needs no seed, and keeps close to nominal coverage at the small n gitgauge sees.
    """
    check_confidence(confidence)
    n = both + only_a + only_b + neither
    if min(both, only_a, only_b, neither) < 0 or n == 0:
        raise ValueError("need non-negative counts and at least one task")
    resolved_b, resolved_a = both + only_b, both + only_a
    rate_b, rate_a = resolved_b / n, resolved_a / n
    wilson_b = wilson_interval(resolved_b, n, confidence=confidence)
    wilson_a = wilson_interval(resolved_a, n, confidence=confidence)
    margins = resolved_b * (only_a + neither) * resolved_a * (only_b + neither)
    cross = both * neither - only_a * only_b
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    elif cross > n / 2:
        phi = (cross - n / 2) / math.sqrt(margins)
    else:
        phi = cross / math.sqrt(margins)
    estimate = rate_b - rate_a
    below_b, above_b = rate_b - wilson_b.low, wilson_b.high - rate_b
    below_a, above_a = rate_a - wilson_a.low, wilson_a.high - rate_a
    low = estimate - math.sqrt(max(0.0, below_b**2 + above_a**2 - 2 * phi * below_b * above_a))
    high = estimate + math.sqrt(max(0.0, above_b**2 + below_a**2 - 2 * phi * above_b * below_a))
    return Interval(max(-1.0, low), min(1.0, high), estimate)


def paired_comparison(
    a: Sequence[Sequence[bool]],
    b: Sequence[Sequence[bool]],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Compare config A with config B on the same tasks, given in the same order.

    One attempt per task on both sides: exact McNemar and Newcombe's interval (no randomness).
    Otherwise: exact sign-flip permutation test and a bootstrap over tasks of the per-task
    difference of resolve fractions (seeded).
    """
    check_confidence(confidence)
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} tasks and B has {len(b)}: pair the same tasks")
    if not a:
        raise ValueError("no tasks to compare")
    fractions_a, fractions_b = task_fractions(a), task_fractions(b)
    both = only_a = only_b = neither = 0
    differences: list[Fraction] = []
    for fraction_a, fraction_b in zip(fractions_a, fractions_b, strict=True):
        differences.append(fraction_b - fraction_a)
        if fraction_a > fraction_b:
            only_a += 1
        elif fraction_b > fraction_a:
            only_b += 1
        elif fraction_a == 0:
            neither += 1
        else:
            both += 1
    repeated = not all(len(attempts) == 1 for attempts in (*a, *b))
    if repeated:
        difference = bootstrap_mean_of_fractions(
            differences, resamples=resamples, seed=seed, confidence=confidence
        )
        p_value = sign_flip_p_value(differences, seed=seed)
    else:
        difference = newcombe_paired_interval(
            both=both, only_a=only_a, only_b=only_b, neither=neither, confidence=confidence
        )
        p_value = mcnemar_exact(only_a, only_b)
    return PairedComparison(
        tasks=len(a),
        repeated=repeated,
        both=both,
        only_a=only_a,
        only_b=only_b,
        neither=neither,
        rate_a=resolve_rate(a),
        rate_b=resolve_rate(b),
        difference=difference,
        p_value=p_value,
        test="paired permutation" if repeated else "exact McNemar",
        interval_method="bootstrap" if repeated else "Newcombe",
        confidence=confidence,
    )


def paired_mean_difference(
    a_values: Sequence[float | None],
    b_values: Sequence[float | None],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedMean:
    """Mean of B - A (cost, time, diff size) over the tasks where both sides have a value.

    Pairing on the task removes the task-to-task spread (a hard task is slow for both), so the
    interval is narrower than comparing the two means separately.
    """
    if len(a_values) != len(b_values):
        raise ValueError(f"A has {len(a_values)} values and B has {len(b_values)}")
    pairs = [
        (x, y) for x, y in zip(a_values, b_values, strict=True) if x is not None and y is not None
    ]
    if not pairs:
        return PairedMean(n=0, mean_a=None, mean_b=None, difference=None)
    difference = bootstrap_interval(
        [y - x for x, y in pairs], fmean, resamples=resamples, seed=seed, confidence=confidence
    )
    return PairedMean(
        n=len(pairs),
        mean_a=fmean(x for x, _ in pairs),
        mean_b=fmean(y for _, y in pairs),
        difference=difference,
    )


def verdict_sentence(
    comparison: PairedComparison, name_a: str, name_b: str, n_tasks: int | None = None
) -> str:
    """One plain sentence that claims no more than the numbers.

    "unlikely to be chance" only when `comparison.unlikely_chance` (p below the threshold and an
    interval excluding 0); everything else "could be chance", and when p is below the threshold
    but the interval still includes 0 the sentence says so.
    """
    if n_tasks is None:
        n_tasks = comparison.tasks
    if n_tasks != comparison.tasks:
        raise ValueError(f"the comparison covers {comparison.tasks} tasks, not {n_tasks}")
    if comparison.repeated:
        lead = _by_sign(
            comparison.difference.estimate or 0.0,
            f"Over the {n_tasks} tasks, {name_b}'s resolve rate was higher than {name_a}'s",
            f"Over the {n_tasks} tasks, {name_b}'s resolve rate was lower than {name_a}'s",
            f"{name_a} and {name_b} had the same resolve rate over the {n_tasks} tasks",
        )
    else:
        more = comparison.only_b - comparison.only_a
        lead = _by_sign(
            more,
            f"{name_b} resolved {more} more of {n_tasks} tasks than {name_a}",
            f"{name_b} resolved {-more} fewer of {n_tasks} tasks than {name_a}",
            f"{name_a} and {name_b} resolved the same number of the {n_tasks} tasks",
        )
    interval = comparison.difference
    alpha = alpha_of(comparison.confidence)
    level = f"{comparison.confidence * 100:g}%"
    points = format_points(interval.estimate or 0.0)
    bounds = f"[{level} CI {format_points(interval.low)}, {format_points(interval.high)}]"
    judgement = "is unlikely to be chance" if comparison.unlikely_chance else "could be chance"
    evidence = format_p(comparison.p_value, alpha)
    if comparison.p_value < alpha and interval.contains(0.0):
        evidence += f", but the {level} interval includes 0"
    return f"{lead}; the difference, {points} points {bounds}, {judgement} ({evidence})."


def _by_sign(value: float, above: str, below: str, zero: str) -> str:
    """`above` when `value` is above 0, `below` when it is below, else `zero`."""
    if value > 0:
        return above
    if value < 0:
        return below
    return zero


def _exact_sign_flip(weights: Sequence[int], observed: int) -> float:
    # ways[s] = number of sign assignments of the weights seen so far whose sum is s.
    ways: dict[int, int] = {0: 1}
    for weight in weights:
        following: dict[int, int] = {}
        for total, count in ways.items():
            following[total + weight] = following.get(total + weight, 0) + count
            following[total - weight] = following.get(total - weight, 0) + count
        ways = following
    extreme = sum(count for total, count in ways.items() if abs(total) >= observed)
    return float(Fraction(extreme, 2 ** len(weights)))


def format_points(rate: float) -> str:
    """A rate difference in signed percentage points: +13, -2, 0, +0.4 (never a bare -0)."""
    points = rate * 100
    if abs(points) < 0.05:
        return "0"
    if round(points) == 0:
        return f"{points:+.1f}"
    return f"{round(points):+d}"


def format_p(p_value: float, alpha: float) -> str:
    """`p = 0.03`: two decimals (three below 0.01), more whenever rounding would cross `alpha`."""
    if p_value < 0.001:
        return "p < 0.001"
    decimals = 2 if p_value >= 0.01 else 3
    text = f"{p_value:.{decimals}f}"
    while (p_value < alpha) != (float(text) < alpha) and decimals < 6:
        decimals += 1
        text = f"{p_value:.{decimals}f}"
    return f"p = {text}"
