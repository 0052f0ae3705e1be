"""Scoring a merge task: resolved? exact?

- **resolved**: no conflict marker left in any conflicted or changed file, no conflicted path
  left unmerged and untouched, and, when the suite passed at the recorded merge
  (`testsAtMerge`), `testCommand` passes on the agent's result.
- **exact** (GitGoodBench's metric): every conflicted file's content equals the recorded merge's
  (both absent counts as equal: a modify/delete resolved by deleting). **exactTree**: the whole
  tree equals the merge's, files the setup step made excepted.

Everything is judged from data: the tree the agent left (read through gitgauge's own git
directory), the files MERGE_HEAD, HEAD and index of the agent's git directory, and the recorded
merge's tree listing in the user's repository. Files are compared by blob id and mode: an
isolated workspace never holds the merge, but a blob id is the same wherever it is computed.
Exact match reads the agent's tree as it is; changes outside the conflicted files are reported
(`outsideChanges`). The suite grades on the project's tests, as a fix's does: protected files
outside the conflicted ones are put back to the merge's starting state, what the agent added that
is not project code is dropped (`running/scoring/protect.py`), the result is laid into a fresh
checkout of `base` and the recorded merge's test files over it, and the suite runs in the
sandbox. What the recorded merge changed beyond the conflicts (`Task.outsideConflicts`: a test
file it renamed, an evil merge's edit) is laid over the result too wherever the agent left the
path as the merge started it, so the suite asks no agent for changes only `exactTree` counts; a
path where the agent wrote the merge's own version is graded as it and not reported as reverted
or dropped.
"""

from __future__ import annotations

import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitgauge.core import process
from gitgauge.core.git.agent_dir import MergeState
from gitgauge.core.git.mergetree import has_markers
from gitgauge.core.git.owned import AgentDiff, parse_tree_listing
from gitgauge.core.paths import is_test_file
from gitgauge.core.records import MergeResultDraft, Task
from gitgauge.core.worktree import lay_files
from gitgauge.kinds.merge.workspace import ConflictState
from gitgauge.running.scoring.protect import Protection, ensure_inside, protect
from gitgauge.running.workspace import Workspace

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


@dataclass(frozen=True)
class MergeGrade:
    resolved: bool
    exact: bool
    exact_tree: bool
    exact_files: list[str]
    marker_files: list[str]
    unmerged: list[str]
    outside: list[str]
    abandoned: bool
    """The agent undid the merge (`git merge --abort`, a reset to base): nothing was merged."""
    test: process.CommandResult | None
    """The suite on the agent's result; None when the task is scored by exact match only."""
    reverted: list[str] = field(default_factory=list)
    """Protected files outside the conflicts the agent changed, put back before the suite."""
    dropped: dict[str, str] = field(default_factory=dict)
    """What the agent added that is not project code, left out before the suite."""


def grade_merge(
    steps: PairSteps[MergeResultDraft],
    state: ConflictState,
    *,
    agent_tree: str,
    diff: AgentDiff,
    merge: MergeState,
    setup_files: Collection[str],
) -> MergeGrade | None:
    """Grade the agent's tree (in the pair's workspace); None (and an error in the pair's
    draft) when the grading checkout's setup step fails."""
    repo, task, workspace = steps.repo, steps.task, steps.workspace
    assert task.merge is not None and task.other is not None
    checkout = workspace.checkout
    left = checkout.entries(agent_tree)
    for path in setup_files:
        left.pop(path, None)
    start = checkout.entries(state.start_tree)
    recorded = parse_tree_listing(repo.tree_listing(task.merge))
    trees = _Trees(left=left, start=start, recorded=recorded)
    checks = _tree_checks(task, workspace, merge, left=left, start=start)
    test: process.CommandResult | None = None
    protection = Protection(reverted=[])
    if task.testsAtMerge and not checks.abandoned:
        suite = _suite_on_result(steps, state, diff, trees)
        if suite is None:
            return None
        test, protection = suite
    resolved = (
        not checks.marker_files
        and not checks.unmerged
        and not checks.abandoned
        and (test is None or test.ok)
    )
    exact_files = [path for path in task.conflictFiles if left.get(path) == recorded.get(path)]
    return MergeGrade(
        resolved=resolved,
        exact=len(exact_files) == len(task.conflictFiles),
        exact_tree=left == recorded,
        exact_files=exact_files,
        marker_files=checks.marker_files,
        unmerged=checks.unmerged,
        outside=checks.outside,
        abandoned=checks.abandoned,
        test=test,
        reverted=protection.reverted,
        dropped=protection.dropped,
    )


@dataclass(frozen=True)
class _Trees:
    """Path -> (mode, object id) of the trees grading compares."""

    left: dict[str, tuple[str, str]]
    """The agent's tree (files the setup step made left out)."""
    start: dict[str, tuple[str, str]]
    """The conflicted state the agent started from."""
    recorded: dict[str, tuple[str, str]]
    """The recorded merge's tree."""


@dataclass(frozen=True)
class _TreeChecks:
    """What the agent's tree and git directory say, before any suite runs."""

    marker_files: list[str]
    unmerged: list[str]
    outside: list[str]
    abandoned: bool


def _tree_checks(
    task: Task,
    workspace: Workspace,
    merge: MergeState,
    *,
    left: dict[str, tuple[str, str]],
    start: dict[str, tuple[str, str]],
) -> _TreeChecks:
    """Markers, unmerged paths, changes outside the conflicts and an abandoned merge, from the
    agent's tree (`left`), the tree it started from (`start`) and its git directory's files."""
    assert task.other is not None
    checkout = workspace.checkout
    conflicted = set(task.conflictFiles)
    changed = sorted(path for path in set(left) | set(start) if left.get(path) != start.get(path))
    marker_files = [
        path
        for path in dict.fromkeys([*task.conflictFiles, *changed])
        if path in left
        and stat.S_ISREG(int(left[path][0], 8))
        and has_markers(checkout.read_blob(left[path][1]))
    ]
    # Unmerged: still unmerged in the agent's index (read as data) and left as the merge made
    # it. An agent may resolve by editing the files without `git add`, but a path it neither
    # edited nor staged (a modify/delete left alone) is not resolved, although it has no marker.
    still = checkout.unmerged_in(merge.unmerged_index) if merge.unmerged_index else []
    abandoned = not merge.in_progress and not (
        merge.head is not None
        and checkout.is_ancestor(
            task.other, merge.head, also_read=[workspace.agent_git / "objects"]
        )
    )
    return _TreeChecks(
        marker_files=marker_files,
        unmerged=[path for path in still if left.get(path) == start.get(path)],
        outside=[path for path in changed if path not in conflicted],
        abandoned=abandoned,
    )


def _suite_on_result(
    steps: PairSteps[MergeResultDraft], state: ConflictState, diff: AgentDiff, trees: _Trees
) -> tuple[process.CommandResult, Protection] | None:
    """The suite on the agent's result, graded on the project's tests, as a fix is: protected
    files the merge did not put in conflict go back to where the merge left them, what the
    agent added that is not project code goes, and the recorded merge's test files, and its
    changes beyond the conflicts that the agent did not make otherwise, are laid over the
    result. None when the grading checkout's setup step fails."""
    repo, task, workspace = steps.repo, steps.task, steps.workspace
    assert task.merge is not None
    checkout = workspace.checkout
    patterns = steps.config.tests.patterns
    recorded = trees.recorded
    protection = protect(
        checkout,
        diff,
        state.start_tree,
        patterns=patterns,
        test_files=[path for path in recorded if is_test_file(path, patterns=patterns)],
        editable=task.conflictFiles,
    )
    graded = checkout.write_tree()
    entries = checkout.entries(graded)
    laid = _test_files_to_lay(entries, recorded, patterns=patterns)
    # The merge's own changes beyond the conflicts, where the agent left the path as it found
    # it (or protection put it back): no agent is asked to guess them.
    laid += [
        path
        for path in task.outsideConflicts
        if entries.get(path) == trees.start.get(path) and path not in laid
    ]
    stand_ins = steps.lay_graded(graded, base=task.base, protection=protection)
    if stand_ins is None:
        return None
    # What the agent wrote as the merge wrote it is graded as it: neither reverted nor dropped.
    as_recorded = {
        path
        for path in task.outsideConflicts
        if path in laid and trees.left.get(path) == recorded.get(path)
    }
    protection = Protection(
        [path for path in protection.reverted if path not in as_recorded],
        {
            path: why
            for path, why in {**protection.dropped, **stand_ins}.items()
            if path not in as_recorded
        },
    )
    ensure_inside(workspace.path, laid)
    lay_files(repo, task.merge, sorted(laid), workspace.path)
    test = steps.commands.suite(
        workspace.path,
        env=steps.env,
        mounts=steps.test_mounts,
        log_dir=steps.log_dir,
        report=False,
    ).result
    return test, protection


def _test_files_to_lay(
    graded: dict[str, tuple[str, str]],
    recorded: dict[str, tuple[str, str]],
    *,
    patterns: Sequence[str],
) -> list[str]:
    """The test files whose recorded-merge version (or absence) the graded tree does not
    have: laid over it, the suite runs the project's tests at the merge."""
    return sorted(
        path
        for path in set(graded) | set(recorded)
        if is_test_file(path, patterns=patterns) and graded.get(path) != recorded.get(path)
    )
