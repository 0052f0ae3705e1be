"""`gitgauge ci`: the pull request's harness change measured and posted (`gitgauge.ci.flow`)."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.ci.flow import CiEvents, CiRequest, gate_outcome, run_check
from gitgauge.ci.verdict import Gate
from gitgauge.cli.common import JobsOption, WaitOption, guarded, parse_jobs, say, warn
from gitgauge.cli.run import MaxCostOption, RepeatOption, SandboxOption
from gitgauge.reporting.rows import describe_pair
from gitgauge.running.request import RunRequest


class FailIf(str, Enum):
    worse = "worse"
    not_better = "not-better"


ConfigOption = Annotated[
    Path,
    typer.Option(
        "--config",
        "-c",
        help="The agent config both sides share (its harnessFiles say which files to "
        "compare; default CLAUDE.md, AGENTS.md, .claude/).",
    ),
]
BaseOption = Annotated[
    str | None,
    typer.Option(
        "--base",
        help="The ref without the change (default: the pull_request event's base sha, "
        "else origin/$GITHUB_BASE_REF).",
    ),
]
HeadOption = Annotated[
    str | None,
    typer.Option(
        "--head", help="The ref with the change (default: the event's head sha, else $GITHUB_SHA)."
    ),
]
PullOption = Annotated[
    int | None,
    typer.Option("--pr", help="The pull request to comment on (default: the event's)."),
]
TasksOption = Annotated[
    int | None,
    typer.Option(
        "--tasks",
        metavar="N",
        help="Run a fixed, seeded sample of N tasks (the same on both sides and every rerun; "
        "default: every task of the base's history).",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the comment instead of posting it.")
]
FailIfOption = Annotated[
    FailIf | None,
    typer.Option(
        "--fail-if",
        help="worse: exit 4 when the head's resolve rate is worse (the difference's 95% upper "
        "bound below 0); not-better: unless it is shown better.",
    ),
]
MinRateOption = Annotated[
    float | None,
    typer.Option(
        "--min-rate",
        metavar="RATE",
        help="Exit 4 when the head's resolve rate is below RATE (0 to 1).",
    ),
]
AllowForksOption = Annotated[
    bool,
    typer.Option(
        "--allow-forks",
        help="Run a pull request from a fork too (its harness files steer an agent that holds "
        "your API key; refused by default, exit 5).",
    ),
]
LinksOption = Annotated[
    str | None,
    typer.Option(
        "--links",
        metavar="URL",
        help="Where the job publishes .gitgauge/ (an artifact's URL): the comment links each "
        "listed task to its patches there.",
    ),
]


def ci(
    config: ConfigOption,
    base: BaseOption = None,
    head: HeadOption = None,
    pull_request: PullOption = None,
    tasks: TasksOption = None,
    repeat: RepeatOption = 1,
    max_cost: MaxCostOption = None,
    jobs: JobsOption = "1",
    sandbox: SandboxOption = None,
    dry_run: DryRunOption = False,
    fail_if: FailIfOption = None,
    min_rate: MinRateOption = None,
    allow_forks: AllowForksOption = False,
    links: LinksOption = None,
    wait: WaitOption = False,
) -> None:
    """Compare the base's harness files (CLAUDE.md, AGENTS.md, .claude/) with the pull
    request's on the repository's own tasks, and post the verdict as one comment."""

    def action() -> None:
        request = CiRequest(
            config=config,
            base=base,
            head=head,
            pull_request=pull_request,
            tasks=tasks,
            run=RunRequest(
                repeat=repeat,
                max_cost=max_cost,
                jobs=parse_jobs(jobs),
                sandbox=sandbox,
                wait=wait,
            ),
            dry_run=dry_run,
            allow_forks=allow_forks,
            links=links,
            gate=Gate(fail_if=None if fail_if is None else fail_if.value, min_rate=min_rate),
        )
        events = CiEvents(say=say, warn=warn, on_result=lambda r: say(describe_pair(r)))
        outcome = run_check(request, os.environ, Path.cwd(), events)
        if outcome.body is not None:
            if outcome.posted is None:
                say("")
                say(outcome.body.rstrip("\n"))
            else:
                say(f"comment {outcome.posted}")
        gate_outcome(outcome)

    guarded(action)
