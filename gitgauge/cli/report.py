"""`gitgauge report` and `gitgauge compare`: what the saved runs say."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from gitgauge import __version__
from gitgauge.cli.common import guarded, say, warn
from gitgauge.core import kinds
from gitgauge.core.errors import GitGaugeError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.store import STATE_DIR, Store, StoredRun, atomic_write_text
from gitgauge.reporting import benchmarks
from gitgauge.reporting.compare import compare as compare_sides
from gitgauge.reporting.compare_markdown import render_markdown as render_comparison_markdown
from gitgauge.reporting.compare_render import render_json as render_comparison_json
from gitgauge.reporting.compare_render import render_text as render_comparison
from gitgauge.reporting.html import pair_links, pair_transcripts, render_html
from gitgauge.reporting.render import NO_RUNS_HINT, render_matrix, render_series
from gitgauge.reporting.render import render as render_report
from gitgauge.reporting.rows import ReportRow, build_matrix
from gitgauge.reporting.rows import build_rows as report_rows


class ReportFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"
    json = "json"


def _kind_option(value: str | None) -> str | None:
    if value is not None and value not in kinds.names():
        raise typer.BadParameter(
            f"{value!r} is not a task kind (one of {', '.join(kinds.names())})"
        )
    return value


KIND_OPTION = typer.Option(
    "--kind",
    help="Only tasks of one kind: fix, merge, rebase, commits, fixture (default: all, one "
    "row per config and kind).",
    callback=_kind_option,
)
COMPARE_KIND_OPTION = typer.Option(
    "--kind",
    help="Compare on tasks of one kind only: fix, merge (needed when the runs hold both: a "
    "paired comparison is over one measure).",
    callback=_kind_option,
)


def _only_kind(runs: list[StoredRun], kind: str | None) -> list[StoredRun]:
    if kind is None:
        return runs
    return [
        StoredRun(run.run_id, run.manifest, [r for r in run.results if r.kind == kind])
        for run in runs
    ]


def by_benchmark(rows: list[ReportRow], *, output_format: str, with_run: bool) -> str:
    """Fixture rows per benchmark and difficulty; the usual table for the other rows (a json
    or csv output holds the groups only)."""
    grouped = benchmarks.render(
        benchmarks.group_rows(rows), output_format=output_format, with_run=with_run
    )
    others = [row for row in rows if not benchmarks.has_fixtures(row)]
    if not others or output_format in ("json", "csv"):
        return grouped
    return render_report(others, output_format=output_format, with_run=with_run) + "\n\n" + grouped


HTML_DEFAULT = f"{STATE_DIR}/report.html"
"""Where `report --html` writes without a FILE: beside the runs its page links to."""


def write_html(store: Store, rows: list[ReportRow], given: str, *, with_run: bool) -> str:
    """The page written to `given` (relative to the working directory; empty: `HTML_DEFAULT` of
    the repository), its links relative to where it is; the path as `wrote` says it."""
    path = Path(given) if given else store.root.parent / HTML_DEFAULT
    matrix = build_matrix(rows)
    page = render_html(
        rows,
        matrix,
        links=pair_links(store, matrix, path),
        version=__version__,
        with_run=with_run,
        transcripts=pair_transcripts(store, matrix),
    )
    atomic_write_text(path, page)
    if given:
        return given
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:  # run in a subdirectory: the page is not under it, say where it is
        return str(path)


class CompareFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


def report(
    all_runs: Annotated[
        bool, typer.Option("--all", help="One row per config of every run (with a RUN column).")
    ] = False,
    output_format: Annotated[
        ReportFormat,
        typer.Option("--format", help="table, markdown (a GitHub table), csv or json."),
    ] = ReportFormat.table,
    tasks: Annotated[
        bool,
        typer.Option("--tasks", help="A per-task matrix: rows tasks, columns configs."),
    ] = False,
    html_file: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="[FILE]",
            help="Write the report as one HTML page (tables, charts, transcripts; links to the "
            f"patches and logs in .gitgauge/runs/) to FILE (default: {HTML_DEFAULT}).",
        ),
    ] = None,
    kind: Annotated[str | None, KIND_OPTION] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="benchmark: fixture tasks' pass rates per benchmark and per difficulty, with "
            "their 95% intervals (the usual rows for other tasks).",
        ),
    ] = None,
) -> None:
    """One row per agent config (and task kind) of its latest run: resolved, errors,
    regressions, cost, time, and the resolve rate with its 95% interval."""

    def action() -> None:
        repo = Repository(Path.cwd())
        store = Store(repo.root)
        runs = _only_kind(store.load_runs(warn=warn), kind)
        rows = report_rows(runs, all_runs=all_runs)
        if html_file is not None:
            if not rows:
                raise GitGaugeError(NO_RUNS_HINT)
            say(f"wrote {write_html(store, rows, html_file, with_run=all_runs)}")
            return
        if not rows:
            if output_format is ReportFormat.json:
                say("[]")
            else:
                say(NO_RUNS_HINT)
            return
        if tasks:
            matrix = build_matrix(rows)
            say(render_matrix(matrix, output_format=output_format.value, with_run=all_runs))
            if output_format in (ReportFormat.table, ReportFormat.markdown):
                series = render_series(matrix, output_format=output_format.value, with_run=all_runs)
                if series:
                    say("")
                    say("Series beside the original (subjects, oldest first):")
                    say("")
                    say(series)
            return
        if by is not None:
            if by != "benchmark":
                raise UsageError(f"--by takes benchmark, got {by!r}")
            say(by_benchmark(rows, output_format=output_format.value, with_run=all_runs))
            return
        say(render_report(rows, output_format=output_format.value, with_run=all_runs))

    guarded(action)


def compare(
    side_a: Annotated[
        str, typer.Argument(metavar="A", help="A config name (its latest run) or RUN:CONFIG.")
    ],
    side_b: Annotated[
        str, typer.Argument(metavar="B", help="The config to compare with A (B - A).")
    ],
    output_format: Annotated[
        CompareFormat,
        typer.Option(
            "--format",
            help="text; markdown (one document for a pull-request comment: the verdict first, "
            "the numbers, the tasks that went either way); or json for scripts.",
        ),
    ] = CompareFormat.text,
    kind: Annotated[str | None, COMPARE_KIND_OPTION] = None,
    links: Annotated[
        str | None,
        typer.Option(
            "--links",
            metavar="URL",
            help="With --format markdown: the URL where this repository's .gitgauge/ is "
            "published (a CI artifact's base URL); each listed task links to its patches at "
            "URL/runs/<run>/logs/<config>/<task>/agent.patch.",
        ),
    ] = None,
) -> None:
    """Did B do better than A? Paired over the tasks both ran, with 95% intervals, a p-value and
    a one-sentence verdict that says when the difference could be chance."""

    def action() -> None:
        if links is not None and output_format is not CompareFormat.markdown:
            raise UsageError("--links is for --format markdown (its task lists link patches)")
        repo = Repository(Path.cwd())
        store = Store(repo.root)
        runs = _only_kind(store.load_runs(warn=warn), kind)
        held = sorted({r.kind for run in runs for r in run.results})
        if kind is None and len(held) > 1:
            # A paired comparison over two kinds of task at once would mix two measures.
            options = " or ".join(f"--kind {name}" for name in held)
            raise UsageError(
                f"the runs hold {' and '.join(held)} tasks: compare one kind at a time with "
                f"{options}"
            )
        comparison = compare_sides(runs, side_a, side_b, runs_dir=store.runs_dir)
        if output_format is CompareFormat.json:
            say(render_comparison_json(comparison))
        elif output_format is CompareFormat.markdown:
            say(render_comparison_markdown(comparison, links=links, store=store).rstrip("\n"))
        else:
            say(render_comparison(comparison))
        if comparison.refusal is not None:
            raise GitGaugeError(
                "no verdict: a side has no scored pair (see above); `compare` exits 1 so a "
                "script does not read the numbers of a broken setup as a result"
            )

    guarded(action)
