"""Planning a run: the agent configs loaded and checked (adapter, harness), the tasks chosen,
the sandbox decided, and what `--resume` takes over from the run it continues. Nothing here
starts an agent; every error is raised before any workspace is made.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import fingerprint, kinds, process
from gitgauge.core.config import load_agent_config
from gitgauge.core.errors import ConfigError, TaskError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.harness_diff import changed_parts
from gitgauge.core.records import FIXTURE_TASK_ID, TASK_ID, RunManifest, Task
from gitgauge.core.sandbox import Sandbox, SandboxMode, prepare
from gitgauge.core.schema import AgentConfig, RepoConfig
from gitgauge.core.store import (
    Store,
    config_dir_name,
)
from gitgauge.core.task_ids import resolve_task_id
from gitgauge.core.worktree import Warn
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import Adapter, create
from gitgauge.running.harness import Harness

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
                f"{len(other)} of {len(tasks)} task(s) were mined with {key} {other[0]!r}, "
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


def plan_sandbox(
    repo: Repository, repo_config: RepoConfig, plan: RunPlan, *, mode: SandboxMode, warn: Warn
) -> Sandbox | None:
    """The sandbox of a run (see `core/sandbox.py`), checked before any work starts.

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
    check_adapters(configs)
    by_id = {task.id: task for task in store.load_tasks(warn=warn)}
    tasks: list[Task] = []
    for task_id in manifest.tasks:
        if task_id in by_id:
            tasks.append(by_id[task_id])
        else:
            warn(f"task {task_id} of run {manifest.runId} is no longer in {store.tasks_dir}")
    return RunPlan(configs=configs, tasks=tasks), manifest


SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "none")


def apply_flags(
    config: RepoConfig,
    *,
    sandbox: str | None,
    executor: str | None,
    ray_address: str | None,
) -> RepoConfig:
    """gitgauge.yaml's `run` settings as `--sandbox`, `--executor` and `--ray-address` set them
    (a bad value is a `UsageError` naming the flag)."""
    if sandbox is not None and sandbox not in SANDBOX_MODES:
        raise UsageError(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}")
    run = config.run
    if sandbox is not None:
        run = run.model_copy(update={"sandbox": sandbox})
    if executor is not None:
        if executor not in ("local", "ray"):
            raise UsageError(f"--executor must be local or ray, got {executor!r}")
        run = run.model_copy(update={"executor": executor})
    if ray_address is not None and run.executor != "ray":
        raise UsageError("--ray-address goes with --executor ray (or run.executor: ray)")
    return config.model_copy(update={"run": run})


@dataclass(frozen=True)
class PlannedRun:
    """A run decided: what runs, what it continues, and the sandbox of this machine (None on a
    remote executor, whose nodes decide, or without one)."""

    plan: RunPlan
    resume: ResumeFrom | None
    sandbox: Sandbox | None


def plan_whole_run(
    repo: Repository,
    store: Store,
    config: RepoConfig,
    *,
    config_files: Sequence[Path],
    task_id: str | None,
    resume: str | None,
    retry_errors: bool,
    warn: Warn,
) -> PlannedRun:
    """Everything `gitgauge run` decides before any pair starts: the configs and tasks (or
    those of the run it resumes, refusing changed configs and another sandbox mode), and this
    machine's sandbox (`config` carries the flags, see `apply_flags`)."""
    if resume is None and retry_errors:
        raise UsageError("--retry-errors goes with --resume")
    if resume is not None and (config_files or task_id):
        raise UsageError("--resume takes the configs and tasks of the run it continues")
    if resume is None and not config_files:
        raise UsageError("pass at least one agent config: gitgauge run -c config.yaml")
    origin: ResumeFrom | None = None
    if resume is not None:
        plan, manifest = plan_resume(repo, store, resume, warn=warn)
        origin = ResumeFrom(manifest.runId, manifest, retry_errors=retry_errors)
    else:
        plan = plan_run(repo, store, config_files, task_id=task_id, warn=warn)
    if config.run.executor != "local":
        local_only = sorted({task.kind for task in plan.tasks if not kinds.get(task.kind).remote})
        if local_only:
            raise UsageError(
                f"--executor {config.run.executor} (or run.executor) cannot run "
                f"{' and '.join(local_only)} tasks, which need this repository: run them with "
                "--executor local (pass --task to pick others)"
            )
    mode = config.run.sandbox
    box: Sandbox | None = None
    if config.run.executor == "local":
        box = plan_sandbox(repo, config, plan, mode=mode, warn=warn)
        used: str = "bwrap" if box is not None else "none"
    else:
        used = mode  # each node decides from the mode (this machine's bwrap says nothing)
    if origin is not None:
        recorded = origin.manifest.sandbox
        # A run recorded as auto (on Ray, each node decided) continues with auto anywhere.
        if recorded != used and (recorded, mode) != ("auto", "auto"):
            raise UsageError(
                f"run {origin.run_id} ran with sandbox {recorded}, this one would run with "
                f"{used}: resume with --sandbox {recorded}"
            )
    return PlannedRun(plan=plan, resume=origin, sandbox=box)
