"""How many tasks a verdict needs, and paired tests of what the agents did.

- `mcnemar_power`: the power of the exact McNemar test (`paired.mcnemar_exact`, two-sided) on N
  tasks when each task is, independently, resolved only by A with probability `p_only_a` and
  only by B with `p_only_b` (the observed discordance). Computed exactly: the number of
  discordant tasks D is Binomial(N, p_only_a + p_only_b); given D, the tasks favouring B are
  Binomial(D, p_only_b / (p_only_a + p_only_b)); the test rejects at D exactly when the
  count lies in its critical region, found in integer arithmetic. Terms of the sum over D farther
  than `WINDOW_SD` standard deviations from its mean (together below 1e-20) are left out.
- `tasks_for_power`: the smallest N at which that power reaches the target (80%). The power of
  an exact test is a saw-tooth in N, not monotone: the search doubles N until the target is met,
  bisects, then looks below for an earlier N that meets it too.
- `repeated_tasks_for_power`: with k attempts per task, attempt i of A is paired with attempt i
  of B; the exact count of attempt pairs M is found as above, and the tasks it takes at k
  attempts each is M x (1 + (k - 1) rho) / k, rho the intraclass correlation of the attempt
  pairs' differences within a task (one-way ANOVA estimator): the design effect of clustered
  samples (Donner & Klar 2000). Attempts of one task share its difficulty, so more attempts per
  task add less than more tasks. This step is an approximation; the attempt-pair count is exact.
- `wilcoxon_signed_rank`: the exact two-sided Wilcoxon signed-rank test of paired per-task
  values (turns, files read, ...): the sign-flip permutation distribution of the signed ranks
  (ties get mean ranks; zero differences are dropped), counted exactly by `paired`.

Pure functions, standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from statistics import fmean

from gitgauge.reporting.paired import sign_flip_p_value

ALPHA = 0.05
POWER = 0.8
MAX_TASKS = 100_000
"""Past this many tasks the search gives up: the difference is too small to show."""
MAX_DISCORDANT = 4000
"""The largest number of discordant tasks whose critical region is computed (beyond it the
answer is `None`: more tasks than anyone will run)."""
WINDOW_SD = 10.0


def smallest_p(nonzero: int) -> float:
    """The smallest two-sided p a sign-flip (or McNemar) test can give on `nonzero` tasks that
    differ: all of them one way."""
    return 1.0 if nonzero == 0 else min(1.0, 2.0 / 2**nonzero)


def too_few(nonzero: int, *, alpha: float = ALPHA) -> bool:
    """No outcome of `nonzero` differing tasks could give p < alpha (fewer than 6 at 0.05)."""
    return smallest_p(nonzero) >= alpha


@cache
def _critical(discordant: int, alpha: Fraction) -> int:
    """The largest k with 2 x P(X <= k) < alpha for X ~ Binomial(discordant, 1/2): the test
    rejects when the smaller discordant count is at most k (-1: never)."""
    # 2 x tail / 2^D < alpha, in integers: exact at any D.
    limit = alpha.numerator * 2**discordant
    tail = 0
    coefficient = 1  # C(discordant, k + 1), kept as k grows
    k = -1
    while k + 1 <= discordant // 2:
        tail += coefficient
        if 2 * tail * alpha.denominator >= limit:
            break
        k += 1
        coefficient = coefficient * (discordant - k) // (k + 1)
    return k


def _log_pmf(count: int, trials: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if count == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if count == trials else -math.inf
    return (
        math.lgamma(trials + 1)
        - math.lgamma(count + 1)
        - math.lgamma(trials - count + 1)
        + count * math.log(p)
        + (trials - count) * math.log1p(-p)
    )


@lru_cache(maxsize=65536)
def _reject(discordant: int, q: float, alpha: Fraction) -> float:
    """P(the exact test rejects | `discordant` discordant tasks, each favouring B with q)."""
    k = _critical(discordant, alpha)
    if k < 0:
        return 0.0
    return min(1.0, _lower_tail(discordant, k, q) + _lower_tail(discordant, k, 1.0 - q))


def _lower_tail(trials: int, k: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(trials, p), summed in log space from k down (each term from
    the one above it: one logarithm per term)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= trials else 0.0
    ratio = math.log1p(-p) - math.log(p)  # log of P(x - 1) / P(x), less the counts' part
    log_term = _log_pmf(k, trials, p)
    terms = []
    for x in range(k, -1, -1):
        terms.append(math.exp(log_term))
        if log_term < -745.0 and x < trials * p:  # below the smallest double: the rest is 0
            break
        log_term += ratio + math.log(x / (trials - x + 1)) if x > 0 else 0.0
    return math.fsum(terms)


def mcnemar_power(tasks: int, p_only_a: float, p_only_b: float, *, alpha: float = ALPHA) -> float:
    """The power of the two-sided exact McNemar test at level `alpha` on `tasks` tasks."""
    if tasks < 0 or p_only_a < 0 or p_only_b < 0 or p_only_a + p_only_b > 1 + 1e-12:
        raise ValueError("need tasks >= 0 and discordance probabilities that sum to at most 1")
    discordance = min(1.0, p_only_a + p_only_b)
    if tasks == 0 or discordance == 0:
        return 0.0
    q = p_only_b / discordance
    level = Fraction(alpha).limit_denominator(10**9)
    mean = tasks * discordance
    spread = math.sqrt(tasks * discordance * (1 - discordance))
    low = max(0, math.floor(mean - WINDOW_SD * spread) - 1)
    high = min(tasks, math.ceil(mean + WINDOW_SD * spread) + 1)
    if high > MAX_DISCORDANT:
        raise OverflowError("too many discordant tasks to compute")
    terms = [
        math.exp(_log_pmf(d, tasks, discordance)) * _reject(d, q, level)
        for d in range(low, high + 1)
    ]
    return min(1.0, math.fsum(terms))


def tasks_for_power(
    only_a: int,
    only_b: int,
    tasks: int,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> int | None:
    """The number of tasks at which the exact McNemar test would reach p < `alpha` with
    `power`, if the discordance observed on `tasks` tasks (`only_a`, `only_b`) is the truth;
    None when no number of tasks would (no difference, or one too small to find in
    `MAX_TASKS`)."""
    if tasks <= 0 or only_a < 0 or only_b < 0 or only_a + only_b > tasks:
        raise ValueError("need counts of discordant tasks within the tasks compared")
    if only_a == only_b:
        return None
    p_a, p_b = only_a / tasks, only_b / tasks

    def enough(n: int) -> bool | None:
        try:
            return mcnemar_power(n, p_a, p_b, alpha=alpha) >= power
        except OverflowError:
            return None

    high = 1
    while True:
        met = enough(high)
        if met is None or high > MAX_TASKS:
            return None
        if met:
            break
        high *= 2
    low = high // 2  # not enough (or 0)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    # The saw-tooth: an earlier N may reach the target too, just before a dip.
    # Its teeth are about 1 / discordance tasks apart: a few of them are searched.
    best = high
    reach = min(high // 10, math.ceil(3 * tasks / (only_a + only_b))) + 20
    for n in range(high - 1, max(0, high - 1 - reach), -1):
        if enough(n):
            best = n
    return best


@dataclass(frozen=True)
class RepeatedPower:
    """How many tasks a verdict needs with k attempts per task."""

    attempt_pairs: int | None
    """Attempt pairs the exact McNemar test needs (attempt i of A with attempt i of B)."""
    correlation: float
    """Intraclass correlation of the attempt pairs' differences within a task (0 to 1)."""
    tasks_by_attempts: dict[int, int | None]
    """Attempts per task -> tasks needed (None: no number would do)."""


def repeated_tasks_for_power(
    differences: Sequence[Sequence[int]],
    *,
    attempts_shown: Sequence[int] = (1,),
    alpha: float = ALPHA,
    power: float = POWER,
) -> RepeatedPower:
    """`differences[t]`: task t's attempt pairs, each B's outcome minus A's (-1, 0, +1)."""
    pairs = [d for task in differences for d in task]
    if not pairs:
        raise ValueError("no attempt pairs")
    only_a, only_b = sum(1 for d in pairs if d < 0), sum(1 for d in pairs if d > 0)
    needed = tasks_for_power(only_a, only_b, len(pairs), alpha=alpha, power=power)
    rho = intraclass_correlation(differences)
    by_attempts: dict[int, int | None] = {}
    for k in sorted(set(attempts_shown)):
        by_attempts[k] = None if needed is None else math.ceil(needed * (1 + (k - 1) * rho) / k)
    return RepeatedPower(attempt_pairs=needed, correlation=rho, tasks_by_attempts=by_attempts)


def intraclass_correlation(groups: Sequence[Sequence[int]]) -> float:
    """The one-way ANOVA estimate of the intraclass correlation of `groups` (tasks of attempts),
    clipped to [0, 1]; 0 when it cannot be estimated (one task, one attempt each, no spread)."""
    groups = [list(group) for group in groups if group]
    sizes = [len(group) for group in groups]
    total = sum(sizes)
    if len(groups) < 2 or total <= len(groups):
        return 0.0
    grand = fmean(value for group in groups for value in group)
    between = sum(
        size * (fmean(group) - grand) ** 2 for size, group in zip(sizes, groups, strict=True)
    )
    within = sum((value - fmean(group)) ** 2 for group in groups for value in group)
    ms_between = between / (len(groups) - 1)
    ms_within = within / (total - len(groups))
    # The mean group size, corrected for unequal sizes (Snedecor & Cochran).
    k0 = (total - sum(size * size for size in sizes) / total) / (len(groups) - 1)
    denominator = ms_between + (k0 - 1) * ms_within
    if denominator <= 0:
        return 0.0
    return max(0.0, min(1.0, (ms_between - ms_within) / denominator))


@dataclass(frozen=True)
class SignedRankTest:
    tasks: int
    """Pairs with a value on both sides."""
    nonzero: int
    """Pairs whose values differ (the only ones the test uses)."""
    p_value: float


def wilcoxon_signed_rank(a: Sequence[float], b: Sequence[float]) -> SignedRankTest:
    """The exact two-sided Wilcoxon signed-rank test of B - A over paired values."""
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} values and B has {len(b)}")
    differences = [y - x for x, y in zip(a, b, strict=True) if y != x]
    ranks = _mean_ranks([abs(d) for d in differences])
    signed = [
        Fraction(rank) * (1 if d > 0 else -1) for d, rank in zip(differences, ranks, strict=True)
    ]
    p_value = sign_flip_p_value(signed) if signed else 1.0
    return SignedRankTest(tasks=len(a), nonzero=len(differences), p_value=p_value)


def _mean_ranks(values: Sequence[float]) -> list[Fraction]:
    """Ranks 1..n of `values`, ties sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=lambda index: values[index])
    ranks: list[Fraction] = [Fraction(0)] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        shared = Fraction(start + end + 2, 2)
        for index in order[start : end + 1]:
            ranks[index] = shared
        start = end + 1
    return ranks
