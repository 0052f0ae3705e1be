"""The HTML report's two charts, as inline SVG (no script, no font, no image): each config's
resolve rate with its 95% interval, and average cost against resolve rate with both intervals
as error bars. Every label from the results goes through `html.escape`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from gitgauge.reporting.formatting import format_rate
from gitgauge.reporting.rows import ReportRow

CHART_WIDTH = 760


LABEL_WIDTH = 200
"""Room left of the rate chart for config names (longer names are cut, the full name is the
tooltip)."""


LABEL_CHARS = 28


ROW_HEIGHT = 30


SCATTER_HEIGHT = 380


def _label(row: ReportRow, *, with_run: bool) -> str:
    return f"{row.run_id}:{row.name}" if with_run else row.name


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "\u2026"


def rate_chart(rows: Sequence[ReportRow], *, with_run: bool) -> str:
    """One line per config: a bar to the resolve rate, the 95% interval as a whisker."""
    top, bottom = 24, 26
    height = top + bottom + ROW_HEIGHT * len(rows)
    plot_width = CHART_WIDTH - LABEL_WIDTH - 130

    def x(rate: float) -> float:
        return LABEL_WIDTH + rate * plot_width

    parts = [
        f'<svg class="rate-chart" role="img" width="{CHART_WIDTH}" height="{height}" '
        f'viewBox="0 0 {CHART_WIDTH} {height}">',
        "<title>Resolve rate per config with its 95% interval</title>",
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line class="grid" x1="{x(tick):.1f}" y1="{top - 6}" x2="{x(tick):.1f}" '
            f'y2="{height - bottom + 4}"/>'
            f'<text x="{x(tick):.1f}" y="{height - 8}" text-anchor="middle">'
            f"{tick * 100:.0f}%</text>"
        )
    for index, row in enumerate(rows):
        label = _label(row, with_run=with_run)
        middle = top + ROW_HEIGHT * index + ROW_HEIGHT / 2
        interval = row.resolve_rate
        parts.append(
            f'<g class="config"><title>{escape(label)}: {escape(format_rate(interval))}</title>'
            f'<text x="{LABEL_WIDTH - 8}" y="{middle + 4:.1f}" text-anchor="end">'
            f"{escape(_short(label))}</text>"
        )
        if interval.estimate is not None:
            parts.append(
                f'<rect class="bar" x="{x(0):.1f}" y="{middle - 8:.1f}" '
                f'width="{x(interval.estimate) - x(0):.1f}" height="16"/>'
                f'<line class="whisker" x1="{x(interval.low):.1f}" y1="{middle:.1f}" '
                f'x2="{x(interval.high):.1f}" y2="{middle:.1f}"/>'
                + "".join(
                    f'<line class="whisker" x1="{x(end):.1f}" y1="{middle - 6:.1f}" '
                    f'x2="{x(end):.1f}" y2="{middle + 6:.1f}"/>'
                    for end in (interval.low, interval.high)
                )
                + f'<circle class="point" cx="{x(interval.estimate):.1f}" cy="{middle:.1f}" r="4"/>'
                f'<text x="{x(1.0) + 10:.1f}" y="{middle + 4:.1f}">'
                f"{escape(format_rate(interval))}</text>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def cost_scatter(rows: Sequence[ReportRow], *, with_run: bool) -> str:
    """Average cost (x) against resolve rate (y), each with its 95% interval as error bars."""
    plotted = [row for row in rows if row.avg_cost_usd is not None]
    missing = [_label(row, with_run=with_run) for row in rows if row.avg_cost_usd is None]
    note = ""
    if missing:
        note = (
            f'<p class="note">No cost reported (not plotted): {escape(", ".join(missing))}. '
            "The script, gold and noop adapters report none.</p>"
        )
    if not plotted:
        return note
    left, right, top, bottom = 70, 170, 20, 46
    width, height = CHART_WIDTH, SCATTER_HEIGHT
    step = _tick_step(
        max(
            (row.cost_interval.high if row.cost_interval else row.avg_cost_usd or 0.0)
            for row in plotted
        )
    )
    most = step * 4

    def x(cost: float) -> float:
        return left + cost / most * (width - left - right)

    def y(rate: float) -> float:
        return top + (1 - rate) * (height - top - bottom)

    parts = [
        f'<svg class="cost-scatter" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        "<title>Average cost against resolve rate, with 95% intervals</title>",
        f'<line class="axis" x1="{left}" y1="{y(0):.1f}" x2="{width - right}" y2="{y(0):.1f}"/>',
        f'<line class="axis" x1="{left}" y1="{y(0):.1f}" x2="{left}" y2="{y(1):.1f}"/>',
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line class="grid" x1="{left}" y1="{y(tick):.1f}" x2="{width - right}" '
            f'y2="{y(tick):.1f}"/><text x="{left - 8}" y="{y(tick) + 4:.1f}" '
            f'text-anchor="end">{tick * 100:.0f}%</text>'
        )
    for tick in range(5):
        cost = step * tick
        parts.append(
            f'<text x="{x(cost):.1f}" y="{y(0) + 18:.1f}" text-anchor="middle">'
            f"${cost:.{_tick_decimals(step)}f}</text>"
        )
    parts.append(
        f'<text x="{(left + width - right) / 2:.1f}" y="{height - 6}" text-anchor="middle">'
        "average cost per task (USD)</text>"
        f'<text x="14" y="{(top + y(0)) / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + y(0)) / 2:.1f})">resolve rate</text>'
    )
    for index, row in enumerate(plotted):
        cost, rate = row.avg_cost_usd or 0.0, row.resolve_rate
        estimate = rate.estimate or 0.0
        label = _label(row, with_run=with_run)
        cx, cy = x(cost), y(estimate)
        bars = (
            f'<line class="whisker" x1="{cx:.1f}" y1="{y(rate.low):.1f}" x2="{cx:.1f}" '
            f'y2="{y(rate.high):.1f}"/>'
        )
        if row.cost_interval is not None:
            bars += (
                f'<line class="whisker" x1="{x(row.cost_interval.low):.1f}" y1="{cy:.1f}" '
                f'x2="{x(row.cost_interval.high):.1f}" y2="{cy:.1f}"/>'
            )
        parts.append(
            f'<g class="config"><title>{escape(label)}: ${escape(_money(cost))} per task, '
            f"{escape(format_rate(rate))}</title>{bars}"
            f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="5"/>'
            # Labels alternate above and below their point: configs of similar cost and rate
            # would otherwise print over each other.
            f'<text x="{cx + 8:.1f}" y="{cy - 8 if index % 2 == 0 else cy + 18:.1f}">'
            f"{escape(_short(label))}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts) + note


def _tick_step(largest: float) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) whose 4 steps reach `largest`."""
    if largest <= 0:
        return 0.25
    power = 10.0 ** math.floor(math.log10(largest / 4))
    return next(power * factor for factor in (1, 2, 2.5, 5, 10) if power * factor * 4 >= largest)


def _tick_decimals(step: float) -> int:
    """Decimals that show every multiple of `step` exactly; at least cents below a dollar."""
    decimals = next(d for d in range(8) if abs(round(step, d) - step) < step * 1e-6)
    return max(decimals, 2) if step < 1 else decimals


def _money(value: float) -> str:
    return f"{value:.4f}" if value < 1 else f"{value:.2f}"
