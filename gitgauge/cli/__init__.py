"""The command line: parse options, call one use case, render its outcome, map errors to exit codes.

This package is the only code that imports typer, prints for the user or exits; the core raises
`GitGaugeError`. `common.py` holds the Typer app and what the commands share; one module per
command group defines the commands, registered here in the order `gitgauge --help` lists them.
(Not `app.py`: `gitgauge.cli.app` is the Typer app, which would hide a submodule of that name.)
"""

from __future__ import annotations

from gitgauge.cli import demo as _demo
from gitgauge.cli import doctor as _doctor
from gitgauge.cli import export as _export
from gitgauge.cli import imports as _imports
from gitgauge.cli import mine as _mine
from gitgauge.cli import report as _report
from gitgauge.cli import run as _run
from gitgauge.cli.common import app, main

app.command()(_mine.init)
app.command()(_doctor.doctor)
app.command()(_doctor.examples)
app.command()(_mine.mine)
app.command()(_mine.rewrite)
app.add_typer(_imports.import_app)
app.command("run")(_run.run_agents)
app.command()(_report.report)
app.command()(_report.compare)
app.command()(_export.export)
app.command()(_demo.demo)

__all__ = ["app", "main"]
