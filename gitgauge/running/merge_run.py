"""One config x merge task, in its own workspace: conflicts entered -> setupCommand -> the
adapter -> what the agent left read as a tree through gitgauge's own git directory, and its git
directory's MERGE_HEAD, HEAD and index read as data -> diff stats and the agent's patch (against
the conflicted state, so they measure the resolution, not the other side's changes) -> graded
(markers, unmerged paths, exact match, the suite when `testsAtMerge`, in a fresh checkout).

`pair.py` hands merge tasks here (`task.kind == "merge"`); everything else about a pair
(results, errors, the user's checkout check) stays there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gitgauge.core.checkout import read_merge_state
from gitgauge.core.git import Repository
from gitgauge.core.records import RepoConfig, Task
from gitgauge.running.merge_workspace import enter_conflict
from gitgauge.running.scoring.merge_grade import grade_merge
from gitgauge.running.workspace import Workspace

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


def score_merge_pair(
    repo: Repository,
    config: RepoConfig,
    task: Task,
    workspace: Workspace,
    fields: dict[str, Any],
    *,
    steps: PairSteps,
) -> None:
    """Fill `fields` step by step, so an error keeps what was measured."""
    from gitgauge.running.pair import outcome_fields

    state = enter_conflict(workspace, task, link=config.worktree.link)
    setup_error = steps.setup()
    if setup_error is not None:
        fields.update(status="error", errorKind="setup", errorMessage=setup_error)
        return
    setup_files = workspace.checkout.untracked()
    outcome = steps.run_agent()
    fields.update(outcome_fields(outcome))
    merge = read_merge_state(workspace.agent_git, workspace.checkout.holder / "agent-index")
    steps.read_work(start=state.start_tree, fields=fields)
    if not outcome.ok:
        return
    agent_tree = workspace.checkout.write_tree()
    verdict = grade_merge(
        repo,
        task,
        workspace,
        state,
        config,
        agent_tree=agent_tree,
        merge=merge,
        setup_files=setup_files,
        steps=steps,
        fields=fields,
    )
    if verdict is None:
        return
    fields.update(
        status="resolved" if verdict.resolved else "unresolved",
        exact=verdict.exact,
        exactTree=verdict.exact_tree,
        exactFiles=verdict.exact_files,
        markerFiles=verdict.marker_files,
        unmergedPaths=verdict.unmerged,
        outsideChanges=verdict.outside,
        mergeAbandoned=verdict.abandoned,
    )
    if verdict.test is not None:
        fields.update(
            testExitCode=verdict.test.exit_code,
            testTimedOut=verdict.test.timed_out,
            testOutputTail=verdict.test.output_tail(),
        )
