"""`gitgauge run`: each agent config on each mined task, scored, then the report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from gitgauge.cli.common import JOBS_OPTION, WAIT_OPTION, StatusLine, guarded, parse_jobs, say, warn
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import ConfigStopped, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RunResult, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store, StoredRun
from gitgauge.core.worktree import remove_stale
from gitgauge.kinds.chain import judge as chain_judge
from gitgauge.reporting.render import format_duration
from gitgauge.reporting.render import render as render_report
from gitgauge.reporting.rows import build_rows as report_rows
from gitgauge.reporting.rows import describe_pair
from gitgauge.running.estimate import SAMPLE_PAIRS, RunEstimate, estimate, pending_pairs
from gitgauge.running.executors import PairExecutor, open_executor
from gitgauge.running.gate import RunGate
from gitgauge.running.plan import (
    PlannedConfig,
    PlannedRun,
    ResumeFrom,
    RunPlan,
    apply_flags,
    plan_whole_run,
)
from gitgauge.running.run import RunOutcome
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
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            help="A budget: no new pair starts once the money spent plus the mean cost per "
            "pair would pass it (--resume continues with a new budget).",
        ),
    ] = None,
    estimate_only: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the expected cost and wall time of the run, from an earlier run of "
            f"each config or a sample of {SAMPLE_PAIRS} of its pairs, and stop.",
        ),
    ] = False,
) -> None:
    """Run each agent config on each mined task, score it, and print the report."""

    def action() -> None:
        if max_cost is not None and not max_cost > 0:
            raise UsageError(f"--max-cost must be a positive amount of US dollars, got {max_cost}")
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
            if max_cost is not None and config.run.executor != "local":
                raise UsageError(
                    "--max-cost needs the local executor: a Ray cluster starts every pair at once"
                )
            pairs_executor = open_executor(config, address=ray_address)
            if pairs_executor is not None and job_count != 1:
                warn("--jobs does not apply with --executor ray: the cluster's resources decide")
            try:
                if estimate_only:
                    estimate_run(
                        repo,
                        config,
                        store,
                        planned,
                        jobs=job_count,
                        repeat=repeat,
                        max_cost=max_cost,
                        executor=pairs_executor,
                    )
                    return
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
                    max_cost=max_cost,
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
    max_cost: float | None = None,
) -> None:
    """Run the pairs, print the report, then what the gate stopped: the budget's closing line,
    and a `ConfigStopped` error (exit 3) naming each config stopped for a broken setup."""
    # Once per run, before any pair: the judge shown one original series against itself.
    check = (
        None
        if resume and resume.manifest.judgeCheck
        else chain_judge.position_check(repo, config, plan.tasks, env=os.environ, warn=warn)
    )
    if check is not None:
        say(check.describe())
    outcome = _execute(
        repo,
        config,
        store,
        plan,
        jobs=jobs,
        repeat=repeat,
        resume=resume,
        sandbox=sandbox,
        executor=executor,
        max_cost=max_cost,
        mode=mode,
    )
    manifest = outcome.manifest
    if check is not None:
        manifest = manifest.model_copy(update={"judgeCheck": check})
        store.save_manifest(manifest)
    rows = report_rows([StoredRun(outcome.run_id, manifest, outcome.results)])
    say("")
    say(render_report(rows, output_format="table"))
    say("")
    say(f"results and logs: {store.run_dir(outcome.run_id)}/")
    _closing(outcome)


def _execute(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    plan: RunPlan,
    *,
    jobs: int,
    repeat: int,
    resume: ResumeFrom | None,
    sandbox: Sandbox | None,
    executor: PairExecutor | None,
    max_cost: float | None,
    sample: dict[str, int] | None = None,
    mode: str | None = None,
) -> RunOutcome:
    earlier: list[RunResult] = []
    if resume is not None:
        stored = store.load_run(resume.run_id, warn=warn)
        earlier = stored.results if stored is not None else []
    gate = RunGate.for_run(max_cost=max_cost, earlier=earlier, warn=warn)
    progress = _RunProgress(total=len(plan.configs) * len(plan.tasks) * repeat)
    try:
        return execute_run(
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
            gate=gate,
            sample=sample,
        )
    finally:
        progress.clear()


def _closing(outcome: RunOutcome) -> None:
    gate = outcome.gate
    if outcome.retried:
        say(
            f"ran {outcome.retried} errored pair{_s(outcome.retried)} again; the first records "
            "are kept in their logs/<config>/<task>/errored-N/"
        )
    if gate is None:
        return
    budget = gate.budget
    if budget is not None:
        not_started = sum(gate.not_started.values())
        if budget.priced == 0 and not budget.reached:
            warn(f"--max-cost ${budget.limit:.2f}: no pair reported a cost, nothing was counted")
        elif budget.reached:
            mean = f", ${budget.mean:.4f} per pair expected" if budget.mean is not None else ""
            say(
                f"budget reached: ${budget.spent:.4f} spent of --max-cost ${budget.limit:.2f}"
                f"{mean}; {not_started} pair{_s(not_started)} not started: `gitgauge run "
                f"--resume {outcome.run_id} --max-cost USD` continues with a new budget"
            )
        else:
            say(f"budget: ${budget.spent:.4f} spent of --max-cost ${budget.limit:.2f}")
    if gate.stopped:
        parts = []
        for stopped in gate.stopped.values():
            skipped = gate.not_started.get(stopped.config, 0)
            parts.append(
                f"config {stopped.config} stopped after its first {stopped.failed} pairs failed "
                f"alike: {stopped.message}; {skipped} of its pairs were not started"
            )
        raise ConfigStopped(
            "; ".join(parts) + f". Fix it, then `gitgauge run --resume {outcome.run_id} "
            "--retry-errors` runs them (and the failed ones again)"
        )


def estimate_run(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    planned: PlannedRun,
    *,
    jobs: int,
    repeat: int,
    max_cost: float | None,
    executor: PairExecutor | None,
) -> None:
    """`run --estimate`: the expected cost and wall time of the pairs still to run; configs with
    no pair known anywhere get a sample of `SAMPLE_PAIRS` pairs run first (kept in the run)."""
    resume = planned.resume
    run_id = resume.run_id if resume is not None else None
    if resume is not None:
        repeat = resume.manifest.repeat
    retry = resume.retry_errors if resume is not None else False

    def current() -> RunEstimate:
        pending = pending_pairs(
            store, planned.plan, run_id=run_id, repeat=repeat, retry_errors=retry, warn=warn
        )
        return estimate(planned.plan, store.load_runs(warn=warn), pending, run_id=run_id, jobs=jobs)

    found = current()
    sampled = False
    if found.unknown:
        say(
            f"no pair of {', '.join(found.unknown)} is known yet: running {SAMPLE_PAIRS} of "
            f"{'its' if len(found.unknown) == 1 else 'their'} pairs first"
        )
        sample = {c.config: SAMPLE_PAIRS if c.config in found.unknown else 0 for c in found.configs}
        outcome = _execute(
            repo,
            config,
            store,
            planned.plan,
            jobs=jobs,
            repeat=repeat,
            resume=resume,
            sandbox=planned.sandbox,
            executor=executor,
            max_cost=max_cost,
            sample=sample,
        )
        run_id, retry, sampled = outcome.run_id, False, True
        found = current()
    say(render_estimate(found))
    if sampled or resume is not None:
        say(
            f"continue the run with `gitgauge run --resume {run_id}` (add --max-cost USD to cap it)"
        )
    else:
        say("nothing ran: start the run with the same command without --estimate")


def render_estimate(found: RunEstimate) -> str:
    rows = []
    for c in found.configs:
        cost = "-" if c.cost_per_pair is None else f"${c.cost_per_pair:.4f}"
        total = "-" if c.cost is None else f"${c.cost:.2f}"
        wall = "-" if c.wall_per_pair is None else format_duration(c.wall_per_pair)
        walls = "-" if c.wall is None else format_duration(c.wall)
        rows.append([c.config, str(c.pairs), cost, total, wall, walls, c.basis])
    table = tabulate(
        rows,
        headers=["CONFIG", "PAIRS", "COST/PAIR", "COST", "WALL/PAIR", "WALL", "FROM"],
        tablefmt="simple",
        disable_numparse=True,
    )
    cost = "no cost known" if found.cost is None else f"about ${found.cost:.2f}"
    wall = "-" if found.wall is None else format_duration(found.wall)
    at_once = f"{found.jobs} pairs at a time" if found.jobs > 1 else "one pair at a time"
    return (
        f"estimate of the {found.pairs} pair{_s(found.pairs)} still to run:\n{table}\n"
        f"expected: {cost} and {wall} of wall time ({at_once}); pairs that report no cost "
        "count none"
    )


def _s(count: int) -> str:
    return "" if count == 1 else "s"


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
