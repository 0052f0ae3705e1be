"""`gitgauge run`: each agent config on each mined task, scored, then the report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import JOBS_OPTION, WAIT_OPTION, StatusLine, guarded, parse_jobs, say, warn
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RunResult, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store, StoredRun
from gitgauge.core.worktree import remove_stale
from gitgauge.kinds import chain_judge
from gitgauge.reporting.render import render as render_report
from gitgauge.reporting.rows import build_rows as report_rows
from gitgauge.reporting.rows import describe_pair
from gitgauge.running.executors import PairExecutor, open_executor
from gitgauge.running.plan import (
    PlannedConfig,
    ResumeFrom,
    RunPlan,
    apply_flags,
    plan_whole_run,
)
from gitgauge.running.run import execute as execute_run


def run_agents(
    config_files: Annotated[
        list[Path] | None,
        typer.Option(
            "--config", "-c", help="An agent config YAML file; repeat to compare several."
        ),
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="Run only this task: its id, or a unique start of it such as the 8-character "
            "sha `mine` prints (default: every task).",
        ),
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
    judge: Annotated[
        bool | None,
        typer.Option(
            "--judge/--no-judge",
            help="Have a model judge each rebase and commits task's series against the "
            "original (sends your commits to it; default: chains.judge).",
            show_default=False,
        ),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model",
            help="The judge's model: haiku, sonnet, opus or a model id "
            "(default: chains.judgeModel, itself haiku).",
        ),
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="agent | text: the mode of every fixture task (default: each task's own, "
            "as imported).",
        ),
    ] = None,
) -> None:
    """Run each agent config on each mined task, score it, and print the report."""

    def action() -> None:
        repo = Repository(Path.cwd())
        config = apply_flags(
            load_repo_config(repo.root),
            sandbox=sandbox,
            executor=executor,
            ray_address=ray_address,
        )
        config = apply_judge_flags(config, judge=judge, judge_model=judge_model)
        store = Store(repo.root)
        job_count = parse_jobs(jobs)
        with exclusive(store.root, command="gitgauge run", wait=wait, on_wait=warn):
            remove_stale(repo, report=warn)
            planned = plan_whole_run(
                repo,
                store,
                config,
                config_files=config_files or [],
                task_id=task,
                resume=resume,
                retry_errors=retry_errors,
                warn=warn,
            )
            if planned.resume is not None:
                say(f"resuming run {planned.resume.run_id}")
            pairs_executor = open_executor(config, address=ray_address)
            if pairs_executor is not None and job_count != 1:
                warn("--jobs does not apply with --executor ray: the cluster's resources decide")
            try:
                run_and_report(
                    repo,
                    config,
                    store,
                    planned.plan,
                    jobs=job_count,
                    repeat=repeat,
                    resume=planned.resume,
                    sandbox=planned.sandbox,
                    executor=pairs_executor,
                    mode=mode,
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
    mode: str | None = None,
) -> None:
    # Once per run, before any pair: the judge shown one original series against itself.
    check = (
        None
        if resume and resume.manifest.judgeCheck
        else chain_judge.position_check(repo, config, plan.tasks, env=os.environ, warn=warn)
    )
    if check is not None:
        say(check.describe())
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
            mode=mode,
        )
    finally:
        progress.clear()
    manifest = outcome.manifest
    if check is not None:
        manifest = manifest.model_copy(update={"judgeCheck": check})
        store.save_manifest(manifest)
    rows = report_rows([StoredRun(outcome.run_id, manifest, outcome.results)])
    say("")
    say(render_report(rows, output_format="table"))
    say("")
    say(f"results and logs: {store.run_dir(outcome.run_id)}/")


def apply_judge_flags(
    config: RepoConfig, *, judge: bool | None, judge_model: str | None
) -> RepoConfig:
    """gitgauge.yaml's `chains` as `--judge` and `--judge-model` set them."""
    chains = config.chains
    if judge is not None:
        chains = chains.model_copy(update={"judge": judge})
    if judge_model is not None:
        if not judge_model.strip():
            raise UsageError("--judge-model must name a model (haiku, sonnet, opus or a model id)")
        if not chains.judge:
            raise UsageError("--judge-model goes with --judge (or chains.judge: true)")
        chains = chains.model_copy(update={"judgeModel": judge_model})
    return config.model_copy(update={"chains": chains})


class _RunProgress(StatusLine):
    """One line per finished pair; on a terminal, also a transient "running ..." line."""

    def __init__(self, *, total: int) -> None:
        super().__init__()
        self.total = total
        self.started = 0

    def start(self, planned: PlannedConfig, task: Task) -> None:
        # Counted as pairs start: a worker starts the next pair before the last one's result
        # is printed, so counting results put the counter one behind.
        with self.lock:
            self.started += 1
            number = self.started
        self.show(f"[{number}/{self.total}] running {planned.config.name} on {task.id[:60]}")

    def result(self, result: RunResult) -> None:
        self.clear()
        say(describe_pair(result))
