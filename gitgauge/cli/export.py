"""`gitgauge export`: the mined tasks as SWE-bench instances or Harbor task folders."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say, warn
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.store import Store, atomic_write_text
from gitgauge.exporting.harbor import DEFAULT_IMAGE, write_harbor_tasks
from gitgauge.exporting.swebench import (
    exportable_tasks,
    refuse_existing,
    render_jsonl,
    swebench_rows,
)


class ExportFormat(str, Enum):
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
        if output_format is ExportFormat.harbor and out is None:
            raise UsageError("--format harbor needs --out DIR (the folder to write)")
        if output_format is ExportFormat.swebench and image is not None:
            raise UsageError("--image applies to --format harbor only")
        if out is not None:
            refuse_existing(out, force=force)
        repo = Repository(Path.cwd())
        tasks = exportable_tasks(Store(repo.root).load_tasks(warn=warn), repo, warn=warn)
        if output_format is ExportFormat.swebench:
            text = render_jsonl(swebench_rows(tasks, repo, warn=warn))
            if out is None:
                say(text.rstrip("\n"))
                return
            atomic_write_text(out, text)
            say(f"wrote {len(text.splitlines())} SWE-bench instances to {out}")
            return
        assert out is not None
        config = load_repo_config(repo.root)
        folders = write_harbor_tasks(
            tasks, repo, config, out=out, image=image or DEFAULT_IMAGE, force=force, warn=warn
        )
        say(f"wrote {len(folders)} Harbor tasks to {out}")

    guarded(action)
