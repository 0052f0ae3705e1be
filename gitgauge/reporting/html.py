"""`gitgauge report --html FILE`: the report as one self-contained HTML page.

Inline CSS and inline SVG only: no script, no font, no image, no link to any network address, so
the file opens the same offline, in a CI artifact or attached to a pull request. It holds the
summary table, a chart of each config's resolve rate with its 95% interval, a cost-vs-resolve
scatter, and the per-task matrix whose cells say what the agent did and link to each attempt's
patch and logs under `.gitgauge/runs/` by paths relative to the HTML file, and to its transcript:
a collapsible list of steps further down the page (`<details>` elements: no script), each
message, tool call and result cut to `core.transcript.TEXT_LIMIT`. Every piece of text from the
results and transcripts (task ids, config names, run ids, what the agent wrote) goes through
`html.escape`.
"""

from __future__ import annotations

import html
import math
import os
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core.store import Store
from gitgauge.core.transcript import TEXT_LIMIT, TRANSCRIPT_FILE, Step, Transcript
from gitgauge.core.transcript import read as read_transcript
from gitgauge.reporting.render import (
    column_labels,
    footnote,
    format_rate,
    has_chain_rows,
    has_merge_rows,
    summary_cells,
    summary_headers,
)
from gitgauge.reporting.rows import ReportRow, TaskMatrix, attempts_by_task, series_views

CHART_WIDTH = 760
LABEL_WIDTH = 200
"""Room left of the rate chart for config names (longer names are cut, the full name is the
tooltip)."""
LABEL_CHARS = 28
ROW_HEIGHT = 30
SCATTER_HEIGHT = 380
KIND_LEGEND = {
    "resolved": "resolved (every attempt)",
    "partial": "resolved by some attempts",
    "unresolved": "unresolved",
    "error": "error (setup, adapter or workspace failed)",
    "regressed": "regressed (base suite failed after the agent's work)",
    "unscored": "unscored (nothing could score it: a fixture without its LLM judge)",
}


@dataclass(frozen=True)
class AttemptLinks:
    """Where one attempt's patch and logs are, relative to the HTML file (None: not there)."""

    attempt: int
    patch: str | None
    logs: str | None


PairLinks = Mapping[tuple[str, int], Sequence[AttemptLinks]]
"""(task, column index) -> the links of that cell's attempts."""

PairTranscripts = Mapping[tuple[str, int], Sequence[tuple[int, Transcript]]]
"""(task, column index) -> (attempt, its transcript) for the attempts that left one."""

STEPS_SHOWN = 400
"""Steps of one transcript the page lists (the rest: in the file, which the page links)."""


def pair_transcripts(
    store: Store, matrix: TaskMatrix
) -> dict[tuple[str, int], list[tuple[int, Transcript]]]:
    """Every attempt's transcript, read from its log folder (attempts without one are left out)."""
    found: dict[tuple[str, int], list[tuple[int, Transcript]]] = {}
    for index, row in enumerate(matrix.columns):
        for task, attempts in attempts_by_task(row.results).items():
            for attempt in attempts:
                folder = store.log_dir(row.run_id, row.config, task, attempt.attempt)
                read = read_transcript(folder / TRANSCRIPT_FILE)
                if read is not None:
                    found.setdefault((task, index), []).append((attempt.attempt, read))
    return found


def pair_links(
    store: Store, matrix: TaskMatrix, html_path: Path
) -> dict[tuple[str, int], list[AttemptLinks]]:
    """Links for every attempt of every cell; a patch or log folder that is not on disk (a setup
    error has no patch) gets no link."""
    base = html_path.resolve().parent
    links: dict[tuple[str, int], list[AttemptLinks]] = {}
    for index, row in enumerate(matrix.columns):
        for task, attempts in attempts_by_task(row.results).items():
            cell: list[AttemptLinks] = []
            for attempt in attempts:
                folder = store.log_dir(row.run_id, row.config, task, attempt.attempt)
                patch = folder / "agent.patch"
                cell.append(
                    AttemptLinks(
                        attempt=attempt.attempt,
                        patch=_relative_url(patch, base) if patch.is_file() else None,
                        logs=_relative_url(folder, base, folder=True) if folder.is_dir() else None,
                    )
                )
            links[(task, index)] = cell
    return links


def _relative_url(target: Path, base: Path, *, folder: bool = False) -> str:
    """A URL relative to the HTML file's folder, so the page and `.gitgauge/` can move together;
    an absolute file:// URL when no relative path exists (another drive on Windows)."""
    try:
        relative = Path(os.path.relpath(target.resolve(), base)).as_posix()
    except ValueError:
        return target.resolve().as_uri() + ("/" if folder else "")
    # The path's own bytes, percent-encoded: a folder name that is not UTF-8 stays the same.
    return urllib.parse.quote(os.fsencode(relative)) + ("/" if folder else "")


def render_html(
    rows: Sequence[ReportRow],
    matrix: TaskMatrix,
    *,
    links: PairLinks,
    version: str,
    with_run: bool = False,
    transcripts: PairTranscripts | None = None,
) -> str:
    runs = sorted({row.run_id for row in rows})
    title = f"gitgauge report: {len(rows)} config{_s(len(rows))}, {len(matrix.tasks)} task" + _s(
        len(matrix.tasks)
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">Run{_s(len(runs))}: {", ".join(_e(run) for run in runs)}. '
        f"Generated by gitgauge {_e(version)}.</p>",
        "<h2>Summary</h2>",
        _summary_table(rows, with_run=with_run),
        f'<p class="note">{_e(footnote(rows))}</p>',
        "<h2>Resolve rate with 95% interval</h2>",
        _rate_chart(rows, with_run=with_run),
        "<h2>Cost against resolve rate</h2>",
        _cost_scatter(rows, with_run=with_run),
        "<h2>Tasks</h2>",
        _legend(),
        _matrix_table(matrix, links, with_run=with_run, transcripts=transcripts or {}),
        _series_tables(matrix, with_run=with_run),
        *_transcripts_section(matrix, transcripts or {}, with_run=with_run),
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1f24;
  margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 1.8em; border-bottom: 1px solid #d0d7de; }
.meta, .note { color: #57606a; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.num .ci { display: block; color: #57606a; font-size: 0.85em; }
.matrix td { min-width: 8em; }
.matrix th.task, .matrix td.task { font-family: ui-monospace, monospace; font-size: 0.9em; }
h3.task { font: 0.95em ui-monospace, monospace; margin: 1.2em 0 0.2em; }
.series ol { margin: 0; padding-left: 1.4em; }
.resolved { background: #dafbe1; }
.partial { background: #fff8c5; }
.unresolved { background: #f6f8fa; }
.error { background: #ffebe9; }
.unscored { background: #eaeef2; font-style: italic; }
tr.group th { text-align: left; background: #f6f8fa; padding-top: 0.6em; }
.regressed { background: #ffe3c2; }
.missing { color: #8c959f; }
.links { display: block; font-size: 0.85em; }
.links a { margin-right: 0.4em; }
.legend span { display: inline-block; padding: 2px 8px; margin: 0 6px 4px 0;
  border: 1px solid #d0d7de; font-size: 0.9em; }
svg text { font: 12px system-ui, sans-serif; fill: #1b1f24; }
svg .axis { stroke: #8c959f; }
svg .grid { stroke: #eaeef2; }
svg .bar { fill: #b6e3ff; }
svg .whisker { stroke: #0969da; stroke-width: 2; }
svg .point { fill: #0969da; }
.behaviour { display: block; color: #57606a; font-size: 0.85em; }
details.pair { margin: 0.4em 0; border: 1px solid #d0d7de; padding: 2px 8px; }
details.pair > summary { cursor: pointer; font-weight: 600; }
ol.steps { padding-left: 2em; }
ol.steps li { margin: 2px 0; }
ol.steps summary { cursor: pointer; font-family: ui-monospace, monospace; font-size: 0.9em; }
ol.steps .message { white-space: pre-wrap; }
ol.steps li.failed summary { color: #cf222e; }
ol.steps pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa;
  padding: 6px; margin: 4px 0; max-height: 24em; overflow: auto; font-size: 0.85em; }
""".strip()


def _summary_table(rows: Sequence[ReportRow], *, with_run: bool) -> str:
    headers = summary_headers(rows, with_run=with_run)
    head = "".join(f"<th>{_e(header)}</th>" for header in headers)
    body = []
    label_column = (1 if with_run else 0) + (
        1 if has_merge_rows(rows) or has_chain_rows(rows) else 0
    )
    for row in rows:
        cells = summary_cells(row, rows, with_run=with_run)
        body.append(
            "<tr>"
            + "".join(
                f"<td>{_e(cell)}</td>"
                if index <= label_column
                else f'<td class="num">{_ci(cell)}</td>'
                for index, cell in enumerate(cells)
            )
            + "</tr>"
        )
    return f'<table class="summary"><tr>{head}</tr>{"".join(body)}</table>'


def _ci(cell: str) -> str:
    """`67% [21, 94]` as the value with its interval set smaller beneath it, so the wide table
    still fits a page."""
    value, bracket, interval = cell.partition(" [")
    if not bracket:
        return _e(cell)
    return f'{_e(value)} <span class="ci">[{_e(interval)}</span>'


def _label(row: ReportRow, *, with_run: bool) -> str:
    return f"{row.run_id}:{row.name}" if with_run else row.name


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "\u2026"


def _rate_chart(rows: Sequence[ReportRow], *, with_run: bool) -> str:
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
            f'<g class="config"><title>{_e(label)}: {_e(format_rate(interval))}</title>'
            f'<text x="{LABEL_WIDTH - 8}" y="{middle + 4:.1f}" text-anchor="end">'
            f"{_e(_short(label))}</text>"
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
                f"{_e(format_rate(interval))}</text>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _cost_scatter(rows: Sequence[ReportRow], *, with_run: bool) -> str:
    """Average cost (x) against resolve rate (y), each with its 95% interval as error bars."""
    plotted = [row for row in rows if row.avg_cost_usd is not None]
    missing = [_label(row, with_run=with_run) for row in rows if row.avg_cost_usd is None]
    note = ""
    if missing:
        note = (
            f'<p class="note">No cost reported (not plotted): {_e(", ".join(missing))}. '
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
            f'<g class="config"><title>{_e(label)}: ${_e(_money(cost))} per task, '
            f"{_e(format_rate(rate))}</title>{bars}"
            f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="5"/>'
            # Labels alternate above and below their point: configs of similar cost and rate
            # would otherwise print over each other.
            f'<text x="{cx + 8:.1f}" y="{cy - 8 if index % 2 == 0 else cy + 18:.1f}">'
            f"{_e(_short(label))}</text></g>"
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


def _legend() -> str:
    return (
        '<p class="legend">'
        + "".join(f'<span class="{kind}">{_e(text)}</span>' for kind, text in KIND_LEGEND.items())
        + "</p>"
    )


def _matrix_table(
    matrix: TaskMatrix,
    links: PairLinks,
    *,
    with_run: bool,
    transcripts: PairTranscripts | None = None,
) -> str:
    labels = column_labels(matrix, with_run=with_run)
    head = '<th class="task">task</th>' + "".join(f"<th>{_e(label)}</th>" for label in labels)
    body = []
    # Fixture tasks under a header row per benchmark, after every task of no benchmark.
    group: str | None = None
    for task in sorted(matrix.tasks, key=lambda task: (matrix.groups.get(task, ""), task)):
        if matrix.groups.get(task) and matrix.groups[task] != group:
            group = matrix.groups[task]
            body.append(
                f'<tr class="group"><th colspan="{len(labels) + 1}">benchmark {_e(group)}</th></tr>'
            )
        cells = [f'<td class="task">{_e(task)}</td>']
        for index in range(len(labels)):
            cell = matrix.cell(task, index)
            if cell is None:
                cells.append('<td class="missing">not run</td>')
                continue
            behaviour = cell.behaviour_text
            cells.append(
                f'<td class="{cell.kind}">{_e(cell.text)}'
                + (f'<span class="behaviour">{_e(behaviour)}</span>' if behaviour else "")
                + f"{_cell_links(links.get((task, index), ()))}"
                + _transcript_links(task, index, (transcripts or {}).get((task, index), ()))
                + "</td>"
            )
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="matrix"><tr>{head}</tr>{"".join(body)}</table>'


def _series_tables(matrix: TaskMatrix, *, with_run: bool) -> str:
    """Each commit-history task's series beside the original, subjects oldest first."""
    views = series_views(matrix)
    if not views:
        return ""
    labels = column_labels(matrix, with_run=with_run)
    parts = ["<h2>Series beside the original</h2>"]
    for view in views:
        head = "<th>original</th>" + "".join(
            f"<th>{_e(labels[index])}" + (f" #{attempt}" if attempt > 1 else "") + "</th>"
            for index, attempt, _ in view.columns
        )
        cells = [_subjects(view.original)] + [
            _subjects(series) if series is not None else '<span class="missing">no series</span>'
            for _, _, series in view.columns
        ]
        parts.append(
            f'<h3 class="task">{_e(view.task)}</h3><table class="series"><tr>{head}</tr>'
            f"<tr>{''.join(f'<td>{cell}</td>' for cell in cells)}</tr></table>"
        )
    return "".join(parts)


def _subjects(subjects: Sequence[str]) -> str:
    return "<ol>" + "".join(f"<li>{_e(subject)}</li>" for subject in subjects) + "</ol>"


def _cell_links(attempts: Sequence[AttemptLinks]) -> str:
    if not attempts:
        return ""
    numbered = len(attempts) > 1
    anchors = []
    for attempt in attempts:
        suffix = f" {attempt.attempt}" if numbered else ""
        if attempt.patch is not None:
            anchors.append(f'<a href="{_e(attempt.patch)}">patch{suffix}</a>')
        if attempt.logs is not None:
            anchors.append(f'<a href="{_e(attempt.logs)}">logs{suffix}</a>')
    return f'<span class="links">{"".join(anchors)}</span>' if anchors else ""


def _anchor(task: str, column: int, attempt: int) -> str:
    return f"transcript-{column}-{task}-{attempt}"


def _transcript_links(task: str, column: int, found: Sequence[tuple[int, Transcript]]) -> str:
    if not found:
        return ""
    numbered = len(found) > 1
    anchors = "".join(
        f'<a href="#{_e(_anchor(task, column, attempt))}">transcript'
        f"{f' {attempt}' if numbered else ''}</a>"
        for attempt, _ in found
    )
    return f'<span class="links">{anchors}</span>'


def _transcripts_section(
    matrix: TaskMatrix, found: PairTranscripts, *, with_run: bool
) -> list[str]:
    """Each pair's transcript as a collapsed list of steps; a step opens to its text."""
    if not found:
        return []
    labels = column_labels(matrix, with_run=with_run)
    note = (
        f"What each agent did, step by step (texts cut to {TEXT_LIMIT:,} "
        "characters; the whole transcript is transcript.jsonl in the pair's logs)."
    )
    parts = ["<h2>Transcripts</h2>", f'<p class="note">{_e(note)}</p>']
    for task in matrix.tasks:
        for index, label in enumerate(labels):
            for attempt, read in found.get((task, index), ()):
                cell = matrix.cell(task, index)
                outcome = "" if cell is None else f": {cell.text}"
                shown = read.steps[:STEPS_SHOWN]
                more = len(read.steps) - len(shown)
                title = f"{label} on {task}" + (f" (attempt {attempt})" if attempt > 1 else "")
                parts.append(
                    f'<details class="pair" id="{_e(_anchor(task, index, attempt))}">'
                    f"<summary>{_e(title)}{_e(outcome)} ({len(read.steps)} steps)</summary>"
                    f'<ol class="steps">{"".join(_step(step) for step in shown)}</ol>'
                    + (f'<p class="note">{more} more steps in the file.</p>' if more > 0 else "")
                    + (
                        '<p class="note">The file was longer than gitgauge reads; later '
                        "steps are not listed.</p>"
                        if read.truncated
                        else ""
                    )
                    + "</details>"
                )
    return parts


def _step(step: Step) -> str:
    failed = ' class="failed"' if step.is_error else ""
    if step.kind == "message":
        return f'<li><span class="message">{_e(step.text)}</span></li>'
    body = ""
    if step.text and step.text != step.title:
        body += f"<pre>{_e(step.text)}</pre>"
    if step.output:
        body += f"<pre>{_e(step.output)}</pre>"
    if not body:
        return f"<li{failed}>{_e(step.title)}</li>"
    return f"<li{failed}><details><summary>{_e(step.title)}</summary>{body}</details></li>"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _s(count: int) -> str:
    return "" if count == 1 else "s"
