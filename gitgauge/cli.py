"""The command line: parse options, call one use case, render its outcome, map errors to exit codes.

This is the only module that prints for the user or exits; the core raises `GitGaugeError`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer

from gitgauge import __version__, interrupt, process
from gitgauge.config import load_repo_config
from gitgauge.errors import ExitCode, GitGaugeError, UsageError
from gitgauge.git import Commit, Repository
from gitgauge.init import init as init_repository
from gitgauge.lock import exclusive
from gitgauge.mine import MineEvents, MineSummary
from gitgauge.mine import mine as mine_history
from gitgauge.store import Store
from gitgauge.verify import REJECT_REASONS, Verdict
from gitgauge.worktree import remove_stale

app = typer.Typer(
    name="gitgauge",
    help="Mine fail-to-pass tasks from your git history and compare agent setups on them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")


def main() -> None:
    app()


def _say(message: str = "") -> None:
    print(message, flush=True)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _fail(error: GitGaugeError) -> NoReturn:
    print(f"gitgauge: error: {error}", file=sys.stderr, flush=True)
    raise typer.Exit(int(error.exit_code))


def _guarded(action: Callable[[], T], *, resume_hint: str | None = None) -> T:
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


_JOBS_OPTION = typer.Option(
    "--jobs",
    "-j",
    help="How many to run at once (a number, or `auto` for the number of CPUs). Default 1: "
    "test suites must allow it (no fixed ports, no shared paths outside the worktree).",
)
_WAIT_OPTION = typer.Option(
    "--wait", help="Wait for another gitgauge command using .gitgauge/ instead of failing."
)


def _parse_jobs(value: str) -> int:
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
        _say(f"gitgauge {__version__}")
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


@app.command()
def init() -> None:
    """Write gitgauge.yaml and .gitgauge/.gitignore at the repository root (never overwrites)."""

    def action() -> None:
        repo = Repository(Path.cwd())
        outcome = init_repository(repo.root)
        for path in outcome.created:
            _say(f"created {path}")
        for path in outcome.kept:
            _say(f"kept existing {path}")
        if outcome.created and any(p.name == "gitgauge.yaml" for p in outcome.created):
            _say("next: set testCommand in gitgauge.yaml, then run `gitgauge mine`")

    _guarded(action)


@app.command()
def mine(
    last: Annotated[
        int | None,
        typer.Option("--last", "-n", help="How many recent commits to scan (default: mine.last)."),
    ] = None,
    require_body: Annotated[
        bool,
        typer.Option("--require-body", help="Skip candidates whose commit body is title-only."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Judge again candidates an earlier mine already judged."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="List the candidates; verify nothing."),
    ] = False,
    jobs: Annotated[str, _JOBS_OPTION] = "1",
    wait: Annotated[bool, _WAIT_OPTION] = False,
) -> None:
    """Find bug-fix commits, prove each fails before and passes after, save them as tasks."""

    def action() -> MineSummary:
        repo = Repository(Path.cwd())
        config = load_repo_config(repo.root)
        store = Store(repo.root)
        job_count = _parse_jobs(jobs)
        with exclusive(store.root, command="gitgauge mine", wait=wait, on_wait=_warn):
            remove_stale(repo, report=_warn)
            progress = _MineProgress()
            try:
                summary = mine_history(
                    repo,
                    config,
                    store,
                    last=last,
                    require_body=require_body,
                    force=force,
                    dry_run=dry_run,
                    jobs=job_count,
                    warn=_warn,
                    events=progress.events(),
                )
            finally:
                progress.clear()
        _print_mine_summary(summary, store)
        return summary

    _guarded(
        action,
        resume_hint="run `gitgauge mine` again: verified tasks are saved and "
        "judged candidates are remembered",
    )


class _MineProgress:
    """One line per candidate; on a terminal, also a transient "verifying ..." line."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.shown = False

    def events(self) -> MineEvents:
        return MineEvents(on_start=self.start, on_verdict=self.verdict, on_skip=self.skip)

    def start(self, commit: Commit) -> None:
        if self.tty:
            sys.stdout.write(f"\r\033[Kverifying {commit.sha[:8]} {commit.subject[:60]}")
            sys.stdout.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
            self.shown = False

    def verdict(self, verdict: Verdict) -> None:
        self.clear()
        commit = verdict.commit
        if verdict.task is not None:
            note = f" ({verdict.detail})" if verdict.detail else ""
            _say(f"verified  {commit.sha[:8]} {commit.subject}  -> {verdict.task.id}{note}")
        else:
            _say(
                f"rejected  {commit.sha[:8]} {commit.subject}  [{verdict.reason}: {verdict.detail}]"
            )

    def skip(self, commit: Commit, why: str) -> None:
        self.clear()
        _say(f"skipped   {commit.sha[:8]} {commit.subject}  [{why}]")


def _print_mine_summary(summary: MineSummary, store: Store) -> None:
    rejected = sum(summary.rejected.values())
    _say("")
    _say(f"commits scanned:   {summary.scanned}")
    if summary.merges or summary.roots:
        _say(f"  not considered:  {summary.merges} merge commit(s), {summary.roots} root commit(s)")
    _say(f"candidates:        {summary.candidates}")
    if summary.already_mined:
        _say(f"  already mined:   {summary.already_mined}")
    if summary.judged_before:
        _say(f"  judged before:   {summary.judged_before} (--force judges them again)")
    _say(f"  skipped (title-only): {summary.skipped_title_only}")
    _say(
        f"verified:          {len(summary.tasks)} "
        f"(rich: {summary.verified_rich}, title-only: {summary.verified_title_only})"
    )
    _say(f"rejected:          {rejected}")
    for reason in REJECT_REASONS:
        if summary.rejected.get(reason):
            _say(f"  {reason}: {summary.rejected[reason]}")
    if summary.tasks:
        _say(f"tasks saved in {store.tasks_dir}/")


@app.command()
def demo(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Where to build the demo repository (default: a new temporary one)."),
    ] = None,
) -> None:
    """Build the bundled sample repository and run the whole pipeline on it (no network)."""

    def action() -> None:
        import importlib.util
        import tempfile

        from gitgauge.demo import build_demo_repo, write_demo_config

        if importlib.util.find_spec("pytest") is None:
            raise GitGaugeError(
                "the demo's sample project is tested with pytest, which is not installed: "
                "pip install 'gitgauge[demo]' (or pip install pytest)"
            )
        target = directory or Path(tempfile.mkdtemp(prefix="gitgauge-demo-")) / "sample"
        try:
            build_demo_repo(target)
        except FileExistsError as error:
            raise GitGaugeError(str(error)) from None
        _say(f"demo repository: {target}")
        repo = Repository(target)
        init_repository(repo.root)
        write_demo_config(repo.root, python=sys.executable)
        config = load_repo_config(repo.root)
        _say("$ gitgauge mine")
        progress = _MineProgress()
        summary = mine_history(
            repo,
            config,
            Store(repo.root),
            warn=_warn,
            events=progress.events(),
        )
        progress.clear()
        _print_mine_summary(summary, Store(repo.root))

    _guarded(action)
