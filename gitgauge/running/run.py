"""`gitgauge run`: every agent config on every task, one throwaway workspace per pair.

For each pair: a worktree at the task's base -> setupCommand -> the adapter -> diff stats and the
agent's patch -> protected files reverted -> the fix's tests (resolved?) -> the base suite
(regressed?) -> the worktree removed. Each pair's `RunResult` is written as soon as it is known, so
an interrupted run keeps every finished pair. An agent's crash or timeout is a result with status
`error`, never an exception: the run goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitgauge import __version__
from gitgauge.core import fingerprint, links, process
from gitgauge.core.config import load_agent_config
from gitgauge.core.errors import ConfigError, GitGaugeError, TaskError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.harness_diff import changed_parts
from gitgauge.core.parallel import in_order
from gitgauge.core.prompt_template import render as render_prompt
from gitgauge.core.records import AgentConfig, ErrorKind, RepoConfig, RunManifest, RunResult, Task
from gitgauge.core.store import (
    StorageError,
    Store,
    atomic_write_text,
    config_dir_name,
    new_run_id,
)
from gitgauge.core.suite import NO_REPORT_HINT, stop_early_warning
from gitgauge.core.worktree import Warn, warn_once
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import Adapter, AdapterContext, AdapterOutcome, create
from gitgauge.running.executors import PairExecutor
from gitgauge.running.harness import Harness
from gitgauge.running.merge_run import score_merge_pair
from gitgauge.running.sandbox import Sandbox, SandboxMode, prepare
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.grade import grade
from gitgauge.running.scoring.protect import WorkspaceEscape, protect
from gitgauge.running.workspace import HistoryCopies, TaskWorkspaces

KNOWN_IDS_SHOWN = 5
"""How many known task ids an unknown `--task` error lists."""


@dataclass(frozen=True)
class PlannedConfig:
    config: AgentConfig
    source: str
    """The config file as given on the command line."""
    adapter: Adapter
    harness: Harness
    """The config's files, configDir and env, checked."""


def _planned(config: AgentConfig, source: str) -> PlannedConfig:
    adapter = create(config, source=source)
    return PlannedConfig(
        config, source, adapter, harnesses.prepare(config, source=source, environ=os.environ)
    )


@dataclass(frozen=True)
class RunPlan:
    """Everything validated before the first workspace is made."""

    configs: list[PlannedConfig]
    tasks: list[Task]


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    manifest: RunManifest
    results: list[RunResult]


def plan_run(
    repo: Repository,
    store: Store,
    config_files: Sequence[Path],
    *,
    task_id: str | None,
    warn: Warn,
) -> RunPlan:
    """Load and check every agent config and pick the tasks; raise before any work starts."""
    if not config_files:
        raise UsageError("pass at least one agent config: gitgauge run -c config.yaml")
    configs: list[PlannedConfig] = []
    sources: dict[str, str] = {}
    directories: dict[str, str] = {}
    for path in config_files:
        config = load_agent_config(path)
        if config.name in sources:
            raise ConfigError(
                f"{path}: name: {config.name!r} is also the name in {sources[config.name]}; "
                "give every config of a run its own name"
            )
        # Results live in a directory per config name; on a case-insensitive file system
        # "Gold" and "gold" would share one.
        directory = config_dir_name(config.name).lower()
        if directory in directories:
            raise ConfigError(
                f"{path}: name: {config.name!r} is too close to {directories[directory]!r} "
                "(they would share a results directory); rename one"
            )
        sources[config.name] = str(path)
        directories[directory] = config.name
        configs.append(_planned(config, str(path)))
    for planned in configs:
        planned.adapter.check()
    return RunPlan(configs=configs, tasks=_select_tasks(repo, store, task_id, warn=warn))


def _select_tasks(repo: Repository, store: Store, task_id: str | None, *, warn: Warn) -> list[Task]:
    tasks = store.load_tasks(warn=warn)
    if not tasks:
        raise TaskError(f"no tasks in {store.tasks_dir}: run `gitgauge mine` first")
    if task_id is not None:
        chosen = [task for task in tasks if task.id == task_id]
        if not chosen:
            known = ", ".join(task.id for task in tasks[:KNOWN_IDS_SHOWN])
            hidden = len(tasks) - KNOWN_IDS_SHOWN
            more = f" and {hidden} more" if hidden > 0 else ""
            raise TaskError(
                f"unknown task {task_id!r}; known tasks: {known}{more} (see {store.tasks_dir})"
            )
        tasks = chosen
    usable: list[Task] = []
    for task in tasks:
        needed = (task.base, task.fix, *([task.other] if task.other else []))
        missing = [sha for sha in needed if not repo.has_commit(sha)]
        if missing:
            warn(
                f"skipping task {task.id}: commit {missing[0][:12]} is not in this repository "
                "(history rewritten, or a shallow clone?)"
            )
        else:
            usable.append(task)
    if not usable:
        raise TaskError("none of the selected tasks can run: their commits are missing")
    return usable


def plan_sandbox(
    repo: Repository, repo_config: RepoConfig, plan: RunPlan, *, mode: SandboxMode, warn: Warn
) -> Sandbox | None:
    """The sandbox of a run (see `running/sandbox.py`), checked before any work starts.

    Each adapter is asked what it needs with the environment its agent will get (the config's
    `env` included: a `GITGAUGE_CLAUDE_BIN`, `GITGAUGE_CODEX_BIN` or `CODEX_HOME` set there
    counts)."""
    env = process.clean_env()
    return prepare(
        mode,
        network=repo_config.run.sandbox_network,
        repo_root=repo.root,
        link=repo_config.worktree.link,
        exposures=[
            (p.source, p.adapter.sandbox_exposure({**env, **p.harness.env})) for p in plan.configs
        ],
        test_command=repo_config.testCommand,
        home_writable=repo_config.run.sandbox_home_writable,
        env=env,
        warn=warn,
    )


@dataclass(frozen=True)
class ResumeFrom:
    """An earlier run to continue (`run --resume`)."""

    run_id: str
    manifest: RunManifest
    retry_errors: bool = False
    """Run again the pairs that ended as errors."""


def plan_resume(
    repo: Repository, store: Store, run_id: str | None, *, warn: Warn
) -> tuple[RunPlan, RunManifest]:
    """The configs and tasks of an earlier run, refusing a config file that changed since."""
    runs = [run for run in store.load_runs(warn=warn) if run.manifest is not None]
    if not runs:
        raise TaskError(f"no run to resume in {store.runs_dir}: start one with `gitgauge run`")
    if run_id is None or run_id == "latest":
        stored = runs[-1]
    else:
        matches = [run for run in runs if run.run_id == run_id]
        if not matches:
            known = ", ".join(run.run_id for run in runs[-KNOWN_IDS_SHOWN:])
            raise TaskError(f"unknown run {run_id!r}; recent runs: {known}")
        stored = matches[0]
    manifest = stored.manifest
    assert manifest is not None
    configs: list[PlannedConfig] = []
    for source, recorded in zip(manifest.configFiles, manifest.configs, strict=True):
        current = load_agent_config(Path(source))
        planned = _planned(current, source)
        before = fingerprint.load(store.run_dir(manifest.runId), recorded.name)
        if before is not None:
            now, _ = fingerprint.build(current, planned.harness.sources)
            changed = changed_parts(before, fingerprint.StoredHarness(now, before.folder))
            if current.name != recorded.name:
                changed.insert(0, "name")
        else:  # a run made before harnesses were recorded
            changed = [] if fingerprint.redacted(current) == recorded else ["the YAML"]
        if changed:
            raise ConfigError(
                f"{source}: changed since run {manifest.runId} started ({', '.join(changed)}); "
                "resuming would mix two configurations under one name: restore it, or start a "
                "new run"
            )
        configs.append(planned)
    for planned in configs:
        planned.adapter.check()
    by_id = {task.id: task for task in store.load_tasks(warn=warn)}
    tasks: list[Task] = []
    for task_id in manifest.tasks:
        if task_id in by_id:
            tasks.append(by_id[task_id])
        else:
            warn(f"task {task_id} of run {manifest.runId} is no longer in {store.tasks_dir}")
    return RunPlan(configs=configs, tasks=tasks), manifest


@dataclass(frozen=True)
class _PairJob:
    planned: PlannedConfig
    task: Task
    attempt: int


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
) -> RunOutcome:
    """Run every pair (task-major, so a task's workspace source is prepared once and reused by
    every config and attempt), `jobs` at a time; results come back in a stable order.

    `executor`: where the pairs run (default: here, `jobs` threads); a remote executor calls
    `_Pair.run` on its nodes and yields results as pairs finish."""
    if jobs <= 0:
        raise UsageError(f"--jobs must be a positive number, got {jobs}")
    if repeat <= 0:
        raise UsageError(f"--repeat must be a positive number, got {repeat}")
    for planned in plan.configs:
        harnesses.check_links(planned.harness, repo_config.worktree.link)
    if resume is not None:
        manifest = resume.manifest.model_copy(update={"finishedAt": None})
        repeat = manifest.repeat
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
            sandbox="bwrap" if sandbox is not None else "none",
            sandboxNetwork=sandbox.network if sandbox is not None else None,
            startedAt=_now(),
        )
        run_dir = store.run_dir(manifest.runId)
        recorded = {
            planned.config.name: harnesses.record(run_dir, planned.config, planned.harness)
            for planned in plan.configs
        }
        manifest = manifest.model_copy(update={"harness": recorded})
    links.announce(repo.root, repo_config.worktree.link, tracked=repo.is_tracked, warn=warn)
    store.save_manifest(manifest)
    run_id = manifest.runId
    stops_early = stop_early_warning(repo_config.testCommand)
    if stops_early and any(task.failToPass is not None for task in plan.tasks):
        warn(stops_early)

    results: list[RunResult] = []
    pending: list[_PairJob] = []
    for task in plan.tasks:
        for planned in plan.configs:
            for attempt in range(1, repeat + 1):
                path = store.result_path(run_id, planned.config.name, task.id, attempt)
                done = store.load_result(path) if resume is not None else None
                if done is not None and not (
                    resume and resume.retry_errors and done.status == "error"
                ):
                    results.append(done)
                else:
                    pending.append(_PairJob(planned, task, attempt))

    # Oldest base first: each task's isolated history copy then borrows the previous one's
    # objects and packs only the commits in between (see HistoryCopies).
    commit_times = {task.base: repo.commit_time(task.base) for task in plan.tasks}
    pending.sort(key=lambda job: commit_times[job.task.base])
    pair = _Pair(repo, repo_config, store, run_id, warn, sandbox=sandbox)
    if executor is not None:
        finished = executor.run_pairs(pending, pair, on_start=on_start)
    else:
        finished = _run_all(pending, pair, HistoryCopies(repo), jobs=jobs, on_start=on_start)
    try:
        for result in finished:
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
    manifest = manifest.model_copy(update={"finishedAt": _now()})
    store.save_manifest(manifest)
    return RunOutcome(run_id=run_id, manifest=manifest, results=results)


def _run_all(
    pending: list[_PairJob],
    pair: _Pair,
    sources: HistoryCopies,
    *,
    jobs: int,
    on_start: Callable[[PlannedConfig, Task], None],
) -> Generator[RunResult, None, None]:

    def run_one(job: _PairJob, slot: int) -> RunResult:
        on_start(job.planned, job.task)
        with TaskWorkspaces(
            pair.repo,
            job.task.base,
            history=pair.config.run.history,
            link=pair.config.worktree.link,
            warn=pair.warn,
            copies=sources,
            other=job.task.other if job.task.kind == "merge" else None,
        ) as prepared:
            return pair.run(job.planned, job.task, prepared, attempt=job.attempt, slot=slot)

    # The history copies go once every worker is done, also after an interrupt.
    try:
        yield from in_order(pending, run_one, jobs=jobs, name="run")
    finally:
        sources.close()


class _Pair:
    """One config x task in its own workspace."""

    def __init__(
        self,
        repo: Repository,
        config: RepoConfig,
        store: Store,
        run_id: str,
        warn: Warn,
        *,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.repo = repo
        self.config = config
        self.store = store
        self.run_id = run_id
        self.warn = warn_once(warn)

    def run(
        self,
        planned: PlannedConfig,
        task: Task,
        prepared: TaskWorkspaces,
        *,
        attempt: int = 1,
        slot: int = 0,
    ) -> RunResult:
        started = _now()
        log_dir = self.store.log_dir(self.run_id, planned.config.name, task.id, attempt)
        log_dir.mkdir(parents=True, exist_ok=True)
        fields: dict[str, Any] = {"kind": task.kind}
        checkout_before = self.repo.checkout_state()
        try:
            self._score(planned, task, prepared, log_dir, fields, slot=slot)
        except WorkspaceEscape as error:
            fields.update(status="error", errorKind="escaped-workspace", errorMessage=str(error))
        except GitGaugeError as error:
            # A git failure in one workspace (a missing object, a full disk) spoils this pair
            # only; the message says what happened.
            fields.update(status="error", errorKind="internal", errorMessage=str(error))
        if self.repo.checkout_state() != checkout_before:
            # Never undo it: it may be the user's own work (or a concurrent pair's, with -j).
            message = (
                f"your checkout {self.repo.root} changed while {planned.config.name} worked on "
                f"{task.id} (HEAD, branches, index, working tree or stash): the agent left its "
                "workspace; check `git status` and `git stash list`. Nothing was undone."
            )
            self.warn(message)
            fields.update(status="error", errorKind="escaped-workspace", errorMessage=message)
        return RunResult(
            runId=self.run_id,
            config=planned.config.name,
            task=task.id,
            attempt=attempt,
            startedAt=started,
            finishedAt=_now(),
            **fields,
        )

    def _run_agent(
        self,
        planned: PlannedConfig,
        task: Task,
        workspace: Path,
        env: dict[str, str],
        log_dir: Path,
        *,
        restore_to: str | None,
    ) -> AdapterOutcome:
        """The config's harness laid in, the adapter run (in the sandbox, with its own copy of
        the config dir), and the harness taken out again (to its state at `restore_to`, or else
        to what the workspace held): it is not the agent's work, so it stays out of the diff, the
        patch and the scored tree."""
        harness = planned.harness
        with (
            harnesses.laid(harness, workspace, repo=self.repo, base=restore_to),
            harnesses.agent_config_dir(harness, environ=os.environ) as config_dir,
        ):
            agent_sandbox = (
                self.sandbox.argv(
                    workspace, agent=True, writable=[config_dir] if config_dir else []
                )
                if self.sandbox
                else []
            )
            return planned.adapter.run(
                AdapterContext(
                    workspace=workspace,
                    task=task,
                    repo=self.repo,
                    timeout_seconds=self.config.timeouts.adapter / 1000,
                    env={**env, **harness.env},
                    log_dir=log_dir,
                    prompt=render_prompt(planned.config.prompt, task),
                    config_dir=config_dir,
                    sandbox=agent_sandbox,
                )
            )

    def _score(
        self,
        planned: PlannedConfig,
        task: Task,
        prepared: TaskWorkspaces,
        log_dir: Path,
        fields: dict[str, Any],
        *,
        slot: int,
    ) -> None:
        """Fill `fields` of the result step by step, so an error keeps what was measured."""
        link = self.config.worktree.link
        with prepared.workspace() as workspace:
            # Linked editable installs import from the checkout: make them import the workspace.
            redirect = links.worktree_env(self.repo.root, link, workspace)
            env = process.clean_env(cwd=workspace, extra={"GITGAUGE_JOB": str(slot), **redirect})
            if task.kind == "merge":
                score_merge_pair(
                    self.repo,
                    self.config,
                    task,
                    workspace,
                    log_dir,
                    fields,
                    env=env,
                    setup=self._setup,
                    run_agent=lambda: self._run_agent(
                        planned, task, workspace, env, log_dir, restore_to=None
                    ),
                    outcome_fields=_outcome_fields,
                    sandbox=self.sandbox,
                )
                return
            setup_error = self._setup(workspace, env, log_dir)
            if setup_error is not None:
                fields.update(status="error", errorKind="setup", errorMessage=setup_error)
                return
            outcome = self._run_agent(planned, task, workspace, env, log_dir, restore_to=task.base)
            fields.update(_outcome_fields(outcome))
            # Measured for failed agents too: the patch of a timed-out agent helps to see why.
            diffstat.stage_all(self.repo, workspace, link=link)
            stat = diffstat.diff_stat(self.repo, workspace, task.base, link=link)
            fields.update(
                diffFiles=stat.files, diffInsertions=stat.insertions, diffDeletions=stat.deletions
            )
            agent_patch = diffstat.patch(self.repo, workspace, task.base, link=link)
            atomic_write_text(log_dir / "agent.patch", agent_patch)
            if not outcome.ok:
                return
            try:
                protection = protect(
                    self.repo, workspace, task.base, link=link, patterns=self.config.tests.patterns
                )
                fields.update(reverted=protection.reverted, deleted=protection.deleted)
                verdict = grade(
                    self.repo,
                    task,
                    workspace,
                    self.config,
                    env=env,
                    log_dir=log_dir,
                    sandbox=self.sandbox,
                )
            except OSError as error:
                # The agent left the tree in a shape files cannot be laid into (a file where
                # `tests/` was, say): its work cannot be scored.
                fields.update(
                    status="error",
                    errorKind="internal",
                    errorMessage=f"could not lay the test files into the workspace: {error}",
                )
                return
            fields.update(
                status="resolved" if verdict.resolved else "unresolved",
                regressed=verdict.regressed,
                testExitCode=verdict.test.exit_code,
                testTimedOut=verdict.test.timed_out,
                testOutputTail=verdict.test.output_tail(),
                failToPassFailed=verdict.fail_to_pass_failed,
                passToPassFailed=verdict.pass_to_pass_failed,
            )
            if verdict.report_problem is not None:
                self.warn(f"{verdict.report_problem}: {NO_REPORT_HINT}")
            if verdict.base_test is not None:
                fields.update(
                    baseTestExitCode=verdict.base_test.exit_code,
                    baseTestOutputTail=verdict.base_test.output_tail(),
                )

    def _setup(self, workspace: Path, env: dict[str, str], log_dir: Path) -> str | None:
        """Run setupCommand; the reason it failed, or None."""
        if not self.config.setupCommand:
            return None
        result = process.run(
            self.config.setupCommand,
            cwd=workspace,
            timeout_seconds=self.config.timeouts.setup / 1000,
            env=env,
            stdout_path=log_dir / "setup.stdout",
            stderr_path=log_dir / "setup.stderr",
        )
        if result.ok:
            return None
        if result.timed_out:
            how = f"timed out after {self.config.timeouts.setup / 1000:g}s (timeouts.setup)"
        else:
            how = f"exited {result.exit_code}"
        tail = result.output_tail(300).strip()
        return f"setupCommand {how}" + (f": {tail}" if tail else "")


def _outcome_fields(outcome: AdapterOutcome) -> dict[str, Any]:
    error_kind: ErrorKind | None = outcome.error_kind
    fields: dict[str, Any] = {
        "adapterSeconds": round(outcome.seconds, 3),
        "costUsd": outcome.cost_usd,
        "inputTokens": outcome.input_tokens,
        "outputTokens": outcome.output_tokens,
        "cacheCreationInputTokens": outcome.cache_creation_input_tokens,
        "cacheReadInputTokens": outcome.cache_read_input_tokens,
        "numTurns": outcome.num_turns,
        "reasoningOutputTokens": outcome.reasoning_output_tokens,
    }
    if error_kind is not None:
        fields.update(status="error", errorKind=error_kind, errorMessage=outcome.error_message)
    return fields


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
