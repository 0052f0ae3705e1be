"""Prove a candidate fix: the suite passes at the fix, and fails at its parent once the fix's test
files are laid over it. Also record whether the parent's own suite passes (`baseSuitePasses`),
which the run's regression check needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from gitgauge.core import links, process
from gitgauge.core.git import Commit, Repository
from gitgauge.core.paths import is_test_file
from gitgauge.core.records import RepoConfig, Task
from gitgauge.core.worktree import Warn, checkout, lay_files
from gitgauge.mining import classify

RejectReason = Literal[
    "passes before the fix",
    "fails at the fix",
    "setup failed",
    "timed out",
    "test command failed to start",
    "no parent commit available",
]
REJECT_REASONS: tuple[RejectReason, ...] = (
    "passes before the fix",
    "fails at the fix",
    "setup failed",
    "timed out",
    "test command failed to start",
    "no parent commit available",
)


@dataclass(frozen=True)
class Verdict:
    commit: Commit
    task: Task | None
    """The verified task, or None when rejected."""
    reason: RejectReason | None = None
    detail: str = ""
    """Why, in a few words plus the tail of the relevant output."""


def test_files_of(commit: Commit, *, patterns: Sequence[str] = ()) -> list[str]:
    """The fix's test paths: added, modified, deleted, and both sides of renames."""
    return [path for path in commit.paths if is_test_file(path, patterns=patterns)]


def verify(
    repo: Repository,
    commit: Commit,
    config: RepoConfig,
    *,
    warn: Warn,
    extra_env: Mapping[str, str] | None = None,
) -> Verdict:
    if not commit.parents or not repo.has_commit(commit.parents[0]):
        return Verdict(
            commit, None, "no parent commit available", "the parent is not in this clone"
        )
    base = commit.parents[0]
    test_files = test_files_of(commit, patterns=config.tests.patterns)
    commands = _Commands(config, extra_env, source_root=repo.root)

    with checkout(repo, commit.sha, link=config.worktree.link, warn=warn) as worktree:
        rejection = commands.setup(commit, worktree)
        if rejection:
            return rejection
        at_fix = commands.test(worktree)
        if at_fix.failed_to_start:
            return _reject(commit, "test command failed to start", "at the fix", at_fix)
        if at_fix.timed_out:
            return _reject(commit, "timed out", "the suite timed out at the fix", at_fix)
        if not at_fix.ok:
            return _reject(commit, "fails at the fix", f"exit {at_fix.exit_code}", at_fix)

    with checkout(repo, base, link=config.worktree.link, warn=warn) as worktree:
        rejection = commands.setup(commit, worktree, where="at the parent")
        if rejection:
            return rejection
        lay_files(repo, commit.sha, test_files, worktree)
        with_fix_tests = commands.test(worktree)
        if with_fix_tests.ok:
            return _reject(
                commit, "passes before the fix", "suite passed at the parent", with_fix_tests
            )
        if with_fix_tests.failed_to_start:
            return _reject(commit, "test command failed to start", "at the parent", with_fix_tests)
        # Put the parent's own tests back and run its unmodified suite, for the regression check.
        lay_files(repo, base, test_files, worktree)
        base_suite = commands.test(worktree)

    body = commit.body.strip()
    task = Task(
        id=classify.task_id(commit.sha, commit.subject),
        base=base,
        fix=commit.sha,
        subject=commit.subject,
        body=body,
        prompt=classify.build_prompt(commit.subject, body),
        testFiles=test_files,
        promptQuality=classify.prompt_quality(body),
        baseSuitePasses=base_suite.ok,
        baseTimedOut=with_fix_tests.timed_out,
        testCommand=config.testCommand,
        setupCommand=config.setupCommand,
        minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    note = "timed out at the parent (counts as failing)" if with_fix_tests.timed_out else ""
    return Verdict(commit, task, None, note)


class _Commands:
    def __init__(
        self, config: RepoConfig, extra_env: Mapping[str, str] | None, *, source_root: Path
    ) -> None:
        self.config = config
        self.extra_env = dict(extra_env or {})
        self.source_root = source_root

    def _env(self, worktree: Path) -> dict[str, str]:
        # Linked editable installs import from the checkout: make them import the worktree.
        redirect = links.worktree_env(self.source_root, self.config.worktree.link, worktree)
        return process.clean_env(cwd=worktree, extra={**self.extra_env, **redirect})

    def setup(self, commit: Commit, worktree: Path, *, where: str = "at the fix") -> Verdict | None:
        if not self.config.setupCommand:
            return None
        result = process.run(
            self.config.setupCommand,
            cwd=worktree,
            timeout_seconds=self.config.timeouts.setup / 1000,
            env=self._env(worktree),
        )
        if result.ok:
            return None
        how = "timed out" if result.timed_out else f"exit {result.exit_code}"
        return _reject(commit, "setup failed", f"setupCommand {how} {where}", result)

    def test(self, worktree: Path) -> process.CommandResult:
        return process.run(
            self.config.testCommand,
            cwd=worktree,
            timeout_seconds=self.config.timeouts.test / 1000,
            env=self._env(worktree),
        )


def _reject(
    commit: Commit, reason: RejectReason, what: str, result: process.CommandResult
) -> Verdict:
    tail = result.output_tail(600).strip()
    detail = f"{what}: {tail.splitlines()[-1]}" if tail else what
    return Verdict(commit, None, reason, detail)
