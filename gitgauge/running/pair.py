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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitgauge.core import kinds, links, process, transcript
from gitgauge.core.claude import ClaudeResult, result_from_event
from gitgauge.core.environment import Masker
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff, blob_sizes, edit_tree
from gitgauge.core.importable import ImportProbe, interpreters
from gitgauge.core.kinds import KindPair, KindSetupError, TaskKind
from gitgauge.core.prompt_template import render as render_prompt
from gitgauge.core.records import ErrorKind, ResultDraft, RunResult, Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import Limits, RepoConfig
from gitgauge.core.store import (
    Store,
)
from gitgauge.core.suite import UserCommands
from gitgauge.core.text import visible
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
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.additions import module_names, shadow_reasons
from gitgauge.running.scoring.protect import Protection, WorkspaceEscape
from gitgauge.running.workspace import (
    FreshWorkspace,
    TaskWorkspaces,
    Workspace,
    fresh_workspace,
)


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
        draft = kind.draft(kind=task.kind, sandbox="bwrap" if self.sandbox is not None else "none")
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
        return RunResult(
            runId=self.run_id,
            config=planned.config.name,
            task=task.id,
            attempt=attempt,
            startedAt=started,
            finishedAt=now(),
            **masker.values(draft.fields()),
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
            path=workspace.path,
            read_only=workspace.stores,
            writable=(workspace.agent_git,),
            env=env,
            log_dir=log_dir,
            draft=draft,
        )

    def _adapter_run(
        self,
        planned: PlannedConfig,
        task: Task,
        *,
        path: Path,
        read_only: tuple[Path, ...],
        writable: tuple[Path, ...],
        env: dict[str, str],
        log_dir: Path,
        draft: ResultDraft,
    ) -> AdapterOutcome:
        """The adapter in `path` (in the sandbox: `read_only` and `writable` besides it), the
        harness already laid in. The agent's transcript goes to the logs and what it did into
        the draft (`behaviour`)."""
        harness = planned.harness
        prompt = render_prompt(planned.config.prompt, task)
        whole = task.prompt if prompt is None else prompt
        with (
            harnesses.agent_config_dir(harness, environ=os.environ) as config_dir,
            prompt_file(whole, repository=self.repo.root) as prompt_path,
            transcript_file(repository=self.repo.root) as transcript_path,
        ):
            agent_sandbox = (
                self.sandbox.argv(
                    Mounts(
                        workspace=path,
                        # The prompt's directory is the pair's own: the agent reads the file.
                        read_only=(*read_only, prompt_path.parent),
                        writable=(
                            *writable,
                            # The transcript's directory is the pair's own: the agent writes it.
                            transcript_path.parent,
                            *([config_dir] if config_dir else []),
                        ),
                    ),
                    agent=True,
                )
                if self.sandbox
                else []
            )
            agent_started = datetime.now(timezone.utc)
            outcome = planned.adapter.run(
                AdapterContext(
                    workspace=path,
                    task=task,
                    repo=self.repo,
                    timeout_seconds=self.config.timeouts.adapter / 1000,
                    env={**env, **harness.env},
                    log_dir=log_dir,
                    prompt=prompt,
                    config_dir=config_dir,
                    sandbox=agent_sandbox,
                    prompt_file=prompt_path,
                    warn=self.warn,
                    transcript_file=transcript_path,
                )
            )
            keep_transcript(transcript_path, log_dir)
        return self._read_transcript(outcome, log_dir, draft, started=agent_started)

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
        if outcome.cost_usd is not None or outcome.input_tokens is not None or not read.result:
            return outcome
        try:
            reported: ClaudeResult = result_from_event(read.result)
        except ValueError as error:
            self.warn(f"{log_dir / transcript.TRANSCRIPT_FILE}: result event: {error}")
            return outcome
        return replace(
            outcome,
            cost_usd=None if reported.used_nothing else reported.total_cost_usd,
            input_tokens=reported.input_tokens,
            output_tokens=reported.output_tokens,
            cache_creation_input_tokens=reported.cache_creation_input_tokens,
            cache_read_input_tokens=reported.cache_read_input_tokens,
            num_turns=outcome.num_turns if outcome.num_turns is not None else reported.num_turns,
        )

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
    steps: PairSteps | FreshSteps, of_kind: KindPair, draft: ResultDraft, phases: Phases
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


def bounded_patch(
    diff: AgentDiff,
    *,
    limits: Limits,
    log_dir: Path,
    draft: ResultDraft,
    write: Callable[[Path, int], int | None],
    sizes: Callable[[list[str]], dict[str, int]],
) -> AgentDiff | None:
    """`diff`, its stats in the draft and its patch (streamed by git) in the logs; None, and
    the pair an error `patch-too-large` naming the biggest files, when it is over
    `run.limits`: nothing that large is read into memory, written to the logs or graded."""
    stat = diffstat.diff_stat(diff)
    draft.update(diffFiles=stat.files, diffInsertions=stat.insertions, diffDeletions=stat.deletions)
    if stat.files > limits.files:
        draft.error(
            "patch-too-large",
            f"the agent's patch changes {stat.files} files, more than run.limits.files "
            f"({limits.files}); it was not graded" + _biggest(diff, sizes),
        )
        return None
    written = write(log_dir / "agent.patch", limits.patchBytes)
    if written is None:
        draft.error(
            "patch-too-large",
            f"the agent's patch is larger than run.limits.patchBytes ({limits.patchBytes:,} "
            f"bytes); it was not graded" + _biggest(diff, sizes),
        )
        return None
    return diff


def _biggest(diff: AgentDiff, sizes: Callable[[list[str]], dict[str, int]]) -> str:
    known = sizes([change.object_id for change in diff.changes if change.object_id])
    ranked = sorted(
        ((known.get(change.object_id, 0), change.path) for change in diff.changes),
        reverse=True,
    )[:3]
    if not ranked or not ranked[0][0]:
        return ""
    return "; the biggest files: " + ", ".join(
        f"{visible(path)} ({size / 1_000_000:.1f} MB)" for size, path in ranked if size
    )


class _OfPair:
    """What both kinds of steps read from their pair: the repository, the config, the sandbox,
    the user's commands, `run --mode` and the run's warnings."""

    pair: Pair
    planned: PlannedConfig

    @property
    def repo(self) -> Repository:
        return self.pair.repo

    @property
    def config(self) -> RepoConfig:
        return self.pair.config

    @property
    def sandbox(self) -> Sandbox | None:
        return self.pair.sandbox

    @property
    def commands(self) -> UserCommands:
        """The user's commands for this pair: its test runs get the config's `env` too."""
        return self.pair.commands.for_agent(self.planned.harness.env)

    @property
    def mode(self) -> str | None:
        """`run --mode`, when it was given."""
        return self.pair.mode

    def warn(self, message: str) -> None:
        self.pair.warn(message)


@dataclass(frozen=True)
class PairSteps(_OfPair):
    """The steps every kind of task shares, bound to one pair's workspace and draft: what a
    kind's `enter` and its pair's `grade` use (`core.kinds`)."""

    pair: Pair
    planned: PlannedConfig
    task: Task
    workspace: Workspace
    env: dict[str, str]
    log_dir: Path
    draft: ResultDraft

    def setup(self) -> str | None:
        return self.pair._setup(self.workspace.path, self.env, self.log_dir)

    def run_agent(self, *, prompt: str | None = None) -> AdapterOutcome:
        """The agent on the task (`prompt`: the kind's own for this pair, if it made one)."""
        task = self.task if prompt is None else self.task.model_copy(update={"prompt": prompt})
        return self.pair._run_agent(
            self.planned, task, self.workspace, self.env, self.log_dir, self.draft
        )

    def read_work(self, *, start: str) -> AgentDiff | None:
        """What the agent left, read through gitgauge's own git directory and index (only
        this crosses to the grader), the harness taken out of it; its diff against `start`
        (the tree it started from) in the draft and its patch in the logs. None when it is
        over `run.limits` (`bounded_patch`)."""
        checkout = self.workspace.checkout
        checkout.read_agent_tree(start)
        checkout.reset_paths(start, self.planned.harness.overlays)
        return bounded_patch(
            checkout.diff(start),
            limits=self.config.run.limits,
            log_dir=self.log_dir,
            draft=self.draft,
            write=lambda dest, limit: checkout.write_patch(start, dest, limit_bytes=limit),
            sizes=lambda ids: blob_sizes(checkout.git_dir, ids),
        )

    @property
    def test_mounts(self) -> Mounts:
        """A test run's own paths: the checkout, gitgauge's git directory for it (read-only:
        the suite may run git), and the object stores it reads."""
        checkout = self.workspace.checkout
        return Mounts(workspace=checkout.path, read_only=(checkout.git_dir, *self.workspace.stores))

    def lay_graded(
        self, tree: str, *, base: str, protection: Protection | None = None
    ) -> dict[str, str] | None:
        """A fresh checkout of `base` (the same one, reset and checked clean: nothing of the
        agent's survives), `setupCommand` run again on it, then `tree` laid in: the graded
        work is the agent's patch and nothing else. Of what `protection` kept of the agent's
        additions, the stand-ins for modules the grading interpreter imports from elsewhere
        are left out; they are returned (path -> why). None (and an error) when setup fails."""
        checkout = self.workspace.checkout
        if not self.pair.config.setupCommand:  # nothing to run on base: straight to the tree
            # The interpreter is asked before anything is laid: what the agent left in the
            # work tree is hidden from it, and an interpreter path is read from your checkout.
            stand_ins = self._stand_ins_of(protection, ready=False)
            self.workspace.lay_fresh(self._without(tree, stand_ins))
            return stand_ins
        self.workspace.reset(base)
        setup_error = self.setup()
        if setup_error is not None:
            self.draft.error("setup", f"in the grading checkout: {setup_error}")
            return None
        # Asked now, of the checkout as set up and before the agent's tree is in it.
        stand_ins = self._stand_ins_of(protection, ready=True)
        checkout.lay_tree(self._without(tree, stand_ins))
        return stand_ins

    def _stand_ins_of(self, protection: Protection | None, *, ready: bool) -> dict[str, str]:
        if protection is None or not protection.kept:
            return {}
        return self.stand_ins(
            protection.kept,
            start_files=protection.start_files,
            tree_files=protection.tree_files,
            ready=ready,
        )

    def stand_ins(
        self,
        added: Sequence[str],
        *,
        start_files: Collection[str],
        tree_files: Collection[str],
        ready: bool,
    ) -> dict[str, str]:
        """path -> why, for the files of `added` that bring a top-level module the grading
        interpreter imports from elsewhere (`running.scoring.additions.module_names`; the
        files of the tree the agent started from and of its own). `ready`: the workspace holds
        a set-up checkout of the base (interpreters named relative to it are the ones set up
        there), not the agent's leftovers."""
        if not added:
            return {}
        names = module_names(added, start_files=start_files, tree_files=tree_files)
        if not names:
            return {}
        env = self.commands.suite_environment(self.env).env
        found = interpreters(
            self.config.testCommand,
            env=env,
            cwd=self.workspace.path if ready else self.repo.root,
        )
        hidden = [self.workspace.path, self.repo.root]
        return shadow_reasons(
            names, self.pair.imports.shadowed(names, interpreters=found, env=env, hidden=hidden)
        )

    def _without(self, tree: str, paths: Collection[str]) -> str:
        checkout = self.workspace.checkout
        return edit_tree(checkout.git_dir, tree, scratch=checkout.holder, remove=sorted(paths))


class FreshSteps(_OfPair):
    """The steps of a pair whose kind brings its own repository (`TaskKind.own_repository`),
    bound to its `FreshWorkspace`: what that kind's `enter` and `grade` use."""

    def __init__(
        self,
        pair: Pair,
        planned: PlannedConfig,
        task: Task,
        workspace: FreshWorkspace,
        log_dir: Path,
        draft: ResultDraft,
        slot: int,
    ) -> None:
        self.pair = pair
        self.planned = planned
        self.task = task
        self.workspace = workspace
        self.log_dir = log_dir
        self.draft = draft
        self.slot = slot

    def run_agent(self, *, prompt: str | None = None) -> AdapterOutcome:
        """The harness laid into where the kind's agent works (and taken out again after it:
        this workspace is graded as the agent left it), then the adapter, in the sandbox with
        the workspace's own writable places."""
        workspace = self.workspace
        task = self.task if prompt is None else self.task.model_copy(update={"prompt": prompt})
        env = process.clean_env(
            cwd=workspace.path, extra={"GITGAUGE_JOB": str(self.slot), **workspace.env}
        )
        with harnesses.overlaid(
            self.planned.harness, workspace.path, keep=workspace.holder / "harness-kept"
        ):
            return self.pair._adapter_run(
                self.planned,
                task,
                path=workspace.path,
                read_only=(),
                writable=workspace.writable,
                env=env,
                log_dir=self.log_dir,
                draft=self.draft,
            )

    def read_work(self, *, start: str) -> AgentDiff | None:
        """What the agent changed in the kind's repository (its `reader`), as a diff against
        `start` in the draft and a patch in the logs; an empty diff, and no diff size, when
        the kind's work is no tree (a fixture's text mode: the agent only answers). None when
        it is over `run.limits` (`bounded_patch`)."""
        reader = self.workspace.reader
        if reader is None or not start:
            return AgentDiff(changes=(), numstat="")
        end = reader.read()
        return bounded_patch(
            reader.diff(start, end),
            limits=self.config.run.limits,
            log_dir=self.log_dir,
            draft=self.draft,
            write=lambda dest, limit: reader.write_patch(start, end, dest, limit_bytes=limit),
            sizes=lambda ids: blob_sizes(reader.git_dir, ids),
        )


def outcome_fields(outcome: AdapterOutcome) -> dict[str, Any]:
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
