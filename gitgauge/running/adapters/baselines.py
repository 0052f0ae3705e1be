"""Two baselines that need no model, to calibrate a task set before spending money on agents:
`gold` applies the real fix's non-test changes (for a merge task: writes the recorded merge's
resolution and stages it) and should resolve every task; `noop` changes nothing (a merge task's
conflict markers stay) and should resolve none.
"""

from __future__ import annotations

import time

from gitgauge.core.paths import is_test_file
from gitgauge.core.worktree import lay_files
from gitgauge.running.adapters.base import Adapter, AdapterContext, AdapterOutcome, register


@register
class GoldAdapter(Adapter):
    name = "gold"
    reads_fix = True

    def run(self, context: AdapterContext) -> AdapterOutcome:
        started = time.monotonic()
        task = context.task
        if task.kind == "merge":
            _write_recorded_merge(context)
            return AdapterOutcome(seconds=time.monotonic() - started)
        changes = context.repo.diff_names(task.base, task.fix)
        paths: list[str] = []
        for change in changes:
            for path in (change.old_path, change.path):
                if path is None or path in paths:
                    continue
                # The task's own test files too: a project's `tests.patterns` made them tests.
                if path not in task.testFiles and not is_test_file(path):
                    paths.append(path)
        lay_files(context.repo, task.fix, paths, context.workspace)
        return AdapterOutcome(seconds=time.monotonic() - started)


def _write_recorded_merge(context: AdapterContext) -> None:
    """Every path the recorded merge has differently from `base` (the conflicted files and any
    change the merge made beyond them), as the merge has it; then `git add`, as a developer
    marks conflicts resolved."""
    task = context.task
    assert task.merge is not None
    paths: list[str] = list(task.conflictFiles)
    for change in context.repo.diff_names(task.base, task.merge):
        for path in (change.old_path, change.path):
            if path is not None and path not in paths:
                paths.append(path)
    lay_files(context.repo, task.merge, paths, context.workspace)
    # The whole tree: a path the merge deleted (a rename's old side, a modify/delete resolved by
    # deleting) is in neither the work tree nor, after git's rename detection, the index, and
    # naming it would fail ("pathspec did not match").
    context.repo.git("add", "--all", "--", ".", cwd=context.workspace)


@register
class NoopAdapter(Adapter):
    name = "noop"

    def run(self, context: AdapterContext) -> AdapterOutcome:
        return AdapterOutcome(seconds=0.0)
