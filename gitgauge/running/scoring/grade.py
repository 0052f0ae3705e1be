"""Resolved? Regressed? Two test runs over the agent's (protected) work.

Resolved: the fix's test files laid over the workspace, `testCommand` exits 0. Regressed: the
base's own test files put back, the base suite fails although it passed at base when the task was
mined. When `baseSuitePasses` is false or unknown the base suite is not run: a failure would not
tell a regression from a suite that was already broken.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.records import RepoConfig, Task
from gitgauge.core.worktree import lay_files
from gitgauge.running.scoring.protect import ensure_inside


@dataclass(frozen=True)
class Grade:
    resolved: bool
    regressed: bool | None
    """None: unknown, because the base suite did not pass at mine time (or was never recorded)."""
    test: process.CommandResult
    """The run with the fix's tests."""
    base_test: process.CommandResult | None
    """The run of the base's own suite; None when it was not needed."""


def grade(
    repo: Repository,
    task: Task,
    workspace: Path,
    config: RepoConfig,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    sandbox: Sequence[str] = (),
) -> Grade:
    """`sandbox`: the argv prefix the test commands run under (the agent's code runs in them)."""
    ensure_inside(workspace, task.testFiles)
    lay_files(repo, task.fix, task.testFiles, workspace)
    test = _run_tests(config, workspace, env=env, log_dir=log_dir, name="test", sandbox=sandbox)
    if task.baseSuitePasses is not True:
        return Grade(resolved=test.ok, regressed=None, test=test, base_test=None)
    lay_files(repo, task.base, task.testFiles, workspace)
    base_test = _run_tests(
        config, workspace, env=env, log_dir=log_dir, name="base-test", sandbox=sandbox
    )
    return Grade(resolved=test.ok, regressed=not base_test.ok, test=test, base_test=base_test)


def _run_tests(
    config: RepoConfig,
    workspace: Path,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    name: str,
    sandbox: Sequence[str],
) -> process.CommandResult:
    return process.run(
        config.testCommand,
        cwd=workspace,
        timeout_seconds=config.timeouts.test / 1000,
        env=env,
        stdout_path=log_dir / f"{name}.stdout",
        stderr_path=log_dir / f"{name}.stderr",
        wrapper=sandbox,
    )
