"""`gitgauge export`: the mined tasks as SWE-bench instances or Harbor task folders."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say, warn
from gitgauge.core.git import Repository
from gitgauge.core.store import Store
from gitgauge.exporting.formats import ExportOptions, check_flags
from gitgauge.exporting.harbor import DEFAULT_IMAGE
from gitgauge.exporting.swebench import exportable_tasks, refuse_existing


class ExportFormat(str, Enum):
    """The names of `exporting.formats.FORMATS` (a test checks they are the same)."""

    swebench = "swebench"
    harbor = "harbor"


def export(
    output_format: Annotated[
        ExportFormat,
        typer.Option("--format", help="swebench (JSON lines) or harbor (one folder per task)."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="swebench: the file to write (default: stdout); harbor (required): the folder.",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option("--image", help=f"harbor: the Dockerfile's base image ({DEFAULT_IMAGE})."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace --out when it exists.")] = False,
) -> None:
    """Export the mined tasks for other benchmark tools: SWE-bench instances (SWE-agent,
    mini-swe-agent, OpenHands...) or Harbor task folders (Terminal-Bench 2)."""

    def action() -> None:
        chosen = check_flags(output_format.value, out=out, image=image)
        if out is not None:
            refuse_existing(out, force=force)
        repo = Repository(Path.cwd())
        tasks = exportable_tasks(Store(repo.root).load_tasks(warn=warn), repo, warn=warn)
        options = ExportOptions(out=out, image=image, force=force, warn=warn)
        done = chosen.export(tasks, repo, options)
        if done.stdout is not None:
            say(done.stdout)
        if done.said is not None:
            say(done.said)

    guarded(action)
