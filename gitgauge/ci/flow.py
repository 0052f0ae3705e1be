"""`gitgauge ci`, the use case: a pull request's harness change measured on the repository's own
tasks and reported where the reviewer reads.

```
context  = the refs and pull request (flags, else GitHub Actions' environment)   actions.py
refused  : a pull request from a fork without --allow-forks                        (exit 5)
change   = the harness files that differ between base and head                    refs.py
           none: one line, exit 0
sides    = <name>-base and <name>-head: one agent config, each ref's files         sides.py
tasks    = .gitgauge/tasks when its key matches, else mined (incrementally)        tasks.py
           then the seeded --tasks sample
run      = both configs on the same tasks, paired, in the run's sandbox            running/
verdict  = compare base head -> the comment (marker, markdown), posted or printed  verdict.py
gate     : --fail-if / --min-rate                                                  (exit 4)
```
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from gitgauge.ci.actions import CiContext, ci_context
from gitgauge.ci.github import GitHub, post_sticky
from gitgauge.ci.refs import changed_harness, harness_paths, resolve_ref
from gitgauge.ci.sides import Side, build_sides, refuse_overlap
from gitgauge.ci.tasks import cached_tasks, sample
from gitgauge.ci.verdict import MARKER, Gate, comment_body
from gitgauge.core.config import load_agent_config, load_repo_config
from gitgauge.core.errors import CiRefused, ConfigStopped, GateFailed, GitGaugeError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import RunResult
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.worktree import remove_stale
from gitgauge.mining.mine import mine as mine_history
from gitgauge.reporting.compare import Comparison
from gitgauge.reporting.compare import compare as compare_sides
from gitgauge.reporting.compare_markdown import link_base
from gitgauge.running.plan import (
    PlannedRun,
    check_remote_kinds,
    open_run_executor,
    plan_run,
)
from gitgauge.running.request import RunRequest
from gitgauge.running.run import RunEvents, execute
from gitgauge.running.sandboxing import decide_sandbox

WITHHELD = (
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
)
"""The runner's tokens: the comment's door keeps the one it needs, and no agent, setup or test
run started after it gets any (they inherit gitgauge's environment)."""
SIDES_DIR = "ci"
"""Under `.gitgauge/`: the two sides' configs and the harness files written from their refs."""


@dataclass(frozen=True)
class CiRequest:
    """Every option of `gitgauge ci`, as given (None: the environment or the default decides)."""

    config: Path
    base: str | None = None
    head: str | None = None
    pull_request: int | None = None
    tasks: int | None = None
    run: RunRequest = field(default_factory=RunRequest)
    """`--repeat`, `--max-cost`, `--jobs`, `--sandbox` and `--wait`, as `gitgauge run` takes
    them (its configs are the two sides', written by the check)."""
    dry_run: bool = False
    allow_forks: bool = False
    links: str | None = None
    """`--links`: the URL where the job publishes `.gitgauge/` (the comment links patches)."""
    gate: Gate = field(default_factory=Gate)


@dataclass(frozen=True)
class CiEvents:
    """What the check says as it goes (the CLI prints it)."""

    say: Callable[[str], None]
    warn: Callable[[str], None]
    on_result: Callable[[RunResult], None] = lambda result: None


@dataclass(frozen=True)
class CiOutcome:
    changed: tuple[str, ...]
    """The harness files that differ; empty: nothing was compared."""
    comparison: Comparison | None = None
    body: str | None = None
    posted: str | None = None
    """`created URL` or `updated URL`; None with --dry-run or nothing compared."""
    failures: tuple[str, ...] = ()


def run_check(
    request: CiRequest, environ: Mapping[str, str], cwd: Path, events: CiEvents
) -> CiOutcome:
    """The whole check; raises `CiRefused`, `GateFailed` (after posting) or any usage error."""
    _check_request(request)
    context = ci_context(environ, base=request.base, head=request.head, pull=request.pull_request)
    pull = context.pull_request
    if pull is not None and pull.from_fork and not request.allow_forks:
        fork = pull.head_repository or "(deleted)"
        raise CiRefused(
            f"pull request #{pull.number} comes from the fork {fork}: its "
            "harness files would steer an agent that holds your API key; not run (pass "
            "--allow-forks to run it anyway)"
        )
    github = None if request.dry_run else _github(context)
    for name in WITHHELD:
        os.environ.pop(name, None)
    repo = Repository(cwd)
    base = resolve_ref(repo, context.base, flag="--base")
    head = resolve_ref(repo, context.head, flag="--head")
    agent = load_agent_config(request.config)
    paths = harness_paths(agent.harnessFiles, source=str(request.config))
    refuse_overlap(agent, paths, request.config)
    change = changed_harness(repo, base, head, paths)
    if not change.changed:
        names = ", ".join(p.path + ("/" if p.directory else "") for p in paths)
        events.say(
            f"nothing to compare: no harness file ({names}) differs between "
            f"{base[:12]} and {head[:12]}"
        )
        return CiOutcome(changed=())
    events.say(f"harness files changed: {', '.join(change.files)}")
    config = request.run.configured(load_repo_config(repo.root))
    store = Store(repo.root)
    with exclusive(store.root, command="gitgauge ci", wait=request.run.wait, on_wait=events.warn):
        remove_stale(repo, report=events.warn)
        sides = build_sides(repo, agent, request.config, change, paths, store.root / SIDES_DIR)
        comparison = _run_sides(repo, config, store, request, sides, events)
    failures = tuple(request.gate.failures(comparison))
    gated = request.gate.fail_if is not None or request.gate.min_rate is not None
    body = comment_body(
        comparison,
        base=base,
        head=head,
        changed=change.files,
        failures=failures,
        gated=gated,
        links=request.links,
        store=store,
    )
    posted = None
    if github is not None and pull is not None:
        how, comment = post_sticky(github, pull.number, body, marker=MARKER)
        posted = f"{how} {comment.url}"
    outcome = CiOutcome(change.files, comparison, body, posted, failures)
    return outcome


def _check_request(request: CiRequest) -> None:
    if request.run.repeat <= 0:
        raise UsageError(
            f"--repeat must be a positive number of attempts, got {request.run.repeat}"
        )
    if request.tasks is not None and request.tasks <= 0:
        raise UsageError(f"--tasks must be a positive number of tasks, got {request.tasks}")
    request.run.check()
    request.gate.check()
    if request.links is not None:
        link_base(request.links)


def _github(context: CiContext) -> GitHub:
    """Where the comment goes, checked before any work (or the money spent has no comment)."""
    if context.pull_request is None:
        raise UsageError(
            "no pull request to comment on: GITHUB_EVENT_PATH holds no pull_request event; "
            "pass --pr NUMBER, or --dry-run to print the comment"
        )
    if not context.repository:
        raise UsageError("GITHUB_REPOSITORY is not set (owner/name): set it, or pass --dry-run")
    if not context.token:
        raise UsageError(
            "GITHUB_TOKEN is not set: give the step `env: GITHUB_TOKEN: "
            "${{ secrets.GITHUB_TOKEN }}` (pull-requests: write), or pass --dry-run"
        )
    return GitHub(context.api_url, context.repository, context.token)


def _run_sides(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    request: CiRequest,
    sides: tuple[Side, Side],
    events: CiEvents,
) -> Comparison:
    """Both sides on the same sample of the cached tasks, one run; compared base -> head."""
    base, head = sides

    def mine() -> int:
        summary = mine_history(repo, config, store, jobs=request.run.jobs, warn=events.warn)
        return len(summary.every_task)

    cached = cached_tasks(
        repo, config, store, base.commit, mine=mine, say=events.say, warn=events.warn
    )
    tasks = sample(cached.tasks, request.tasks)
    events.say(f"running {base.name} and {head.name} on {len(tasks)} of {len(cached.tasks)} tasks")
    run_request = replace(request.run, configs=(base.path, head.path))
    plan = plan_run(repo, store, run_request.configs, task_id=None, warn=events.warn)
    plan = replace(plan, tasks=tasks)
    check_remote_kinds(plan, executor=config.run.executor)
    choice = decide_sandbox(repo, config, plan, flag=request.run.sandbox, warn=events.warn)
    planned = PlannedRun(plan=plan, resume=None, sandbox=choice)
    executor = open_run_executor(config, run_request, warn=events.warn)
    try:
        outcome = execute(
            repo,
            config,
            store,
            planned,
            run_request,
            executor=executor,
            warn=events.warn,
            events=RunEvents(on_result=events.on_result),
        )
    finally:
        executor.close()
    if outcome.gate is not None and outcome.gate.stopped:
        stopped = ", ".join(sorted(outcome.gate.stopped))
        raise ConfigStopped(
            f"run {outcome.run_id} stopped {stopped}: its first pairs failed alike (see "
            f"{store.run_dir(outcome.run_id)}/logs/); fix the agent's setup and run the check again"
        )
    runs = store.load_runs(warn=events.warn)
    comparison = compare_sides(
        runs,
        f"{outcome.run_id}:{base.name}",
        f"{outcome.run_id}:{head.name}",
        runs_dir=store.runs_dir,
    )
    return comparison


def gate_outcome(outcome: CiOutcome) -> None:
    """Raise what the outcome's gate or comparison means for the job's exit code."""
    if outcome.comparison is not None and outcome.comparison.refusal is not None:
        raise GitGaugeError(f"no verdict: {outcome.comparison.refusal}")
    if outcome.failures:
        raise GateFailed("gate failed: " + "; ".join(outcome.failures))
