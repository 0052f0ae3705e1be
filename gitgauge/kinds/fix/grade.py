"""Resolved? Regressed? Two test runs over the agent's (protected) work.

Resolved: the fix's test files laid over the workspace, `testCommand` exits 0. Regressed: the
base's own test files put back, the base suite fails although it passed at base when the task was
mined. When `baseSuitePasses` is false or unknown the base suite is not run: a failure would not
tell a regression from a suite that was already broken.

Tasks mined with per-test reports (`failToPass` set) are graded in one run: resolved = every
FAIL_TO_PASS test passes, regressed = some PASS_TO_PASS test does not; the failing ones are named.
Without a usable report in that run, the exit code decides (regressed unknown).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.sandbox import Mounts
from gitgauge.core.suite import UserCommands
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
    fail_to_pass_failed: list[str] | None = None
    """FAIL_TO_PASS tests that did not pass; None: graded by exit code."""
    pass_to_pass_failed: list[str] | None = None
    """PASS_TO_PASS tests that did not pass; None: graded by exit code, or the list is missing."""
    report_problem: str | None = None
    """Why a per-test task was graded by exit code (no usable report)."""


def grade(
    repo: Repository,
    task: Task,
    workspace: Path,
    commands: UserCommands,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    mounts: Mounts | None = None,
) -> Grade:
    """`workspace` holds the agent's graded tree (a fresh checkout); `commands` run the suite
    (in their sandbox: the agent's code runs in it, with `mounts`, default the workspace)."""
    ensure_inside(workspace, task.testFiles)
    lay_files(repo, task.fix, task.testFiles, workspace)
    if task.failToPass is not None:
        return _grade_per_test(task, workspace, commands, env=env, log_dir=log_dir, mounts=mounts)
    test = commands.suite(workspace, env=env, mounts=mounts, log_dir=log_dir, report=False).result
    if task.baseSuitePasses is not True:
        return Grade(resolved=test.ok, regressed=None, test=test, base_test=None)
    lay_files(repo, task.base, task.testFiles, workspace)
    base_test = commands.suite(
        workspace, env=env, mounts=mounts, log_dir=log_dir, name="base-test", report=False
    ).result
    return Grade(resolved=test.ok, regressed=not base_test.ok, test=test, base_test=base_test)


def _grade_per_test(
    task: Task,
    workspace: Path,
    commands: UserCommands,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    mounts: Mounts | None,
) -> Grade:
    assert task.failToPass is not None
    # The report is kept in the logs (test-report.xml).
    suite = commands.suite(workspace, env=env, mounts=mounts, log_dir=log_dir)
    test = suite.result
    report = suite.report
    if report is None:
        return Grade(
            resolved=test.ok,
            regressed=None,
            test=test,
            base_test=None,
            report_problem=suite.problem,
        )
    f2p_failed = [name for name in task.failToPass if not report.passed(name)]
    p2p = task.passToPassTests
    p2p_failed = None if p2p is None else [name for name in p2p if not report.passed(name)]
    return Grade(
        resolved=not f2p_failed,
        regressed=None if p2p_failed is None else bool(p2p_failed),
        test=test,
        base_test=None,
        fail_to_pass_failed=f2p_failed,
        pass_to_pass_failed=p2p_failed,
    )
