"""What `gitgauge compare` warns of, and when it gives no verdict: what could make the two sides
unequal, from their results and their runs' manifests (the same results twice, other task sets or
attempts per task, too few tasks, other sandboxes, timeouts, test or setup commands, gitgauge
versions, history modes), a side with more errors than scored pairs, and a side with no scored
pair at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from gitgauge.core.records import RunManifest, RunResult
from gitgauge.core.text import plural
from gitgauge.reporting.attempts import status_count
from gitgauge.reporting.rows import FEW_TASKS

if TYPE_CHECKING:
    # Only a type here: `compare` imports this module.
    from gitgauge.reporting.compare import Side


def error_warnings(sides: Sequence[tuple[str, list[RunResult]]]) -> list[str]:
    """A side with more errors than scored pairs: its numbers say more about its setup."""
    found = []
    for name, attempts in sides:
        errors = status_count(attempts, "error")
        graded = len(attempts) - errors
        if errors > graded:
            found.append(
                f"{name}: {errors} of its {plural(len(attempts), 'pair')} "
                f"{'is an error' if errors == 1 else 'are errors'} and only {graded} "
                f"scored: the comparison says more about its setup than its agent (see "
                "`gitgauge report --tasks`)"
            )
    return found


def no_verdict(sides: Sequence[tuple[str, Side, list[RunResult]]]) -> str | None:
    """No verdict when a side has no scored pair: "could be chance" would hide a broken setup."""
    for name, side, attempts in sides:
        if attempts and all(attempt.status == "error" for attempt in attempts):
            messages: dict[str, int] = {}
            for attempt in attempts:
                said = " ".join((attempt.errorMessage or attempt.errorKind or "").split())[:200]
                messages[said] = messages.get(said, 0) + 1
            common = max(messages, key=lambda text: messages[text])
            return (
                f"No verdict: every pair of {name} is an error ({common}), so nothing of it was "
                f"scored; fix that, then `gitgauge run --resume {side.run.run_id} --retry-errors`."
            )
    return None


def side_warnings(
    a: Side,
    b: Side,
    name_a: str,
    name_b: str,
    by_task_a: dict[str, list[RunResult]],
    by_task_b: dict[str, list[RunResult]],
    shared: int,
) -> list[str]:
    """What could make the two sides unequal, from the results and the runs' manifests."""
    found: list[str] = []
    if a.run.run_id == b.run.run_id and a.config == b.config:
        found.append(f"A and B are the same results (config {a.config} of run {a.run.run_id})")
    if set(by_task_a) != set(by_task_b):
        found.append(
            f"different task sets: {name_a} ran {plural(len(by_task_a), 'task')}, {name_b} "
            f"{len(by_task_b)}; only the {shared} both ran are compared"
        )
    attempts_a = {len(attempts) for attempts in by_task_a.values()}
    attempts_b = {len(attempts) for attempts in by_task_b.values()}
    if attempts_a != attempts_b:
        found.append(
            f"different attempts per task: {name_a} {counts_text(attempts_a)}, {name_b} "
            f"{counts_text(attempts_b)}; tasks are compared by their share of attempts resolved"
        )
    if shared < FEW_TASKS and max(attempts_a | attempts_b) > 1:
        found.append(
            f"only {plural(shared, 'task')}: a bootstrap interval over fewer than {FEW_TASKS} "
            "tasks is too narrow; go by the p-value"
        )
    boxes_a, boxes_b = _sandboxes(a), _sandboxes(b)
    if set(boxes_a) != set(boxes_b) or len(boxes_a) > 1 or len(boxes_b) > 1:
        found.append(
            f"different run.sandbox: {_describe_boxes(boxes_a)} ({name_a}) vs "
            f"{_describe_boxes(boxes_b)} ({name_b}); without a sandbox an agent can read your "
            "repository and the fix"
        )
    manifest_a, manifest_b = a.run.manifest, b.run.manifest
    for side, manifest in ((a, manifest_a), (b, manifest_b)):
        if manifest is None:
            found.append(
                f"run {side.run.run_id} has no readable run.json: its timeouts, commands and "
                "gitgauge version could not be checked"
            )
    if manifest_a is None or manifest_b is None or a.run.run_id == b.run.run_id:
        return found
    found += _manifest_differences(manifest_a, manifest_b, name_a, name_b)
    return found


def _manifest_differences(
    manifest_a: RunManifest, manifest_b: RunManifest, name_a: str, name_b: str
) -> list[str]:
    found: list[str] = []
    timeouts_a, timeouts_b = manifest_a.timeouts.model_dump(), manifest_b.timeouts.model_dump()
    differing = [key for key in timeouts_a if timeouts_a[key] != timeouts_b[key]]
    if differing:
        found.append(
            "different timeouts: "
            + "; ".join(
                f"{key} {timeouts_a[key]} ms ({name_a}) vs {timeouts_b[key]} ms ({name_b})"
                for key in differing
            )
        )

    def differs(
        what: str,
        read: Callable[[RunManifest], object],
        show: Callable[[object], str] = str,
        then: str = "",
    ) -> None:
        value_a, value_b = read(manifest_a), read(manifest_b)
        if value_a != value_b:
            found.append(
                f"different {what}: {show(value_a)} ({name_a}) vs {show(value_b)} ({name_b}){then}"
            )

    differs("test commands", lambda manifest: manifest.testCommand, repr)
    differs("setup commands", lambda manifest: manifest.setupCommand, repr)
    if set(manifest_a.tasks) != set(manifest_b.tasks):
        found.append(
            "the runs were planned on different task sets "
            f"({plural(len(manifest_a.tasks), 'task')} for "
            f"{name_a}'s run, {len(manifest_b.tasks)} for {name_b}'s)"
        )
    differs("gitgauge versions", lambda manifest: manifest.gitgaugeVersion)
    differs(
        "run.history",
        lambda manifest: manifest.history,
        then="; with full history an agent can read the fix commit",
    )
    return found


def _sandboxes(side: Side) -> dict[str, int]:
    """How many of the side's pairs ran in each sandbox: a result's own record (a Ray node
    decides for itself), else its run's. A pair that never ran under a run recorded as `auto`
    counts nowhere."""
    recorded = side.run.manifest.sandbox if side.run.manifest is not None else "none"
    counts: dict[str, int] = {}
    for result in side.results:
        box = result.sandbox or (None if recorded == "auto" else recorded)
        if box is not None:
            counts[box] = counts.get(box, 0) + 1
    return counts


def _describe_boxes(counts: dict[str, int]) -> str:
    if len(counts) <= 1:
        return next(iter(counts), "none")
    return ", ".join(
        f"{box} for {count} pair{'' if count == 1 else 's'}"
        for box, count in sorted(counts.items())
    )


def counts_text(counts: set[int]) -> str:
    """`3`, or `1 to 3` when the counts differ."""
    return " to ".join(str(count) for count in sorted({min(counts), max(counts)}))
