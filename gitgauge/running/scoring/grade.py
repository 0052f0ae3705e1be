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

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.records import RepoConfig, Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.suite import run_suite
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
    config: RepoConfig,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    sandbox: Sandbox | None = None,
    mounts: Mounts | None = None,
) -> Grade:
    """`workspace` holds the agent's graded tree (a fresh checkout); `sandbox`: what the test
    commands run in (the agent's code runs in them), with `mounts` (default: the workspace
    alone)."""
    mounts = mounts or Mounts(workspace=workspace)
    ensure_inside(workspace, task.testFiles)
    lay_files(repo, task.fix, task.testFiles, workspace)
    if task.failToPass is not None:
        return _grade_per_test(
            task, workspace, config, env=env, log_dir=log_dir, sandbox=sandbox, mounts=mounts
        )
    wrapper = sandbox.argv(mounts, agent=False) if sandbox else []
    test = _run_tests(config, workspace, env=env, log_dir=log_dir, name="test", sandbox=wrapper)
    if task.baseSuitePasses is not True:
        return Grade(resolved=test.ok, regressed=None, test=test, base_test=None)
    lay_files(repo, task.base, task.testFiles, workspace)
    base_test = _run_tests(
        config, workspace, env=env, log_dir=log_dir, name="base-test", sandbox=wrapper
    )
    return Grade(resolved=test.ok, regressed=not base_test.ok, test=test, base_test=base_test)


def _grade_per_test(
    task: Task,
    workspace: Path,
    config: RepoConfig,
    *,
    env: Mapping[str, str],
    log_dir: Path,
    sandbox: Sandbox | None,
    mounts: Mounts,
) -> Grade:
    assert task.failToPass is not None
    kept = log_dir / "test-report.xml"
    # In the sandbox the repository (and so the run's logs) is hidden: the suite writes its report
    # into a directory of its own, bound writable, and the report is kept in the logs afterwards.
    holder = Path(tempfile.mkdtemp(prefix="gitgauge-junit-")) if sandbox else None
    try:
        wrapper = []
        if sandbox is not None and holder is not None:
            with_report = replace(mounts, writable=(*mounts.writable, holder))
            wrapper = sandbox.argv(with_report, agent=False)
        suite = run_suite(
            config,
            workspace,
            env=env,
            report_path=holder / "report.xml" if holder else kept,
            stdout_path=log_dir / "test.stdout",
            stderr_path=log_dir / "test.stderr",
            wrapper=wrapper,
        )
        if holder is not None and (holder / "report.xml").is_file():
            shutil.copyfile(holder / "report.xml", kept)
    finally:
        if holder is not None:
            shutil.rmtree(holder, ignore_errors=True)
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
