"""The command line: parse options, call one use case, render its outcome, map errors to exit codes.

This is the only module that prints for the user or exits; the core raises `GitGaugeError`.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer

from gitgauge import __version__
from gitgauge.core import interrupt, process
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import ExitCode, GitGaugeError, UsageError
from gitgauge.core.git import Commit, Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RepoConfig, RunResult, Task
from gitgauge.core.store import Store, StoredRun, atomic_write_text
from gitgauge.core.worktree import remove_stale
from gitgauge.init import init as init_repository
from gitgauge.mining.mine import MineEvents, MineSummary
from gitgauge.mining.mine import mine as mine_history
from gitgauge.mining.rewrite import DEFAULT_MODEL as DEFAULT_REWRITE_MODEL
from gitgauge.mining.rewrite import Rewriter, RewriteTotals, rewrite_tasks
from gitgauge.mining.verify import REJECT_REASONS, Verdict
from gitgauge.reporting.compare import compare as compare_sides
from gitgauge.reporting.compare import render_json as render_comparison_json
from gitgauge.reporting.compare import render_text as render_comparison
from gitgauge.reporting.html import pair_links, render_html
from gitgauge.reporting.report import NO_RUNS_HINT, build_matrix, describe_pair, render_matrix
from gitgauge.reporting.report import build_rows as report_rows
from gitgauge.reporting.report import render as render_report
from gitgauge.running.run import PlannedConfig, ResumeFrom, RunPlan, plan_resume, plan_run
from gitgauge.running.run import execute as execute_run

app = typer.Typer(
    name="gitgauge",
    help="Mine fail-to-pass tasks from your git history and compare agent setups on them.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")


def main() -> None:
    try:
        app(args=_optional_resume_value(sys.argv[1:]))
    except SystemExit as exit_request:
        if exit_request.code == ExitCode.INTERRUPTED:
            # Cleanup is done. Leave now, skipping interpreter shutdown: Python restores the
            # default SIGINT action there, and one more Ctrl-C would end us with -2, not 130.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(ExitCode.INTERRUPTED))
        raise


def _optional_resume_value(args: list[str]) -> list[str]:
    """`run --resume` may stand without a run id (the latest run): give it the value `latest`,
    since an option either always or never takes a value in click."""
    fixed = list(args)
    for index, arg in enumerate(fixed):
        if arg == "--":
            break
        if arg == "--resume":
            following = fixed[index + 1] if index + 1 < len(fixed) else None
            if following is None or following.startswith("-"):
                fixed.insert(index + 1, "latest")
            break
    return fixed


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
    rewrite_prompts: Annotated[
        bool,
        typer.Option(
            "--rewrite-prompts",
            help="Ask a model for a spoiler-free prompt for each new task (trusted repos only).",
        ),
    ] = False,
    rewrite_model: Annotated[str | None, _REWRITE_MODEL_OPTION] = None,
) -> None:
    """Find bug-fix commits, prove each fails before and passes after, save them as tasks."""

    def action() -> MineSummary:
        repo = Repository(Path.cwd())
        config = load_repo_config(repo.root)
        store = Store(repo.root)
        job_count = _parse_jobs(jobs)
        if rewrite_model is not None and not rewrite_prompts:
            raise UsageError("--rewrite-model only applies with --rewrite-prompts")
        # Chosen before any verification: a missing backend is one error, not a warning per task.
        rewriter = (
            Rewriter.create(
                repo, model=rewrite_model or DEFAULT_REWRITE_MODEL, warn=_warn, env=os.environ
            )
            if rewrite_prompts
            else None
        )
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
                    prepare_task=rewriter.prepare_task if rewriter else None,
                )
            finally:
                progress.clear()
        _print_mine_summary(summary, store)
        if rewriter is not None:
            _print_rewrite_totals(rewriter.totals, rewriter.describe())
        return summary

    _guarded(
        action,
        resume_hint="run `gitgauge mine` again: verified tasks are saved and "
        "judged candidates are remembered",
    )


_REWRITE_MODEL_OPTION = typer.Option(
    "--rewrite-model",
    help=f"Model for prompt rewriting: haiku, sonnet, opus or a model id "
    f"(default: {DEFAULT_REWRITE_MODEL}).",
)


def _print_rewrite_totals(totals: RewriteTotals, how: str) -> None:
    cost = "not reported" if totals.cost_usd is None else f"${totals.cost_usd:.4f}"
    _say(f"prompts rewritten: {totals.rewritten} (original kept: {totals.kept}), by {how}")
    _say(f"  rewrite tokens:  {totals.input_tokens} in, {totals.output_tokens} out; cost: {cost}")


@app.command()
def rewrite(
    task: Annotated[
        str | None, typer.Option("--task", help="Rewrite only this task id (default: every task).")
    ] = None,
    rewrite_model: Annotated[str | None, _REWRITE_MODEL_OPTION] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Rewrite again tasks whose prompt was rewritten.")
    ] = False,
    wait: Annotated[bool, _WAIT_OPTION] = False,
) -> None:
    """Rewrite the prompts of tasks already mined into spoiler-free ones (trusted repos only)."""

    def action() -> None:
        repo = Repository(Path.cwd())
        store = Store(repo.root)
        rewriter = Rewriter.create(
            repo, model=rewrite_model or DEFAULT_REWRITE_MODEL, warn=_warn, env=os.environ
        )

        def report(done: Task, outcome: str) -> None:
            if outcome == "skipped":
                _say(f"skipped    {done.id}  [already rewritten; --force to rewrite again]")
            else:
                _say(f"{outcome:<10} {done.id}")

        with exclusive(store.root, command="gitgauge rewrite", wait=wait, on_wait=_warn):
            outcome = rewrite_tasks(
                store, rewriter, task_id=task, force=force, warn=_warn, on_task=report
            )
        if not (outcome.rewritten or outcome.kept or outcome.skipped):
            _say(f"no tasks in {store.tasks_dir}/: run `gitgauge mine` first")
            return
        _say("")
        _print_rewrite_totals(rewriter.totals, rewriter.describe())

    _guarded(action)


class _StatusLine:
    """A transient line at the bottom of a terminal ("verifying ...", "running ..."), rewritten in
    place and cleared before any real output; nothing at all when stdout is not a terminal.
    Workers of `-j` update it from their threads, hence the lock."""

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.shown = False
        self.lock = threading.Lock()

    def show(self, text: str) -> None:
        if self.tty:
            with self.lock:
                sys.stdout.write(f"\r\033[K{text}")
                sys.stdout.flush()
                self.shown = True

    def clear(self) -> None:
        with self.lock:
            if self.shown:
                sys.stdout.write("\r\033[K")
                sys.stdout.flush()
                self.shown = False


class _MineProgress(_StatusLine):
    """One line per candidate; on a terminal, also a transient "verifying ..." line."""

    def events(self) -> MineEvents:
        return MineEvents(on_start=self.start, on_verdict=self.verdict, on_skip=self.skip)

    def start(self, commit: Commit) -> None:
        self.show(f"verifying {commit.sha[:8]} {commit.subject[:60]}")

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


class ReportFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"
    json = "json"


class CompareFormat(str, Enum):
    text = "text"
    json = "json"


@app.command("run")
def run_agents(
    config_files: Annotated[
        list[Path] | None,
        typer.Option(
            "--config", "-c", help="An agent config YAML file; repeat to compare several."
        ),
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="Run only this task id (default: every task).")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Continue an interrupted run (default: the latest), skipping finished pairs.",
        ),
    ] = None,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="With --resume: run errored pairs again.")
    ] = False,
    repeat: Annotated[
        int,
        typer.Option("--repeat", "-k", help="Independent attempts per config x task pair."),
    ] = 1,
    jobs: Annotated[str, _JOBS_OPTION] = "1",
    wait: Annotated[bool, _WAIT_OPTION] = False,
) -> None:
    """Run each agent config on each mined task, score it, and print the report."""

    def action() -> None:
        if resume is None and retry_errors:
            raise UsageError("--retry-errors goes with --resume")
        if resume is not None and (config_files or task):
            raise UsageError("--resume takes the configs and tasks of the run it continues")
        if resume is None and not config_files:
            raise UsageError("pass at least one agent config: gitgauge run -c config.yaml")
        repo = Repository(Path.cwd())
        config = load_repo_config(repo.root)
        store = Store(repo.root)
        job_count = _parse_jobs(jobs)
        with exclusive(store.root, command="gitgauge run", wait=wait, on_wait=_warn):
            remove_stale(repo, report=_warn)
            if resume is not None:
                plan, manifest = plan_resume(repo, store, resume, warn=_warn)
                origin = ResumeFrom(manifest.runId, manifest, retry_errors=retry_errors)
                _say(f"resuming run {manifest.runId}")
            else:
                plan = plan_run(repo, store, config_files or [], task_id=task, warn=_warn)
                origin = None
            _run_and_report(repo, config, store, plan, jobs=job_count, repeat=repeat, resume=origin)

    _guarded(
        action,
        resume_hint="finished pairs are saved; `gitgauge run --resume` continues the run",
    )


def _run_and_report(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    plan: RunPlan,
    *,
    jobs: int,
    repeat: int,
    resume: ResumeFrom | None,
) -> None:
    progress = _RunProgress(total=len(plan.configs) * len(plan.tasks) * repeat)
    try:
        outcome = execute_run(
            repo,
            config,
            store,
            plan,
            warn=_warn,
            jobs=jobs,
            repeat=repeat,
            resume=resume,
            on_start=progress.start,
            on_result=progress.result,
        )
    finally:
        progress.clear()
    rows = report_rows([StoredRun(outcome.run_id, outcome.manifest, outcome.results)])
    _say("")
    _say(render_report(rows, output_format="table"))
    _say("")
    _say(f"results and logs: {store.run_dir(outcome.run_id)}/")


class _RunProgress(_StatusLine):
    """One line per finished pair; on a terminal, also a transient "running ..." line."""

    def __init__(self, *, total: int) -> None:
        super().__init__()
        self.total = total
        self.done = 0

    def start(self, planned: PlannedConfig, task: Task) -> None:
        self.show(f"[{self.done + 1}/{self.total}] running {planned.config.name} on {task.id[:60]}")

    def result(self, result: RunResult) -> None:
        self.clear()
        self.done += 1
        _say(describe_pair(result))


@app.command()
def report(
    all_runs: Annotated[
        bool, typer.Option("--all", help="One row per config of every run (with a RUN column).")
    ] = False,
    output_format: Annotated[
        ReportFormat,
        typer.Option("--format", help="table, markdown (a GitHub table), csv or json."),
    ] = ReportFormat.table,
    tasks: Annotated[
        bool,
        typer.Option("--tasks", help="A per-task matrix: rows tasks, columns configs."),
    ] = False,
    html_file: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write a self-contained HTML report (tables, charts, links to patches and "
            "logs) to this file.",
        ),
    ] = None,
) -> None:
    """One row per agent config of its latest run: resolved, errors, regressions, cost, time,
    and the resolve rate with its 95% interval."""

    def action() -> None:
        repo = Repository(Path.cwd())
        store = Store(repo.root)
        runs = store.load_runs(warn=_warn)
        rows = report_rows(runs, all_runs=all_runs)
        if html_file is not None:
            if not rows:
                raise GitGaugeError(NO_RUNS_HINT)
            matrix = build_matrix(rows)
            links = pair_links(store, matrix, html_file)
            page = render_html(rows, matrix, links=links, version=__version__, with_run=all_runs)
            atomic_write_text(html_file, page)
            _say(f"wrote {html_file}")
            return
        if not rows:
            if output_format is ReportFormat.json:
                _say("[]")
            else:
                _say(NO_RUNS_HINT)
            return
        if tasks:
            matrix = build_matrix(rows)
            _say(render_matrix(matrix, output_format=output_format.value, with_run=all_runs))
            return
        _say(render_report(rows, output_format=output_format.value, with_run=all_runs))

    _guarded(action)


@app.command()
def compare(
    side_a: Annotated[
        str, typer.Argument(metavar="A", help="A config name (its latest run) or RUN:CONFIG.")
    ],
    side_b: Annotated[
        str, typer.Argument(metavar="B", help="The config to compare with A (B - A).")
    ],
    output_format: Annotated[
        CompareFormat, typer.Option("--format", help="text, or json for scripts.")
    ] = CompareFormat.text,
) -> None:
    """Did B do better than A? Paired over the tasks both ran, with 95% intervals, a p-value and
    a one-sentence verdict that says when the difference could be chance."""

    def action() -> None:
        repo = Repository(Path.cwd())
        runs = Store(repo.root).load_runs(warn=_warn)
        comparison = compare_sides(runs, side_a, side_b)
        if output_format is CompareFormat.json:
            _say(render_comparison_json(comparison))
        else:
            _say(render_comparison(comparison))

    _guarded(action)


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

        from gitgauge.demo import build_demo_repo, write_demo_agent_configs, write_demo_config

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
        config_files = write_demo_agent_configs(repo.root)
        _say("")
        _say("$ gitgauge run " + " ".join(f"-c {p.relative_to(repo.root)}" for p in config_files))
        store = Store(repo.root)
        plan = plan_run(repo, store, config_files, task_id=None, warn=_warn)
        _run_and_report(repo, config, store, plan, jobs=1, repeat=1, resume=None)
        _say("gold applies each real fix and should resolve every task; noop changes nothing")
        _say(f"and should resolve none. Try `gitgauge report` in {repo.root}.")

    _guarded(action)
