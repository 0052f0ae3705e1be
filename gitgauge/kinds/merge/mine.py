"""Merge-conflict tasks (`gitgauge mine --merges`): a recorded two-parent merge whose automatic
re-merge of its parents conflicts becomes a task. The agent gets `base` (first parent) with
`other` (second parent) merged in and the conflicts left in the files; the recorded merge is the
reference resolution (exact match, as GitGoodBench scores it) and, when its suite passes, the
test suite is the second judge.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.mergetree import (
    ReMerge,
    check_git_version,
    count_regions,
    re_merge,
    read_text,
)
from gitgauge.core.git.owned import parse_tree_listing
from gitgauge.core.kinds import KindMiner, MiningContext
from gitgauge.core.paths import is_docs_or_lock
from gitgauge.core.records import MergeDifficulty, Task
from gitgauge.core.suite_jobs import Job, Place
from gitgauge.core.text import plural
from gitgauge.kinds.mined import KindSummary
from gitgauge.mining import classify
from gitgauge.mining.verify import Verdict

# Skip reasons, counted in the mine summary (a detail names the file or git's words).
OCTOPUS = "octopus merge"
PARENT_MISSING = "parent not in this clone"
REFUSED = "git cannot re-merge the parents"
CLEAN = "re-merges without conflicts"
DOCS_ONLY = "conflicts only in Markdown or lock files"
TOO_MANY = "more conflicts than mine.maxConflicts"
UNSUPPORTED = "conflict gitgauge cannot re-create"


def difficulty(files: int, regions: int) -> MergeDifficulty:
    """GitGoodBench's difficulty: easy 1 file 1 conflict, medium 1 file more, hard more files."""
    if files <= 1:
        return "easy" if regions <= 1 else "medium"
    return "hard"


@dataclass
class MergeSummary(KindSummary):
    merges: int = 0
    """Merge commits among the scanned ones."""
    conflicted: int = 0
    """Merges whose re-merge conflicts (candidates)."""

    def looked_at(self) -> list[str]:
        return [f"merge commits:     {self.merges}", f"  conflicted:      {self.conflicted}"]

    def tasks_line(self) -> str:
        exact_only = sum(1 for task in self.tasks if task.testsAtMerge is False)
        return f"merge tasks:       {len(self.tasks)} (exact match only: {exact_only})"


class MergeMiner(KindMiner):
    """Merge-conflict tasks from the merge commits among the scanned ones (`mine --merges`)."""

    option = "merges"
    takes_merges = True

    def check(self, repo: Repository) -> None:
        check_git_version(repo.root)

    def mine(self, context: MiningContext) -> MergeSummary:
        commits, events = context.merge_commits, context.events
        summary = MergeSummary(merges=len(commits))
        to_verify: list[MergeCandidate] = []
        for commit in commits:
            if commit.sha in context.mined:
                summary.already_mined += 1
                events.on_skip(commit, "already mined (merge task)")
                continue
            found = classify_merge(
                context.repo, commit, max_conflicts=context.config.mine.maxConflicts
            )
            if isinstance(found, tuple):
                reason, detail = found
                summary.skipped[reason] += 1
                said = f"merge skipped: {reason}" + (f" ({detail})" if detail else "")
                events.on_skip(commit, said)
                continue
            summary.conflicted += 1
            if context.dry_run:
                events.on_skip(commit, f"merge candidate ({plural(found.regions, 'conflict')})")
            else:
                to_verify.append(found)
        events.on_total(len(to_verify))
        verdicts = context.suites.map(
            verify_merge,
            [Job(candidate.commit, candidate) for candidate in to_verify],
            on_start=events.on_start,
            name="verify-merge",
        )
        try:
            for done in verdicts:
                verdict = done.value
                if verdict is None:
                    events.on_error(done.job.commit, done.lost or "lost")
                    continue
                assert verdict.task is not None
                task = verdict.task
                if context.prepare_task is not None:
                    task = context.prepare_task(task, verdict.commit)
                context.store.save_task(task)
                summary.tasks.append(task)
                events.on_task(verdict.commit, task, verdict.detail)
        finally:
            verdicts.close()
        return summary


@dataclass(frozen=True)
class MergeCandidate:
    commit: Commit
    remade: ReMerge
    regions: int
    outside: tuple[str, ...] = ()
    """What the recorded merge changed beyond re-merging and the conflicts (`outsideConflicts`)."""


def classify_merge(
    repo: Repository, commit: Commit, *, max_conflicts: int
) -> MergeCandidate | tuple[str, str]:
    """A candidate, or (skip reason, detail)."""
    if len(commit.parents) > 2:
        return OCTOPUS, f"{len(commit.parents)} parents"
    missing = [sha for sha in commit.parents if not repo.has_commit(sha)]
    if missing:
        return PARENT_MISSING, f"{missing[0][:12]} missing (shallow clone? git fetch --unshallow)"
    base, other = commit.parents
    remade = re_merge(repo.root, base, other)
    if remade.tree is None:
        return REFUSED, remade.refused or ""
    if not remade.conflicted:
        return CLEAN, ""
    unsupported = remade.unsupported
    if unsupported is not None:
        return UNSUPPORTED, unsupported
    if all(is_docs_or_lock(path) for path in remade.conflicted):
        return DOCS_ONLY, ", ".join(remade.conflicted)
    # A modify/delete leaves no markers; it is still one decision to make.
    regions = sum(
        max(1, count_regions(read_text(repo.root, remade.tree, path))) for path in remade.conflicted
    )
    if regions > max_conflicts:
        return TOO_MANY, f"{regions} > {max_conflicts}"
    recorded = parse_tree_listing(repo.tree_listing(commit.sha))
    again = parse_tree_listing(repo.tree_listing(remade.tree))
    moved = sorted(
        path
        for path, (mode, sha) in recorded.items()
        if mode == GITLINK and again.get(path) != (mode, sha)
    )
    if moved:
        # Gold lays the merge's files into the workspace, and a submodule pointer is not a
        # file: it would score below exact, and the EXACT columns are calibrated by gold.
        return UNSUPPORTED, f"the merge itself sets submodule {moved[0]}"
    outside = outside_conflicts(recorded, again, conflicted=remade.conflicted)
    return MergeCandidate(commit, remade, regions, outside=tuple(outside))


GITLINK = "160000"
"""The mode of a submodule pointer in a tree listing."""


def outside_conflicts(
    recorded: Mapping[str, tuple[str, str]],
    remade: Mapping[str, tuple[str, str]],
    *,
    conflicted: Collection[str],
) -> list[str]:
    """The paths, sorted, where the recorded merge's tree differs from git's own merge of its
    parents (mode or object id, or a path on one side only) outside the conflicted files: what
    the merge changed beyond resolving. A rename is its two paths (the old one gone, the new
    one added), as git's trees have no renames."""
    return sorted(
        path
        for path in recorded.keys() | remade.keys()
        if path not in conflicted and recorded.get(path) != remade.get(path)
    )


def build_prompt(repo: Repository, base: str, other: str, files: list[str]) -> str:
    """The situation, never the resolution."""
    other_subject = repo.commit_info(other).subject
    base_subject = repo.commit_info(base).subject
    listed = "\n".join(f"- {path}" for path in files)
    return (
        f"A merge is in progress: commit {other[:12]} ({other_subject}) is being merged into "
        f"{base[:12]} ({base_subject}), and git stopped with conflicts in "
        f"{len(files)} file(s):\n{listed}\n\n"
        "Resolve the conflicts so that the result keeps what both sides meant to do. "
        "You may finish with `git add` (and `git commit`) or just edit the files."
    )


def verify_merge(place: Place, candidate: MergeCandidate) -> Verdict:
    """One candidate's job (`core.suite_jobs`: here, or on a Ray node with the history up to
    the merge): the suite at the recorded merge (in the place's checkout, reset there), a task
    either way, `testsAtMerge` says which."""
    repo, config = place.repo, place.config
    commit = candidate.commit
    base, other = commit.parents
    note = ""
    test = place.suite_at(commit.sha)
    if test is None:
        note = "setupCommand failed at the merge: exact match only"
    elif not test.ok:
        how = "timed out" if test.timed_out else f"exit {test.exit_code}"
        note = f"suite fails at the merge ({how}): exact match only"
    passed = test is not None and test.ok
    files = list(candidate.remade.conflicted)
    if candidate.outside:
        count = len(candidate.outside)
        changed = f"the merge also changed {plural(count, 'file')} outside the conflicts"
        note = f"{note}; {changed}" if note else changed
    task = Task(
        id=classify.task_id(commit.sha, commit.subject),
        kind="merge",
        base=base,
        other=other,
        merge=commit.sha,
        fix=commit.sha,
        subject=commit.subject,
        body=commit.body.strip(),
        prompt=build_prompt(repo, base, other, files),
        testFiles=[],
        # The prompt is gitgauge's own description of the situation, never a bare title.
        promptQuality="rich",
        conflictFiles=files,
        conflictRegions=candidate.regions,
        outsideConflicts=list(candidate.outside),
        difficulty=difficulty(len(files), candidate.regions),
        testsAtMerge=passed,
        testCommand=config.testCommand,
        setupCommand=config.setupCommand,
        minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    return Verdict(commit, task, None, note)


MINER = MergeMiner()
"""The merge kind's miner."""
