"""One config x merge task, in its own workspace: conflicts entered -> setupCommand -> the
adapter -> unmerged paths noted -> work staged -> diff stats and the agent's patch (against the
conflicted state, so they measure the resolution, not the other side's changes) -> graded
(markers, unmerged paths, exact match, the suite when `testsAtMerge`).

`run.py` hands merge tasks here (`task.kind == "merge"`); everything else about a pair
(results, errors, the user's checkout check) stays there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitgauge.core.git import Repository
from gitgauge.core.records import RepoConfig, Task
from gitgauge.core.store import atomic_write_text
from gitgauge.running.adapters.base import AdapterOutcome
from gitgauge.running.merge_workspace import enter_conflict
from gitgauge.running.sandbox import Sandbox
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.merge_grade import grade_merge, untouched_unmerged, untracked_files

Setup = Callable[[Path, dict[str, str], Path], "str | None"]
OutcomeFields = Callable[[AdapterOutcome], dict[str, Any]]


def score_merge_pair(
    repo: Repository,
    config: RepoConfig,
    task: Task,
    workspace: Path,
    log_dir: Path,
    fields: dict[str, Any],
    *,
    env: dict[str, str],
    setup: Setup,
    run_agent: Callable[[], AdapterOutcome],
    outcome_fields: OutcomeFields,
    sandbox: Sandbox | None,
) -> None:
    """Fill `fields` step by step, so an error keeps what was measured. `run_agent` runs the
    config's adapter with its harness (laid in and taken out again) and in the sandbox."""
    link = config.worktree.link
    state = enter_conflict(workspace, task, link=link)
    setup_error = setup(workspace, env, log_dir)
    if setup_error is not None:
        fields.update(status="error", errorKind="setup", errorMessage=setup_error)
        return
    setup_files = untracked_files(repo, workspace)
    outcome = run_agent()
    fields.update(outcome_fields(outcome))
    unmerged = untouched_unmerged(workspace, state)
    diffstat.stage_all(repo, workspace, link=link)
    start = state.start.automerged_tree
    stat = diffstat.diff_stat(repo, workspace, start, link=link)
    fields.update(
        diffFiles=stat.files, diffInsertions=stat.insertions, diffDeletions=stat.deletions
    )
    atomic_write_text(log_dir / "agent.patch", diffstat.patch(repo, workspace, start, link=link))
    if not outcome.ok:
        return
    verdict = grade_merge(
        repo,
        task,
        workspace,
        state,
        config,
        unmerged=unmerged,
        setup_files=setup_files,
        env=env,
        log_dir=log_dir,
        wrapper=sandbox.argv(workspace, agent=False) if sandbox else (),
    )
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
