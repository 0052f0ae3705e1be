"""One config x task pair in its own workspace: setupCommand -> the harness laid in -> the
adapter (in the sandbox) -> what the agent left read as a tree, through gitgauge's own git
directory and index, the harness taken out -> diff stats and the agent's patch -> protected files
put back -> the checkout reset to base, setupCommand again, that tree laid in -> graded (per
test, or by exit code, in the sandbox) -> a `RunResult`. A merge task's pair goes to
`merge_run.py`. An agent's failure is a result with status `error`, never an exception.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitgauge.core import links, process
from gitgauge.core.checkout import AgentDiff
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.prompt_template import render as render_prompt
from gitgauge.core.records import ErrorKind, RepoConfig, RunResult, Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.store import (
    Store,
    atomic_write_text,
)
from gitgauge.core.suite import NO_REPORT_HINT
from gitgauge.core.worktree import Warn, warn_once
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import AdapterContext, AdapterOutcome, prompt_file
from gitgauge.running.merge_run import score_merge_pair
from gitgauge.running.plan import PlannedConfig
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.grade import grade
from gitgauge.running.scoring.protect import WorkspaceEscape, protect
from gitgauge.running.workspace import TaskWorkspaces, Workspace


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
        started = now()
        log_dir = self.store.log_dir(self.run_id, planned.config.name, task.id, attempt)
        log_dir.mkdir(parents=True, exist_ok=True)
        fields: dict[str, Any] = {
            "kind": task.kind,
            "sandbox": "bwrap" if self.sandbox is not None else "none",
        }
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
            finishedAt=now(),
            **fields,
        )

    def _run_agent(
        self,
        planned: PlannedConfig,
        task: Task,
        workspace: Workspace,
        env: dict[str, str],
        log_dir: Path,
    ) -> AdapterOutcome:
        """The config's harness laid in and the adapter run (in the sandbox, with its own copy of
        the config dir). The harness is taken out of what the agent left by `read_work`: it is
        not the agent's work, so it stays out of the diff, the patch and the graded tree."""
        harness = planned.harness
        harnesses.overlay(harness, workspace.path)
        prompt = render_prompt(planned.config.prompt, task)
        whole = task.prompt if prompt is None else prompt
        with (
            harnesses.agent_config_dir(harness, environ=os.environ) as config_dir,
            prompt_file(whole, repository=self.repo.root) as prompt_path,
        ):
            agent_sandbox = (
                self.sandbox.argv(
                    Mounts(
                        workspace=workspace.path,
                        # The prompt's directory is the pair's own: the agent reads the file.
                        read_only=(*workspace.stores, prompt_path.parent),
                        writable=(workspace.agent_git, *([config_dir] if config_dir else [])),
                    ),
                    agent=True,
                )
                if self.sandbox
                else []
            )
            return planned.adapter.run(
                AdapterContext(
                    workspace=workspace.path,
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
        with prepared.workspace(slot) as workspace:
            # Linked editable installs import from the checkout: make them import the workspace.
            redirect = links.worktree_env(self.repo.root, link, workspace.path)
            env = process.clean_env(
                cwd=workspace.path, extra={"GITGAUGE_JOB": str(slot), **redirect}
            )
            steps = PairSteps(self, planned, task, workspace, env, log_dir)
            if task.kind == "merge":
                score_merge_pair(self.repo, self.config, task, workspace, fields, steps=steps)
                return
            setup_error = self._setup(workspace.path, env, log_dir)
            if setup_error is not None:
                fields.update(status="error", errorKind="setup", errorMessage=setup_error)
                return
            outcome = self._run_agent(planned, task, workspace, env, log_dir)
            fields.update(outcome_fields(outcome))
            # Measured for failed agents too: the patch of a timed-out agent helps to see why.
            diff = steps.read_work(start=task.base, fields=fields)
            if not outcome.ok:
                return
            protection = protect(
                workspace.checkout, diff, task.base, patterns=self.config.tests.patterns
            )
            fields.update(reverted=protection.reverted, deleted=protection.deleted)
            graded = workspace.checkout.write_tree()
            if not steps.lay_graded(graded, base=task.base, fields=fields):
                return
            try:
                verdict = grade(
                    self.repo,
                    task,
                    workspace.path,
                    self.config,
                    env=env,
                    log_dir=log_dir,
                    sandbox=self.sandbox,
                    mounts=steps.test_mounts,
                )
            except OSError as error:
                # The agent's tree has a shape files cannot be laid into (a file where `tests/`
                # was, say): its work cannot be scored.
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


@dataclass(frozen=True)
class PairSteps:
    """The steps of a pair that fix and merge tasks share, bound to one pair's workspace."""

    pair: Pair
    planned: PlannedConfig
    task: Task
    workspace: Workspace
    env: dict[str, str]
    log_dir: Path

    def setup(self) -> str | None:
        return self.pair._setup(self.workspace.path, self.env, self.log_dir)

    def run_agent(self) -> AdapterOutcome:
        return self.pair._run_agent(self.planned, self.task, self.workspace, self.env, self.log_dir)

    def read_work(self, *, start: str, fields: dict[str, Any]) -> AgentDiff:
        """What the agent left, read through gitgauge's own git directory and index (only
        this crosses to the grader), the harness taken out of it; its diff against `start`
        (the tree it started from) in `fields` and its patch in the logs."""
        checkout = self.workspace.checkout
        checkout.read_agent_tree(start)
        checkout.reset_paths(start, self.planned.harness.overlays)
        diff = checkout.diff(start)
        stat = diffstat.diff_stat(diff)
        fields.update(
            diffFiles=stat.files, diffInsertions=stat.insertions, diffDeletions=stat.deletions
        )
        atomic_write_text(self.log_dir / "agent.patch", diff.patch)
        return diff

    @property
    def test_mounts(self) -> Mounts:
        """A test run's own paths: the checkout, gitgauge's git directory for it (read-only:
        the suite may run git), and the object stores it reads."""
        checkout = self.workspace.checkout
        return Mounts(workspace=checkout.path, read_only=(checkout.git_dir, *self.workspace.stores))

    def lay_graded(self, tree: str, *, base: str, fields: dict[str, Any]) -> bool:
        """A fresh checkout of `base` (the same one, reset and checked clean: nothing of the
        agent's survives), `setupCommand` run again on it, then `tree` laid in: the graded
        work is the agent's patch and nothing else. False (and an error) when setup fails."""
        if not self.pair.config.setupCommand:  # nothing to run on base: straight to the tree
            self.workspace.lay_fresh(tree)
            return True
        self.workspace.reset(base)
        setup_error = self.setup()
        if setup_error is not None:
            fields.update(
                status="error",
                errorKind="setup",
                errorMessage=f"in the grading checkout: {setup_error}",
            )
            return False
        self.workspace.checkout.lay_tree(tree)
        return True


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
        fields.update(status="error", errorKind=error_kind, errorMessage=outcome.error_message)
    return fields


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
