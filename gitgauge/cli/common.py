"""The Typer app and what its commands share: the options two commands take, the status line,
and the one way a use case is run (expected errors to one line and an exit code, Ctrl-C and
SIGTERM to exit 130).

The command modules (`mine`, `run`, `report`, `demo`) define the commands; `gitgauge.cli`
registers them on `app` in the order `gitgauge --help` lists them.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Annotated, NoReturn, TypeVar

import typer

from gitgauge import __version__
from gitgauge.cli.help import TidyGroup
from gitgauge.core import interrupt, process
from gitgauge.core.errors import ExitCode, GitGaugeError, UsageError
from gitgauge.core.text import visible

app = typer.Typer(
    cls=TidyGroup,
    name="gitgauge",
    help="Mine fail-to-pass tasks from your git history and compare agent setups on them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")


def main() -> None:
    try:
        app(args=optional_values(sys.argv[1:]))
    except SystemExit as exit_request:
        if exit_request.code == ExitCode.INTERRUPTED:
            # Cleanup is done. Leave now, skipping interpreter shutdown: Python restores the
            # default SIGINT action there, and one more Ctrl-C would end us with -2, not 130.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(ExitCode.INTERRUPTED))
        raise


OPTIONAL_VALUES = {"--resume": "latest", "--html": ""}
"""Options that may stand without their value, and the value they then get: `run --resume`
(the latest run), `report --html` (`""`: the default file, `.gitgauge/report.html`). An option
either always or never takes a value in click."""


def optional_values(args: list[str]) -> list[str]:
    """`args` with the value of each `OPTIONAL_VALUES` option given where it stands alone (last,
    or before another option); nothing after `--` is touched."""
    fixed: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return fixed + args[index:]
        fixed.append(arg)
        if arg in OPTIONAL_VALUES:
            following = args[index + 1] if index + 1 < len(args) else None
            if following is None or following.startswith("-"):
                fixed.append(OPTIONAL_VALUES[arg])
    return fixed


def say(message: str = "") -> None:
    # Every line gitgauge prints may quote an agent, a test run or a commit: no control
    # character of theirs reaches the terminal (core.text).
    print(visible(message), flush=True)


def warn(message: str) -> None:
    print(f"warning: {visible(message)}", file=sys.stderr, flush=True)


def _fail(error: GitGaugeError) -> NoReturn:
    print(f"gitgauge: error: {visible(str(error))}", file=sys.stderr, flush=True)
    raise typer.Exit(int(error.exit_code))


def guarded(action: Callable[[], T], *, resume_hint: str | None = None) -> T:
    """Run a use case; expected errors become one line on stderr and their exit code; Ctrl-C
    and SIGTERM end in exit 130 with a line saying how to continue."""
    interrupt.install()
    try:
        try:
            return action()
        finally:
            # Whatever happened, no child process group outlives gitgauge.
            process.cancel_all()
    except GitGaugeError as error:
        _fail(error)
    except KeyboardInterrupt:
        hint = f"; {resume_hint}" if resume_hint else ""
        print(
            f"gitgauge: interrupted; temporary worktrees were removed{hint}",
            file=sys.stderr,
            flush=True,
        )
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None


JOBS_OPTION = typer.Option(
    "--jobs",
    "-j",
    help="How many to run at once (a number, or `auto` for the number of CPUs). Default 1: "
    "test suites must allow it (no fixed ports, no shared paths outside the worktree).",
)
WAIT_OPTION = typer.Option(
    "--wait", help="Wait for another gitgauge command using .gitgauge/ instead of failing."
)
JobsOption = Annotated[str, JOBS_OPTION]
"""`--jobs` / `-j`, as the commands that run work in parallel take it (`parse_jobs` reads it)."""
WaitOption = Annotated[bool, WAIT_OPTION]
"""`--wait`, as every command that takes the `.gitgauge/` lock takes it."""
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="With --executor ray: the cluster's host:port (default: run.ray.address, "
        "else RAY_ADDRESS, else a local Ray instance).",
    ),
]
"""`--ray-address`, as the commands with a ray `--executor` (`run`, `mine`) take it."""


def parse_jobs(value: str) -> int:
    if value.strip().lower() == "auto":
        return os.cpu_count() or 1
    try:
        jobs = int(value)
    except ValueError:
        raise UsageError(f"--jobs must be a positive number or `auto`, got {value!r}") from None
    if jobs <= 0:
        raise UsageError(f"--jobs must be a positive number or `auto`, got {value!r}")
    return jobs


def _version_callback(value: bool) -> None:
    if value:
        say(f"gitgauge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """gitgauge: did this change to our agent setup actually help, on our code?"""


class StatusLine:
    """A transient line at the bottom of a terminal ("[2/7] verifying ...", "[3/12] running
    ..."), rewritten in place and cleared before any real output. When stdout is not a terminal
    (a file, a CI log) the finished items' own lines are the progress, and while nothing has
    been printed for `HEARTBEAT_SECONDS` the status is printed as a line of its own with how long
    its item has run (`(still at it, 1 min 05 s)`), so a long agent run or suite still shows it
    is alive. Workers of `-j` update it from their threads, hence the lock."""

    HEARTBEAT_SECONDS = 10.0

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        # GITGAUGE_HEARTBEAT_SECONDS: a shorter beat for tests of it.
        self.beat_seconds = float(os.environ.get("GITGAUGE_HEARTBEAT_SECONDS", "0") or 0) or (
            self.HEARTBEAT_SECONDS
        )
        self.shown = False
        self.lock = threading.Lock()
        self.text: str | None = None
        self.quiet_since = time.monotonic()
        self.shown_since = time.monotonic()
        """When the item the status names started (its `show`)."""
        self._heartbeat: threading.Thread | None = None

    def show(self, text: str) -> None:
        text = visible(text)
        if self.tty:
            with self.lock:
                sys.stdout.write(f"\r\033[K{text}")
                sys.stdout.flush()
                self.shown = True
            return
        with self.lock:
            self.text = text
            self.shown_since = time.monotonic()
            if self._heartbeat is None:
                self._heartbeat = threading.Thread(
                    target=self._beat, name="gitgauge-progress", daemon=True
                )
                self._heartbeat.start()

    def _beat(self) -> None:
        while True:
            time.sleep(min(1.0, self.beat_seconds))
            with self.lock:
                now = time.monotonic()
                if self.text is not None and now - self.quiet_since >= self.beat_seconds:
                    running = elapsed(now - self.shown_since)
                    print(f"{self.text} (still at it, {running})", flush=True)
                    self.quiet_since = now

    def clear(self) -> None:
        with self.lock:
            self.quiet_since = time.monotonic()
            self.text = None
            if self.shown:
                sys.stdout.write("\r\033[K")
                sys.stdout.flush()
                self.shown = False


def elapsed(seconds: float) -> str:
    """`7 s`, `1 min 05 s`, `2 h 03 min`: how long an item has run, as the heartbeat says it."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
