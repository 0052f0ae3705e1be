"""`gitgauge mine`: one streamed `git log` pass picks candidates by subject and touched paths, then
each candidate is verified in throwaway worktrees (several at once with `jobs > 1`) and saved as a
task. Every verdict is remembered, so the next `mine` verifies only new candidates.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Protocol

from gitgauge.core import kinds, links
from gitgauge.core.errors import ConfigError, GitError, UsageError
from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.kinds import MinedKind, MiningContext, MiningEvents
from gitgauge.core.parallel import in_order
from gitgauge.core.records import PromptQuality, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store, atomic_write_json
from gitgauge.core.suite import stop_early_warning
from gitgauge.core.suite_jobs import LocalJobs, SuiteJobs
from gitgauge.core.worktree import Warn, warn_once
from gitgauge.mining import classify, rules
from gitgauge.mining.duplicates import duplicates as duplicates
from gitgauge.mining.rules import RuleCounts
from gitgauge.mining.sandbox import mining_sandbox
from gitgauge.mining.verify import CandidateError, Verdict, verify

# Stop early when the test command cannot even start this many times in a row with no success:
# the command is wrong, and verifying 200 candidates will not make it right.
START_FAILURES_BEFORE_GIVING_UP = 3

FAILED_TO_START = "test command failed to start"
RUNS_NO_TEST = "runs no test at the fix"

# Stop early, too, when the suite passes no test at the fix of this many candidates in a row
# before any candidate showed that it can: the tests do not import, whatever the commit.
NO_TESTS_BEFORE_GIVING_UP = 3
# Verdicts that show the suite runs tests at a fix: after one, a candidate whose suite runs none
# is that commit's own problem (old code on today's interpreter), not the command's.
_SUITE_RAN = frozenset({"passes before the fix", "fails at the fix", "flaky"})

# Not remembered: a command that could not start says nothing about the commit, and a parent
# missing from a shallow clone is there after `git fetch --unshallow`.
_NOT_REMEMBERED = frozenset({FAILED_TO_START, "no parent commit available"})


@dataclass
class MineSummary:
    scanned: int = 0
    merges: int = 0
    roots: int = 0
    candidates: int = 0
    already_mined: int = 0
    judged_before: int = 0
    """Candidates rejected (or verified and since deleted) by an earlier mine with the same
    commands; `--force` judges them again."""
    skipped_title_only: int = 0
    duplicates: list[tuple[Commit, str]] = field(default_factory=list)
    """Candidates with the same patch as a kept one (a cherry-pick, a backport), not verified:
    each with the id of the candidate kept instead."""
    rules: RuleCounts = field(default_factory=RuleCounts)
    """How many commits each subject and file rule took and dropped."""
    rejected: Counter[str] = field(default_factory=Counter)
    errors: list[CandidateError] = field(default_factory=list)
    """Candidates with no verdict (their Ray node was lost): verified again by the next mine."""
    tasks: list[Task] = field(default_factory=list)
    kinds: list[MinedKind] = field(default_factory=list)
    """What each other kind's miner found (`--merges`, `--chains`), in the kinds' order."""
    merges_mined: bool = False
    """Whether a miner took the merge commits (they are then counted in its lines)."""

    @property
    def every_task(self) -> list[Task]:
        """The fix tasks and every miner's."""
        return [*self.tasks, *(task for mined in self.kinds for task in mined.tasks)]

    @property
    def verified_rich(self) -> int:
        return sum(1 for task in self.tasks if task.promptQuality == "rich")

    @property
    def no_test_passed_at_parent(self) -> int:
        """Verified tasks whose parent passed no test at all: to review (see Task)."""
        return sum(1 for task in self.tasks if task.noTestPassedAtParent)

    @property
    def fail_to_pass_outside_fix(self) -> int:
        """Verified tasks whose failing tests live in files the fix did not change: to review."""
        return sum(1 for task in self.tasks if task.failToPassOutsideFix)

    @property
    def verified_title_only(self) -> int:
        return sum(1 for task in self.tasks if task.promptQuality == "title-only")


@dataclass(frozen=True)
class Candidate:
    commit: Commit
    quality: PromptQuality


def find_candidates(
    repo: Repository,
    config: RepoConfig,
    *,
    last: int,
    summary: MineSummary,
    merge_commits: list[Commit] | None = None,
) -> Iterator[Candidate]:
    """Classify the last `last` commits of HEAD in one streamed `git log`; count as it goes.
    Merge commits go to `merge_commits` when given."""
    shallow = repo.shallow_boundary()
    types = rules.subject_types(config)
    for commit in repo.log("HEAD", max_count=last):
        summary.scanned += 1
        if len(commit.parents) > 1:
            summary.merges += 1
            if merge_commits is not None:
                merge_commits.append(commit)
            continue
        if commit.sha in shallow and merge_commits is not None:
            # A shallow clone shows its boundary commits without parents; the commit object
            # still names them, and a merge among them is counted (its parents are missing).
            recorded = repo.recorded_parents(commit.sha)
            if len(recorded) > 1:
                summary.merges += 1
                merge_commits.append(replace(commit, parents=recorded))
                continue
        # A shallow clone's boundary commits look like roots: their parents were not fetched.
        if not commit.parents and commit.sha not in shallow:
            summary.roots += 1
            continue
        decision = rules.decide(commit, config, types=types)
        summary.rules.count(decision)
        if not decision.candidate:
            continue
        summary.candidates += 1
        yield Candidate(commit, classify.prompt_quality(commit.body))


def judgement_key(sha: str, config: RepoConfig) -> str:
    """A verdict holds for one commit under one testCommand/setupCommand/link set, timeouts
    (a "timed out" rejection must not outlive a raised timeout) and `tests.patterns` (which
    decide the test files laid over)."""
    commands = json.dumps(
        [
            config.testCommand,
            config.setupCommand,
            config.worktree.link,
            config.timeouts.test,
            config.timeouts.setup,
            config.mine.reruns,
            config.tests.junit,
            # Only when set, so the keys of projects without patterns stay what they were.
            *([config.tests.patterns] if config.tests.patterns else []),
        ]
    )
    return f"{sha}-{hashlib.sha256(commands.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class MineEvents:
    """Callbacks for progress output (the CLI renders them)."""

    on_start: Callable[[Commit], None] = lambda commit: None
    on_verdict: Callable[[Verdict], None] = lambda verdict: None
    on_skip: Callable[[Commit, str], None] = lambda commit, why: None
    on_total: Callable[[int], None] = lambda count: None
    """How many candidates are about to be verified (merges are added when they are known)."""
    on_error: Callable[[CandidateError], None] = lambda error: None
    """A candidate with no verdict (`mine --executor ray`: its node was lost)."""


class Verifier(Protocol):
    """Verifies the fix candidates elsewhere (`mine --executor ray`: `mining.remote`), verdicts
    as they come; the other kinds' miners run their suites on its `jobs`."""

    @property
    def jobs(self) -> SuiteJobs: ...

    def __call__(
        self, candidates: Sequence[Candidate], events: MineEvents
    ) -> Generator[Verdict | CandidateError, None, None]: ...


def mine(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    *,
    last: int | None = None,
    require_body: bool = False,
    force: bool = False,
    dry_run: bool = False,
    jobs: int = 1,
    warn: Warn,
    events: MineEvents | None = None,
    prepare_task: Callable[[Task, Commit], Task] | None = None,
    asked: Mapping[str, bool | None] | None = None,
    verifier: Verifier | None = None,
) -> MineSummary:
    """Scan, verify and save. `prepare_task` may rewrite a verified task before it is saved
    (prompt rewriting); it must not raise for failures it can recover from. With `dry_run`,
    candidates are reported through `on_skip` and nothing is verified. `asked`: a kind miner's
    option (`merges`, `chains`) -> on or off from the command line (None: `mine.<option>`).
    `verifier`: where the fix candidates are verified (default: here, on `jobs` threads)."""
    events = events or MineEvents()
    warn = warn_once(warn)
    count = _commit_count(repo, config, last=last, jobs=jobs, warn=warn)
    summary = MineSummary()
    mined = store.mined_fix_shas(warn=warn)
    miners = kinds.miners(config, asked or {})
    for miner in miners:
        miner.check(repo)
    merge_commits: list[Commit] | None = [] if any(m.takes_merges for m in miners) else None
    summary.merges_mined = merge_commits is not None
    # Candidates are few compared with commits: holding them keeps memory bounded by candidates.
    candidates = list(
        find_candidates(repo, config, last=count, summary=summary, merge_commits=merge_commits)
    )
    to_verify = _to_verify(
        repo, config, store, candidates, summary,
        mined=mined, force=force, require_body=require_body, dry_run=dry_run, events=events,
    )  # fmt: skip
    events.on_total(len(to_verify))
    with CheckoutPool(owner_repository=repo.root) as pool:
        # Candidates verified elsewhere get the sandbox of the machine they run on (the other
        # kinds' suites go there too).
        work_here = to_verify or merge_commits or (miners and not dry_run)
        needs_sandbox = verifier is None and work_here
        sandbox = mining_sandbox(repo, config, warn=warn) if needs_sandbox else None
        _verify_candidates(
            repo, config, store, to_verify, summary,
            jobs=jobs, warn=warn, events=events, prepare_task=prepare_task,
            pool=pool, sandbox=sandbox, verifier=verifier,
        )  # fmt: skip
        context = MiningContext(
            repo=repo,
            config=config,
            store=store,
            pool=pool,
            sandbox=sandbox,
            last=count,
            jobs=jobs,
            force=force,
            dry_run=dry_run,
            warn=warn,
            events=_kind_events(events, summary),
            prepare_task=prepare_task,
            mined=mined,
            suites=(
                verifier.jobs
                if verifier is not None
                else LocalJobs(repo, config, pool, sandbox, warn, jobs)
            ),
            merge_commits=merge_commits or [],
        )
        for miner in miners:
            summary.kinds.append(miner.mine(context))
    return summary


def _commit_count(
    repo: Repository, config: RepoConfig, *, last: int | None, jobs: int, warn: Warn
) -> int:
    """How many commits to scan, once the options and the repository are known to allow a mine;
    the linked directories announced and a test command that stops early warned of."""
    count = config.mine.last if last is None else last
    if count <= 0:
        raise UsageError(f"--last must be a positive number of commits, got {count}")
    if jobs <= 0:
        raise UsageError(f"--jobs must be a positive number, got {jobs}")
    if repo.head_sha() is None:
        raise GitError(f"{repo.root} has no commits yet: there is no history to mine")
    links.announce(repo.root, config.worktree.link, tracked=repo.is_tracked, warn=warn)

    stops_early = stop_early_warning(config.testCommand)
    if stops_early:
        warn(stops_early)
    return count


def _to_verify(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    candidates: list[Candidate],
    summary: MineSummary,
    *,
    mined: set[str],
    force: bool,
    require_body: bool,
    dry_run: bool,
    events: MineEvents,
) -> list[Candidate]:
    """The candidates to verify now; every other is counted and reported through `on_skip`
    (already a task, a duplicate of another, judged before, title-only, or a dry run)."""
    kept_instead = duplicates(repo, candidates, mined=mined)
    to_verify: list[Candidate] = []
    for candidate in candidates:
        sha = candidate.commit.sha
        earlier = None if force else store.load_judgement(judgement_key(sha, config))
        keeper = kept_instead.get(sha)
        if sha in mined:
            summary.already_mined += 1
            events.on_skip(candidate.commit, "already mined")
        elif keeper is not None:
            kept_id = classify.task_id(keeper.commit.sha, keeper.commit.subject)
            summary.duplicates.append((candidate.commit, kept_id))
            events.on_skip(candidate.commit, f"duplicate of {kept_id}")
        elif earlier is not None:
            summary.judged_before += 1
            events.on_skip(candidate.commit, f"judged before: {earlier}")
        elif require_body and candidate.quality == "title-only":
            summary.skipped_title_only += 1
            events.on_skip(candidate.commit, "skipped: title-only (--require-body)")
        elif dry_run:
            events.on_skip(candidate.commit, f"candidate ({candidate.quality})")
        else:
            to_verify.append(candidate)
    return to_verify


def _kind_events(events: MineEvents, summary: MineSummary) -> MiningEvents:
    """The fix miner's progress callbacks, as the other kinds' miners take them (their
    candidates with no verdict are counted with the fix candidates')."""

    def on_error(commit: Commit, why: str) -> None:
        error = CandidateError(commit, why)
        summary.errors.append(error)
        events.on_error(error)

    return MiningEvents(
        on_start=events.on_start,
        on_task=lambda commit, task, detail: events.on_verdict(Verdict(commit, task, None, detail)),
        on_skip=events.on_skip,
        on_total=events.on_total,
        on_error=on_error,
    )


def _verify_candidates(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    to_verify: list[Candidate],
    summary: MineSummary,
    *,
    jobs: int,
    warn: Warn,
    events: MineEvents,
    prepare_task: Callable[[Task, Commit], Task] | None,
    pool: CheckoutPool,
    sandbox: Sandbox | None,
    verifier: Verifier | None,
) -> None:
    start_failures = 0
    no_tests: list[Verdict] = []
    suite_ran = False
    verdicts = (
        verifier(to_verify, events)
        if verifier is not None
        else _verify_all(
            repo, config, to_verify, jobs=jobs, warn=warn, events=events, pool=pool,
            sandbox=sandbox,
        )
    )  # fmt: skip
    try:
        for verdict in verdicts:
            if isinstance(verdict, CandidateError):
                summary.errors.append(verdict)
                events.on_error(verdict)
                continue
            if verdict.task is not None:
                task = prepare_task(verdict.task, verdict.commit) if prepare_task else verdict.task
                store.save_task(task)
                summary.tasks.append(task)
                start_failures = 0
            else:
                assert verdict.reason is not None
                summary.rejected[verdict.reason] += 1
                start_failures = start_failures + 1 if verdict.reason == FAILED_TO_START else 0
                if verdict.reason == "fails in the sandbox":
                    warn(
                        "the suite passes outside the sandbox but fails in it, where `run` "
                        "grades: such fixes are not saved (even gold would fail them). "
                        "Make the suite write only inside its checkout or into new files under "
                        "$HOME, or set run.sandbox: none (see docs/guide/sandbox.md)"
                    )
            suite_ran = suite_ran or verdict.task is not None or verdict.reason in _SUITE_RAN
            no_tests = [*no_tests, verdict] if verdict.reason == RUNS_NO_TEST else []
            if verdict.reason not in _NOT_REMEMBERED:
                _remember(store, config, verdict)
            events.on_verdict(verdict)
            if start_failures >= START_FAILURES_BEFORE_GIVING_UP:
                raise _never_started(config, f"at {start_failures} candidates in a row")
            if len(no_tests) >= NO_TESTS_BEFORE_GIVING_UP and not suite_ran:
                # The command is wrong, not these commits: once it is fixed, judge them again.
                for streak in no_tests:
                    key = judgement_key(streak.commit.sha, config)
                    store.judgement_path(key).unlink(missing_ok=True)
                raise _runs_no_test(config, no_tests)
    finally:
        # Stop the workers and remove their worktrees now, not when the generator is collected.
        verdicts.close()
    # A short list where nothing started is the same wrong command, unless these commands have
    # judged candidates before: commits whose own runner script was broken are never
    # remembered, so a later mine may have only them left, and the command is fine.
    if (
        to_verify
        and summary.rejected[FAILED_TO_START] == len(to_verify)
        and not (summary.judged_before or summary.already_mined)
    ):
        raise _never_started(config, f"at every candidate ({len(to_verify)})")


def _never_started(config: RepoConfig, where: str) -> ConfigError:
    return ConfigError(
        f"testCommand {config.testCommand!r} failed to start (not found or not executable) "
        f"{where}: fix testCommand in gitgauge.yaml"
    )


def _runs_no_test(config: RepoConfig, verdicts: list[Verdict]) -> ConfigError:
    return ConfigError(
        f"testCommand {config.testCommand!r} passed no test at the fix of {len(verdicts)} "
        f"candidates in a row (the last: {verdicts[-1].detail}): the tests likely do not "
        "import. Put the package on the path (PYTHONPATH=src, or pytest's `pythonpath = src`), "
        "install what is missing in setupCommand, or run the interpreter that has the "
        "dependencies (`.venv/bin/python -m pytest`); fix gitgauge.yaml and mine again"
    )


def _verify_all(
    repo: Repository,
    config: RepoConfig,
    candidates: list[Candidate],
    *,
    jobs: int,
    warn: Warn,
    events: MineEvents,
    pool: CheckoutPool,
    sandbox: Sandbox | None,
) -> Generator[Verdict, None, None]:
    """Verify candidates on `jobs` threads; verdicts come in candidate order."""

    def judge(candidate: Candidate, slot: int) -> Verdict:
        events.on_start(candidate.commit)
        env = {"GITGAUGE_JOB": str(slot)}
        with pool.slot(slot) as checkout:
            return verify(
                repo,
                candidate.commit,
                config,
                warn=warn,
                extra_env=env,
                checkout=checkout,
                sandbox=sandbox,
            )

    return in_order(candidates, judge, jobs=jobs, name="verify")


def _remember(store: Store, config: RepoConfig, verdict: Verdict) -> None:
    record = {
        "fix": verdict.commit.sha,
        "subject": verdict.commit.subject,
        "verdict": "verified" if verdict.task is not None else "rejected",
        "reason": verdict.reason,
        "detail": verdict.detail,
        "task": verdict.task.id if verdict.task is not None else None,
        "testCommand": config.testCommand,
        "setupCommand": config.setupCommand,
        "judgedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    atomic_write_json(store.judgement_path(judgement_key(verdict.commit.sha, config)), record)
