"""One config x task pair in its own workspace: setupCommand -> the harness laid in -> the
adapter (in the sandbox) -> the harness taken out -> diff stats and the agent's patch ->
protected files reverted -> graded (per test, or by exit code) -> a `RunResult`. A merge task's
pair goes to `merge_run.py`. An agent's failure is a result with status `error`, never an
exception.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gitgauge.core import links, process
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.prompt_template import render as render_prompt
from gitgauge.core.records import ErrorKind, RepoConfig, RunResult, Task
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
from gitgauge.running.sandbox import Sandbox
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.grade import grade
from gitgauge.running.scoring.protect import WorkspaceEscape, protect
from gitgauge.running.workspace import TaskWorkspaces


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
        prompt = render_prompt(planned.config.prompt, task)
        whole = task.prompt if prompt is None else prompt
        with (
            harnesses.laid(harness, workspace, repo=self.repo, base=restore_to),
            harnesses.agent_config_dir(harness, environ=os.environ) as config_dir,
            prompt_file(whole, repository=self.repo.root) as prompt_path,
        ):
            # The prompt's directory is the pair's own: the agent reads the file there.
            writable = [prompt_path.parent, *([config_dir] if config_dir else [])]
            agent_sandbox = (
                self.sandbox.argv(workspace, agent=True, writable=writable) if self.sandbox else []
            )
            return planned.adapter.run(
                AdapterContext(
                    workspace=workspace,
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
                    outcome_fields=outcome_fields,
                    sandbox=self.sandbox,
                )
                return
            setup_error = self._setup(workspace, env, log_dir)
            if setup_error is not None:
                fields.update(status="error", errorKind="setup", errorMessage=setup_error)
                return
            outcome = self._run_agent(planned, task, workspace, env, log_dir, restore_to=task.base)
            fields.update(outcome_fields(outcome))
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
