"""The command line: parse options, call one use case, render its outcome, map errors to exit codes.

This package is the only code that imports typer, prints for the user or exits; the core raises
`GitGaugeError`. `common.py` holds the Typer app and what the commands share; one module per
command group defines the commands, listed in `COMMANDS` in the order `gitgauge --help` lists
them. (Not `app.py`: `gitgauge.cli.app` is the Typer app, which would hide a submodule of that
name.)

`main` imports only the module of the command it runs: `gitgauge report` does not load mining or
running, `gitgauge run` not mining, the demo or the exporters, and every command starts in less
time (the suite's hundreds of CLI runs feel it most). `gitgauge --help`, an unknown command and
`gitgauge.cli.app` itself load them all.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from gitgauge.cli import common

if TYPE_CHECKING:
    import typer

COMMANDS: dict[str, tuple[str, str]] = {
    # command: (module in gitgauge.cli, the function or sub-app in it)
    "init": ("init", "init"),
    "doctor": ("doctor", "doctor"),
    "examples": ("doctor", "examples"),
    "mine": ("mine", "mine"),
    "rewrite": ("mine", "rewrite"),
    "import": ("imports", "import_app"),
    "run": ("run", "run_agents"),
    "report": ("report", "report"),
    "compare": ("report", "compare"),
    "ci": ("ci", "ci"),
    "export": ("export", "export"),
    "demo": ("demo", "demo"),
}

_registered: set[str] = set()


def register(names: list[str] | None = None) -> typer.Typer:
    """Add `names` (all commands when None) to the app, in `COMMANDS` order whatever was added
    before; returns the app."""
    import typer

    for name in COMMANDS if names is None else names:
        if name in _registered:
            continue
        module_name, attribute = COMMANDS[name]
        target = getattr(importlib.import_module(f"gitgauge.cli.{module_name}"), attribute)
        if isinstance(target, typer.Typer):
            common.app.add_typer(target, name=name)
        else:
            common.app.command(name)(target)
        _registered.add(name)
    order = list(COMMANDS)
    common.app.registered_commands.sort(key=lambda info: order.index(str(info.name)))
    common.app.registered_groups.sort(key=lambda info: order.index(str(info.name)))
    return common.app


def command_named(args: list[str]) -> str | None:
    """The command `args` run, when it is one of ours: the first word that is not an option
    (the root group's options, `--help` and `--version`, take no value)."""
    for arg in args:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def main() -> None:
    args = sys.argv[1:]
    wanted = command_named(args)
    if wanted is not None:
        register([wanted])
    elif not args or "--help" in args or any(not arg.startswith("-") for arg in args):
        register()  # the command list, or click's "No such command" with its suggestions
    common.main()  # (`--version` alone needs no command)


def __getattr__(name: str) -> Any:
    if name == "app":
        return register()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "app", "command_named", "main", "register"]
