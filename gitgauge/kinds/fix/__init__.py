"""`kind: fix`: a bug fix from the history, proved fail-to-pass at mine time (`mining/verify.py`).

A pair: a checkout of `base`; the agent's tree read as a patch; protected files put back and
what it added that is not project code dropped (`running/scoring/protect.py`); the graded tree
laid into a fresh checkout; the fix's test files laid over it and the suite run
(resolved?), then the base suite (regressed?) or the per-test verdicts of the task.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.checkout import AgentDiff
from gitgauge.core.kinds import KindPair, PairContext, TaskKind, register
from gitgauge.core.paths import is_test_file
from gitgauge.core.prompt_request import RewriteRequest
from gitgauge.core.records import FixResultDraft, Task
from gitgauge.core.suite import fallback_warning
from gitgauge.core.worktree import lay_files
from gitgauge.kinds.fix.grade import grade
from gitgauge.mining.rewrite_request import build_request, gather_source
from gitgauge.running.scoring.protect import protect

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


@register
class FixKind(TaskKind):
    name = "fix"
    exportable = True
    graded_by_suite = True
    draft = FixResultDraft

    def gold_paths(self, repo: Repository, task: Task) -> list[str]:
        """The fix's non-test changes (the task's own test files are laid at grading)."""
        paths: list[str] = []
        for change in repo.diff_names(task.base, task.fix):
            for path in (change.old_path, change.path):
                if path is None or path in paths:
                    continue
                # The task's own test files too: a project's `tests.patterns` made them tests.
                if path not in task.testFiles and not is_test_file(path):
                    paths.append(path)
        return paths

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        lay_files(repo, task.fix, self.gold_paths(repo, task), workspace)

    def enter(self, pair: PairContext) -> KindPair:
        # Here, not at the top: a report loads the kinds, and no running/ with them.
        from gitgauge.running.steps import checkout_steps

        return _FixPair(checkout_steps(pair, FixResultDraft))

    def rewrite_request(
        self, repo: Repository, task: Task, commit: Commit | None
    ) -> RewriteRequest:
        return build_request(gather_source(repo, task, commit))


class _FixPair(KindPair):
    def __init__(self, pair: PairSteps[FixResultDraft]) -> None:
        self.pair = pair
        self.start = pair.task.base

    def grade(self, diff: AgentDiff) -> None:
        pair, task, draft = self.pair, self.pair.task, self.pair.draft
        checkout = pair.workspace.checkout
        protection = protect(
            checkout,
            diff,
            task.base,
            patterns=pair.config.tests.patterns,
            test_files=task.testFiles,
        )
        draft.update(reverted=protection.reverted, dropped=protection.dropped)
        stand_ins = pair.lay_graded(checkout.write_tree(), base=task.base, protection=protection)
        if stand_ins is None:
            return
        draft.update(dropped={**protection.dropped, **stand_ins})
        try:
            verdict = grade(
                pair.repo,
                task,
                pair.workspace.path,
                pair.commands,
                env=pair.env,
                log_dir=pair.log_dir,
                mounts=pair.test_mounts,
            )
        except OSError as error:
            # The agent's tree has a shape files cannot be laid into (a file where `tests/`
            # was, say): its work cannot be scored.
            draft.error("internal", f"could not lay the test files into the workspace: {error}")
            return
        draft.update(
            status="resolved" if verdict.resolved else "unresolved",
            regressed=verdict.regressed,
            testExitCode=verdict.test.exit_code,
            testTimedOut=verdict.test.timed_out,
            testOutputTail=verdict.test.output_tail(),
            failToPassFailed=verdict.fail_to_pass_failed,
            passToPassFailed=verdict.pass_to_pass_failed,
        )
        if verdict.report_problem is not None:
            pair.warn(fallback_warning(verdict.report_problem))
        if verdict.base_test is not None:
            draft.update(
                baseTestExitCode=verdict.base_test.exit_code,
                baseTestOutputTail=verdict.base_test.output_tail(),
            )
