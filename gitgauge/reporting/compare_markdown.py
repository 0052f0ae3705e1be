"""`gitgauge compare --format markdown`: one Markdown document a reviewer can act on, for a
pull-request comment (`gitgauge ci` posts it) or a file.

It words the `Comparison` that `reporting.compare` computed (the numbers of `--format text` and
`--format json`, nothing computed again): the verdict first, in one line; the two sides' rates
with their intervals and the paired difference with its interval and test; errors, regressions,
cost, time and diff; the tasks that went one way or the other, each with links to its patches
when the CI publishes `.gitgauge/` at a URL; the behaviour headline, the warnings and how many
tasks a verdict would need. It never holds a transcript, an error message the agent's output
fills, or an environment value (the harness line names variables, never their values).

Every name that comes from the user's records (task ids, config names, run ids) is a code span,
and every sentence that quotes one (warnings, the harness line, a refusal) is escaped, so a
name with `|`, `*`, backticks, `<` or `@` cannot break a table, inject HTML or a link, or
mention a GitHub user.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Callable, Sequence

from gitgauge.core.errors import UsageError
from gitgauge.core.records import RunResult
from gitgauge.core.store import Store
from gitgauge.core.text import plural, visible
from gitgauge.reporting.attempts import attempts_by_task, outcomes, status_count
from gitgauge.reporting.compare import Comparison, Side
from gitgauge.reporting.compare_render import (
    attempts_note,
    behaviour_headline,
    disagreement,
    format_p,
    mean_difference_text,
    mean_text,
    points,
    power_line,
    resolved_count,
)
from gitgauge.reporting.formatting import format_rate
from gitgauge.reporting.intervals import task_fractions
from gitgauge.reporting.paired import PairedComparison, verdict_sentence

LISTED = 30
"""Tasks one list of the document names (the rest are counted: a comment stays readable)."""

LISTS_SIZE = 40_000
"""Characters the task lists may take together (a GitHub comment holds 65,536; rows with
many attempts' links are long): the rows past it are counted, not listed."""

PATCH_FILE = "agent.patch"

_TEXT_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_LINE_START = re.compile(r"^(?:[#+=-]|\d+(?=[.)]))")


def render_markdown(
    comparison: Comparison, *, links: str | None = None, store: Store | None = None
) -> str:
    """The comparison as Markdown. With `links` (the URL at which the repository's `.gitgauge/`
    folder is published) and `store` (where to see which patches exist), every listed task links
    to its attempts' patches at `links` + `/runs/<run>/logs/<config>/<task>/agent.patch`, the
    paths `report --html` links from `.gitgauge/report.html`."""
    if links is not None and store is None:
        raise ValueError("links need the store the patches are in")
    patch_url = _patch_urls(link_base(links), store) if links is not None and store else None
    c = comparison
    lines = [verdict_line(c), "", *_table(c), "", *_about(c)]
    if c.warnings:
        lines += [
            "",
            "**Warnings**",
            "",
            *(f"- {text(warning, line_start=True)}" for warning in c.warnings),
        ]
    lines += _task_lists(c, patch_url)
    if c.behaviour is not None:
        lines += ["", text(behaviour_headline(c.behaviour))]
    closing = (
        [] if c.refusal else [disagreement(c.paired), power_line(c.power) if c.power else None]
    )
    for line in closing:
        if line:  # each its own paragraph
            lines += ["", text(line)]
    return "\n".join(lines) + "\n"


def verdict_line(comparison: Comparison) -> str:
    """`**Verdict: better.** `skills` resolved 8 more of 30 tasks than `base`; ...`: the
    verdict sentence of `compare`, its names as code spans, after one word a reviewer can act
    on (better, worse, not shown, or no verdict)."""
    c = comparison
    if c.refusal is not None:
        return f"**No verdict:** {text(c.refusal.removeprefix('No verdict: '))}"
    paired = c.paired
    estimate = paired.difference.estimate or 0.0
    if paired.unlikely_chance:
        word = "better" if estimate > 0 else "worse"
    else:
        word = "not shown"
    sentence = verdict_sentence(paired, code(c.name_a), code(c.name_b), len(c.tasks))
    return f"**Verdict: {word}.** {sentence}"


def _table(c: Comparison) -> list[str]:
    paired = c.paired
    level = f"{paired.confidence * 100:g}% CI"
    rows = [
        [f"A: {code(c.name_a)}", f"B: {code(c.name_b)}", "B − A"],
        ["---", "---", "---"],
        [
            "resolved" + (" attempts" if paired.repeated else ""),
            f"{resolved_count(c.a, c.tasks)}/{c.attempts_a}",
            f"{resolved_count(c.b, c.tasks)}/{c.attempts_b}",
            "",
        ],
        [
            f"resolve rate [{level}]",
            format_rate(c.rate_a),
            format_rate(c.rate_b),
            _points_text(paired, level),
        ],
        ["errors (count as unresolved)", str(c.errors_a), str(c.errors_b), ""],
        ["regressions (base suite broke)", _regressed(c.a, c.tasks), _regressed(c.b, c.tasks), ""],
    ]
    for mean in c.means:
        difference, note = mean_difference_text(mean, level)
        rows.append(
            [
                f"avg {mean.metric}",
                mean_text(mean, mean.paired.mean_a),
                mean_text(mean, mean.paired.mean_b),
                f"{difference} ({note})",
            ]
        )
    if c.solved is not None:
        rows.append(
            [
                f"judge SOLVED ({plural(len(c.solved.tasks), 'task')} judged for both)",
                format_rate(c.solved.rate_a),
                format_rate(c.solved.rate_b),
                _points_text(c.solved.paired, level),
            ]
        )
    rows[0].insert(0, "")
    rows[1].insert(0, "---")
    # Every `|` of a cell escaped, in its code spans too (GitHub reads `\\|` there as `|`).
    return ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]


def _points_text(paired: PairedComparison, level: str) -> str:
    interval = paired.difference
    return (
        f"{points(interval.estimate or 0.0)} points [{level} {points(interval.low)}, "
        f"{points(interval.high)}], {paired.test}, {format_p(paired)}"
    )


def _regressed(side: Side, tasks: Sequence[str]) -> str:
    """Attempts on the compared tasks whose base suite broke; `-` when none has a known status."""
    wanted = set(tasks)
    known = [r.regressed for r in side.results if r.task in wanted and r.regressed is not None]
    return str(sum(known)) if known else "-"


def _about(c: Comparison) -> list[str]:
    """Which runs, how many tasks, the harness line and the paired counts."""
    paired = c.paired
    attempts = f" ({attempts_note(c)})" if paired.repeated else ", one attempt each"
    lines = [
        f"A: {code(c.name_a)} (run {code(c.a.run.run_id)}), B: {code(c.name_b)} (run "
        f"{code(c.b.run.run_id)}); compared on the {plural(len(c.tasks), 'task')} both "
        f"ran{attempts}.",
    ]
    if c.harness is not None:
        lines += ["", f"Harness B vs A: {text(c.harness)}"]
    if paired.repeated:
        counts = (
            f"Tasks resolved more often by A: {paired.only_a}, by B: {paired.only_b}, equally "
            f"often: {paired.both}, by neither: {paired.neither}."
        )
    else:
        counts = (
            f"Tasks resolved by both: {paired.both}, only A: {paired.only_a}, only B: "
            f"{paired.only_b}, neither: {paired.neither}."
        )
    return [*lines, "", counts]


PatchUrls = Callable[[Side, RunResult], str | None]


def _task_lists(c: Comparison, patch_url: PatchUrls | None) -> list[str]:
    """The tasks that went B's way, those that went A's, and those whose regressions differ."""
    by_task_a, by_task_b = attempts_by_task(c.a.results), attempts_by_task(c.b.results)
    fractions_a = task_fractions([outcomes(by_task_a[task]) for task in c.tasks])
    fractions_b = task_fractions([outcomes(by_task_b[task]) for task in c.tasks])
    more = "more often " if c.paired.repeated else ""
    only = "" if c.paired.repeated else "only "
    lists = [
        (
            f"Resolved {more}by B {only}({code(c.name_b)})",
            [t for t, a, b in zip(c.tasks, fractions_a, fractions_b, strict=True) if b > a],
        ),
        (
            f"Resolved {more}by A {only}({code(c.name_a)})",
            [t for t, a, b in zip(c.tasks, fractions_a, fractions_b, strict=True) if a > b],
        ),
        (
            "Regressed on one side more than on the other (the base suite broke after the agent)",
            [
                task
                for task in c.tasks
                if _regressions(by_task_a[task]) != _regressions(by_task_b[task])
            ],
        ),
    ]
    lines: list[str] = []
    left = LISTS_SIZE
    for title, tasks in lists:
        if not tasks:
            continue
        lines += ["", f"**{title}: {plural(len(tasks), 'task')}**", ""]
        lines += [
            f"| task | A: {code(c.name_a, cell=True)} | B: {code(c.name_b, cell=True)} |",
            "| --- | --- | --- |",
        ]
        shown = 0
        for task in tasks[:LISTED]:
            cells = [
                _outcome(side, by_task[task], patch_url)
                for side, by_task in ((c.a, by_task_a), (c.b, by_task_b))
            ]
            row = f"| {code(task, cell=True)} | {cells[0]} | {cells[1]} |"
            left -= len(row) + 1
            if left < 0:
                break
            lines.append(row)
            shown += 1
        if len(tasks) > shown:
            lines += ["", f"and {len(tasks) - shown} more (`gitgauge report --tasks` lists all)"]
    return lines


def _regressions(attempts: Sequence[RunResult]) -> int:
    return sum(1 for attempt in attempts if attempt.regressed)


def _outcome(side: Side, attempts: Sequence[RunResult], patch_url: PatchUrls | None) -> str:
    """`resolved`, `unresolved, regressed`, `error (setup)`; with repeats `2/3 resolved, 1
    error`; then the attempts' patch links."""
    if len(attempts) == 1:
        attempt = attempts[0]
        said: str = attempt.status
        if attempt.status == "error" and attempt.errorKind:
            said += f" ({attempt.errorKind})"
        parts = [said + (", regressed" if attempt.regressed else "")]
    else:
        resolved = sum(outcomes(attempts))
        parts = [f"{resolved}/{len(attempts)} resolved"]
        errors = status_count(attempts, "error")
        if errors:
            parts.append(plural(errors, "error"))
        if _regressions(attempts):
            parts.append(f"{_regressions(attempts)} regressed")
    if patch_url is not None:
        numbered = len(attempts) > 1
        for attempt in attempts:
            url = patch_url(side, attempt)
            if url is not None:
                parts.append(f"[patch{f' {attempt.attempt}' if numbered else ''}]({url})")
    return ", ".join(parts)


def link_base(url: str) -> str:
    """The published `.gitgauge/` URL, checked (http or https, nothing that ends a Markdown
    link) and without its trailing slash; UsageError otherwise."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"--links takes an http(s) URL where .gitgauge/ is published, got {url!r}")
    if re.search(r"[\s<>()|\"'`\\\x00-\x1f\x7f]", url):
        raise UsageError(
            f"--links {url!r}: a URL with spaces, quotes, brackets or backslashes would break "
            "the Markdown links (percent-encode them)"
        )
    return url.rstrip("/")


def _patch_urls(base: str, store: Store) -> PatchUrls:
    def url(side: Side, attempt: RunResult) -> str | None:
        folder = store.log_dir(side.run.run_id, side.config, attempt.task, attempt.attempt)
        patch = folder / PATCH_FILE
        if not patch.is_file():  # a setup error has no patch
            return None
        relative = patch.relative_to(store.root).as_posix()
        # The path's own bytes, percent-encoded, as the HTML page links it.
        return f"{base}/{urllib.parse.quote(os.fsencode(relative))}"

    return url


def code(name: str, *, cell: bool = False) -> str:
    """`name` as a Markdown code span: no emphasis, link, HTML or mention inside it; a fence
    longer than any run of backticks in it; in a table `cell`, its `|` escaped (GitHub reads
    `\\|` in a cell's code span as `|`). Control characters are written out (`core.text`)."""
    shown = " ".join(visible(name).split()) or " "
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {shown} " if shown.startswith("`") or shown.endswith("`") else shown
    if cell:
        padded = padded.replace("|", "\\|")
    return f"{fence}{padded}{fence}"


def text(sentence: str, *, line_start: bool = False) -> str:
    """A sentence that may quote a name, as Markdown text: punctuation Markdown reads
    backslash-escaped, `<`, `>` and `&` as entities (no HTML), `@` kept from mentioning anyone,
    on one line; at the `line_start`, no heading or list item either. The table's own cells
    escape `|` on top."""
    one_line = " ".join(visible(sentence).split())
    escaped = one_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _TEXT_SPECIAL.sub(r"\\\1", escaped)
    # A heading, list item or quote where the text starts a line (a warning's list item).
    if line_start:
        escaped = _LINE_START.sub(_escape_line_start, escaped, count=1)
    # A zero-width space after `@`: GitHub mentions `@name` wherever the text holds it.
    return escaped.replace("@", "@&#8203;")


def _escape_line_start(match: re.Match[str]) -> str:
    """`\\#`, `\\-`, `1\\.`: no heading, list item or numbered item where a line starts."""
    found = match.group(0)
    return found + "\\" if found[0].isdigit() else "\\" + found
