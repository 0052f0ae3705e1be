"""Commit-history tasks (`gitgauge mine --chains`): file-commit chains, as GitGoodBench defines
them, found among the last N first-parent commits, two tasks each: `kind: rebase` (clean the
chain up inside an interactive rebase) and `kind: commits` (commit the chain's changes anew).

A chain is a run of `mine.chainLength` consecutive first-parent commits, none a merge, each
modifying one file (`file`; a commit that adds, deletes or retypes it ends the run). The walk
goes from the newest commit back: at each commit, the longest run back from it over any file it
modifies (ties: the purer, then the first path), cut at the longest length, is a chain when it
is long enough; the walk then goes on below it, so chains never share a commit. A chain is
counted and skipped when it touches only Markdown or lock files, changes a submodule, has two
commits with the same subject (gold, the original series, would fail "no two subjects equal"),
is less pure than `mine.chainPurity`, or has a commit that does not re-apply on its parent.
Each remaining chain's newest commit is tested once (`testsAtNewest`, which
`chains.testEachCommit` needs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.series import LoggedCommit, first_parent_log, replay_problem
from gitgauge.core.kinds import KindMiner, MiningContext
from gitgauge.core.paths import is_docs_or_lock
from gitgauge.core.records import MergeDifficulty, Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite_jobs import Job, Place, SuiteJobs
from gitgauge.core.text import plural
from gitgauge.kinds.mined import KindSummary
from gitgauge.mining import classify

# Skip reasons, counted in the mine summary (a detail names the file or git's words).
DOCS_ONLY = "touches only Markdown or lock files"
SUBMODULE = "changes a submodule"
SAME_SUBJECTS = "two commits with the same subject"
IMPURE = "purer chains only (mine.chainPurity)"
NOT_REPLAYING = "a commit does not re-apply on its parent"
SKIP_REASONS = (DOCS_ONLY, SUBMODULE, SAME_SUBJECTS, IMPURE, NOT_REPLAYING)

REBASE = "rebase"
COMMITS = "commits"


@dataclass(frozen=True)
class Chain:
    """A file-commit chain: `commits` oldest first, all modifying `file`."""

    file: str
    commits: tuple[LoggedCommit, ...]
    purity: float

    @property
    def newest(self) -> LoggedCommit:
        return self.commits[-1]

    @property
    def parent(self) -> str:
        return self.commits[0].parents[0]

    @property
    def paths(self) -> list[str]:
        """Every path a commit of the chain changes."""
        return list(dict.fromkeys(c.path for commit in self.commits for c in commit.changes))


@dataclass
class ChainSummary(KindSummary):
    scanned: int = 0
    """First-parent commits walked."""
    found: int = 0
    """Chains found (before skips)."""

    def looked_at(self) -> list[str]:
        return [f"first-parent commits: {self.scanned}", f"  file-commit chains: {self.found}"]

    def skip_order(self) -> Sequence[str]:
        return SKIP_REASONS

    def tasks_line(self) -> str:
        untested = sum(1 for task in self.tasks if not task.testsAtNewest) // 2
        return (
            f"chain tasks:       {len(self.tasks)} (rebase and commits per chain; "
            f"suite fails at the newest commit: {plural(untested, 'chain')})"
        )


NO_TESTS = "the suite fails at its newest commit: chains.testEachCommit skips it"


class ChainMiner(KindMiner):
    """`kind: rebase` and `kind: commits` tasks from the file-commit chains of the first-parent
    history (`mine --chains`): one chain, two tasks."""

    option = "chains"

    def mine(self, context: MiningContext) -> ChainSummary:
        events = context.events
        return mine_chains(
            context.repo,
            context.config,
            last=context.last,
            existing={task.id for task in context.store.load_tasks(warn=context.warn)},
            dry_run=context.dry_run,
            events=ChainEvents(
                on_start=events.on_start,
                on_task=lambda commit, task: events.on_task(
                    commit, task, "" if task.testsAtNewest else NO_TESTS
                ),
                on_skip=events.on_skip,
                on_error=events.on_error,
            ),
            suites=context.suites,
            save=context.store.save_task,
        )


MINER = ChainMiner()
"""The one miner of both chain kinds."""


def find_chains(commits: Sequence[LoggedCommit], *, shortest: int, longest: int) -> list[Chain]:
    """The chains among `commits` (newest first, as `first_parent_log` yields them), newest
    chain first; see the module's docstring for the rule."""
    chains: list[Chain] = []
    position = 0
    while position < len(commits):
        best: Chain | None = None
        start = commits[position]
        if len(start.parents) == 1:
            for change in sorted(start.changes, key=lambda c: c.path):
                if change.status != "M" or change.is_submodule:
                    continue
                run = [start]
                for earlier in commits[position + 1 :]:
                    if len(run) >= longest or len(earlier.parents) != 1:
                        break
                    found = earlier.change_of(change.path)
                    if found is None or found.status != "M" or found.is_submodule:
                        break
                    run.append(earlier)
                candidate = Chain(change.path, tuple(reversed(run)), 0.0)
                candidate = Chain(change.path, candidate.commits, purity(candidate))
                if best is None or (len(candidate.commits), candidate.purity) > (
                    len(best.commits),
                    best.purity,
                ):
                    best = candidate
        if best is not None and len(best.commits) >= shortest:
            chains.append(best)
            position += len(best.commits)
        else:
            position += 1
    return chains


def purity(chain: Chain) -> float:
    """The share of the chain's changed lines (added + deleted, binary files none) in its
    file; 0 when no line changed."""
    total = sum(change.lines for commit in chain.commits for change in commit.changes)
    own = sum(
        change.lines
        for commit in chain.commits
        for change in commit.changes
        if change.path == chain.file
    )
    return own / total if total else 0.0


def difficulty(chain_purity: float) -> MergeDifficulty:
    """Purer chains are easier: one file's story, little else to sort out."""
    if chain_purity >= 0.9:
        return "easy"
    return "medium" if chain_purity >= 0.7 else "hard"


def skip_reason(repo: Repository, chain: Chain, *, min_purity: float) -> tuple[str, str] | None:
    """(reason, detail) when the chain is counted and skipped; None when it makes tasks."""
    paths = chain.paths
    if all(is_docs_or_lock(path) for path in paths):
        return DOCS_ONLY, ", ".join(paths[:3]) + (" ..." if len(paths) > 3 else "")
    for commit in chain.commits:
        moved = next((c.path for c in commit.changes if c.is_submodule), None)
        if moved is not None:
            return SUBMODULE, f"{moved} in {commit.sha[:8]}"
    subjects = [commit.subject.strip() for commit in chain.commits]
    repeated = next((s for s in subjects if subjects.count(s) > 1), None)
    if repeated is not None:
        return SAME_SUBJECTS, repr(repeated)
    if chain.purity < min_purity:
        return IMPURE, f"{chain.purity:.2f} < {min_purity:g}"
    for commit in chain.commits:
        problem = replay_problem(repo, commit.parents[0], commit.sha)
        if problem is not None:
            return NOT_REPLAYING, f"{commit.sha[:8]}: {problem}"
    return None


def task_ids(chain: Chain) -> dict[str, str]:
    """kind -> id of the chain's two tasks (the newest commit's sha and subject)."""
    newest = chain.newest
    return {
        kind: classify.task_id(newest.sha, f"{kind} {newest.subject}") for kind in (REBASE, COMMITS)
    }


def rebase_prompt(chain: Chain) -> str:
    count = len(chain.commits)
    return (
        f"An interactive rebase of the last {count} commits of branch main is in progress "
        f"(`git rebase -i HEAD~{count}`), stopped at a `break` before its first pick; its todo "
        f"list picks the {count} commits unchanged. They all change {chain.file}.\n\n"
        "Clean this history up: reorder, squash, split, drop or reword commits so that the "
        "series reads as a good history (clear messages, each commit one logical change of a "
        "sensible size), then finish the rebase so that branch main holds the new series. "
        "The code must end exactly as it is at the tip of main now: change no file's content."
    )


def commits_prompt(chain: Chain) -> str:
    count = len(chain.commits)
    return (
        f"The work tree holds the changes of {count} commits that were never committed: HEAD "
        f"and the index are where they started, as `git reset --mixed HEAD~{count}` leaves them "
        "(`git status` lists the changes). Commit them as a good series on branch main: clear "
        "messages, each commit one logical change of a sensible size, in an order that makes "
        "sense. Commit everything, and nothing else: when you are done the work tree must be "
        "clean and the last commit's tree exactly what the work tree holds now."
    )


def make_tasks(chain: Chain, config: RepoConfig, *, tests_at_newest: bool) -> list[Task]:
    newest = chain.newest
    ids = task_ids(chain)
    shared: dict[str, Any] = {
        "fix": newest.sha,
        "subject": newest.subject,
        "testFiles": [],
        "promptQuality": "rich",  # gitgauge's own description of the situation
        "chain": [commit.sha for commit in chain.commits],
        "chainSubjects": [commit.subject for commit in chain.commits],
        "chainParent": chain.parent,
        "file": chain.file,
        "purity": round(chain.purity, 4),
        "difficulty": difficulty(chain.purity),
        "testsAtNewest": tests_at_newest,
        "testCommand": config.testCommand,
        "setupCommand": config.setupCommand,
        "minedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return [
        # The rebase starts at the newest commit (its branch holds the chain), the commits
        # task at the chain's parent with the newest tree in the work tree.
        Task(id=ids[REBASE], kind="rebase", base=newest.sha, prompt=rebase_prompt(chain), **shared),
        Task(
            id=ids[COMMITS],
            kind="commits",
            base=chain.parent,
            prompt=commits_prompt(chain),
            **shared,
        ),
    ]


def suite_passes(place: Place, chain: Chain) -> bool:
    """Whether setupCommand and testCommand pass at the chain's newest commit (in the place's
    checkout, reset there): a job of `core.suite_jobs`, here or on a Ray node."""
    test = place.suite_at(chain.newest.sha)
    return test is not None and test.ok


@dataclass(frozen=True)
class ChainEvents:
    on_start: Callable[[Commit], None]
    on_task: Callable[[Commit, Task], None]
    on_skip: Callable[[Commit, str], None]
    on_error: Callable[[Commit, str], None]


def mine_chains(
    repo: Repository,
    config: RepoConfig,
    *,
    last: int,
    existing: set[str],
    dry_run: bool,
    events: ChainEvents,
    suites: SuiteJobs,
    save: Callable[[Task], object],
) -> ChainSummary:
    """Find, check and save the chains among the last `last` first-parent commits; `existing`
    holds the ids of the tasks already saved."""
    shortest, longest = config.mine.chainLength
    commits = list(first_parent_log(repo, "HEAD", max_count=last))
    summary = ChainSummary(scanned=len(commits))
    to_verify: list[Chain] = []
    for chain in find_chains(commits, shortest=shortest, longest=longest):
        summary.found += 1
        newest = as_commit(chain.newest)
        if all(task_id in existing for task_id in task_ids(chain).values()):
            summary.already_mined += 1
            events.on_skip(newest, "already mined (chain tasks)")
            continue
        skipped = skip_reason(repo, chain, min_purity=config.mine.chainPurity)
        if skipped is not None:
            reason, detail = skipped
            summary.skipped[reason] += 1
            events.on_skip(newest, f"chain skipped: {reason} ({detail})")
            continue
        if dry_run:
            events.on_skip(
                newest,
                f"chain candidate ({len(chain.commits)} commits on {chain.file}, "
                f"purity {chain.purity:.2f})",
            )
            continue
        to_verify.append(chain)

    verdicts = suites.map(
        suite_passes,
        [Job(as_commit(chain.newest), chain) for chain in to_verify],
        on_start=events.on_start,
        name="verify-chain",
    )
    try:
        for done in verdicts:
            chain, passes = done.job.payload, done.value
            if passes is None:
                events.on_error(done.job.commit, done.lost or "lost")
                continue
            for task in make_tasks(chain, config, tests_at_newest=passes):
                if task.id in existing:
                    continue
                save(task)
                summary.tasks.append(task)
                events.on_task(as_commit(chain.newest), task)
    finally:
        verdicts.close()
    return summary


def as_commit(logged: LoggedCommit) -> Commit:
    """The record mine's progress callbacks take."""
    return Commit(sha=logged.sha, parents=logged.parents, subject=logged.subject, body=logged.body)
