"""`kind: merge`: a recorded merge's conflicts, re-made from its two parents (`mine --merges`,
`kinds/merge/mine.py`).

A pair: a checkout of `base` with `other` merged in by the agent's own git before it starts,
conflicts left in the files (`kinds/merge/workspace.py`); after the agent, its tree read as a
patch against that conflicted state and its git directory's MERGE_HEAD, HEAD and index read as
data; graded by markers, unmerged paths and exact match, and by the suite in a fresh checkout
when it passed at the recorded merge (`kinds/merge/grade.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.checkout import AgentDiff, read_merge_state
from gitgauge.core.kinds import (
    CellNotes,
    KindMiner,
    KindPair,
    PairContext,
    ReportColumns,
    TaskKind,
    register,
)
from gitgauge.core.prompt_request import RewriteRequest
from gitgauge.core.records import MergeResultDraft, RunResult, Task
from gitgauge.core.worktree import lay_files
from gitgauge.kinds.merge.grade import grade_merge
from gitgauge.kinds.merge.rewrite import build_merge_request
from gitgauge.kinds.merge.workspace import ConflictState, enter_conflict

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


@register
class MergeKind(TaskKind):
    name = "merge"
    row_suffix = " (merge)"
    graded_by_suite = True
    draft = MergeResultDraft

    def history_tips(self, task: Task) -> tuple[str, ...]:
        # Both parents' history (never the recorded merge, which is the answer).
        return (task.base, *([task.other] if task.other else []))

    def compared_trees(self, task: Task) -> tuple[str, ...]:
        """The recorded merge: `exact` and `exactTree` compare the agent's tree with it."""
        return (task.merge,) if task.merge else ()

    def laid_paths(self, task: Task) -> tuple[str, ...]:
        """The merge's changes beyond the conflicts: grading lays them over an agent's result
        where it left them as it found them."""
        return (*task.testFiles, *task.outsideConflicts)

    def gold_paths(self, repo: Repository, task: Task) -> list[str]:
        """Every path where the workspace can start unlike the recorded merge: the conflicted
        files, the merge's changes beyond re-merging (`outsideConflicts`: one may undo or
        rename what `other` brought, which is no change from `base`) and every path the merge
        has differently from `base` (all there is to say for a task mined before
        `outsideConflicts`)."""
        assert task.merge is not None
        paths: list[str] = [*task.conflictFiles, *task.outsideConflicts]
        for change in repo.diff_names(task.base, task.merge):
            paths += [path for path in (change.old_path, change.path) if path is not None]
        return list(dict.fromkeys(paths))

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        """The recorded merge's whole tree written (its resolution and what it changed
        besides), then `git add`, as a developer marks the conflicts resolved."""
        assert task.merge is not None
        lay_files(repo, task.merge, self.gold_paths(repo, task), workspace)
        # The whole tree: a path the merge deleted (a rename's old side, a modify/delete
        # resolved by deleting) is in neither the work tree nor, after git's rename detection,
        # the index, and naming it would fail ("pathspec did not match").
        repo.stage_all(workspace)

    def enter(self, pair: PairContext) -> KindPair:
        # Here, not at the top: a report loads the kinds, and no running/ with them.
        from gitgauge.running.steps import checkout_steps

        return _MergePair(checkout_steps(pair, MergeResultDraft))

    def row_counts(self, results: Sequence[RunResult]) -> dict[str, int]:
        return {
            "exact": sum(1 for result in results if result.exact),
            "exact_tree": sum(1 for result in results if result.exactTree),
            "outside_conflicts": sum(1 for result in results if result.outsideConflicts),
        }

    def describe(self, result: RunResult) -> str:
        if result.exact is None:
            return ""
        return ", exact" if result.exact else ", not exact"

    report_columns = ReportColumns(
        headers=("EXACT",),
        cells=lambda counts, attempts: [f"{counts['exact']}/{attempts}"],
        json=(
            ("exact", "exact"),
            ("exact_tree", "exactTree"),
            ("outside_conflicts", "outsideConflictAttempts"),
        ),
        footnote=(
            "KIND merge: merge-conflict tasks; EXACT: attempts whose conflicted files all equal "
            "the recorded merge's (GitGoodBench's exact match)."
        ),
    )

    def footnotes(self, results: Sequence[RunResult]) -> list[str]:
        """The tasks whose recorded merge changed files beyond the conflicts: their `exactTree`
        asks what no agent can be expected to do (RESOLVED and EXACT never ask it)."""
        changed: dict[str, int] = {}
        for result in sorted(results, key=lambda result: result.task):
            if result.outsideConflicts:
                count = len(result.outsideConflicts)
                changed[result.task] = max(count, changed.get(result.task, 0))
        if not changed:
            return []
        if len(changed) == 1:
            ((task, count),) = changed.items()
            return [
                f"exactTree of {task}: the recorded merge changed {_files(count)} outside the "
                "conflicts: no agent can be expected to match them (RESOLVED and EXACT do not "
                "ask for them)."
            ]
        listed = ", ".join(f"{task} ({_files(count)})" for task, count in changed.items())
        return [
            f"exactTree: the recorded merges of {len(changed)} tasks changed files outside the "
            "conflicts, which no agent can be expected to match (RESOLVED and EXACT do not ask "
            f"for them): {listed}."
        ]

    def cell_notes(self, results: Sequence[RunResult]) -> CellNotes:
        exact = self.row_counts(results)["exact"]
        return CellNotes(
            single=", exact" if exact else "", parts=(f"{exact} exact",) if exact else ()
        )

    def matrix_fields(self, results: Sequence[RunResult]) -> dict[str, Any]:
        counts = self.row_counts(results)
        return {
            **self.matrix_counts(counts, (("exact", "exact"), ("exact_tree", "exactTree"))),
            # The task's own count (the same in every attempt graded since it was recorded).
            "outsideConflicts": max((len(r.outsideConflicts) for r in results), default=0),
        }

    def miner(self) -> KindMiner:
        from gitgauge.kinds.merge.mine import MINER

        return MINER

    def rewrite_request(
        self, repo: Repository, task: Task, commit: Commit | None
    ) -> RewriteRequest:
        # Never the merge's diff or message: they are the resolution.
        return build_merge_request(repo, task)


class _MergePair(KindPair):
    def __init__(self, pair: PairSteps[MergeResultDraft]) -> None:
        self.pair = pair
        self.state: ConflictState = enter_conflict(
            pair.workspace, pair.task, link=pair.config.worktree.link
        )
        self.start = self.state.start_tree
        self.setup_files: set[str] = set()

    def after_setup(self) -> None:
        self.setup_files = self.pair.workspace.checkout.untracked()

    def after_agent(self) -> None:
        workspace = self.pair.workspace
        copy = workspace.checkout.holder / "agent-index"
        self.merge = read_merge_state(workspace.agent_git, copy)

    def grade(self, diff: AgentDiff) -> None:
        pair, draft = self.pair, self.pair.draft
        draft.update(outsideConflicts=list(pair.task.outsideConflicts))
        verdict = grade_merge(
            pair,
            self.state,
            agent_tree=pair.workspace.checkout.write_tree(),
            diff=diff,
            merge=self.merge,
            setup_files=self.setup_files,
        )
        if verdict is None:
            return
        draft.update(
            status="resolved" if verdict.resolved else "unresolved",
            exact=verdict.exact,
            exactTree=verdict.exact_tree,
            exactFiles=verdict.exact_files,
            markerFiles=verdict.marker_files,
            unmergedPaths=verdict.unmerged,
            outsideChanges=verdict.outside,
            mergeAbandoned=verdict.abandoned,
            reverted=verdict.reverted,
            dropped=verdict.dropped,
        )
        if verdict.test is not None:
            draft.update(
                testExitCode=verdict.test.exit_code,
                testTimedOut=verdict.test.timed_out,
                testOutputTail=verdict.test.output_tail(),
            )


def _files(count: int) -> str:
    return f"{count} file" + ("" if count == 1 else "s")
