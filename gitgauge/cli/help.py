"""How `--help` reads: text as written (no rich markup), paragraphs re-flowed to the terminal,
and flags shown as flags.

Typer renders help with rich markup, so `gitgauge[ray]` lost its `[ray]` as an unknown tag; it
keeps a docstring's line breaks, so text wrapped at 100 columns broke mid-line at 80; and it shows
a `<bool>` type beside every flag. One group class tidies every command it hands out, so a
command added later reads the same without doing anything.
"""

from __future__ import annotations

import re
from typing import Any

from typer.core import TyperCommand, TyperGroup

_TIDY = "_gitgauge_tidy"


def reflow(text: str) -> str:
    """Paragraphs (blank-line separated) joined into one line each: the terminal wraps them."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n\n".join(" ".join(part.split()) for part in paragraphs)


def plain(text: str) -> str:
    """The help text as written, for rich markup: `[` starts no tag."""
    return re.sub(r"(?<!\\)\[", r"\[", text)


def unescape(text: str) -> str:
    """The text `plain` escaped, as a reader sees it (for the generated reference)."""
    return text.replace("\\[", "[")


def _tidy_param(param: Any) -> None:
    if getattr(param, _TIDY, False):
        return
    setattr(param, _TIDY, True)
    if getattr(param, "help", None):
        param.help = plain(reflow(param.help))
    if getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""  # a flag takes no value: no `<bool>` beside it


def _tidy_command(command: Any) -> None:
    if getattr(command, _TIDY, False):
        return
    setattr(command, _TIDY, True)
    if command.help:
        command.help = plain(reflow(command.help))
    if command.short_help:
        command.short_help = plain(reflow(command.short_help))
    for param in command.params:
        _tidy_param(param)


class TidyCommand(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:  # the --help option is made here, after the command's own
            _tidy_param(param)
        return params


class TidyGroup(TyperGroup):
    """The root group: every command it returns is tidied (help text, flags, --help)."""

    def get_params(self, ctx: Any) -> list[Any]:
        _tidy_command(self)
        params = super().get_params(ctx)
        for param in params:
            _tidy_param(param)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, TyperCommand) and not isinstance(command, TidyCommand):
            # Typer builds each command with its own class; this one only adds the tidying.
            command.__class__ = TidyCommand
        if command is not None:
            _tidy_command(command)
        return command
