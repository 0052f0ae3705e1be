"""How `gitgauge compare` prints a `Comparison`: the text page and the JSON for scripts.

`reporting.compare` decides what is compared and computes the numbers; this module only words
and formats them (amounts with their units, p-values, intervals), as `render.py` does for `rows`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from gitgauge.core.text import plural
from gitgauge.reporting.compare import (
    BehaviourComparison,
    BehaviourDifference,
    Comparison,
    MeanDifference,
    PowerNote,
    Side,
    counts_text,
)
from gitgauge.reporting.intervals import Interval, alpha_of
from gitgauge.reporting.paired import PairedComparison, format_points
from gitgauge.reporting.paired import format_p as format_p_value
from gitgauge.reporting.power import too_few
from gitgauge.reporting.render import format_rate
from gitgauge.reporting.rows import attempts_by_task


def render_text(comparison: Comparison) -> str:
    c = comparison
    paired = c.paired
    lines = [
        f"A: {c.name_a}  (run {c.a.run.run_id})",
        f"B: {c.name_b}  (run {c.b.run.run_id})",
        f"Compared on the {plural(len(c.tasks), 'task')} both ran"
        + (f" ({attempts_note(c)})." if paired.repeated else ", one attempt each."),
    ]
    if c.harness is not None:
        lines.append(f"Harness B vs A: {c.harness}")
    lines += [f"warning: {warning}" for warning in c.warnings]
    side_by_side = [
        ["", c.name_a, c.name_b],
        [
            "resolved" + (" attempts" if paired.repeated else ""),
            f"{resolved_count(c.a, c.tasks)}/{c.attempts_a}",
            f"{resolved_count(c.b, c.tasks)}/{c.attempts_b}",
        ],
        ["resolve rate [95% CI]", format_rate(c.rate_a), format_rate(c.rate_b)],
        ["errors (count as unresolved)", str(c.errors_a), str(c.errors_b)],
    ]
    for mean in c.means:
        side_by_side.append(
            [
                f"avg {mean.metric}",
                mean_text(mean, mean.paired.mean_a),
                mean_text(mean, mean.paired.mean_b),
            ]
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
        differences.append([mean.metric, *mean_difference_text(mean, level)])
    lines += [
        "",
        f"{c.name_b} - {c.name_a}:",
        tabulate(differences, tablefmt="plain", disable_numparse=True),
    ]
    if c.behaviour is not None:
        lines += ["", *behaviour_lines(c.behaviour, c.name_a, c.name_b)]
    lines += ["", c.verdict]
    why = None if c.refusal else disagreement(paired)
    if why:
        lines.append(why)
    if c.power is not None:
        lines.append(power_line(c.power))
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
        "Judge SOLVED (preferred to the original in both orders), on the "
        f"{plural(len(judged.tasks), 'task')} judged for both:",
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


def behaviour_headline(behaviour: BehaviourComparison) -> str:
    """`Behaviour B vs A: ran the tests in 14 of 15 tasks (A: 6 of 15); median turns 9 (A: 14);
    median files read 5 (A: 11)`."""
    unit = "attempts" if behaviour.repeated else "tasks"
    parts = [
        f"ran the tests in {behaviour.ran_tests_b} of {behaviour.units_b} {unit} "
        f"(A: {behaviour.ran_tests_a} of {behaviour.units_a})"
    ]
    for difference in behaviour.differences:
        if difference.metric.key in HEADLINE_METRICS:
            parts.append(
                f"median {difference.metric.label} {_metric(difference, difference.median_b)} "
                f"(A: {_metric(difference, difference.median_a)})"
            )
    return "Behaviour B vs A: " + "; ".join(parts)


HEADLINE_METRICS = ("turns", "filesRead", "filesEdited")
"""The behaviour metrics the headline names (every metric is in the table under it)."""


def behaviour_lines(behaviour: BehaviourComparison, name_a: str, name_b: str) -> list[str]:
    """The headline, then each metric with its paired test, over the tasks both measured."""
    ran = behaviour.ran_tests
    unit = "attempts" if behaviour.repeated else "tasks"
    table = [
        ["", name_a, name_b, "paired test"],
        [
            "ran the tests",
            f"{behaviour.ran_tests_a} of {behaviour.units_a}",
            f"{behaviour.ran_tests_b} of {behaviour.units_b}",
            f"{ran.test}, {format_p(ran)}"
            + (" (too few tasks differ for p < 0.05)" if _too_few(ran) else ""),
        ],
    ]
    for difference in behaviour.differences:
        table.append(
            [
                f"median {difference.metric.label}",
                _metric(difference, difference.median_a),
                _metric(difference, difference.median_b),
                f"{difference.test}, {format_p_value(difference.p_value, 0.05)} over "
                f"{plural(difference.tasks, 'task')}"
                + (" (too few tasks differ for p < 0.05)" if difference.too_few else ""),
            ]
        )
    return [
        behaviour_headline(behaviour),
        f"(from the transcripts of the scored {unit} of the {behaviour.tasks} compared "
        f"{'task' if behaviour.tasks == 1 else 'tasks'} measured on both sides)",
        tabulate(table, tablefmt="plain", disable_numparse=True),
    ]


def _too_few(paired: PairedComparison) -> bool:
    return too_few(paired.only_a + paired.only_b)


def _metric(difference: BehaviourDifference, value: float | None) -> str:
    if value is None:
        return "-"
    if difference.metric.unit == "$":
        return f"${value:.4f}"
    text = f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    return text + difference.metric.unit


def power_line(power: PowerNote) -> str:
    """How many tasks the observed difference needs to be conclusive."""
    observed = f"only A {power.only_a}, only B {power.only_b} of {power.tasks} " + (
        "attempt pairs" if power.repeated is not None else "tasks"
    )
    if power.only_a == power.only_b:
        return (
            f"Tasks for a verdict: none would do: the sides differ on as many pairs one way as "
            f"the other ({observed})."
        )
    lead = "Tasks for a verdict: the exact McNemar test reaches p < 0.05 with 80% power"
    if power.repeated is None:
        if power.needed is None:
            return f"{lead} only past {MAX_SHOWN:,} tasks at this discordance ({observed})."
        return f"{lead} at {power.needed:,} tasks, if the discordance observed holds ({observed})."
    repeated = power.repeated
    if repeated.attempt_pairs is None:
        return f"{lead} only past {MAX_SHOWN:,} attempt pairs at this discordance ({observed})."
    options = ", ".join(
        f"{tasks:,} tasks at {plural(k, 'attempt')} each"
        for k, tasks in repeated.tasks_by_attempts.items()
        if tasks is not None
    )
    return (
        f"{lead} at {repeated.attempt_pairs:,} attempt pairs ({observed}): {options} "
        f"(attempts of a task agree with intraclass correlation {repeated.correlation:.2f}, "
        "so more tasks beat more attempts)."
    )


MAX_SHOWN = 100_000


def attempts_note(c: Comparison) -> str:
    per_a = {len(attempts) for attempts in attempts_by_task(c.a.results).values()}
    per_b = {len(attempts) for attempts in attempts_by_task(c.b.results).values()}
    return f"{counts_text(per_a)} attempts per task for A, {counts_text(per_b)} for B"


def resolved_count(side: Side, tasks: Sequence[str]) -> int:
    wanted = set(tasks)
    return sum(
        1 for result in side.results if result.task in wanted and result.status == "resolved"
    )


def mean_text(mean: MeanDifference, value: float | None) -> str:
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


def mean_difference_text(mean: MeanDifference, level: str) -> list[str]:
    paired = mean.paired
    if paired.difference is None or paired.difference.estimate is None:
        return ["-", f"no compared task has a {mean.metric} on both sides"]
    interval, estimate = paired.difference, paired.difference.estimate
    low = _amount(mean, interval.low, signed=True, unit=False)
    high = _amount(mean, interval.high, signed=True, unit=False)
    tasks = f"over {plural(paired.n, 'task')}"
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
        "refused": c.refusal,
        "behaviour": _behaviour_json(c.behaviour),
        "tasksForVerdict": _power_json(c.power),
    }
    return json.dumps(value, indent=2)


def _behaviour_json(behaviour: BehaviourComparison | None) -> dict[str, Any] | None:
    if behaviour is None:
        return None
    return {
        "tasks": behaviour.tasks,
        "repeated": behaviour.repeated,
        "ranTests": {
            "a": behaviour.ran_tests_a,
            "b": behaviour.ran_tests_b,
            "ofA": behaviour.units_a,
            "ofB": behaviour.units_b,
            "test": behaviour.ran_tests.test,
            "pValue": behaviour.ran_tests.p_value,
        },
        **{
            d.metric.key: {
                "tasks": d.tasks,
                "medianA": d.median_a,
                "medianB": d.median_b,
                "test": d.test,
                "pValue": d.p_value,
                "tooFew": d.too_few,
            }
            for d in behaviour.differences
        },
    }


def _power_json(power: PowerNote | None) -> dict[str, Any] | None:
    if power is None:
        return None
    value: dict[str, Any] = {
        "onlyA": power.only_a,
        "onlyB": power.only_b,
        "of": power.tasks,
        "tasks": power.needed,
        "alpha": 0.05,
        "power": 0.8,
    }
    if power.repeated is not None:
        value.update(
            attemptPairs=power.repeated.attempt_pairs,
            correlation=power.repeated.correlation,
            tasksByAttempts={str(k): n for k, n in power.repeated.tasks_by_attempts.items()},
        )
    return value


def _interval(interval: Interval | None) -> dict[str, float | None] | None:
    if interval is None:
        return None
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high}
