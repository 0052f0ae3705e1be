"""`gitgauge run`: every agent config on every task, one throwaway workspace per pair.

For each pair: a worktree at the task's base -> setupCommand -> the adapter -> diff stats and the
agent's patch -> protected files reverted -> the fix's tests (resolved?) -> the base suite
(regressed?) -> the worktree removed. Each pair's `RunResult` is written as soon as it is known, so
an interrupted run keeps every finished pair. An agent's crash or timeout is a result with status
`error`, never an exception: the run goes on.

`execute` reads like its steps: `validate_run` (what the request and the plan cannot do
together), `run_checks` (each kind's checks of the whole run, once), `start_manifest` (the run's
`run.json`, new or resumed), `pending_jobs` (the pairs still to run, in the order that makes the
history copies cheapest) and `run_loop` (the executor's results saved as they come).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path

from gitgauge import __version__
from gitgauge.core import fingerprint, kinds, links
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.kinds import RunCheck, RunContext
from gitgauge.core.records import RunManifest, RunResult, Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import StorageError, Store, new_run_id
from gitgauge.core.suite import stop_early_warning
from gitgauge.core.worktree import Warn
from gitgauge.running import harness as harnesses
from gitgauge.running.executors import PairBatch, PairExecutor
from gitgauge.running.gate import RunGate
from gitgauge.running.pair import Pair, now
from gitgauge.running.plan import PairJob, PlannedConfig, PlannedRun, command_drift
from gitgauge.running.request import RunRequest

PairKey = tuple[str, str, int]
"""(config, task, attempt): one pair of a run."""


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    manifest: RunManifest
    results: list[RunResult]
    gate: RunGate | None = None
    """What the run's gate stopped: configs with a broken setup, the budget."""
    retried: int = 0
    """Errored pairs set aside to run again (`--retry-errors`)."""


@dataclass(frozen=True)
class RunEvents:
    """What a run says as it goes (the CLI prints it)."""

    on_start: Callable[[PlannedConfig, Task], None] = lambda planned, task: None
    """A pair starts (with a remote executor: the first, when every pair was submitted)."""
    on_result: Callable[[RunResult], None] = lambda result: None
    """A pair's result was saved."""
    on_check: Callable[[RunCheck], None] = lambda check: None
    """A check of the whole run was made (`TaskKind.run_checks`), before the first pair."""


def execute(
    repo: Repository,
    repo_config: RepoConfig,
    store: Store,
    planned: PlannedRun,
    request: RunRequest,
    *,
    executor: PairExecutor,
    warn: Warn,
    events: RunEvents | None = None,
    sample: Mapping[str, int] | None = None,
) -> RunOutcome:
    """Run every pending pair of `planned` on `executor` as `request` asks (task-major, so a
    task's workspace source is prepared once and reused by every config and attempt); results
    come back in a stable order with the local executor, as pairs finish with a remote one.

    The run's gate (`RunGate`: a broken config stopped, `request.max_cost` kept; on a remote
    executor, which starts every pair at once, it only counts) decides whether each pair starts.
    `sample`: config name -> at most that many of its pending pairs run (`run --estimate`), the
    rest stay for `--resume`; a sample makes no run-level checks (the run it starts makes them
    when resumed). With `retry_errors`, each errored pair's record is set aside into its
    `errored-N/` log folder before it runs again."""
    events = events or RunEvents()
    validate_run(repo_config, planned, request)
    checks = {} if sample is not None else run_checks(repo, repo_config, planned, warn=warn)
    for check in checks.values():
        events.on_check(check)
    gate = RunGate.for_run(
        max_cost=request.max_cost, earlier=_earlier_results(store, planned, warn=warn), warn=warn
    )
    links.announce(repo.root, repo_config.worktree.link, tracked=repo.is_tracked, warn=warn)
    manifest = start_manifest(repo_config, store, planned, request)
    _warn_about_commands(planned, repo_config, warn=warn)
    pending = pending_jobs(repo, store, manifest, planned, sample=sample, warn=warn)
    pair = Pair(
        repo,
        repo_config,
        store,
        manifest.runId,
        warn,
        sandbox=planned.sandbox.here,
        mode=manifest.mode,
    )
    finished = executor.run_pairs(PairBatch(pending.jobs, pair, events.on_start, gate))
    results = pending.done + run_loop(
        finished, store, manifest.runId, pending.earlier_errors, on_result=events.on_result
    )
    manifest = manifest.model_copy(update={"finishedAt": now(), **checks})
    store.save_manifest(manifest)
    return RunOutcome(
        run_id=manifest.runId,
        manifest=manifest,
        results=results,
        gate=gate,
        retried=len(pending.earlier_errors),
    )


def validate_run(config: RepoConfig, planned: PlannedRun, request: RunRequest) -> None:
    """Refuse, before anything is written, what the request and the plan cannot do together."""
    mode, resume = request.mode, planned.resume
    if mode is not None and resume is not None and mode != resume.manifest.mode:
        raise UsageError(
            f"run {resume.run_id} ran with --mode {resume.manifest.mode or '(each task its own)'}; "
            "a resumed run keeps its mode: leave --mode out"
        )
    if mode is not None and resume is None:
        known = sorted({m for name in kinds.names() for m in kinds.get(name).modes})
        if mode not in known:
            raise UsageError(f"--mode must be one of {', '.join(known)}, got {mode!r}")
    if request.jobs <= 0:
        raise UsageError(f"--jobs must be a positive number, got {request.jobs}")
    if request.repeat <= 0:
        raise UsageError(f"--repeat must be a positive number, got {request.repeat}")
    for planned_config in planned.plan.configs:
        harnesses.check_links(planned_config.harness, config.worktree.link)


def run_checks(
    repo: Repository, config: RepoConfig, planned: PlannedRun, *, warn: Warn
) -> dict[str, RunCheck]:
    """Each kind's checks of the whole run (`TaskKind.run_checks`), asked once per kind among
    the run's tasks, in the kinds' order: `RunManifest` field -> its record."""
    tasks = planned.plan.tasks
    present = {task.kind for task in tasks}
    resumed = planned.resume.manifest if planned.resume is not None else None
    run = RunContext(repo, config, tasks, env=os.environ, warn=warn, resumed=resumed)
    found: dict[str, RunCheck] = {}
    for name in kinds.names():
        if name in present:
            found.update(kinds.get(name).run_checks(run))
    return found


def start_manifest(
    config: RepoConfig, store: Store, planned: PlannedRun, request: RunRequest
) -> RunManifest:
    """The run's manifest, saved: the resumed run's (unfinished again: it keeps its repeat and
    mode), or a new run's, with each config's harness recorded under the run."""
    if planned.resume is not None:
        manifest = planned.resume.manifest.model_copy(update={"finishedAt": None})
    else:
        plan = planned.plan
        manifest = RunManifest(
            runId=new_run_id(),
            gitgaugeVersion=__version__,
            configs=[fingerprint.redacted(p.config) for p in plan.configs],
            configFiles=[str(Path(p.source).resolve()) for p in plan.configs],
            tasks=[task.id for task in plan.tasks],
            testCommand=config.testCommand,
            setupCommand=config.setupCommand,
            timeouts=config.timeouts,
            repeat=request.repeat,
            history=config.run.history,
            # A remote executor's nodes each decide their sandbox from `run.sandbox` (the
            # results say which they got): the manifest then records the mode asked for.
            sandbox=planned.sandbox.label,
            sandboxNetwork=planned.sandbox.recorded_network,
            startedAt=now(),
            mode=request.mode,
        )
        run_dir = store.run_dir(manifest.runId)
        recorded = {
            p.config.name: harnesses.record(run_dir, p.config, p.harness) for p in plan.configs
        }
        manifest = manifest.model_copy(update={"harness": recorded})
    store.save_manifest(manifest)
    return manifest


def _earlier_results(store: Store, planned: PlannedRun, *, warn: Warn) -> list[RunResult]:
    """The results a resumed run already has (the gate counts their costs)."""
    if planned.resume is None:
        return []
    stored = store.load_run(planned.resume.run_id, warn=warn)
    return stored.results if stored is not None else []


def _warn_about_commands(planned: PlannedRun, config: RepoConfig, *, warn: Warn) -> None:
    """A testCommand that stops at the first failure, and commands other than the tasks'."""
    tasks = planned.plan.tasks
    stops_early = stop_early_warning(config.testCommand)
    if stops_early and any(task.failToPass is not None for task in tasks):
        warn(stops_early)
    drift = command_drift(tasks, config)
    if drift:
        warn(drift)


@dataclass
class Pending:
    """The pairs of a run still to run, and what an earlier invocation of it left."""

    jobs: list[PairJob] = field(default_factory=list)
    done: list[RunResult] = field(default_factory=list)
    """Results already saved (a resumed run), kept as they are."""
    earlier_errors: dict[PairKey, int] = field(default_factory=dict)
    """Errored pairs set aside to run again: how many errors each had by then."""


def pending_jobs(
    repo: Repository,
    store: Store,
    manifest: RunManifest,
    planned: PlannedRun,
    *,
    sample: Mapping[str, int] | None,
    warn: Warn,
) -> Pending:
    """Every config x task x attempt without a result (with `retry_errors`, errored ones too),
    in the order that makes history copies cheapest, cut to `sample`; the errored ones to run
    again set aside (`Store.set_aside`)."""
    resume = planned.resume
    retry = resume is not None and resume.retry_errors
    pending = Pending()
    errored: list[tuple[PairJob, RunResult]] = []
    for task, planned_config, attempt in product(
        planned.plan.tasks, planned.plan.configs, range(1, manifest.repeat + 1)
    ):
        name = planned_config.config.name
        path = store.result_path(manifest.runId, name, task.id, attempt)
        done = store.load_result(path, warn=warn) if resume is not None else None
        if done is not None and not (retry and done.status == "error"):
            pending.done.append(done)
            continue
        pending.jobs.append(PairJob(planned_config, task, attempt))
        if done is not None:
            errored.append((pending.jobs[-1], done))
    pending.jobs = _sampled(_oldest_first(repo, planned.plan.tasks, pending.jobs), sample)
    chosen = {id(job) for job in pending.jobs}
    for job, done in errored:
        if id(job) in chosen:
            store.set_aside(manifest.runId, done.config, done.task, done.attempt)
            pending.earlier_errors[(done.config, done.task, done.attempt)] = done.earlierErrors + 1
    return pending


def _oldest_first(repo: Repository, tasks: Sequence[Task], jobs: list[PairJob]) -> list[PairJob]:
    """Fewest ancestors first: each task's isolated history copy then borrows the previous one's
    objects and packs only the commits in between (see HistoryCopies), and no copy that holds a
    task's fix exists before that task is done: a fix is an ancestor of every base that holds
    it, so such a base has more ancestors than the task's own (commit times can tie). A kind
    that brings its own repository has no history here: its tasks count as depth 0."""
    bases = {task.base for task in tasks if kinds.get(task.kind).history_tips(task)}
    depths = {base: repo.ancestor_count(base) for base in bases}
    return sorted(jobs, key=lambda job: depths.get(job.task.base, 0))


def _sampled(jobs: list[PairJob], sample: Mapping[str, int] | None) -> list[PairJob]:
    """At most `sample[config]` pairs of each config named there (`run --estimate`)."""
    if sample is None:
        return jobs
    counted: dict[str, int] = {}
    kept: list[PairJob] = []
    for job in jobs:
        name = job.planned.config.name
        counted[name] = counted.get(name, 0) + 1
        if name not in sample or counted[name] <= sample[name]:
            kept.append(job)
    return kept


def run_loop(
    finished: Generator[RunResult | None, None, None],
    store: Store,
    run_id: str,
    earlier_errors: Mapping[PairKey, int],
    *,
    on_result: Callable[[RunResult], None],
) -> list[RunResult]:
    """Each result of `finished` (an executor's) as it comes: its earlier errors counted, saved,
    then told; None (a pair the gate kept from starting) is skipped."""
    results: list[RunResult] = []
    try:
        for result in finished:
            if result is None:
                continue
            key = (result.config, result.task, result.attempt)
            if key in earlier_errors:
                result = result.model_copy(update={"earlierErrors": earlier_errors[key]})
            try:
                store.save_result(result)
            except StorageError as error:
                raise StorageError(
                    f"{error}; the results written so far are kept: free some space, then "
                    f"`gitgauge run --resume {run_id}`"
                ) from None
            results.append(result)
            on_result(result)
    finally:
        # Stop the workers and remove the workspaces now, not whenever the generator is
        # collected: a failed write must not leave a pair running or a history copy behind.
        finished.close()
    return results
