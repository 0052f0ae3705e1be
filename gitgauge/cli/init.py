"""`gitgauge init`: a working gitgauge.yaml from the project's own files (`gitgauge.init.flow`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gitgauge.ci.workflow import write_workflow
from gitgauge.cli.common import guarded, say
from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.init.flow import InitRequest, run_init

DetectOption = Annotated[
    bool,
    typer.Option(
        "--detect",
        help="Show what detection gives, as a diff against gitgauge.yaml (or the file it would "
        "write); write nothing.",
    ),
]
WriteOption = Annotated[
    bool,
    typer.Option(
        "--write", help="Apply what --detect shows to an existing gitgauge.yaml (implies --detect)."
    ),
]
EnvOption = Annotated[
    bool,
    typer.Option(
        "--env",
        help="First make an environment for the suite from what the project declares "
        "(.gitgauge/env with uv, else venv and pip; npm ci for JavaScript); the config then "
        "uses it, an existing gitgauge.yaml included (the change is shown).",
    ),
]

CiOption = Annotated[
    str | None,
    typer.Option(
        "--ci",
        metavar="PROVIDER",
        help="github: write .github/workflows/gitgauge.yml (`gitgauge ci` on pull requests "
        "that change the harness) and its agent config, and nothing else.",
    ),
]


def init(
    detect: DetectOption = False,
    write: WriteOption = False,
    env: EnvOption = False,
    ci: CiOption = None,
) -> None:
    """Write gitgauge.yaml from what the project's files say (the test runner and command, the
    interpreter, worktree.link, per-test reports, timeouts from a run at HEAD), each choice
    printed with its source, and .gitgauge/.gitignore. An existing gitgauge.yaml is kept:
    --detect shows the change detection proposes, --write applies it."""
    if ci is not None:
        guarded(lambda: _write_ci(ci))
        return
    request = InitRequest(detect=detect or write, write=write, env=env)
    guarded(lambda: run_init(Path.cwd(), request, env=process.clean_env(), say=say))


def _write_ci(provider: str) -> None:
    written = write_workflow(Repository(Path.cwd()).root, provider)
    for path in written.created:
        say(f"created {path}")
    for path in written.kept:
        say(f"kept existing {path}")
    say("next: add the ANTHROPIC_API_KEY secret, commit both files (docs/guide/ci.md)")
