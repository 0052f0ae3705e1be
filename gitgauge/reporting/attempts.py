"""Per-task views of stored results, shared by the report's rows, its matrix, `compare` and the
HTML page: which results count (`scored`), each task's attempts in order, resolved or not per
attempt, how many resolved or were errors (`tally`), and the per-attempt values (cost, time,
diff) with a task's mean of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import TypedDict

from gitgauge.core.records import RunResult


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


def status_count(results: Sequence[RunResult], status: str) -> int:
    """How many of `results` ended `status` (`resolved`, `error`)."""
    return sum(1 for result in results if result.status == status)


class Tally(TypedDict):
    """The counts a report row, a benchmark group and a matrix cell share, as keyword
    arguments of each (`ReportRow(..., **tally(results))`)."""

    attempts: int
    resolved: int
    errors: int


def tally(results: Sequence[RunResult]) -> Tally:
    """The attempts among `results`, and how many resolved their task or were errors."""
    return Tally(
        attempts=len(results),
        resolved=status_count(results, "resolved"),
        errors=status_count(results, "error"),
    )


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


def total_of(
    results: Sequence[RunResult], value: Callable[[RunResult], float | None]
) -> float | None:
    """The sum of `value` over the results that have one; None when none does."""
    values = [found for found in map(value, results) if found is not None]
    return sum(values) if values else None
