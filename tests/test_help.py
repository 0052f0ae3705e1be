"""Help text as a newcomer reads it at 80 columns: the markup keeps `[ray]`, booleans are flags
(no `<bool>`), no line is wider than the terminal, and each command's options say their own
thing (`compare --kind` is not `report --kind`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import run_gitgauge

COMMANDS = ("init", "doctor", "examples", "mine", "rewrite", "run", "report", "compare", "export")
COMMANDS += ("demo",)


def help_text(tmp_path: Path, *command: str) -> str:
    env = dict(os.environ, COLUMNS="80", TERM="dumb", NO_COLOR="1")
    result = run_gitgauge(*command, "--help", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_fits_80_columns_and_shows_flags_as_flags(tmp_path: Path, command: str) -> None:
    text = help_text(tmp_path, command)
    assert "<bool>" not in text
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert wide == []


def flat(text: str) -> str:
    """The help with the box drawn around the options and the line breaks dropped."""
    return " ".join(text.replace("│", " ").split())


def test_help_keeps_square_brackets_and_says_each_option_s_own_thing(tmp_path: Path) -> None:
    run = flat(help_text(tmp_path, "run"))
    assert "needs gitgauge[ray]" in run
    assert "--task <str> Run only this task: its id, or a unique start of it" in run
    compare = flat(help_text(tmp_path, "compare"))
    report = flat(help_text(tmp_path, "report"))
    assert "--kind <str> Compare on tasks of one kind only: fix, merge" in compare
    assert "--kind <str> Only tasks of one kind: fix, merge" in report
