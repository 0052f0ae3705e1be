"""Prove a candidate fix: the suite passes at the fix, and fails at its parent once the fix's test
files are laid over it.

With per-test reports (see `core.suite`) the proof is per test: a non-empty FAIL_TO_PASS, even when
unrelated tests fail at the fix; PASS_TO_PASS is what the run's regression check needs, so two
suite runs (plus reruns) per candidate. A test missing from the parent's report is failing there
only when it is one of the fix's own tests (`pertest.Owners`); a parent that wrote no report at all
is judged from the fix's own tests alone. Without reports at the fix, exit codes decide, and a
third run of the parent's own suite records `baseSuitePasses` for the regression check.

One checkout per parallel slot (`core.checkout`), reset for every candidate: after the fix's
runs, what they left is cleaned away and the parent is checked out in place, so git touches only
the files the fix changed. With a sandbox (`run.sandbox`) the test runs happen in the same policy
`run` grades in, so gold at run time reproduces what mining saw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, get_args

from gitgauge.core import links, process
from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.checkout import Checkout, CheckoutPool
from gitgauge.core.junit import TestReport
from gitgauge.core.paths import is_test_file
from gitgauge.core.records import Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import (
    EMPTY_REPORT,
    EMPTY_TAP,
    NO_REPORT_HINT,
    SUITE_CRASHED,
    SuiteRun,
    UserCommands,
    time_limit,
)
from gitgauge.core.worktree import Warn, lay_files
from gitgauge.mining import classify, pertest
from gitgauge.mining.telling import with_telling_line

RejectReason = Literal[
    "passes before the fix",
    "fails at the fix",
    "fails in the sandbox",
    "runs no test at the fix",
    "setup failed",
    "timed out",
    "test command failed to start",
    "no parent commit available",
    "flaky",
]
REJECT_REASONS: tuple[RejectReason, ...] = get_args(RejectReason)
"""Every reason, in the order the mine summary lists them."""


SANDBOX_SYMPTOMS = re.compile(
    r"Read-only file system|EROFS|Permission denied|EACCES|No such file or directory|ENOENT"
)
"""How a suite says it could not write (read-only $HOME entries) or find (hidden) a path."""
SANDBOX_PATH = re.compile(r"(?:EROFS|EACCES|ENOENT|Read-only file system|Permission denied|"
                          r"No such file or directory)[^/\n]{0,40}'?(/[^\s'\",:)]+)")  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """A candidate's verdict: its task, or why it is rejected (a merge candidate's too, never
    rejected: `kinds/merge/mine.py`)."""

    commit: Commit
    task: Task | None
    """The verified task, or None when rejected."""
    reason: RejectReason | None = None
    detail: str = ""
    """Why, in a few words plus the failing tests or the telling line of the output."""


@dataclass(frozen=True)
class CandidateError:
    """A candidate no verdict was reached for (its Ray node was lost twice): neither a task nor
    a rejection, and not remembered, so the next `mine` verifies it again."""

    commit: Commit
    message: str
    """What happened, naming the node."""


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
    checkout: Checkout | None = None,
    sandbox: Sandbox | None = None,
) -> Verdict:
    """`checkout`: the slot's checkout to reset (default: one of its own); `sandbox`: what the
    test commands run in, the same policy `run` grades in."""
    if not commit.parents or not repo.has_commit(commit.parents[0]):
        return Verdict(
            commit, None, "no parent commit available", "the parent is not in this clone"
        )
    base = commit.parents[0]
    test_files = test_files_of(commit, patterns=config.tests.patterns)
    with ExitStack() as stack:
        if checkout is None:
            pool = stack.enter_context(CheckoutPool(owner_repository=repo.root))
            checkout = stack.enter_context(pool.slot(0))
        commands = _Commands(config, extra_env, warn, source_root=repo.root)
        commands.place(repo, checkout, sandbox)
        commands.reset(commit.sha)
        outcome = _at_fix(commit, commands, checkout.path)
        if isinstance(outcome, Verdict):
            return outcome
        parent = _Parent(repo, commit, base, test_files, config, commands, outcome)
        # The same checkout, reset in place: git rewrites only the files the fix changed.
        commands.reset(base)
        return parent.verdict(checkout.path)
    raise AssertionError("unreachable")


def _at_fix(commit: Commit, commands: _Commands, worktree: Path) -> list[SuiteRun] | Verdict:
    """The fix's runs, or the rejection they already decide."""
    rejection = commands.setup(commit, worktree)
    if rejection:
        return rejection
    at_fix = commands.tests(worktree)
    first = at_fix[0].result
    if first.failed_to_start:
        return _reject(commit, "test command failed to start", "at the fix", first)
    touched = commands.sandbox_symptoms(first)
    if touched is not None and commands.test_once(worktree, sandboxed=False).ok:
        # `run` grades in this sandbox: a fix that passes only outside it would be a task
        # that even gold fails (0%), so it is said now, with what the suite tried to reach.
        what = "the suite passes outside the sandbox but fails in it"
        detail = f"{what} (it tried {', '.join(touched)})" if touched else what
        return Verdict(commit, None, "fails in the sandbox", detail)
    timed_out = next((run.result for run in at_fix if run.result.timed_out), None)
    if timed_out is not None:
        limit = time_limit(commands.config.timeouts.test, "timeouts.test")
        return Verdict(commit, None, "timed out", f"the suite timed out at the fix after {limit}")
    rejection = _runs_no_test(commit, at_fix)
    if rejection:
        return rejection
    if _reports(at_fix) is None:
        _warn_fallback(commands.warn, at_fix)
        rejection = _exit_code_rejection(commit, at_fix)
        if rejection:
            return rejection
    return at_fix


def _runs_no_test(commit: Commit, at_fix: list[SuiteRun]) -> Verdict | None:
    """A suite that passes no test at the fix proves nothing, and says more about the command
    (the package not importable, a missing dependency) than about the commit."""
    reports = _reports(at_fix)
    first = at_fix[0]
    if reports is None:
        if first.problem in (EMPTY_REPORT, EMPTY_TAP) and not first.result.ok:
            what = f"the suite ran no test at the fix (exit {first.result.exit_code})"
            return Verdict(
                commit, None, "runs no test at the fix", with_telling_line(what, first.result)
            )
        return None
    if any(report.passed(name) for report in reports for name in report.outcomes):
        return None
    report = reports[0]
    failing = sorted(n for n, outcome in report.outcomes.items() if outcome in ("failed", "error"))
    what = f"no test passed at the fix (of {len(report.outcomes)}"
    what += f"; failing: {pertest.names(failing)})" if failing else ")"
    return Verdict(commit, None, "runs no test at the fix", with_telling_line(what, first.result))


@dataclass(frozen=True)
class _Parent:
    """The runs at the parent with the fix's tests laid over it, and the verdict."""

    repo: Repository
    commit: Commit
    base: str
    test_files: list[str]
    config: RepoConfig
    commands: _Commands
    at_fix: list[SuiteRun]

    def verdict(self, worktree: Path) -> Verdict:
        commit, commands = self.commit, self.commands
        rejection = commands.setup(commit, worktree, where="at the parent")
        if rejection:
            return rejection
        lay_files(self.repo, commit.sha, self.test_files, worktree)
        at_parent = commands.tests(worktree)
        with_fix_tests = at_parent[0].result
        if with_fix_tests.failed_to_start:
            return _reject(commit, "test command failed to start", "at the parent", with_fix_tests)
        fix_reports, parent_reports = _reports(self.at_fix), _reports(at_parent)
        if fix_reports is not None:
            owners = _owners(self.repo, commit, self.test_files, self.config, fix_reports)
            if parent_reports is not None:
                return _per_test_verdict(
                    commit, self.base, self.test_files, self.config, owners,
                    fix_reports, parent_reports, at_parent[0].result,
                )  # fmt: skip
            judged = self._without_parent_report(owners, fix_reports, at_parent)
            if judged is not None:
                return judged
            # Not one of the fix's own tests passes at the fix: exit codes decide.
            _warn_fallback(commands.warn, at_parent)
            rejection = _exit_code_rejection(commit, self.at_fix)
            if rejection:
                return rejection
        else:
            _warn_fallback(commands.warn, at_parent)
        flips = len({run.result.ok for run in at_parent}) > 1
        if flips:
            what = "the suite verdict flipped between runs at the parent"
            return _reject(commit, "flaky", what, with_fix_tests)
        if with_fix_tests.ok:
            return _reject(
                commit, "passes before the fix", "suite passed at the parent", with_fix_tests
            )
        # Put the parent's own tests back and run its unmodified suite, for the regression check.
        lay_files(self.repo, self.base, self.test_files, worktree)
        base_suite = commands.test_once(worktree)
        task = _task(commit, self.base, self.test_files, self.config).model_copy(
            update={"baseSuitePasses": base_suite.ok, "baseTimedOut": with_fix_tests.timed_out}
        )
        note = ""
        if with_fix_tests.timed_out:
            limit = time_limit(self.config.timeouts.test, "timeouts.test")
            note = f"timed out at the parent after {limit} (counts as failing)"
        return Verdict(commit, task, None, note)

    def _without_parent_report(
        self, owners: pertest.Owners, at_fix: list[TestReport], at_parent: list[SuiteRun]
    ) -> Verdict | None:
        """Reports at the fix, none at the parent (a conftest that does not import, pytest's
        exit 4, a crash, a timeout): the fix's own tests are what is known to fail there. None
        when none of them passes at the fix."""
        commit = self.commit
        first = at_parent[0].result
        if len({run.result.ok for run in at_parent}) > 1:
            what = "the suite verdict flipped between runs at the parent"
            return _reject(commit, "flaky", what, first)
        if first.ok:
            what = "the suite passed at the parent (with no report there)"
            return _reject(commit, "passes before the fix", what, first)
        unreported = next(run for run in at_parent if run.report is None)
        if unreported.result.timed_out:
            limit = time_limit(self.config.timeouts.test, "timeouts.test")
            why = f"the parent's run timed out after {limit}"
        else:
            problem = unreported.problem or "no report"
            why = f"{problem} at the parent (exit {unreported.result.exit_code})"
        split = pertest.split_without_parent_report(at_fix, owners=owners, why=why)
        if not split.fail_to_pass:
            return None
        task = _per_test_task(commit, self.base, self.test_files, self.config, split)
        task = task.model_copy(update={"baseTimedOut": first.timed_out})
        return Verdict(commit, task, None, pertest.counts(split))


def _owners(
    repo: Repository,
    commit: Commit,
    test_files: list[str],
    config: RepoConfig,
    at_fix: list[TestReport],
) -> pertest.Owners:
    """Which tests are the fix's own, from its reports, its tree, its test files' text and the
    test files it added or changed (a parameter may name one)."""
    patterns = config.tests.patterns

    def tree() -> list[str]:
        return [path for path in repo.paths_at(commit.sha) if is_test_file(path, patterns=patterns)]

    def read(path: str) -> str | None:
        blob = repo.read_blob(commit.sha, path)
        return None if blob is None else blob.data.decode("utf-8", errors="replace")

    locations = {name: file for report in at_fix for name, file in report.locations.items()}
    # What a test's parameter may name: the new side of each change but a deletion.
    changed = [change.path for change in commit.changes if change.status != "D"]
    changed = [path for path in changed if is_test_file(path, patterns=patterns)]
    return pertest.Owners(test_files, tree=tree, read=read, locations=locations, changed=changed)


def _task(commit: Commit, base: str, test_files: list[str], config: RepoConfig) -> Task:
    body = commit.body.strip()
    return Task(
        id=classify.task_id(commit.sha, commit.subject),
        base=base,
        fix=commit.sha,
        subject=commit.subject,
        body=body,
        prompt=classify.build_prompt(commit.subject, body),
        testFiles=test_files,
        promptQuality=classify.prompt_quality(body),
        testCommand=config.testCommand,
        setupCommand=config.setupCommand,
        minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def _per_test_task(
    commit: Commit, base: str, test_files: list[str], config: RepoConfig, split: pertest.Split
) -> Task:
    return _task(commit, base, test_files, config).model_copy(
        update={
            "failToPass": split.fail_to_pass,
            "passToPass": len(split.pass_to_pass),
            "passToPassTests": split.pass_to_pass,
            "failingBoth": split.failing_both,
            "flaky": split.flaky,
            "noTestPassedAtParent": split.no_test_passed_at_parent,
            "notRunAtParent": len(split.not_run_at_parent),
            "failToPassOutsideFix": split.outside_fix,
        }
    )


def _per_test_verdict(
    commit: Commit,
    base: str,
    test_files: list[str],
    config: RepoConfig,
    owners: pertest.Owners,
    at_fix: list[TestReport],
    at_parent: list[TestReport],
    parent_result: process.CommandResult,
) -> Verdict:
    split = pertest.split(at_fix, at_parent, owners=owners)
    if split.fail_to_pass:
        task = _per_test_task(commit, base, test_files, config, split)
        return Verdict(commit, task, None, pertest.counts(split))
    own_flaky = [name for name in split.flaky if owners.owned(name)]
    if own_flaky:
        what = f"no stable FAIL_TO_PASS test; flaky: {pertest.names(own_flaky)}"
        return Verdict(commit, None, "flaky", what)
    if split.broken_by_fix:
        what = f"no test passes only with the fix; failing: {pertest.names(split.broken_by_fix)}"
        return Verdict(commit, None, "fails at the fix", what)
    if split.not_run_at_parent:
        what = "every test that ran on both sides passes before the fix"
    else:
        what = "every test passing at the fix passes before it"
    if split.failing_both:
        what += f"; failing on both sides: {pertest.names(split.failing_both)}"
    if split.not_run_at_parent:
        missing = f"{len(split.not_run_at_parent)} did not run at the parent"
        what += "; " + with_telling_line(missing, parent_result)
    return Verdict(commit, None, "passes before the fix", what)


def _reports(runs: list[SuiteRun]) -> list[TestReport] | None:
    """Every run's report, or None when one run has none (exit codes decide then)."""
    reports = [run.report for run in runs]
    if any(report is None for report in reports):
        return None
    return [report for report in reports if report is not None]


def _exit_code_rejection(commit: Commit, at_fix: list[SuiteRun]) -> Verdict | None:
    """Without reports the suite must pass at the fix, every time."""
    first = at_fix[0].result
    if all(run.result.ok for run in at_fix):
        return None
    if any(run.result.ok for run in at_fix):
        return _reject(commit, "flaky", "the suite verdict flipped between runs at the fix", first)
    return _reject(commit, "fails at the fix", f"exit {first.exit_code}", first)


class _Commands:
    def __init__(
        self,
        config: RepoConfig,
        extra_env: Mapping[str, str] | None,
        warn: Warn,
        *,
        source_root: Path,
    ) -> None:
        self.config = config
        self.extra_env = dict(extra_env or {})
        self.warn = warn
        self.source_root = source_root
        self.commands = UserCommands(config)

    def place(self, repo: Repository, checkout: Checkout, sandbox: Sandbox | None) -> None:
        """Run in `checkout` (of `repo`'s objects), test commands in `sandbox`."""
        self.repo = repo
        self.checkout = checkout
        self.commands = UserCommands(self.config, sandbox=sandbox)

    @property
    def mounts(self) -> Mounts:
        """A test run's own paths in the sandbox: the checkout, gitgauge's git directory for it
        and the repository's objects, read-only (the suite may run git)."""
        return Mounts(
            workspace=self.checkout.path,
            read_only=(self.checkout.git_dir, *self.repo.object_stores()),
        )

    def reset(self, commit: str) -> None:
        self.checkout.reset(
            commit,
            stores=self.repo.object_stores(),
            link=self.config.worktree.link,
            link_from=self.source_root,
            warn=self.warn,
        )

    def _env(self, worktree: Path) -> dict[str, str]:
        # Linked editable installs import from the checkout: make them import the worktree.
        redirect = links.worktree_env(self.source_root, self.config.worktree.link, worktree)
        return process.clean_env(cwd=worktree, extra={**self.extra_env, **redirect})

    def setup(self, commit: Commit, worktree: Path, *, where: str = "at the fix") -> Verdict | None:
        ran = self.commands.setup(worktree, env=self._env(worktree))
        if ran is None or ran.ok:
            return None
        return _reject(commit, "setup failed", f"setupCommand {ran.how} {where}", ran.result)

    def tests(self, worktree: Path) -> list[SuiteRun]:
        """The decisive run and its `mine.reruns` repeats (none after a timeout or failed start)."""
        runs = [self.test(worktree)]
        for _ in range(self.config.mine.reruns):
            last = runs[-1].result
            if last.timed_out or last.failed_to_start:
                break
            runs.append(self.test(worktree))
        return runs

    def test(self, worktree: Path) -> SuiteRun:
        run = self.commands.suite(worktree, env=self._env(worktree), mounts=self.mounts)
        # A run without a report is warned about by the verdict, when exit codes decide.
        if run.source == "tap":
            self.warn(
                "testCommand reports by TAP: per-test outcomes are read from the TAP it prints"
            )
        if run.report is not None and run.report.duplicates:
            where = "the TAP testCommand prints" if run.source == "tap" else "the JUnit XML report"
            self.warn(
                f"{where} names some tests more than once (e.g. "
                f"{sorted(run.report.duplicates)[0]!r}); the worst outcome of each is kept"
            )
        return run

    def sandbox_symptoms(self, result: process.CommandResult) -> list[str] | None:
        """When a sandboxed run failed the way a sandbox makes suites fail (a read-only or
        missing path), the paths it names (maybe none); else None."""
        if self.commands.sandbox is None or result.ok or result.timed_out:
            return None
        output = result.output_tail(16_000)
        if not SANDBOX_SYMPTOMS.search(output):
            return None
        return list(dict.fromkeys(SANDBOX_PATH.findall(output)))[:3]

    def test_once(self, worktree: Path, *, sandboxed: bool = True) -> process.CommandResult:
        """One run of the suite, by exit code (in the sandbox, or outside it to compare)."""
        commands = self.commands if sandboxed else self.commands.unsandboxed()
        env = self._env(worktree)
        return commands.suite(worktree, env=env, mounts=self.mounts, report=False).result


def _reject(
    commit: Commit, reason: RejectReason, what: str, result: process.CommandResult
) -> Verdict:
    return Verdict(commit, None, reason, with_telling_line(what, result))


def _warn_fallback(warn: Warn, runs: list[SuiteRun]) -> None:
    """Exit codes decide: say why, once per mine (warn is warn_once: the same for every
    candidate). A crash is said with the line of its output that tells why (the same for
    every candidate it stops alike), not with the report option it does not need."""
    run = next((run for run in runs if run.problem is not None), None)
    if run is None:
        return
    if run.problem == SUITE_CRASHED:
        what = f"{SUITE_CRASHED} (exit {run.result.exit_code}; verdicts fall back to the exit code)"
        warn(with_telling_line(what, run.result))
    else:
        warn(f"{run.problem}: {NO_REPORT_HINT}")
