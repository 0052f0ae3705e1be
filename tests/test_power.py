"""`reporting.power`: the power and sample size of the exact McNemar test, and the exact Wilcoxon
signed-rank test, each against an independent brute-force computation written here (every
outcome of a small sample enumerated, the p-value of each counted with `math.comb`)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from gitgauge.reporting.power import (
    intraclass_correlation,
    mcnemar_power,
    repeated_tasks_for_power,
    tasks_for_power,
    too_few,
    wilcoxon_signed_rank,
)


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar: twice the smaller binomial tail at 1/2, at most 1."""
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(only_a, only_b) + 1))
    outcomes: int = 2**discordant  # int ** int is Any to mypy (a negative power is a float)
    return min(1.0, 2 * tail / outcomes)


def brute_force_power(tasks: int, p_a: float, p_b: float) -> float:
    """Every outcome (only A, only B, the rest) of `tasks` tasks, by its trinomial probability."""
    rest = 1.0 - p_a - p_b
    total = 0.0
    for only_a in range(tasks + 1):
        for only_b in range(tasks - only_a + 1):
            if mcnemar_p(only_a, only_b) < 0.05:
                same = tasks - only_a - only_b
                ways = math.comb(tasks, only_a) * math.comb(tasks - only_a, only_b)
                total += ways * p_a**only_a * p_b**only_b * rest**same
    return total


@pytest.mark.parametrize(
    ("tasks", "p_a", "p_b"),
    [(6, 0.0, 1.0), (10, 0.1, 0.4), (25, 0.05, 0.3), (40, 0.2, 0.1), (60, 0.1, 0.25)],
)
def test_the_power_is_the_sum_over_every_outcome(tasks: int, p_a: float, p_b: float) -> None:
    assert mcnemar_power(tasks, p_a, p_b) == pytest.approx(
        brute_force_power(tasks, p_a, p_b), abs=1e-12
    )


@pytest.mark.parametrize(
    ("only_a", "only_b", "tasks"),
    [(0, 3, 3), (1, 4, 10), (0, 2, 5), (2, 7, 15), (1, 3, 4)],
)
def test_the_tasks_needed_are_the_smallest_that_reach_80_percent(
    only_a: int, only_b: int, tasks: int
) -> None:
    p_a, p_b = only_a / tasks, only_b / tasks
    # A linear search from 1, on the brute-force power: the saw-tooth cannot fool it.
    expected = next(n for n in itertools.count(1) if brute_force_power(n, p_a, p_b) >= 0.8)

    assert tasks_for_power(only_a, only_b, tasks) == expected


def test_three_tasks_all_one_way_need_six() -> None:
    # 6 tasks all for B give p = 2 / 2^6 = 0.031; 5 give 0.0625. With a discordance of 1 every
    # task is for B: power 1 from 6 tasks, 0 below.
    assert tasks_for_power(0, 3, 3) == 6
    assert brute_force_power(5, 0.0, 1.0) == 0.0
    assert brute_force_power(6, 0.0, 1.0) == pytest.approx(1.0)


def test_a_published_example_gets_a_count_the_brute_force_confirms() -> None:
    # Agresti's paired example (16 only A, 6 only B of 161; tests/test_compare.py): the count
    # reaches 80% and the one before it does not.
    needed = tasks_for_power(16, 6, 161)
    assert needed is not None
    assert brute_force_power(needed, 16 / 161, 6 / 161) >= 0.8
    assert brute_force_power(needed - 1, 16 / 161, 6 / 161) < 0.8


def test_no_difference_needs_no_number_of_tasks() -> None:
    assert tasks_for_power(3, 3, 10) is None
    assert tasks_for_power(0, 0, 10) is None


def test_too_few_differing_tasks_can_never_reach_005() -> None:
    # 5 differing tasks all one way: p = 2 / 32 = 0.0625; 6: 0.031.
    assert too_few(5) and not too_few(6)


def brute_force_signed_rank_p(differences: list[float]) -> float:
    """Every sign assignment of the ranks of the nonzero |differences| (ties: mean ranks)."""
    nonzero = [d for d in differences if d != 0]
    ordered = sorted(abs(d) for d in nonzero)
    rank = {v: Fraction(sum(i + 1 for i, w in enumerate(ordered) if w == v), ordered.count(v))
            for v in ordered}  # fmt: skip
    ranks = [rank[abs(d)] for d in nonzero]
    # The sums start at Fraction(0): from 0, mypy types their abs() as _RealLike, which has no >=.
    observed = abs(
        sum((r if d > 0 else -r for r, d in zip(ranks, nonzero, strict=True)), Fraction(0))
    )
    flips = list(itertools.product((1, -1), repeat=len(ranks)))
    extreme = sum(
        1
        for signs in flips
        if abs(sum((s * r for s, r in zip(signs, ranks, strict=True)), Fraction(0))) >= observed
    )
    return extreme / len(flips)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([14, 12, 20, 9, 11, 15], [9, 8, 10, 9, 7, 6]),
        ([5, 3, 8, 2, 2, 7, 4], [3, 3, 2, 4, 1, 1, 1]),
        ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]),
        ([1.5, 2.0, 7.0, 3.0], [1.0, 2.5, 2.0, 3.0]),
    ],
)
def test_the_signed_rank_test_is_the_sign_flip_distribution(a: list[float], b: list[float]) -> None:
    found = wilcoxon_signed_rank(a, b)

    differences = [y - x for x, y in zip(a, b, strict=True)]
    assert found.p_value == pytest.approx(brute_force_signed_rank_p(differences), abs=1e-12)
    assert found.nonzero == sum(1 for d in differences if d != 0)


def test_five_tasks_all_lower_give_the_textbook_p() -> None:
    # Every one of 5 differences negative: the most extreme of 2^5 assignments, both ways.
    assert wilcoxon_signed_rank([9, 8, 7, 6, 5], [1, 2, 3, 4, 0]).p_value == pytest.approx(2 / 32)


def test_with_repeats_attempts_of_one_task_count_less_than_new_tasks() -> None:
    # Tasks whose attempts all agree: a second attempt adds nothing (correlation 1).
    same = [[1, 1], [0, 0], [1, 1], [0, 0], [1, 1], [-1, -1]]
    assert intraclass_correlation(same) == pytest.approx(1.0)
    found = repeated_tasks_for_power(same, attempts_shown=[1, 2])
    pairs = [d for task in same for d in task]
    assert found.attempt_pairs == tasks_for_power(pairs.count(-1), pairs.count(1), len(pairs))
    assert found.attempt_pairs is not None
    assert found.tasks_by_attempts[1] == found.attempt_pairs
    assert found.tasks_by_attempts[2] == found.attempt_pairs  # ceil(n * (1 + 1) / 2)
    # Attempts that vary independently within tasks: correlation 0, two attempts halve the tasks.
    mixed = [[1, 0], [0, 1], [1, 0], [0, 1], [-1, 0], [1, 0]]
    assert intraclass_correlation(mixed) == 0.0
    halves = repeated_tasks_for_power(mixed, attempts_shown=[1, 2])
    assert halves.attempt_pairs is not None
    assert halves.tasks_by_attempts[2] == math.ceil(halves.attempt_pairs / 2)
