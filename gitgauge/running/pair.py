"""One config x task pair in its own workspace, the same sequence for every kind of task:
the workspace as the task's kind starts it (a checkout of `base`, or `base` mid-merge) ->
setupCommand -> the harness laid in -> the adapter (in the sandbox) -> what the agent left read
as a tree through gitgauge's own git directory and index, the harness taken out -> its diff
stats and patch -> graded by the kind (`core.kinds`: protection, a fresh checkout, the suite) ->
a `RunResult` built from the kind's typed draft. An agent's failure is a result with status
`error`, never an exception.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitgauge.core import kinds, links, process, transcript
from gitgauge.core.claude import result_from_event
from gitgauge.core.environment import Masker
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.importable import ImportProbe
from gitgauge.core.kinds import KindPair, KindSetupError, TaskKind
from gitgauge.core.prompt_template import render as render_prompt
from gitgauge.core.records import ErrorKind, ResultDraft, RunResult, Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import (
    Store,
)
from gitgauge.core.suite import UserCommands
from gitgauge.core.worktree import Warn, warn_once
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import (
    AdapterContext,
    AdapterOutcome,
    keep_transcript,
    prompt_file,
    transcript_file,
)
from gitgauge.running.plan import PlannedConfig
from gitgauge.running.sandboxing import sandbox_label
from gitgauge.running.scoring.protect import WorkspaceEscape
from gitgauge.running.steps import FreshSteps as FreshSteps
from gitgauge.running.steps import PairSteps as PairSteps
from gitgauge.running.steps import bounded_patch as bounded_patch
from gitgauge.running.workspace import TaskWorkspaces, Workspace, fresh_workspace


class Pair:
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
        mode: str | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.mode = mode
        """`run --mode`: the mode of every task whose kind has modes (None: each task's own)."""
        self.commands = UserCommands(config, sandbox=sandbox)
        self.imports = ImportProbe()
        """Which module names the grading interpreters import from elsewhere, asked once."""
        self.repo = repo
        self.config = config
        self.store = store
        self.run_id = run_id
        self.warn = warn_once(warn)

    def run(
        self,
        planned: PlannedConfig,
        task: Task,
        prepared: TaskWorkspaces | None,
        *,
        attempt: int = 1,
        slot: int = 0,
    ) -> RunResult:
        """`prepared`: the task's workspace source (None for a kind that brings its own
        repository, whose pairs start from a fresh directory)."""
        started = now()
        log_dir = self.store.log_dir(self.run_id, planned.config.name, task.id, attempt)
        log_dir.mkdir(parents=True, exist_ok=True)
        kind = kinds.get(task.kind)
        draft = kind.draft(kind=task.kind, sandbox=sandbox_label(self.sandbox))
        checkout_before = self.repo.checkout_state()
        phases = Phases()
        try:
            self._score(kind, planned, task, prepared, log_dir, draft, slot=slot, phases=phases)
        except WorkspaceEscape as error:
            draft.error("escaped-workspace", str(error))
        except KindSetupError as error:
            draft.error("setup", str(error))
        except GitGaugeError as error:
            # A git failure in one workspace (a missing object, a full disk) spoils this pair
            # only; the message says what happened.
            draft.error("internal", str(error))
        changed = self.repo.checkout_state() != checkout_before
        if changed and self.sandbox is not None:
            # The sandbox hides the checkout from the agent (and gitgauge runs nothing the agent
            # wrote outside it): a change is the user's own (an editor, `run > log` in the
            # checkout), not the agent's, and must not turn a scored pair into an error.
            self.warn(
                f"your checkout {self.repo.root} changed during the run; the sandbox hides it "
                "from the agents, so pairs are scored as usual (nothing was undone)"
            )
        elif changed:
            # Never undo it: it may be the user's own work (or a concurrent pair's, with -j).
            message = (
                f"your checkout {self.repo.root} changed while {planned.config.name} worked on "
                f"{task.id} (HEAD, branches, index, working tree or stash): the agent left its "
                "workspace; check `git status` and `git stash list`. Nothing was undone."
            )
            self.warn(message)
            draft.error("escaped-workspace", message)
        draft.update(**phases.fields())
        # The agent ran with gitgauge's whole environment: what it or its code wrote may hold
        # a key, which no stored file of the run may (core.environment).
        masker = Masker([os.environ, self.commands.project_env, planned.harness.env])
        masker.tree(log_dir)
        return RunResult.from_draft(
            draft,
            mask=masker.values,
            runId=self.run_id,
            config=planned.config.name,
            task=task.id,
            attempt=attempt,
            startedAt=started,
            finishedAt=now(),
        )

    def _run_agent(
        self,
        planned: PlannedConfig,
        task: Task,
        workspace: Workspace,
        env: dict[str, str],
        log_dir: Path,
        draft: ResultDraft,
    ) -> AdapterOutcome:
        """The config's harness laid in and the adapter run (in the sandbox, with its own copy of
        the config dir). The harness is taken out of what the agent left by `read_work`: it is
        not the agent's work, so it stays out of the diff, the patch and the graded tree."""
        harnesses.overlay(planned.harness, workspace.path)
        return self._adapter_run(
            planned,
            task,
            Mounts(workspace.path, read_only=workspace.stores, writable=(workspace.agent_git,)),
            env=env,
            log_dir=log_dir,
            draft=draft,
        )

    def _adapter_run(
        self,
        planned: PlannedConfig,
        task: Task,
        mounts: Mounts,
        *,
        env: dict[str, str],
        log_dir: Path,
        draft: ResultDraft,
    ) -> AdapterOutcome:
        """The adapter in `mounts.workspace` (in the sandbox with `mounts`), the harness already
        laid in (`call_adapter`). The agent's transcript goes to the logs and what it did into
        the draft (`behaviour`)."""
        outcome, started = call_adapter(
            planned,
            task,
            mounts,
            repo=self.repo,
            sandbox=self.sandbox,
            env=env,
            log_dir=log_dir,
            timeout_seconds=self.config.timeouts.adapter / 1000,
            warn=self.warn,
        )
        return self._read_transcript(outcome, log_dir, draft, started=started)

    def _read_transcript(
        self, outcome: AdapterOutcome, log_dir: Path, draft: ResultDraft, *, started: datetime
    ) -> AdapterOutcome:
        """What the agent did, from its transcript, into `draft`; a transcript's own `result`
        event gives the cost and tokens an adapter did not report (a script that runs claude)."""
        read = transcript.read(log_dir / transcript.TRANSCRIPT_FILE)
        if read is None:
            return outcome
        draft.update(
            behaviour=transcript.behaviour(
                read, test_command=self.config.testCommand, started_at=started
            )
        )
        try:
            return with_reported_cost(outcome, read.result)
        except ValueError as error:
            self.warn(f"{log_dir / transcript.TRANSCRIPT_FILE}: result event: {error}")
            return outcome

    def _score(
        self,
        kind: TaskKind,
        planned: PlannedConfig,
        task: Task,
        prepared: TaskWorkspaces | None,
        log_dir: Path,
        draft: ResultDraft,
        *,
        slot: int,
        phases: Phases,
    ) -> None:
        """Fill `draft` step by step, so an error keeps what was measured."""
        if kind.own_repository or prepared is None:
            self._score_fresh(kind, planned, task, log_dir, draft, slot=slot, phases=phases)
            return
        link = self.config.worktree.link
        with prepared.workspace(slot) as workspace:
            # Linked editable installs import from the checkout: make them import the workspace.
            redirect = links.worktree_env(self.repo.root, link, workspace.path)
            env = process.clean_env(
                cwd=workspace.path, extra={"GITGAUGE_JOB": str(slot), **redirect}
            )
            steps = PairSteps(self, planned, task, workspace, env, log_dir, draft)
            steps_of_kind = kind.enter(steps)
            setup_error = steps.setup()
            if setup_error is not None:
                draft.error("setup", setup_error)
                phases.lap("setup")
                return
            steps_of_kind.after_setup()
            phases.lap("setup")
            _agent_then_grade(steps, steps_of_kind, draft, phases)

    def _score_fresh(
        self,
        kind: TaskKind,
        planned: PlannedConfig,
        task: Task,
        log_dir: Path,
        draft: ResultDraft,
        *,
        slot: int,
        phases: Phases,
    ) -> None:
        """A kind that brings its own repository: a fresh directory (no checkout of your
        history, no setupCommand) that the kind's `enter` fills and whose work its `grade`
        reads; the same harness, adapter, sandbox and draft as every pair."""
        with fresh_workspace(self.repo.root) as workspace:
            steps = FreshSteps(self, planned, task, workspace, log_dir, draft, slot)
            steps_of_kind = kind.enter(steps)
            steps_of_kind.after_setup()
            phases.lap("setup")
            _agent_then_grade(steps, steps_of_kind, draft, phases)

    def _setup(self, workspace: Path, env: dict[str, str], log_dir: Path) -> str | None:
        """Run setupCommand; the reason it failed, or None."""
        ran = self.commands.setup(workspace, env=env, log_dir=log_dir)
        return None if ran is None or ran.ok else ran.failure


def _agent_then_grade(
    steps: PairSteps[ResultDraft] | FreshSteps[ResultDraft],
    of_kind: KindPair,
    draft: ResultDraft,
    phases: Phases,
) -> None:
    """The agent's turn and the grade, the same for both kinds of workspace."""
    outcome = steps.run_agent(prompt=of_kind.prompt)
    draft.update(**outcome_fields(outcome))
    of_kind.agent_said(outcome.final_message)
    of_kind.after_agent()
    # Measured for failed agents too: the patch of a timed-out agent helps to see why.
    diff = steps.read_work(start=of_kind.start)
    phases.lap("agent")
    if outcome.ok and diff is not None:
        of_kind.grade(diff)
        phases.lap("grading")


def outcome_fields(outcome: AdapterOutcome) -> dict[str, Any]:
    error_kind: ErrorKind | None = outcome.error_kind
    fields: dict[str, Any] = {
        "adapterSeconds": round(outcome.seconds, 3),
        **outcome.usage.result_fields(),
    }
    if error_kind is not None:
        fields.update(
            status="error",
            errorKind=error_kind,
            errorMessage=outcome.error_message,
            errorCause=outcome.error_cause,
        )
    return fields


@dataclass
class Phases:
    """A pair's wall-clock time by phase: setup (the workspace and `setupCommand`), agent (the
    harness, the adapter, its work read back) and grading; laps of one monotonic clock."""

    started: float = field(default_factory=time.monotonic)
    last: float = 0.0
    seconds: dict[str, float] = field(default_factory=dict)

    def lap(self, phase: str) -> None:
        """The time since the previous lap (or the start) is `phase`'s."""
        moment = time.monotonic()
        self.seconds[phase] = round(moment - (self.last or self.started), 3)
        self.last = moment

    def fields(self) -> dict[str, float | None]:
        return {
            "wallSeconds": round(time.monotonic() - self.started, 3),
            "setupSeconds": self.seconds.get("setup"),
            "agentSeconds": self.seconds.get("agent"),
            "gradingSeconds": self.seconds.get("grading"),
        }


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def call_adapter(
    planned: PlannedConfig,
    task: Task,
    mounts: Mounts,
    *,
    repo: Repository,
    sandbox: Sandbox | None,
    env: Mapping[str, str],
    log_dir: Path,
    timeout_seconds: float,
    warn: Warn,
) -> tuple[AdapterOutcome, datetime]:
    """The adapter once in `mounts.workspace`, the harness already laid in, as every pair calls
    it (and `doctor --probe`): the task's prompt in the config's template, in a prompt file; a
    copy of the config's `configDir`; a transcript file, kept in `log_dir` afterwards; in
    `sandbox`, with `mounts` and those files. With the moment the agent started."""
    path = mounts.workspace
    harness = planned.harness
    prompt = render_prompt(planned.config.prompt, task)
    whole = task.prompt if prompt is None else prompt
    with (
        harnesses.agent_config_dir(harness, environ=os.environ) as config_dir,
        prompt_file(whole, repository=repo.root) as prompt_path,
        transcript_file(repository=repo.root) as transcript_path,
    ):
        agent_sandbox = (
            sandbox.argv(
                Mounts(
                    workspace=path,
                    # The prompt's directory is the pair's own: the agent reads the file.
                    read_only=(*mounts.read_only, prompt_path.parent),
                    writable=(
                        *mounts.writable,
                        # The transcript's directory is the pair's own: the agent writes it.
                        transcript_path.parent,
                        *([config_dir] if config_dir else []),
                    ),
                ),
                agent=True,
            )
            if sandbox is not None
            else []
        )
        started = datetime.now(timezone.utc)
        outcome = planned.adapter.run(
            AdapterContext(
                workspace=path,
                task=task,
                repo=repo,
                timeout_seconds=timeout_seconds,
                env={**env, **harness.env},
                log_dir=log_dir,
                prompt=prompt,
                config_dir=config_dir,
                sandbox=agent_sandbox,
                prompt_file=prompt_path,
                warn=warn,
                transcript_file=transcript_path,
            )
        )
        keep_transcript(transcript_path, log_dir)
    return outcome, started


def with_reported_cost(
    outcome: AdapterOutcome, result_event: dict[str, Any] | None
) -> AdapterOutcome:
    """`outcome` with the cost and tokens of a transcript's own `result` event when the adapter
    reported none (a script that runs claude); unchanged when it did or there is no event.
    ValueError: the event is not a result claude writes."""
    usage = outcome.usage
    if usage.cost_usd is not None or usage.input_tokens is not None or not result_event:
        return outcome
    reported = result_from_event(result_event).usage
    return replace(
        outcome,
        usage=replace(
            reported,
            cost_usd=None if reported.used_nothing else reported.cost_usd,
            num_turns=usage.num_turns if usage.num_turns is not None else reported.num_turns,
            reasoning_output_tokens=usage.reasoning_output_tokens,
        ),
    )
