"""`gitgauge doctor` (would `mine` work here?) and `gitgauge examples` (the sample configs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say
from gitgauge.core import process
from gitgauge.core.errors import ExitCode, UsageError
from gitgauge.doctor import Finding, diagnose
from gitgauge.init import EXAMPLES_DIR, write_examples

DoctorConfigsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--config",
        "-c",
        help="An agent config YAML file to check as `run` checks it (its binary and "
        "credentials; with --probe, one real call); repeat for several.",
    ),
]
ProbeOption = Annotated[
    bool,
    typer.Option(
        "--probe",
        help="Make one short real call to each -c config's agent (a tiny prompt in a throwaway "
        "directory, in run's sandbox) and say whether it worked, what it cost and how long it "
        "took.",
    ),
]


def doctor(configs: DoctorConfigsOption = None, probe: ProbeOption = False) -> None:
    """Check that `gitgauge mine` would work here, and say why not: the config, linked
    directories, the sandbox, the interpreters the suite runs in it, testCommand at HEAD (how
    many tests ran and passed, per-test reports, what mine will spend per candidate, where the
    tests import the project from), the agent CLIs, git; with -c, each agent config as `run`
    checks it (--probe: one short real call to its agent). Exit 0 only when mining (and every
    probed config) would work, 1 otherwise."""

    def show(finding: Finding) -> None:
        for line in finding.lines():
            say(line)

    def action() -> bool:
        if probe and not configs:
            raise UsageError(
                "--probe needs an agent config to call: gitgauge doctor --probe -c CONFIG"
            )
        say("checking what `gitgauge mine` needs (testCommand runs once at HEAD)...")
        diagnosis = diagnose(
            Path.cwd(),
            env=process.clean_env(),
            on_finding=show,
            agent_configs=configs or [],
            probe=probe,
        )
        say("")
        if diagnosis.mine_would_work:
            say("doctor: `gitgauge mine` should work here")
        else:
            failed = diagnosis.failed("mine")
            say(f"doctor: {failed} problem(s) marked FAIL: `gitgauge mine` would not work yet")
        if configs and not diagnosis.agents_work:
            failed = diagnosis.failed("agent")
            say(
                f"doctor: {failed} agent config problem(s) marked FAIL: `gitgauge run` with "
                "them would not work yet"
            )
        return diagnosis.mine_would_work and diagnosis.agents_work

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
