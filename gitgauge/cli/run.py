"""`gitgauge run`: each agent config on each mined task, scored, then the report.

The options are defined once below (`Annotated` aliases); the command gathers them into one
`RunRequest` and hands it whole to `run_command`, which plans the run, opens its executor, runs
it (`running.run.execute`) or estimates it, and prints what happened.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from gitgauge.cli.common import (
    JobsOption,
    RayAddressOption,
    StatusLine,
    WaitOption,
    guarded,
    parse_jobs,
    say,
    warn,
)
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import ConfigStopped
from gitgauge.core.git import Repository
from gitgauge.core.kinds import RunCheck
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RunResult, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store, StoredRun
from gitgauge.core.text import plural
from gitgauge.core.worktree import remove_stale
from gitgauge.reporting.render import format_duration
from gitgauge.reporting.render import render as render_report
from gitgauge.reporting.rows import build_rows as report_rows
from gitgauge.reporting.rows import describe_pair
from gitgauge.running.estimate import SAMPLE_PAIRS, RunEstimate, estimate, pending_pairs
from gitgauge.running.executors import PairExecutor
from gitgauge.running.executors.local import LocalExecutor
from gitgauge.running.gate import RunGate, StoppedConfig
from gitgauge.running.plan import (
    PlannedConfig,
    PlannedRun,
    ResumeFrom,
    RunPlan,
    open_run_executor,
    plan_whole_run,
)
from gitgauge.running.request import RunRequest
from gitgauge.running.run import RunEvents, RunOutcome, execute
from gitgauge.running.sandboxing import choose_sandbox

RESUME_HINT = "finished pairs are saved; `gitgauge run --resume` continues the run"

ConfigsOption = Annotated[
    list[Path] | None,
    typer.Option("--config", "-c", help="An agent config YAML file; repeat to compare several."),
]
TaskOption = Annotated[
    str | None,
    typer.Option(
        "--task",
        help="Run only this task: its id, or a unique start of it such as the 8-character "
        "sha `mine` prints (default: every task).",
    ),
]
ResumeOption = Annotated[
    str | None,
    typer.Option(
        "--resume",
        help="Continue an interrupted run (default: the latest), skipping finished pairs.",
    ),
]
RetryErrorsOption = Annotated[
    bool, typer.Option("--retry-errors", help="With --resume: run errored pairs again.")
]
RepeatOption = Annotated[
    int, typer.Option("--repeat", "-k", help="Independent attempts per config x task pair.")
]
SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        help="auto | bwrap | none: run agents and test commands in a bubblewrap sandbox "
        "(default: run.sandbox in gitgauge.yaml, itself auto).",
    ),
]
ExecutorOption = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where pairs run: local, or ray (a Ray cluster; needs gitgauge[ray]). "
        "Default: run.executor in gitgauge.yaml, else local.",
    ),
]
JudgeOption = Annotated[
    bool | None,
    typer.Option(
        "--judge/--no-judge",
        help="Have a model judge each rebase and commits task's series against the "
        "original (sends your commits to it; default: chains.judge).",
        show_default=False,
    ),
]
JudgeModelOption = Annotated[
    str | None,
    typer.Option(
        "--judge-model",
        help="The judge's model: haiku, sonnet, opus or a model id "
        "(default: chains.judgeModel, itself haiku).",
    ),
]
ModeOption = Annotated[
    str | None,
    typer.Option(
        "--mode",
        help="agent | text: the mode of every fixture task (default: each task's own, "
        "as imported).",
    ),
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        metavar="USD",
        help="A budget: no new pair starts once the money spent plus the mean cost per "
        "pair would pass it (--resume continues with a new budget).",
    ),
]
EstimateOption = Annotated[
    bool,
    typer.Option(
        "--estimate",
        help="Print the expected cost and wall time of the run, from an earlier run of "
        f"each config or a sample of {SAMPLE_PAIRS} of its pairs, and stop.",
    ),
]


def run_agents(
    config_files: ConfigsOption = None,
    task: TaskOption = None,
    resume: ResumeOption = None,
    retry_errors: RetryErrorsOption = False,
    repeat: RepeatOption = 1,
    jobs: JobsOption = "1",
    wait: WaitOption = False,
    sandbox: SandboxOption = None,
    executor: ExecutorOption = None,
    ray_address: RayAddressOption = None,
    judge: JudgeOption = None,
    judge_model: JudgeModelOption = None,
    mode: ModeOption = None,
    max_cost: MaxCostOption = None,
    estimate_only: EstimateOption = False,
) -> None:
    """Run each agent config on each mined task, score it, and print the report."""
    guarded(
        lambda: run_command(
            RunRequest(
                configs=tuple(config_files or ()),
                task=task,
                resume=resume,
                retry_errors=retry_errors,
                repeat=repeat,
                jobs=parse_jobs(jobs),
                wait=wait,
                sandbox=sandbox,
                executor=executor,
                ray_address=ray_address,
                judge=judge,
                judge_model=judge_model,
                mode=mode,
                max_cost=max_cost,
                estimate=estimate_only,
            )
        ),
        resume_hint=RESUME_HINT,
    )


def run_command(request: RunRequest) -> None:
    """`gitgauge run` as `request` asks: planned under the `.gitgauge/` lock, its executor
    opened, then run and reported (or, with `estimate`, estimated)."""
    request.check()
    repo = Repository(Path.cwd())
    config = request.configured(load_repo_config(repo.root))
    store = Store(repo.root)
    with exclusive(store.root, command="gitgauge run", wait=request.wait, on_wait=warn):
        remove_stale(repo, report=warn)
        planned = plan_whole_run(repo, store, config, request, warn=warn)
        if planned.resume is not None:
            say(f"resuming run {planned.resume.run_id}")
        executor = open_run_executor(config, request, warn=warn)
        try:
            opened = OpenRun(repo, config, store, planned, executor)
            if request.estimate:
                estimate_run(opened, request)
            else:
                report_run(opened, request)
        finally:
            executor.close()


@dataclass(frozen=True)
class OpenRun:
    """A planned run with its executor open: what reporting or estimating it works on."""

    repo: Repository
    config: RepoConfig
    store: Store
    planned: PlannedRun
    executor: PairExecutor


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
) -> None:
    """A run planned elsewhere (`gitgauge demo`: its plan, this machine's `sandbox`), run with
    the local executor and reported as `gitgauge run` reports it."""
    planned = PlannedRun(plan=plan, resume=resume, sandbox=choose_sandbox(config, sandbox=sandbox))
    request = RunRequest(jobs=jobs, repeat=repeat)
    report_run(OpenRun(repo, config, store, planned, LocalExecutor(jobs=jobs)), request)


def report_run(run: OpenRun, request: RunRequest) -> None:
    """Run the pairs, print the report, then what the gate stopped: the budget's closing line,
    and a `ConfigStopped` error (exit 3) naming each config stopped for a broken setup."""
    outcome = _execute(run, request)
    rows = report_rows([StoredRun(outcome.run_id, outcome.manifest, outcome.results)])
    say("")
    say(render_report(rows, output_format="table"))
    say("")
    say(f"results and logs: {run.store.run_dir(outcome.run_id)}/")
    _closing(outcome, run.store)


def _execute(
    run: OpenRun, request: RunRequest, *, sample: dict[str, int] | None = None
) -> RunOutcome:
    plan = run.planned.plan
    progress = _RunProgress(total=len(plan.configs) * len(plan.tasks) * request.repeat)
    events = RunEvents(on_start=progress.start, on_result=progress.result, on_check=_say_check)
    try:
        return execute(
            run.repo,
            run.config,
            run.store,
            run.planned,
            request,
            executor=run.executor,
            warn=warn,
            events=events,
            sample=sample,
        )
    finally:
        progress.clear()


def _say_check(check: RunCheck) -> None:
    say(check.describe())


def _closing(outcome: RunOutcome, store: Store) -> None:
    gate = outcome.gate
    if outcome.retried:
        say(
            f"ran {plural(outcome.retried, 'errored pair')} again; the first records "
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
                f"{mean}; {plural(not_started, 'pair')} not started: `gitgauge run "
                f"--resume {outcome.run_id} --max-cost USD` continues with a new budget"
            )
        else:
            say(f"budget: ${budget.spent:.4f} spent of --max-cost ${budget.limit:.2f}")
    if gate.stopped:
        parts = [_stopped_line(store, outcome.run_id, gate, s) for s in gate.stopped.values()]
        raise ConfigStopped(
            "; ".join(parts) + f". Fix it, then `gitgauge run --resume {outcome.run_id} "
            "--retry-errors` runs them (and the failed ones again)"
        )


STOPPED_MESSAGE_LIMIT = 400
"""How much of a stopped config's first error its closing line quotes (its logs hold all)."""


def _stopped_line(store: Store, run_id: str, gate: RunGate, stopped: StoppedConfig) -> str:
    """What a stopped config's first pairs said, and what became of its other pairs."""
    message = stopped.message
    if len(message) > STOPPED_MESSAGE_LIMIT:
        message = message[: STOPPED_MESSAGE_LIMIT - 3] + "..."
    failed = "pair failed" if stopped.failed == 1 else f"{stopped.failed} pairs failed alike"
    line = f"config {stopped.config} stopped after its first {failed}: {message}"
    if stopped.cause is None:
        logs = store.log_dir(run_id, stopped.config, stopped.task, stopped.attempt)
        line += (
            f" (the same adapter error each time, numbers, paths and names aside; logs: {logs}/)"
        )
    skipped = gate.not_started.get(stopped.config, 0)
    line += f"; {skipped} of its pairs were not started"
    otherwise = gate.ended_otherwise.get(stopped.config, 0)
    if otherwise:
        line += (
            f", and {otherwise} already running then ended another way (check that the "
            "failure is the setup's)"
        )
    return line


def estimate_run(run: OpenRun, request: RunRequest) -> None:
    """`run --estimate`: the expected cost and wall time of the pairs still to run; configs with
    no pair known anywhere get a sample of `SAMPLE_PAIRS` pairs run first (kept in the run)."""
    store, plan, resume = run.store, run.planned.plan, run.planned.resume
    run_id = resume.run_id if resume is not None else None
    repeat = resume.manifest.repeat if resume is not None else request.repeat
    retry = resume.retry_errors if resume is not None else False
    mode = resume.manifest.mode if resume is not None else request.mode

    def current() -> RunEstimate:
        pending = pending_pairs(
            store, plan, run_id=run_id, repeat=repeat, retry_errors=retry, warn=warn
        )
        runs = store.load_runs(warn=warn)
        return estimate(plan, runs, pending, run_id=run_id, jobs=request.jobs, mode=mode)

    found = current()
    sampled = False
    if found.unknown:
        say(
            f"no pair of {', '.join(found.unknown)} is known yet: running {SAMPLE_PAIRS} of "
            f"{'its' if len(found.unknown) == 1 else 'their'} pairs first"
        )
        sample = {c.config: SAMPLE_PAIRS if c.config in found.unknown else 0 for c in found.configs}
        # The sample is the run's start, and a resumed run keeps its mode: it runs in --mode.
        sampling = replace(request, repeat=repeat)
        outcome = _execute(run, sampling, sample=sample)
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
        f"estimate of the {plural(found.pairs, 'pair')} still to run:\n{table}\n"
        f"expected: {cost} and {wall} of wall time ({at_once}); pairs that report no cost "
        "count none"
    )


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
