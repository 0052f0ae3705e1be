"""Help text as a newcomer reads it at 80 columns: the markup keeps `[ray]`, booleans are flags
(no `<bool>`), no line is wider than the terminal, and each command's options say their own
thing (`compare --kind` is not `report --kind`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

COMMANDS: tuple[str, ...] = ("init", "doctor", "examples", "mine", "rewrite", "run", "report")
COMMANDS += ("compare", "ci")
COMMANDS += ("export",)
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


def test_a_command_loads_only_its_own_module_and_the_command_list_is_whole(
    tmp_path: Path,
) -> None:
    """Start-up: `report` never imports mining or running, `run` not mining, the demo or the
    exporters; `--help` and `gitgauge.cli.app` (which the reference is generated from) still
    list every command, in the order of `gitgauge.cli.COMMANDS`."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from gitgauge.cli import main\n"
        "sys.argv = ['gitgauge', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('gitgauge.'))))\n"
    )

    def loaded(*args: str) -> set[str]:
        result = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return set(result.stdout.splitlines()[-1].split())

    report = loaded("report", "--help")
    assert "gitgauge.cli.report" in report
    assert not {m for m in report if m.startswith(("gitgauge.mining.", "gitgauge.running."))}
    run = loaded("run", "--help")
    assert "gitgauge.running.run" in run
    assert not {"gitgauge.mining.mine", "gitgauge.demo", "gitgauge.cli.export"} & run
    assert "gitgauge.cli" in loaded("--version") and "gitgauge.cli.mine" not in loaded("--version")
    everything = loaded("--help")
    assert {f"gitgauge.cli.{name}" for name in ("mine", "run", "report", "demo")} <= everything

    from gitgauge.cli import COMMANDS as REGISTRY
    from gitgauge.cli import app

    names = [info.name for info in app.registered_commands]
    names += [info.name for info in app.registered_groups]
    assert sorted(names, key=list(REGISTRY).index) == list(REGISTRY)
    assert set(COMMANDS) | {"import"} == set(REGISTRY)
