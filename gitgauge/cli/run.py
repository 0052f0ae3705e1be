"""`gitgauge run`: each agent config on each mined task, scored, then the report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from gitgauge.cli.common import JOBS_OPTION, WAIT_OPTION, StatusLine, guarded, parse_jobs, say, warn
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RepoConfig, RunResult, Task
from gitgauge.core.sandbox import Sandbox, SandboxMode
from gitgauge.core.store import Store, StoredRun
from gitgauge.core.worktree import remove_stale
from gitgauge.reporting.render import render as render_report
from gitgauge.reporting.rows import build_rows as report_rows
from gitgauge.reporting.rows import describe_pair
from gitgauge.running.executors import PairExecutor, open_executor
from gitgauge.running.plan import (
    PlannedConfig,
    ResumeFrom,
    RunPlan,
    plan_resume,
    plan_run,
    plan_sandbox,
)
from gitgauge.running.run import execute as execute_run

SANDBOX_MODES = ("auto", "bwrap", "none")


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
    jobs: Annotated[str, JOBS_OPTION] = "1",
    wait: Annotated[bool, WAIT_OPTION] = False,
    sandbox: Annotated[
        str | None,
        typer.Option(
            "--sandbox",
            help="auto | bwrap | none: run agents and test commands in a bubblewrap sandbox "
            "(default: run.sandbox in gitgauge.yaml, itself auto).",
        ),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(
            "--executor",
            help="Where pairs run: local, or ray (a Ray cluster; needs gitgauge[ray]). "
            "Default: run.executor in gitgauge.yaml, else local.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="With --executor ray: the cluster's host:port (default: run.ray.address, "
            "else RAY_ADDRESS, else a local Ray instance).",
        ),
    ] = None,
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
        config = with_executor(load_repo_config(repo.root), executor, ray_address)
        store = Store(repo.root)
        job_count = parse_jobs(jobs)
        if sandbox is not None and sandbox not in SANDBOX_MODES:
            modes = ", ".join(SANDBOX_MODES)
            raise UsageError(f"--sandbox must be one of {modes}, got {sandbox!r}")
        mode = cast(SandboxMode, sandbox or config.run.sandbox)
        config = config.model_copy(update={"run": config.run.model_copy(update={"sandbox": mode})})
        with exclusive(store.root, command="gitgauge run", wait=wait, on_wait=warn):
            remove_stale(repo, report=warn)
            if resume is not None:
                plan, manifest = plan_resume(repo, store, resume, warn=warn)
                origin = ResumeFrom(manifest.runId, manifest, retry_errors=retry_errors)
                say(f"resuming run {manifest.runId}")
            else:
                plan = plan_run(repo, store, config_files or [], task_id=task, warn=warn)
                origin = None
            if config.run.executor == "local":
                box = plan_sandbox(repo, config, plan, mode=mode, warn=warn)
                used = "bwrap" if box is not None else "none"
            else:
                # Each node decides from the mode (this machine's bwrap says nothing of theirs).
                box, used = None, mode
            recorded = origin.manifest.sandbox if origin is not None else used
            # A run recorded as auto (on Ray, each node decided) continues with auto anywhere.
            if origin is not None and recorded != used and (recorded, mode) != ("auto", "auto"):
                raise UsageError(
                    f"run {origin.run_id} ran with sandbox {recorded}, this one would run with "
                    f"{used}: resume with --sandbox {recorded}"
                )
            pairs_executor = open_executor(config, address=ray_address)
            if pairs_executor is not None and job_count != 1:
                warn("--jobs does not apply with --executor ray: the cluster's resources decide")
            try:
                run_and_report(
                    repo,
                    config,
                    store,
                    plan,
                    jobs=job_count,
                    repeat=repeat,
                    resume=origin,
                    sandbox=box,
                    executor=pairs_executor,
                )
            finally:
                if pairs_executor is not None:
                    pairs_executor.close()

    guarded(
        action,
        resume_hint="finished pairs are saved; `gitgauge run --resume` continues the run",
    )


def run_and_report(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    plan: RunPlan,
    *,
    jobs: int,
    repeat: int,
    resume: ResumeFrom | None,
    sandbox: Sandbox | None = None,
    executor: PairExecutor | None = None,
) -> None:
    progress = _RunProgress(total=len(plan.configs) * len(plan.tasks) * repeat)
    try:
        outcome = execute_run(
            repo,
            config,
            store,
            plan,
            warn=warn,
            jobs=jobs,
            repeat=repeat,
            resume=resume,
            on_start=progress.start,
            on_result=progress.result,
            sandbox=sandbox,
            executor=executor,
        )
    finally:
        progress.clear()
    rows = report_rows([StoredRun(outcome.run_id, outcome.manifest, outcome.results)])
    say("")
    say(render_report(rows, output_format="table"))
    say("")
    say(f"results and logs: {store.run_dir(outcome.run_id)}/")


def with_executor(config: RepoConfig, executor: str | None, ray_address: str | None) -> RepoConfig:
    """`run.executor` as the flags set it."""
    if executor is not None:
        if executor not in ("local", "ray"):
            raise UsageError(f"--executor must be local or ray, got {executor!r}")
        run = config.run.model_copy(update={"executor": executor})
        config = config.model_copy(update={"run": run})
    if ray_address is not None and config.run.executor != "ray":
        raise UsageError("--ray-address goes with --executor ray (or run.executor: ray)")
    return config


class _RunProgress(StatusLine):
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
        say(describe_pair(result))
