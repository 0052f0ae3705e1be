"""How `gitgauge compare` prints a `Comparison`: the text page and the JSON for scripts.

`reporting.compare` decides what is compared and computes the numbers; this module only words
and formats them (amounts with their units, p-values, intervals), as `render.py` does for `rows`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from gitgauge.reporting.compare import Comparison, MeanDifference, Side, counts_text
from gitgauge.reporting.intervals import Interval, alpha_of
from gitgauge.reporting.paired import PairedComparison, format_points
from gitgauge.reporting.paired import format_p as format_p_value
from gitgauge.reporting.render import format_rate
from gitgauge.reporting.rows import attempts_by_task


def render_text(comparison: Comparison) -> str:
    c = comparison
    paired = c.paired
    lines = [
        f"A: {c.name_a}  (run {c.a.run.run_id})",
        f"B: {c.name_b}  (run {c.b.run.run_id})",
        f"Compared on the {len(c.tasks)} task{'s' if len(c.tasks) != 1 else ''} both ran"
        + (f" ({_attempts_note(c)})." if paired.repeated else ", one attempt each."),
    ]
    if c.harness is not None:
        lines.append(f"Harness B vs A: {c.harness}")
    lines += [f"warning: {warning}" for warning in c.warnings]
    side_by_side = [
        ["", c.name_a, c.name_b],
        [
            "resolved" + (" attempts" if paired.repeated else ""),
            f"{_resolved(c.a, c.tasks)}/{c.attempts_a}",
            f"{_resolved(c.b, c.tasks)}/{c.attempts_b}",
        ],
        ["resolve rate [95% CI]", format_rate(c.rate_a), format_rate(c.rate_b)],
        ["errors (count as unresolved)", str(c.errors_a), str(c.errors_b)],
    ]
    for mean in c.means:
        side_by_side.append(
            [f"avg {mean.metric}", _mean(mean, mean.paired.mean_a), _mean(mean, mean.paired.mean_b)]
        )
    lines += ["", tabulate(side_by_side, tablefmt="plain", disable_numparse=True), ""]
    if paired.repeated:
        lines.append(
            f"tasks resolved more often by {c.name_a}: {paired.only_a}, by {c.name_b}: "
            f"{paired.only_b}, equally often: {paired.both}, by neither: {paired.neither}"
        )
    else:
        lines.append(
            f"tasks resolved by both: {paired.both}, only {c.name_a}: {paired.only_a}, "
            f"only {c.name_b}: {paired.only_b}, neither: {paired.neither}"
        )
    level = f"{paired.confidence * 100:g}% CI"
    interval = paired.difference
    differences = [
        [
            "resolve rate",
            f"{points(interval.estimate or 0.0)} points [{level} {points(interval.low)}, "
            f"{points(interval.high)}]",
            f"{paired.test}, {format_p(paired)}",
        ]
    ]
    for mean in c.means:
        differences.append([mean.metric, *_mean_difference(mean, level)])
    lines += [
        "",
        f"{c.name_b} - {c.name_a}:",
        tabulate(differences, tablefmt="plain", disable_numparse=True),
        "",
        c.verdict,
    ]
    why = disagreement(paired)
    if why:
        lines.append(why)
    if c.solved is not None:
        lines += ["", *_solved_lines(c)]
    return "\n".join(lines)


def _solved_lines(c: Comparison) -> list[str]:
    """The judge's SOLVED, paired like RESOLVED, on the tasks it judged for both sides."""
    judged = c.solved
    assert judged is not None
    paired = judged.paired
    interval = paired.difference
    level = f"{paired.confidence * 100:g}% CI"
    return [
        f"Judge SOLVED (preferred to the original in both orders), on the {len(judged.tasks)} "
        f"task{'s' if len(judged.tasks) != 1 else ''} judged for both:",
        f"  {c.name_a}: {format_rate(judged.rate_a)}, {c.name_b}: {format_rate(judged.rate_b)}",
        f"  {c.name_b} - {c.name_a}: {points(interval.estimate or 0.0)} points [{level} "
        f"{points(interval.low)}, {points(interval.high)}], {paired.test}, {format_p(paired)}",
    ]


def disagreement(paired: PairedComparison) -> str | None:
    """One line when the interval excludes 0 and the verdict still says "could be chance": the
    test decides, the interval is only the size (read side by side, they look contradictory)."""
    interval = paired.difference
    if paired.unlikely_chance or interval.estimate is None:
        return None
    if not (interval.low > 0 or interval.high < 0):
        return None
    return (
        f"Why both: the {paired.test} test decides whether it could be chance "
        # Three digits: p = 0.0525 must not read as "p = 0.05, not below 0.05".
        f"(p = {paired.p_value:.3g}, not below {alpha_of(paired.confidence):g}); the interval is "
        "shown for the size of the difference."
    )


def _attempts_note(c: Comparison) -> str:
    per_a = {len(attempts) for attempts in attempts_by_task(c.a.results).values()}
    per_b = {len(attempts) for attempts in attempts_by_task(c.b.results).values()}
    return f"{counts_text(per_a)} attempts per task for A, {counts_text(per_b)} for B"


def _resolved(side: Side, tasks: Sequence[str]) -> int:
    wanted = set(tasks)
    return sum(
        1 for result in side.results if result.task in wanted and result.status == "resolved"
    )


def _mean(mean: MeanDifference, value: float | None) -> str:
    if value is None:
        return "-"
    return _amount(mean, value, signed=False)


def _amount(mean: MeanDifference, value: float, *, signed: bool, unit: bool = True) -> str:
    """`$0.0123`, `+1.5s`, `-2.0 lines`; never a signed zero."""
    digits = 4 if mean.unit == "$" else 1
    size = f"{abs(value):.{digits}f}"
    nonzero = float(size) != 0
    sign = ("+" if value > 0 else "-") if nonzero and (signed or value < 0) else ""
    if mean.unit == "$":
        return f"{sign}${size}"
    return f"{sign}{size}{mean.unit if unit else ''}"


def _mean_difference(mean: MeanDifference, level: str) -> list[str]:
    paired = mean.paired
    if paired.difference is None or paired.difference.estimate is None:
        return ["-", f"no compared task has a {mean.metric} on both sides"]
    interval, estimate = paired.difference, paired.difference.estimate
    low = _amount(mean, interval.low, signed=True, unit=False)
    high = _amount(mean, interval.high, signed=True, unit=False)
    tasks = f"over {paired.n} task{'s' if paired.n != 1 else ''}"
    if low == high:  # the same difference on every task: an interval would say nothing
        return [_amount(mean, estimate, signed=True), f"{tasks}, the same on each"]
    return [f"{_amount(mean, estimate, signed=True)} [{level} {low}, {high}]", tasks]


def points(rate: float) -> str:
    """A rate difference in signed percentage points, written as the verdict writes it."""
    return format_points(rate)


def format_p(paired: PairedComparison) -> str:
    """`p = 0.25`, with the digits the verdict uses (more when rounding would cross 0.05)."""
    return format_p_value(paired.p_value, alpha_of(paired.confidence))


def render_json(comparison: Comparison) -> str:
    c = comparison
    paired = c.paired
    value: dict[str, Any] = {
        "a": {"config": c.a.config, "run": c.a.run.run_id, "name": c.name_a},
        "b": {"config": c.b.config, "run": c.b.run.run_id, "name": c.name_b},
        "tasks": c.tasks,
        "onlyInA": c.only_in_a,
        "onlyInB": c.only_in_b,
        "attemptsA": c.attempts_a,
        "attemptsB": c.attempts_b,
        "errorsA": c.errors_a,
        "errorsB": c.errors_b,
        "repeated": paired.repeated,
        "both": paired.both,
        "onlyA": paired.only_a,
        "onlyB": paired.only_b,
        "neither": paired.neither,
        "rateA": _interval(c.rate_a),
        "rateB": _interval(c.rate_b),
        "difference": _interval(paired.difference),
        "pValue": paired.p_value,
        "test": paired.test,
        "intervalMethod": paired.interval_method,
        "confidence": paired.confidence,
        "unlikelyChance": paired.unlikely_chance,
        **{
            mean.metric: {
                "tasks": mean.paired.n,
                "meanA": mean.paired.mean_a,
                "meanB": mean.paired.mean_b,
                "difference": _interval(mean.paired.difference),
            }
            for mean in c.means
        },
        "verdict": c.verdict,
        "warnings": c.warnings,
        "harness": c.harness,
        "solved": None
        if c.solved is None
        else {
            "tasks": c.solved.tasks,
            "rateA": _interval(c.solved.rate_a),
            "rateB": _interval(c.solved.rate_b),
            "difference": _interval(c.solved.paired.difference),
            "pValue": c.solved.paired.p_value,
            "test": c.solved.paired.test,
        },
    }
    return json.dumps(value, indent=2)


def _interval(interval: Interval | None) -> dict[str, float | None] | None:
    if interval is None:
        return None
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high}
