"""Each attempt on the HTML report: links to its patch and logs under `.gitgauge/runs/` by paths
relative to the HTML file (so the page and `.gitgauge/` can move together), and its transcript
as a collapsible list of steps (`<details>` elements: no script), each message, tool call and
result cut to `core.transcript.TEXT_LIMIT`. Every text from a transcript goes through
`html.escape`.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from gitgauge.core.store import Store
from gitgauge.core.transcript import TEXT_LIMIT, TRANSCRIPT_FILE, Step, Transcript
from gitgauge.core.transcript import read as read_transcript
from gitgauge.reporting.attempts import attempts_by_task
from gitgauge.reporting.matrix import TaskMatrix
from gitgauge.reporting.matrix_render import column_labels


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


def cell_links(attempts: Sequence[AttemptLinks]) -> str:
    if not attempts:
        return ""
    numbered = len(attempts) > 1
    anchors = []
    for attempt in attempts:
        suffix = f" {attempt.attempt}" if numbered else ""
        if attempt.patch is not None:
            anchors.append(f'<a href="{escape(attempt.patch)}">patch{suffix}</a>')
        if attempt.logs is not None:
            anchors.append(f'<a href="{escape(attempt.logs)}">logs{suffix}</a>')
    return f'<span class="links">{"".join(anchors)}</span>' if anchors else ""


def _anchor(task: str, column: int, attempt: int) -> str:
    return f"transcript-{column}-{task}-{attempt}"


def transcript_links(task: str, column: int, found: Sequence[tuple[int, Transcript]]) -> str:
    if not found:
        return ""
    numbered = len(found) > 1
    anchors = "".join(
        f'<a href="#{escape(_anchor(task, column, attempt))}">transcript'
        f"{f' {attempt}' if numbered else ''}</a>"
        for attempt, _ in found
    )
    return f'<span class="links">{anchors}</span>'


def transcripts_section(matrix: TaskMatrix, found: PairTranscripts, *, with_run: bool) -> list[str]:
    """Each pair's transcript as a collapsed list of steps; a step opens to its text."""
    if not found:
        return []
    labels = column_labels(matrix, with_run=with_run)
    note = (
        f"What each agent did, step by step (texts cut to {TEXT_LIMIT:,} "
        "characters; the whole transcript is transcript.jsonl in the pair's logs)."
    )
    parts = ["<h2>Transcripts</h2>", f'<p class="note">{escape(note)}</p>']
    for task in matrix.tasks:
        for index, label in enumerate(labels):
            for attempt, read in found.get((task, index), ()):
                cell = matrix.cell(task, index)
                outcome = "" if cell is None else f": {cell.text}"
                shown = read.steps[:STEPS_SHOWN]
                more = len(read.steps) - len(shown)
                title = f"{label} on {task}" + (f" (attempt {attempt})" if attempt > 1 else "")
                parts.append(
                    f'<details class="pair" id="{escape(_anchor(task, index, attempt))}">'
                    f"<summary>{escape(title)}{escape(outcome)} ({len(read.steps)} steps)</summary>"
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
        return f'<li><span class="message">{escape(step.text)}</span></li>'
    body = ""
    if step.text and step.text != step.title:
        body += f"<pre>{escape(step.text)}</pre>"
    if step.output:
        body += f"<pre>{escape(step.output)}</pre>"
    if not body:
        return f"<li{failed}>{escape(step.title)}</li>"
    return f"<li{failed}><details><summary>{escape(step.title)}</summary>{body}</details></li>"
