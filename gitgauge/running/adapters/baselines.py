"""Two baselines that need no model, to calibrate a task set before spending money on agents:
`gold` applies the real fix's non-test changes (for a merge task: writes the recorded merge's
resolution and stages it) and should resolve every task; `noop` changes nothing (a merge task's
conflict markers stay) and should resolve none.
"""

from __future__ import annotations

import time

from gitgauge.core import kinds
from gitgauge.running.adapters.base import Adapter, AdapterContext, AdapterOutcome, register


@register
class GoldAdapter(Adapter):
    name = "gold"
    reads_fix = True

    def run(self, context: AdapterContext) -> AdapterOutcome:
        started = time.monotonic()
        # What "the answer" is depends on the task's kind: the fix's non-test changes, the
        # recorded merge's resolution, a fixture's expected answer (and commands).
        said = kinds.get(context.task.kind).gold_run(context)
        return AdapterOutcome(seconds=time.monotonic() - started, final_message=said)


@register
class NoopAdapter(Adapter):
    name = "noop"

    def run(self, context: AdapterContext) -> AdapterOutcome:
        return AdapterOutcome(seconds=0.0)
