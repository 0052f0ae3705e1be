"""Two baselines that need no model, to calibrate a task set before spending money on agents:
`gold` applies the real fix's non-test changes and should resolve every task; `noop` changes
nothing and should resolve none.
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
        changes = context.repo.diff_names(task.base, task.fix)
        paths: list[str] = []
        for change in changes:
            for path in (change.old_path, change.path):
                if path is not None and not is_test_file(path) and path not in paths:
                    paths.append(path)
        lay_files(context.repo, task.fix, paths, context.workspace)
        return AdapterOutcome(seconds=time.monotonic() - started)


@register
class NoopAdapter(Adapter):
    name = "noop"

    def run(self, context: AdapterContext) -> AdapterOutcome:
        return AdapterOutcome(seconds=0.0)
