"""`gitgauge run`: every agent config on every task, one throwaway workspace per pair.

For each pair: a worktree at the task's base -> setupCommand -> the adapter -> diff stats and the
agent's patch -> protected files reverted -> the fix's tests (resolved?) -> the base suite
(regressed?) -> the worktree removed. Each pair's `RunResult` is written as soon as it is known, so
an interrupted run keeps every finished pair. An agent's crash or timeout is a result with status
`error`, never an exception: the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gitgauge import __version__
from gitgauge.core import fingerprint, kinds, links
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.parallel import in_order
from gitgauge.core.records import RunManifest, RunResult, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import (
    StorageError,
    Store,
    new_run_id,
)
from gitgauge.core.suite import stop_early_warning
from gitgauge.core.worktree import Warn
from gitgauge.running import harness as harnesses
from gitgauge.running.executors import PairExecutor
from gitgauge.running.gate import RunGate
from gitgauge.running.pair import Pair, now
from gitgauge.running.plan import PairJob, PlannedConfig, ResumeFrom, RunPlan, command_drift
from gitgauge.running.workspace import HistoryCopies, TaskWorkspaces


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    manifest: RunManifest
    results: list[RunResult]
    gate: RunGate | None = None
    """What the run's gate stopped: configs with a broken setup, the budget."""
    retried: int = 0
    """Errored pairs set aside to run again (`--retry-errors`)."""


def execute(
    repo: Repository,
    repo_config: RepoConfig,
    store: Store,
    plan: RunPlan,
    *,
    warn: Warn,
    jobs: int = 1,
    repeat: int = 1,
    resume: ResumeFrom | None = None,
    on_start: Callable[[PlannedConfig, Task], None] = lambda planned, task: None,
    on_result: Callable[[RunResult], None] = lambda result: None,
    sandbox: Sandbox | None = None,
    executor: PairExecutor | None = None,
    mode: str | None = None,
    gate: RunGate | None = None,
    sample: Mapping[str, int] | None = None,
) -> RunOutcome:
    """Run every pair (task-major, so a task's workspace source is prepared once and reused by
    every config and attempt), `jobs` at a time; results come back in a stable order.

    `executor`: where the pairs run (default: here, `jobs` threads); a remote executor calls
    `Pair.run` on its nodes and yields results as pairs finish. `sandbox` is this machine's;
    a remote executor's nodes each make their own from `run.sandbox`. `mode`: `run --mode`,
    the mode of every task whose kind has modes (a fixture's agent or text). `gate` decides
    whether each pair starts (a broken config stopped, a budget; on a remote executor, which
    starts every pair at once, it only counts); `sample`: config name -> at most that many of its
    pending pairs run (`run --estimate`), the rest stay for `--resume`. With
    `resume.retry_errors`, each errored pair's record is set aside into its `errored-N/` log
    folder before it runs again."""
    if mode is not None and resume is not None and mode != resume.manifest.mode:
        raise UsageError(
            f"run {resume.run_id} ran with --mode {resume.manifest.mode or '(each task its own)'}; "
            "a resumed run keeps its mode: leave --mode out"
        )
    if mode is not None and resume is None:
        known = sorted({m for name in kinds.names() for m in kinds.get(name).modes})
        if mode not in known:
            raise UsageError(f"--mode must be one of {', '.join(known)}, got {mode!r}")
    if executor is not None and any(kinds.get(t.kind).own_repository for t in plan.tasks):
        raise UsageError(
            "fixture tasks run with the local executor only (their repositories are built "
            "where the pair runs): pass --executor local, or --task a task of another kind"
        )
    if jobs <= 0:
        raise UsageError(f"--jobs must be a positive number, got {jobs}")
    if repeat <= 0:
        raise UsageError(f"--repeat must be a positive number, got {repeat}")
    for planned in plan.configs:
        harnesses.check_links(planned.harness, repo_config.worktree.link)
    links.announce(repo.root, repo_config.worktree.link, tracked=repo.is_tracked, warn=warn)
    if executor is not None:
        # A remote executor's nodes each decide their sandbox from `run.sandbox` (the results
        # say which they got): the manifest records the mode asked for.
        recorded_sandbox: str = repo_config.run.sandbox
        recorded_network = repo_config.run.sandbox_network if recorded_sandbox != "none" else None
    else:
        recorded_sandbox = "bwrap" if sandbox is not None else "none"
        recorded_network = sandbox.network if sandbox is not None else None
    if resume is not None:
        manifest = resume.manifest.model_copy(update={"finishedAt": None})
        repeat = manifest.repeat
        mode = manifest.mode
    else:
        manifest = RunManifest(
            runId=new_run_id(),
            gitgaugeVersion=__version__,
            configs=[fingerprint.redacted(planned.config) for planned in plan.configs],
            configFiles=[str(Path(planned.source).resolve()) for planned in plan.configs],
            tasks=[task.id for task in plan.tasks],
            testCommand=repo_config.testCommand,
            setupCommand=repo_config.setupCommand,
            timeouts=repo_config.timeouts,
            repeat=repeat,
            history=repo_config.run.history,
            sandbox=recorded_sandbox,
            sandboxNetwork=recorded_network,
            startedAt=now(),
            mode=mode,
        )
        run_dir = store.run_dir(manifest.runId)
        recorded = {
            planned.config.name: harnesses.record(run_dir, planned.config, planned.harness)
            for planned in plan.configs
        }
        manifest = manifest.model_copy(update={"harness": recorded})
    store.save_manifest(manifest)
    run_id = manifest.runId
    stops_early = stop_early_warning(repo_config.testCommand)
    if stops_early and any(task.failToPass is not None for task in plan.tasks):
        warn(stops_early)
    drift = command_drift(plan.tasks, repo_config)
    if drift:
        warn(drift)

    results: list[RunResult] = []
    pending: list[PairJob] = []
    errored: list[tuple[PairJob, RunResult]] = []
    for task in plan.tasks:
        for planned in plan.configs:
            for attempt in range(1, repeat + 1):
                path = store.result_path(run_id, planned.config.name, task.id, attempt)
                done = store.load_result(path, warn=warn) if resume is not None else None
                if done is not None and not (
                    resume and resume.retry_errors and done.status == "error"
                ):
                    results.append(done)
                else:
                    pending.append(PairJob(planned, task, attempt))
                    if done is not None:
                        errored.append((pending[-1], done))

    # Fewest ancestors first: each task's isolated history copy then borrows the previous one's
    # objects and packs only the commits in between (see HistoryCopies), and no copy that holds
    # a task's fix exists before that task is done: a fix is an ancestor of every base that
    # holds it, so such a base has more ancestors than the task's own (commit times can tie).
    # A kind that brings its own repository has no history here: its tasks count as depth 0.
    bases = {task.base for task in plan.tasks if kinds.get(task.kind).history_tips(task)}
    depths = {base: repo.ancestor_count(base) for base in bases}
    pending.sort(key=lambda job: depths.get(job.task.base, 0))
    if sample is not None:
        counted: dict[str, int] = {}
        kept: list[PairJob] = []
        for job in pending:
            name = job.planned.config.name
            counted[name] = counted.get(name, 0) + 1
            if name not in sample or counted[name] <= sample[name]:
                kept.append(job)
        pending = kept
    chosen = {id(job) for job in pending}
    earlier_errors: dict[tuple[str, str, int], int] = {}
    for job, done in errored:
        if id(job) in chosen:
            store.set_aside(run_id, done.config, done.task, done.attempt)
            earlier_errors[(done.config, done.task, done.attempt)] = done.earlierErrors + 1
    pair = Pair(repo, repo_config, store, run_id, warn, sandbox=sandbox, mode=mode)
    jobs_by_key = {(j.planned.config.name, j.task.id, j.attempt): j for j in pending}
    finished: Generator[RunResult | None, None, None]
    if executor is not None:
        finished = executor.run_pairs(pending, pair, on_start=on_start)
    else:
        finished = _run_all(
            pending, pair, HistoryCopies(repo), jobs=jobs, on_start=on_start, gate=gate
        )
    try:
        for result in finished:
            if result is None:  # the gate kept the pair from starting
                continue
            key = (result.config, result.task, result.attempt)
            if key in earlier_errors:
                result = result.model_copy(update={"earlierErrors": earlier_errors[key]})
            if gate is not None and executor is not None and key in jobs_by_key:
                gate.finished(jobs_by_key[key], result)  # local workers count their own
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
    manifest = manifest.model_copy(update={"finishedAt": now()})
    store.save_manifest(manifest)
    return RunOutcome(
        run_id=run_id, manifest=manifest, results=results, gate=gate, retried=len(earlier_errors)
    )


def other_parent(task: Task) -> str | None:
    """A second commit whose history the task's workspace holds (a merge's other parent)."""
    tips = kinds.get(task.kind).history_tips(task)
    return tips[1] if len(tips) > 1 else None


def _run_all(
    pending: list[PairJob],
    pair: Pair,
    sources: HistoryCopies,
    *,
    jobs: int,
    on_start: Callable[[PlannedConfig, Task], None],
    gate: RunGate | None = None,
) -> Generator[RunResult | None, None, None]:

    pool = CheckoutPool(owner_repository=pair.repo.root)

    def run_one(job: PairJob, slot: int) -> RunResult | None:
        if gate is not None and not gate.admit(job):
            return None
        on_start(job.planned, job.task)
        if not kinds.get(job.task.kind).history_tips(job.task):  # no history to prepare
            return pair.run(job.planned, job.task, None, attempt=job.attempt, slot=slot)
        with TaskWorkspaces(
            pair.repo,
            job.task.base,
            history=pair.config.run.history,
            link=pair.config.worktree.link,
            warn=pair.warn,
            copies=sources,
            other=other_parent(job.task),
            pool=pool,
        ) as prepared:
            result = pair.run(job.planned, job.task, prepared, attempt=job.attempt, slot=slot)
        if gate is not None:
            # Counted before this worker takes its next pair: with -j 1 every pair is judged
            # on all the pairs before it.
            gate.finished(job, result)
        return result

    # The checkouts and history copies go once every worker is done, also after an interrupt.
    try:
        yield from in_order(pending, run_one, jobs=jobs, name="run")
    finally:
        pool.close()
        sources.close()
