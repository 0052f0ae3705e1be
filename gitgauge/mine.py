"""`gitgauge mine`: one streamed `git log` pass picks candidates by subject and touched paths, then
each candidate is verified in throwaway worktrees and saved as a task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from gitgauge import classify
from gitgauge.errors import ConfigError, GitError, UsageError
from gitgauge.git import Commit, Repository
from gitgauge.records import RepoConfig, Task
from gitgauge.store import Store
from gitgauge.verify import Verdict, verify
from gitgauge.worktree import Warn

# Stop early when the test command cannot even start this many times in a row with no success:
# the command is wrong, and verifying 200 candidates will not make it right.
START_FAILURES_BEFORE_GIVING_UP = 3


@dataclass
class MineSummary:
    scanned: int = 0
    merges: int = 0
    roots: int = 0
    candidates: int = 0
    already_mined: int = 0
    skipped_title_only: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    tasks: list[Task] = field(default_factory=list)

    @property
    def verified_rich(self) -> int:
        return sum(1 for task in self.tasks if task.promptQuality == "rich")

    @property
    def verified_title_only(self) -> int:
        return sum(1 for task in self.tasks if task.promptQuality == "title-only")


@dataclass(frozen=True)
class Candidate:
    commit: Commit
    quality: str


def find_candidates(repo: Repository, *, last: int, summary: MineSummary) -> Iterator[Candidate]:
    """Classify the last `last` commits of HEAD in one streamed `git log`; count as it goes."""
    shallow = repo.shallow_boundary()
    for commit in repo.log("HEAD", max_count=last):
        summary.scanned += 1
        if len(commit.parents) > 1:
            summary.merges += 1
            continue
        # A shallow clone's boundary commits look like roots: their parents were not fetched.
        if not commit.parents and commit.sha not in shallow:
            summary.roots += 1
            continue
        if not classify.classify_subject(commit.subject).candidate:
            continue
        if not classify.touches_tests_and_source(commit.paths):
            continue
        summary.candidates += 1
        yield Candidate(commit, classify.prompt_quality(commit.body))


def mine(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    *,
    last: int | None = None,
    require_body: bool = False,
    warn: Warn,
    on_start: Callable[[Commit, int], None] = lambda commit, index: None,
    on_verdict: Callable[[Verdict], None] = lambda verdict: None,
    on_skip: Callable[[Commit, str], None] = lambda commit, why: None,
    prepare_task: Callable[[Task, Commit], Task] | None = None,
) -> MineSummary:
    """Scan, verify and save. `prepare_task` may rewrite a verified task before it is saved
    (prompt rewriting); it must not raise for failures it can recover from."""
    count = config.mine.last if last is None else last
    if count <= 0:
        raise UsageError(f"--last must be a positive number of commits, got {count}")
    if repo.head_sha() is None:
        raise GitError(f"{repo.root} has no commits yet: there is no history to mine")

    summary = MineSummary()
    mined = store.mined_fix_shas(warn=warn)
    # Candidates are few compared with commits: holding them keeps memory bounded by candidates.
    to_verify: list[Candidate] = []
    for candidate in find_candidates(repo, last=count, summary=summary):
        if candidate.commit.sha in mined:
            summary.already_mined += 1
            on_skip(candidate.commit, "already mined")
        elif require_body and candidate.quality == "title-only":
            summary.skipped_title_only += 1
            on_skip(candidate.commit, "skipped: title-only (--require-body)")
        else:
            to_verify.append(candidate)

    start_failures = 0
    for index, candidate in enumerate(to_verify):
        on_start(candidate.commit, index)
        verdict = verify(repo, candidate.commit, config, warn=warn, extra_env={"GITGAUGE_JOB": "0"})
        if verdict.task is not None:
            task = prepare_task(verdict.task, candidate.commit) if prepare_task else verdict.task
            store.save_task(task)
            summary.tasks.append(task)
            start_failures = 0
        else:
            assert verdict.reason is not None
            summary.rejected[verdict.reason] += 1
            if verdict.reason == "test command failed to start":
                start_failures += 1
            else:
                start_failures = 0
        on_verdict(verdict)
        if start_failures >= min(START_FAILURES_BEFORE_GIVING_UP, len(to_verify)):
            raise ConfigError(
                f"testCommand {config.testCommand!r} failed to start (not found or not "
                f"executable) at {start_failures} candidate(s) in a row: fix testCommand in "
                "gitgauge.yaml"
            )
    return summary
