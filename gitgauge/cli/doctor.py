"""`gitgauge doctor` (would `mine` work here?) and `gitgauge examples` (the sample configs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say
from gitgauge.core import process
from gitgauge.core.errors import ExitCode
from gitgauge.doctor import Finding, diagnose
from gitgauge.init import EXAMPLES_DIR, write_examples


def doctor() -> None:
    """Check that `gitgauge mine` would work here, and say why not: the config, linked
    directories, the sandbox, testCommand at HEAD (how many tests ran and passed, per-test
    reports, where the tests import the project from), the agent CLIs, git. Exit 0 only when
    mining would work, 1 otherwise."""

    def show(finding: Finding) -> None:
        for line in finding.lines():
            say(line)

    def action() -> bool:
        say("checking what `gitgauge mine` needs (testCommand runs once at HEAD)...")
        diagnosis = diagnose(Path.cwd(), env=process.clean_env(), on_finding=show)
        failed = sum(1 for finding in diagnosis.findings if finding.status == "FAIL")
        say("")
        if diagnosis.mine_would_work:
            say("doctor: `gitgauge mine` should work here")
        else:
            say(f"doctor: {failed} problem(s) marked FAIL: `gitgauge mine` would not work yet")
        return diagnosis.mine_would_work

    if not guarded(action):
        raise typer.Exit(int(ExitCode.ERROR))


def examples(
    directory: Annotated[
        Path | None,
        typer.Argument(metavar="DIR", help=f"Where to write them (default: ./{EXAMPLES_DIR})."),
    ] = None,
) -> None:
    """Write the sample agent configs (gold, noop, claude-sonnet, codex, a script, and the
    CLAUDE.md comparison of harness/) to DIR, never overwriting a file."""

    def action() -> None:
        target = directory or Path(EXAMPLES_DIR)
        outcome = write_examples(target)
        for path in outcome.created:
            say(f"created {path}")
        for path in outcome.kept:
            say(f"kept existing {path}")
        say(
            f"next: gitgauge run -c {target / 'gold.yaml'} -c {target / 'noop.yaml'} "
            "(or -c gold -c noop, which need no file)"
        )

    guarded(action)
