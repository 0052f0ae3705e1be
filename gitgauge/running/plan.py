"""Planning a run: the agent configs loaded and checked (adapter, harness), the tasks chosen,
whether the executor can run their kinds, the sandbox decided (`running/sandboxing.py`), what
`--resume` takes over from the run it continues, and the executor opened. Nothing here starts
an agent; every error is raised before any workspace is made.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge.core import fingerprint, kinds, process
from gitgauge.core.config import load_agent_config
from gitgauge.core.errors import ConfigError, TaskError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.harness_diff import changed_parts
from gitgauge.core.records import FIXTURE_TASK_ID, TASK_ID, RunManifest, Task
from gitgauge.core.schema import AgentConfig, RepoConfig
from gitgauge.core.store import (
    Store,
    config_dir_name,
)
from gitgauge.core.task_ids import resolve_task_id
from gitgauge.core.text import plural
from gitgauge.core.worktree import Warn
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import Adapter, create
from gitgauge.running.executors import PairExecutor, open_executor
from gitgauge.running.harness import Harness
from gitgauge.running.sandboxing import SANDBOX_MODES as SANDBOX_MODES
from gitgauge.running.sandboxing import SandboxChoice, decide_sandbox
from gitgauge.running.sandboxing import plan_sandbox as plan_sandbox

if TYPE_CHECKING:
    from gitgauge.running.request import RunRequest

KNOWN_IDS_SHOWN = 5
"""How many known task ids an unknown `--task` error lists."""


def command_drift(tasks: Sequence[Task], config: RepoConfig) -> str | None:
    """A warning when `gitgauge.yaml`'s testCommand or setupCommand is not the one some tasks
    were proved with (their FAIL_TO_PASS and PASS_TO_PASS may not hold under it); None when all
    agree. Tasks mined before gitgauge recorded the commands are left out."""
    drifted: list[str] = []
    for key in ("testCommand", "setupCommand"):
        now = getattr(config, key)
        mined = [getattr(task, key) for task in tasks if task.testCommand is not None]
        other = [command for command in mined if command != now]
        if other:
            drifted.append(
                f"{len(other)} of {plural(len(tasks), 'task')} "
                f"{'was' if len(other) == 1 else 'were'} mined with {key} {other[0]!r}, "
                f"gitgauge.yaml has {now!r}"
            )
    if not drifted:
        return None
    return (
        "; ".join(drifted) + ": what they prove may not hold under it (set it back in "
        "gitgauge.yaml, or delete their task files and mine again)"
    )


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
class PairJob:
    """One config x task attempt to run."""

    planned: PlannedConfig
    task: Task
    attempt: int


@dataclass(frozen=True)
class RunPlan:
    """Everything validated before the first workspace is made."""

    configs: list[PlannedConfig]
    tasks: list[Task]


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
    check_adapters(configs)
    return RunPlan(configs=configs, tasks=_select_tasks(repo, store, task_id, warn=warn))


def check_adapters(configs: Sequence[PlannedConfig]) -> None:
    """Each config's adapter, once, before any work: its binary is there and runs, and it has
    credentials in the environment its agent will get (the config's `env` included). An
    `AdapterError` names the config file and the fix."""
    env = process.clean_env()
    for planned in configs:
        planned.adapter.check()
        planned.adapter.preflight(
            {**env, **planned.harness.env}, config_dir=planned.harness.sources.config_dir
        )


def _select_tasks(repo: Repository, store: Store, task_id: str | None, *, warn: Warn) -> list[Task]:
    tasks = store.load_tasks(warn=warn)
    if task_id is not None:
        # A start of an id names the task, among usable ones and files that were skipped alike.
        on_disk = [path.stem for path in store.tasks_dir.glob("*.yaml")]
        task_id = resolve_task_id(task_id, [task.id for task in tasks] + on_disk) or task_id
    chosen = [task for task in tasks if task.id == task_id]
    well_formed = task_id is not None and any(
        pattern.fullmatch(task_id) for pattern in (TASK_ID, FIXTURE_TASK_ID)
    )
    if task_id is not None and not chosen and well_formed:
        # Only a well-formed id becomes a path: `--task ../../x` is simply unknown.
        if store.task_path(task_id).is_file():
            raise TaskError(
                f"task {task_id!r} cannot be used: {store.task_path(task_id)} was skipped (see "
                "the warning above)"
            )
    if not tasks:
        if store.tasks_dir.is_dir() and any(store.tasks_dir.glob("*.yaml")):
            raise TaskError(
                f"no usable tasks in {store.tasks_dir}: every task file was skipped (see the "
                "warnings above)"
            )
        raise TaskError(f"no tasks in {store.tasks_dir}: run `gitgauge mine` first")
    if task_id is not None:
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
        needed = kinds.get(task.kind).commits(task)
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
    check_adapters(configs)
    by_id = {task.id: task for task in store.load_tasks(warn=warn)}
    tasks: list[Task] = []
    for task_id in manifest.tasks:
        if task_id in by_id:
            tasks.append(by_id[task_id])
        else:
            warn(f"task {task_id} of run {manifest.runId} is no longer in {store.tasks_dir}")
    return RunPlan(configs=configs, tasks=tasks), manifest


@dataclass(frozen=True)
class PlannedRun:
    """A run decided: what runs, what it continues, and its sandbox (this machine's, or the
    mode a remote executor's nodes each decide)."""

    plan: RunPlan
    resume: ResumeFrom | None
    sandbox: SandboxChoice


def plan_whole_run(
    repo: Repository,
    store: Store,
    config: RepoConfig,
    request: RunRequest,
    *,
    warn: Warn,
) -> PlannedRun:
    """Everything `gitgauge run` decides before any pair starts: the configs and tasks (or
    those of the run it resumes, refusing changed configs and another sandbox), whether the
    executor can run their kinds, and the run's sandbox (`config` carries the flags:
    `RunRequest.configured`)."""
    if request.resume is None and request.retry_errors:
        raise UsageError("--retry-errors goes with --resume")
    if request.resume is not None and (request.configs or request.task):
        raise UsageError("--resume takes the configs and tasks of the run it continues")
    if request.resume is None and not request.configs:
        raise UsageError("pass at least one agent config: gitgauge run -c config.yaml")
    origin: ResumeFrom | None = None
    if request.resume is not None:
        plan, manifest = plan_resume(repo, store, request.resume, warn=warn)
        origin = ResumeFrom(manifest.runId, manifest, retry_errors=request.retry_errors)
    else:
        plan = plan_run(repo, store, request.configs, task_id=request.task, warn=warn)
    check_remote_kinds(plan, executor=config.run.executor)
    choice = decide_sandbox(repo, config, plan, flag=request.sandbox, warn=warn)
    if origin is not None:
        _check_resumed_sandbox(origin, choice)
    return PlannedRun(plan=plan, resume=origin, sandbox=choice)


def check_remote_kinds(plan: RunPlan, *, executor: str) -> None:
    """Refuse tasks whose kind cannot run on a remote executor's node (`TaskKind.remote`: the
    one place it is read) when `executor` is not the local one."""
    if executor == "local":
        return
    local_only = sorted({task.kind for task in plan.tasks if not kinds.get(task.kind).remote})
    if local_only:
        raise UsageError(
            f"--executor {executor} (or run.executor) cannot run "
            f"{' and '.join(local_only)} tasks, which need this repository: run them with "
            "--executor local (pass --task to pick others)"
        )


def _check_resumed_sandbox(origin: ResumeFrom, choice: SandboxChoice) -> None:
    """A resumed run keeps its sandbox; one recorded as auto (on Ray, each node decided)
    continues with auto anywhere."""
    recorded = origin.manifest.sandbox
    if recorded != choice.label and (recorded, choice.mode) != ("auto", "auto"):
        raise UsageError(
            f"run {origin.run_id} ran with sandbox {recorded}, this one would run with "
            f"{choice.label}: resume with --sandbox {recorded}"
        )


def open_run_executor(config: RepoConfig, request: RunRequest, *, warn: Warn) -> PairExecutor:
    """The executor `run.executor` names, opened (a cluster connected and checked), once the
    request's flags are known to suit it."""
    if request.max_cost is not None and config.run.executor != "local":
        raise UsageError(
            "--max-cost needs the local executor: a Ray cluster starts every pair at once"
        )
    executor = open_executor(config, address=request.ray_address, jobs=request.jobs)
    if config.run.executor != "local" and request.jobs != 1:
        warn("--jobs does not apply with --executor ray: the cluster's resources decide")
    return executor
