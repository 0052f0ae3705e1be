"""gitgauge.reporting.intervals and .paired against published values, independent
recomputations, and simulation."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist, fmean

import pytest

from gitgauge.reporting.intervals import (
    Interval,
    bootstrap_interval,
    mean_interval,
    pass_at_k,
    pass_hat_k,
    rate_interval,
    resolve_rate,
    wilson_interval,
)
from gitgauge.reporting.paired import (
    PairedComparison,
    mcnemar_exact,
    newcombe_paired_interval,
    paired_comparison,
    paired_mean_difference,
    sign_flip_p_value,
    verdict_sentence,
)

Z95 = NormalDist().inv_cdf(0.975)


def one_attempt(outcomes: list[bool]) -> list[list[bool]]:
    return [[outcome] for outcome in outcomes]


def paired_table(
    *, both: int, only_a: int, only_b: int, neither: int
) -> tuple[list[list[bool]], list[list[bool]]]:
    """Config A's and B's single attempts for a paired 2x2 table, in task order."""
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return one_attempt(a), one_attempt(b)


def wilson_by_quadratic(successes: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson bounds as the two roots of (p - pi)^2 = z^2 pi (1 - pi) / n, solved for pi."""
    p = successes / n
    a = 1 + z * z / n
    b = -(2 * p + z * z / n)
    c = p * p
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


# --- Wilson -------------------------------------------------------------------------------------


def test_wilson_matches_newcombes_published_example() -> None:
    # 81 of 263, 95%: Wilson interval 0.2553 to 0.3662 (Newcombe 1998, "Two-sided confidence
    # intervals for the single proportion", Stat Med 17:857, example; also on Wikipedia's
    # "Binomial proportion confidence interval" page).
    interval = wilson_interval(81, 263)
    assert interval.low == pytest.approx(0.2553, abs=5e-5)
    assert interval.high == pytest.approx(0.3662, abs=5e-5)
    assert interval.estimate == pytest.approx(81 / 263)
    assert (interval.low, interval.high) == pytest.approx(wilson_by_quadratic(81, 263, Z95))


@pytest.mark.parametrize(("successes", "n"), [(3, 5), (1, 2), (17, 40), (49, 50)])
def test_wilson_bounds_are_where_the_score_test_reaches_z(successes: int, n: int) -> None:
    interval = wilson_interval(successes, n)
    assert (interval.low, interval.high) == pytest.approx(wilson_by_quadratic(successes, n, Z95))
    # Second check: at each bound, |p - pi| / sqrt(pi (1 - pi) / n) is exactly z.
    for bound in (interval.low, interval.high):
        score = abs(successes / n - bound) / math.sqrt(bound * (1 - bound) / n)
        assert score == pytest.approx(Z95)


def test_wilson_small_sample_reference() -> None:
    # 3 of 5 at 95%: roots of the quadratic, computed by hand: 0.2307 to 0.8824.
    interval = wilson_interval(3, 5)
    assert interval.low == pytest.approx(0.2307, abs=5e-5)
    assert interval.high == pytest.approx(0.8824, abs=5e-5)


def test_wilson_edges_none_and_all() -> None:
    # At 0/n the upper bound simplifies to z^2 / (n + z^2); at n/n the lower to n / (n + z^2).
    none = wilson_interval(0, 10)
    assert none.low == 0.0
    assert none.high == pytest.approx(Z95**2 / (10 + Z95**2))
    assert none.high == pytest.approx(0.2775, abs=5e-5)
    every = wilson_interval(10, 10)
    assert every.high == 1.0
    assert every.low == pytest.approx(10 / (10 + Z95**2))
    assert every.low == pytest.approx(0.7225, abs=5e-5)


def test_wilson_of_nothing_is_the_whole_range_without_an_estimate() -> None:
    assert wilson_interval(0, 0) == Interval(0.0, 1.0, None)


def test_wilson_widens_with_confidence_and_narrows_with_n() -> None:
    at_95, at_99 = wilson_interval(6, 20), wilson_interval(6, 20, confidence=0.99)
    assert at_99.low < at_95.low and at_99.high > at_95.high
    small, large = wilson_interval(6, 20), wilson_interval(60, 200)
    assert large.high - large.low < small.high - small.low


@pytest.mark.parametrize(("successes", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_wilson_rejects_impossible_counts(successes: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson_interval(successes, n)


def test_wilson_rejects_a_confidence_outside_0_1() -> None:
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(3, 5, confidence=95)


# --- rates, pass@k, pass^k ----------------------------------------------------------------------


def test_resolve_rate_is_the_mean_of_per_task_fractions() -> None:
    # Not 4 resolved of 7 attempts (0.571): each task weighs the same.
    per_task = [[True, False], [True, True, True, False], [False]]
    assert resolve_rate(per_task) == pytest.approx((1 / 2 + 3 / 4 + 0) / 3)


def test_resolve_rate_rejects_a_task_without_attempts_and_no_tasks() -> None:
    with pytest.raises(ValueError, match="task 1 has no attempts"):
        resolve_rate([[True], []])
    with pytest.raises(ValueError):
        resolve_rate([])


def test_pass_at_k_reference_values() -> None:
    # Chen et al. 2021: pass@k = 1 - C(n-c, k) / C(n, k); n=10, c=3.
    task = [True] * 3 + [False] * 7
    assert pass_at_k([task], 1) == pytest.approx(0.3)
    assert pass_at_k([task], 2) == pytest.approx(1 - 21 / 45)  # C(7,2) = 21, C(10,2) = 45
    assert pass_hat_k([task], 1) == pytest.approx(0.3)
    assert pass_hat_k([task], 2) == pytest.approx(3 / 45)  # C(3,2) = 3


def subsets_average(per_task: list[list[bool]], k: int, *, need_all: bool) -> float:
    """The definition both estimators are unbiased for: over every k-subset of each task's attempts,
    the share where any (pass@k) or all (pass^k) resolved, averaged over tasks."""
    shares = []
    for attempts in per_task:
        subsets = list(itertools.combinations(attempts, k))
        hits = sum(1 for subset in subsets if (all(subset) if need_all else any(subset)))
        shares.append(hits / len(subsets))
    return fmean(shares)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_pass_at_k_and_pass_hat_k_equal_the_subset_enumeration(k: int) -> None:
    per_task = [
        [True, False, False, True, False],
        [False] * 5,
        [True] * 5,
        [True, True, False, True, False, True],
    ]
    assert pass_at_k(per_task, k) == pytest.approx(subsets_average(per_task, k, need_all=False))
    assert pass_hat_k(per_task, k) == pytest.approx(subsets_average(per_task, k, need_all=True))


def test_pass_at_one_is_the_resolve_rate() -> None:
    per_task = [[True, False, False], [True, True, False], [False, False, False]]
    assert pass_at_k(per_task, 1) == pytest.approx(resolve_rate(per_task))
    assert pass_hat_k(per_task, 1) == pytest.approx(resolve_rate(per_task))


def test_pass_at_k_needs_k_attempts_per_task() -> None:
    with pytest.raises(ValueError, match="task 1 has 2 attempts, fewer than k = 3"):
        pass_at_k([[True, True, True], [True, False]], 3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_hat_k([[True]], 0)


# --- bootstrap ----------------------------------------------------------------------------------


def test_bootstrap_is_reproducible_with_its_seed() -> None:
    costs = [0.12, 0.40, 0.05, 1.30, 0.22, 0.31, 0.08, 0.95]
    first = bootstrap_interval(costs, fmean, seed=7)
    assert bootstrap_interval(costs, fmean, seed=7) == first
    assert bootstrap_interval(costs, fmean, seed=8) != first


def test_bootstrap_contains_the_estimate_and_narrows_with_more_tasks() -> None:
    rng = random.Random(1)
    few = [rng.uniform(10, 100) for _ in range(10)]
    many = [rng.uniform(10, 100) for _ in range(200)]
    for values in (few, many):
        interval = bootstrap_interval(values, fmean)
        assert interval.estimate == pytest.approx(fmean(values))
        assert interval.contains(fmean(values))
        assert interval.low < interval.high
    few_interval, many_interval = bootstrap_interval(few, fmean), bootstrap_interval(many, fmean)
    assert many_interval.high - many_interval.low < (few_interval.high - few_interval.low) / 2


def test_a_column_that_cannot_vary_gets_the_interval_resampling_gives_without_resampling() -> None:
    calls: list[int] = []

    def counted_mean(sample: Sequence[float]) -> float:
        calls.append(len(sample))
        return fmean(sample)

    assert bootstrap_interval([0.25] * 9, counted_mean) == Interval(0.25, 0.25, 0.25)
    assert calls == [9]  # the estimate alone: each of the 2,000 resamples would be this list
    assert bootstrap_interval([0.25, 0.25, 0.5], counted_mean).high == 0.5
    assert len(calls) > 1000


def test_bootstrap_leaves_out_tasks_without_a_value() -> None:
    with_gaps = [3.0, None, 5.0, 4.0, None, 9.0]
    assert bootstrap_interval(with_gaps, fmean) == bootstrap_interval([3.0, 5.0, 4.0, 9.0], fmean)


def test_bootstrap_of_nothing_raises_and_mean_interval_says_none() -> None:
    with pytest.raises(ValueError, match="no task has a value"):
        bootstrap_interval([None, None], fmean)
    assert mean_interval([None, None]) is None
    interval = mean_interval([2.0, None, 4.0])
    assert interval is not None and interval.estimate == pytest.approx(3.0)


def test_bootstrap_keeps_a_tasks_attempts_together() -> None:
    # Every resample is made of whole tasks, so a statistic that checks each task still sees
    # exactly the attempt lists it was given.
    tasks = [[True, False, True], [False, False, False], [True, True, True]]
    seen: list[list[bool]] = []

    def record(sample: Sequence[list[bool]]) -> float:
        seen.extend(sample)
        return resolve_rate(sample)

    bootstrap_interval(tasks, record, resamples=50)
    assert all(attempts in tasks for attempts in seen)


def test_rate_interval_is_wilson_for_one_attempt_and_bootstrap_for_repeats() -> None:
    single = one_attempt([True] * 7 + [False] * 13)
    assert rate_interval(single) == wilson_interval(7, 20)

    repeated = [[True, True, False]] * 6 + [[False, False, False]] * 10 + [[True] * 3] * 4
    interval = rate_interval(repeated)
    assert interval.estimate == pytest.approx(resolve_rate(repeated))
    assert interval.contains(resolve_rate(repeated))
    assert interval != wilson_interval(8, 20)
    assert rate_interval(repeated) == interval  # seeded
    # A bootstrap replicate is a mean of whole-task fractions (multiples of 1/3 over 20 tasks).
    assert (interval.low * 60) == pytest.approx(round(interval.low * 60))


def test_rate_interval_of_no_tasks() -> None:
    assert rate_interval([]) == Interval(0.0, 1.0, None)


# --- McNemar and the permutation test -----------------------------------------------------------


def test_mcnemar_exact_reference_values() -> None:
    # Discordant 2 and 9: p = 2 * (C(11,0) + C(11,1) + C(11,2)) / 2^11 = 2 * 67 / 2048.
    assert mcnemar_exact(2, 9) == pytest.approx(0.0654, abs=5e-5)
    assert mcnemar_exact(2, 9) == 2 * (1 + 11 + 55) / 2**11
    # Cavo et al. 2012 (Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency
    # Tables", ch. 8; R package contingencytables' test: "exact conditional test: P = 0.052479").
    assert mcnemar_exact(16, 6) == pytest.approx(0.052479, abs=5e-7)


def test_mcnemar_edges_and_symmetry() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 1) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    for only_a, only_b in [(1, 7), (3, 12), (0, 20)]:
        assert mcnemar_exact(only_a, only_b) == mcnemar_exact(only_b, only_a)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


@pytest.mark.parametrize(("only_a", "only_b"), [(0, 0), (2, 9), (16, 6), (4, 4), (0, 7), (1, 12)])
def test_sign_flip_on_single_attempts_is_mcnemar(only_a: int, only_b: int) -> None:
    differences = [-1] * only_a + [1] * only_b + [0] * 10
    assert sign_flip_p_value(differences) == pytest.approx(mcnemar_exact(only_a, only_b))


def test_sign_flip_counts_every_assignment() -> None:
    differences = [Fraction(n, d) for n, d in [(1, 3), (2, 3), (-1, 2), (1, 1), (1, 6), (2, 3)]]
    differences += [Fraction(1, 3), Fraction(-1, 3), Fraction(5, 6), Fraction(0)]
    observed = abs(sum(differences, Fraction(0)))
    nonzero = [abs(difference) for difference in differences if difference]
    extreme = 0
    for signs in itertools.product((1, -1), repeat=len(nonzero)):
        total = sum((s * m for s, m in zip(signs, nonzero, strict=True)), Fraction(0))
        extreme += abs(total) >= observed
    assert sign_flip_p_value(differences) == pytest.approx(extreme / 2 ** len(nonzero))


def test_sign_flip_sampling_fallback_is_seeded_and_close_to_exact() -> None:
    rng = random.Random(3)
    differences = [Fraction(rng.randint(-3, 3), 3) + Fraction(1, 3) for _ in range(25)]
    exact = sign_flip_p_value(differences)
    sampled = sign_flip_p_value(differences, exact_limit=0, seed=5)
    assert sampled == sign_flip_p_value(differences, exact_limit=0, seed=5)
    assert sampled != exact  # the fallback really ran: (1 + hits) / 20001 is not a dyadic p
    assert sampled == pytest.approx(exact, abs=0.01)


# --- Newcombe and paired comparison -------------------------------------------------------------


def test_newcombe_matches_the_published_paired_example() -> None:
    # Cavo et al. 2012, table [[59, 6], [16, 80]]: Newcombe square-and-add interval
    # -0.0621 (95% CI -0.1186 to -0.0046) (Fagerland, Lydersen & Laake 2017, ch. 8; R package
    # contingencytables, tests/testthat/test-ch8.R). Rows are B, columns A: 6 only B, 16 only A.
    interval = newcombe_paired_interval(both=59, only_a=16, only_b=6, neither=80)
    assert interval.estimate == pytest.approx(-0.0621, abs=5e-5)
    assert interval.low == pytest.approx(-0.1186, abs=5e-5)
    assert interval.high == pytest.approx(-0.0046, abs=5e-5)


def test_newcombe_is_antisymmetric_and_bounded() -> None:
    forward = newcombe_paired_interval(both=4, only_a=2, only_b=9, neither=15)
    backward = newcombe_paired_interval(both=4, only_a=9, only_b=2, neither=15)
    assert backward.low == pytest.approx(-forward.high)
    assert backward.high == pytest.approx(-forward.low)
    extreme = newcombe_paired_interval(both=0, only_a=0, only_b=12, neither=0)
    assert extreme.estimate == 1.0 and extreme.high <= 1.0 and extreme.low > 0.5


def test_paired_comparison_one_attempt_per_task() -> None:
    a, b = paired_table(both=59, only_a=16, only_b=6, neither=80)
    comparison = paired_comparison(a, b)
    assert (comparison.both, comparison.only_a, comparison.only_b, comparison.neither) == (
        59,
        16,
        6,
        80,
    )
    assert comparison.tasks == 161 and not comparison.repeated
    assert comparison.rate_a == pytest.approx(75 / 161)
    assert comparison.rate_b == pytest.approx(65 / 161)
    assert comparison.test == "exact McNemar" and comparison.interval_method == "Newcombe"
    assert comparison.p_value == mcnemar_exact(16, 6)
    assert comparison.difference == newcombe_paired_interval(
        both=59, only_a=16, only_b=6, neither=80
    )
    # The interval excludes 0 but p = 0.052: the two disagree, so no claim is made.
    assert not comparison.difference.contains(0.0)
    assert not comparison.unlikely_chance


def test_paired_comparison_with_repeats_compares_per_task_fractions() -> None:
    a = [[True, True, True], [True, False, False], [False, False, False], [True, False, True]]
    b = [[True, True, False], [True, True, True], [False, False, False], [False, True, True]]
    comparison = paired_comparison(a, b)
    assert comparison.repeated
    assert comparison.test == "paired permutation" and comparison.interval_method == "bootstrap"
    # Task 0: A 3/3 > B 2/3; task 1: B higher; task 2: neither; task 3: equal 2/3.
    assert (comparison.only_a, comparison.only_b, comparison.neither, comparison.both) == (
        1,
        1,
        1,
        1,
    )
    assert comparison.difference.estimate == pytest.approx(resolve_rate(b) - resolve_rate(a))
    assert comparison.p_value == sign_flip_p_value([Fraction(-1, 3), Fraction(2, 3), 0, 0])
    assert paired_comparison(a, b) == comparison  # seeded


def test_paired_comparison_rejects_unpaired_input() -> None:
    with pytest.raises(ValueError, match="A has 2 tasks and B has 1"):
        paired_comparison([[True], [False]], [[True]])
    with pytest.raises(ValueError, match="no tasks to compare"):
        paired_comparison([], [])


def test_paired_mean_difference_uses_tasks_with_both_values() -> None:
    a_cost = [0.10, 0.50, None, 0.30, 0.20]
    b_cost = [0.15, 0.40, 0.90, None, 0.35]
    result = paired_mean_difference(a_cost, b_cost)
    assert result.n == 3
    assert result.mean_a == pytest.approx((0.10 + 0.50 + 0.20) / 3)
    assert result.mean_b == pytest.approx((0.15 + 0.40 + 0.35) / 3)
    assert result.difference is not None
    assert result.difference.estimate == pytest.approx((0.05 - 0.10 + 0.15) / 3)
    assert result.difference.contains((0.05 - 0.10 + 0.15) / 3)
    assert paired_mean_difference([None, 1.0], [2.0, None]).difference is None


# --- simulation ---------------------------------------------------------------------------------


def simulate_single_attempts(rng: random.Random, *, tasks: int, lift: float) -> PairedComparison:
    # Each task has its own true difficulty, drawn once; both configs sample it independently.
    truth = [rng.uniform(0.0, 0.6) for _ in range(tasks)]
    a = [[rng.random() < p] for p in truth]
    b = [[rng.random() < p + lift] for p in truth]
    return paired_comparison(a, b)


def test_identical_configs_rarely_look_different() -> None:
    rng = random.Random(2024)
    comparisons = [simulate_single_attempts(rng, tasks=30, lift=0.0) for _ in range(400)]
    false_positive = sum(c.p_value < 0.05 for c in comparisons) / len(comparisons)
    # Exact McNemar is conservative (its level is at most 5%), so anything up to 8% is noise
    # of 400 draws; a broken test would sit far above.
    assert false_positive <= 0.08
    assert sum(c.unlikely_chance for c in comparisons) / len(comparisons) <= false_positive


def test_a_real_lift_is_usually_detected() -> None:
    rng = random.Random(2025)
    comparisons = [simulate_single_attempts(rng, tasks=30, lift=0.4) for _ in range(200)]
    power = sum(c.unlikely_chance for c in comparisons) / len(comparisons)
    assert power > 0.7


def test_permutation_test_with_repeats_holds_its_level_and_has_power() -> None:
    rng = random.Random(7)

    def p_value(lift: float) -> float:
        differences = []
        for _ in range(20):
            p = rng.uniform(0.0, 0.6)
            resolved_a = sum(rng.random() < p for _ in range(3))
            resolved_b = sum(rng.random() < p + lift for _ in range(3))
            differences.append(Fraction(resolved_b - resolved_a, 3))
        return sign_flip_p_value(differences)

    null = [p_value(0.0) for _ in range(400)]
    assert sum(p < 0.05 for p in null) / len(null) <= 0.08
    lifted = [p_value(0.3) for _ in range(100)]
    assert sum(p < 0.05 for p in lifted) / len(lifted) > 0.7


# --- verdict ------------------------------------------------------------------------------------


def test_verdict_when_the_difference_is_unlikely_to_be_chance() -> None:
    a, b = paired_table(both=10, only_a=0, only_b=8, neither=12)
    comparison = paired_comparison(a, b)
    assert comparison.p_value == pytest.approx(2 / 2**8)
    assert verdict_sentence(comparison, "base", "skills", 30) == (
        "skills resolved 8 more of 30 tasks than base; the difference, +27 points "
        f"[95% CI +{round(comparison.difference.low * 100)}, "
        f"+{round(comparison.difference.high * 100)}], is unlikely to be chance (p = 0.008)."
    )


def test_verdict_when_the_difference_could_be_chance() -> None:
    a, b = paired_table(both=10, only_a=3, only_b=5, neither=12)
    comparison = paired_comparison(a, b)
    sentence = verdict_sentence(comparison, "base", "skills", 30)
    assert sentence.startswith("skills resolved 2 more of 30 tasks than base; the difference, +7")
    assert sentence.endswith(f"could be chance (p = {mcnemar_exact(3, 5):.2f}).")
    worse = verdict_sentence(paired_comparison(b, a), "skills", "base")
    assert worse.startswith("base resolved 2 fewer of 30 tasks than skills; the difference, -7")


def test_verdict_for_identical_results() -> None:
    a, b = paired_table(both=12, only_a=4, only_b=4, neither=10)
    sentence = verdict_sentence(paired_comparison(a, b), "A", "B", 30)
    assert sentence.startswith("A and B resolved the same number of the 30 tasks; the difference,")
    assert sentence.endswith("could be chance (p = 1.00).")
    same = one_attempt([True] * 9 + [False] * 21)
    assert "0 points" in verdict_sentence(paired_comparison(same, same), "A", "B")


def test_verdict_keeps_interval_and_p_consistent() -> None:
    # Cavo: the interval excludes 0, p = 0.052 -> "could be chance", and p keeps enough digits
    # not to round onto the threshold.
    a, b = paired_table(both=59, only_a=16, only_b=6, neither=80)
    sentence = verdict_sentence(paired_comparison(a, b), "A", "B")
    assert sentence == (
        "B resolved 10 fewer of 161 tasks than A; the difference, -6 points "
        "[95% CI -12, -0.5], could be chance (p = 0.05)."
    )
    # A p below 0.05 with an interval that includes 0 is not a claim either, and says why.
    borderline = PairedComparison(
        tasks=20,
        repeated=True,
        both=5,
        only_a=2,
        only_b=8,
        neither=5,
        rate_a=0.4,
        rate_b=0.55,
        difference=Interval(-0.004, 0.31, 0.15),
        p_value=0.0496,
        test="paired permutation",
        interval_method="bootstrap",
        confidence=0.95,
    )
    assert verdict_sentence(borderline, "A", "B") == (
        "Over the 20 tasks, B's resolve rate was higher than A's; the difference, +15 points "
        "[95% CI -0.4, +31], could be chance (p = 0.0496, but the 95% interval includes 0)."
    )


def test_verdict_refuses_a_task_count_it_was_not_given() -> None:
    a, b = paired_table(both=1, only_a=0, only_b=1, neither=1)
    with pytest.raises(ValueError, match="covers 3 tasks, not 30"):
        verdict_sentence(paired_comparison(a, b), "A", "B", 30)
