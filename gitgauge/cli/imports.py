"""`gitgauge import gitbench PATH`: a fixture pack as tasks (a module of its own: `import` is
a keyword, and more pack formats may come)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import JOBS_OPTION, WAIT_OPTION, guarded, parse_jobs, say, warn
from gitgauge.core.config import load_repo_config
from gitgauge.core.git import Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.store import Store
from gitgauge.core.text import plural
from gitgauge.core.worktree import remove_stale
from gitgauge.kinds.fixture.gitbench import (
    BrokenFixtures,
    ImportOutcome,
    SkippedFixtures,
    import_pack,
)

import_app = typer.Typer(
    name="import",
    help="Import tasks from a benchmark's own format (gitbench: GitBench's YAML fixtures).",
    no_args_is_help=True,
)


@import_app.command("gitbench")
def gitbench(
    path: Annotated[
        Path,
        typer.Argument(
            help="A GitBench pack's root, its fixtures/, one benchmark folder or one file."
        ),
    ],
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="agent (default: the agent works in the fixture's repository) or text "
            "(GitBench's protocol: the context in the prompt, the final message is the "
            "answer); `run --mode` overrides it per run.",
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also run gold and noop in every mode; report fixtures that fail their own "
            "gold (exit 1).",
        ),
    ] = False,
    jobs: Annotated[str, JOBS_OPTION] = "1",
    wait: Annotated[bool, WAIT_OPTION] = False,
) -> None:
    """Import GitBench-format git-skill fixtures as tasks of kind fixture."""

    def action() -> None:
        repo = Repository(Path.cwd())
        config = load_repo_config(repo.root)
        store = Store(repo.root)
        job_count = parse_jobs(jobs)
        with exclusive(store.root, command="gitgauge import", wait=wait, on_wait=warn):
            remove_stale(repo, report=warn)
            outcome = import_pack(
                repo,
                config,
                store,
                path,
                mode=mode,
                check=check,
                jobs=job_count,
                warn=warn,
                on_change=say,
            )
        for line in summary(outcome):
            say(line)
        refusal = _refusal(outcome)
        if refusal is not None:
            raise refusal

    guarded(action)


def _refusal(outcome: ImportOutcome) -> BrokenFixtures | SkippedFixtures | None:
    """Why the import exits 1 once the rest is saved: fixtures failing their own gold, fixtures
    skipped as unreadable."""
    skipped = ""
    if outcome.skipped:
        where = ", ".join(
            f"{benchmark} {count.skipped}"
            for benchmark, count in outcome.counts.items()
            if count.skipped
        )
        skipped = f"{plural(outcome.skipped, 'fixture')} skipped ({where}; each named above)"
    if outcome.broken:
        also = f"; {skipped}" if skipped else ""
        broken = len({b.task for b in outcome.broken})
        fail = "fails its own gold (listed above): fix it, or delete its task file"
        if broken != 1:
            fail = "fail their own gold (listed above): fix them, or delete their task files"
        return BrokenFixtures(f"{plural(broken, 'fixture')} {fail}{also}")
    if skipped:
        them = "it" if outcome.skipped == 1 else "them"
        return SkippedFixtures(
            f"{skipped}: fix {them} or leave {them} out of the pack; the rest were imported"
        )
    return None


def summary(outcome: ImportOutcome) -> list[str]:
    """What an import says at its end: the checks, then the count per benchmark."""
    lines: list[str] = []
    flagged = outcome.non_discriminating
    lines.append(
        f"{len(flagged)} nonDiscriminating (noop passes them: their assertions hold on the "
        f"untouched repository){': ' + ', '.join(flagged) if flagged else ''}"
    )
    if outcome.checked:
        for mode, ran in sorted(outcome.gold_runs.items()):
            failing = sum(1 for b in outcome.broken if b.mode == mode)
            unscored = sum(1 for u in outcome.unscored if u.endswith(f"({mode})"))
            scored = ran - unscored
            more = f", {unscored} unscored" if unscored else ""
            lines.append(f"gold, {mode} mode: {scored - failing}/{scored} scored pass{more}")
        for broken in outcome.broken:
            lines.append(f"  broken: {broken.task} ({broken.mode}): {broken.why}")
        if outcome.unscored:
            lines.append(f"  unscored (no LLM judge): {', '.join(outcome.unscored)}")
        for mode, passing in sorted(outcome.noop_passes.items()):
            lines.append(f"noop, {mode} mode: passes {len(passing)}: {', '.join(passing)}")
    lines.append(f"imported {plural(outcome.imported, 'fixture')}:")
    for benchmark, count in outcome.counts.items():
        parts = [f"{count.new} new", f"{count.changed} changed", f"{count.unchanged} unchanged"]
        if count.skipped:
            parts.append(f"{count.skipped} skipped")
        lines.append(f"  {benchmark}: {count.imported} ({', '.join(parts)})")
    return lines
