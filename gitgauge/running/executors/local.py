"""`run.executor: local` (the default): the pending pairs on `-j` threads of this process.

Results come back in the order of the pending pairs (`core.parallel.in_order`), so output and
files do not depend on the number of jobs. Each worker has a checkout slot of its own (one
`CheckoutPool` for the run); each task's workspace source (a history copy, `HistoryCopies`) is
prepared once and reused by every config and attempt of the task. Each worker asks the run's
gate before a pair starts and counts the pair when it is done, before it takes its next one.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from gitgauge.core import kinds
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.parallel import in_order
from gitgauge.core.records import RunResult
from gitgauge.running.executors import PairBatch, PairExecutor, other_parent
from gitgauge.running.workspace import HistoryCopies, TaskWorkspaces

if TYPE_CHECKING:
    from gitgauge.running.plan import PairJob


class LocalExecutor(PairExecutor):
    """`jobs` pairs at a time, here."""

    name = "local"

    def __init__(self, *, jobs: int = 1) -> None:
        self.jobs = jobs

    def run_pairs(self, batch: PairBatch) -> Generator[RunResult | None, None, None]:
        pair, gate, on_start = batch.pair, batch.gate, batch.on_start
        sources = HistoryCopies(pair.repo)
        pool = CheckoutPool(owner_repository=pair.repo.root)

        def run_one(job: PairJob, slot: int) -> RunResult | None:
            if gate is not None and not gate.admit(job):
                return None
            on_start(job.planned, job.task)
            if not kinds.get(job.task.kind).history_tips(job.task):  # no history to prepare
                result = pair.run(job.planned, job.task, None, attempt=job.attempt, slot=slot)
            else:
                with TaskWorkspaces(
                    pair.repo,
                    job.task.base,
                    history=pair.config.run.history,
                    link=pair.config.worktree.link,
                    warn=pair.warn,
                    copies=sources,
                    other=other_parent(job.task),
                    pool=pool,
                ) as prepared:
                    result = pair.run(
                        job.planned, job.task, prepared, attempt=job.attempt, slot=slot
                    )
            if gate is not None:
                # Counted before this worker takes its next pair: with -j 1 every pair is judged
                # on all the pairs before it.
                gate.finished(job, result)
            return result

        # The checkouts and history copies go once every worker is done, also after an interrupt.
        try:
            yield from in_order(list(batch.pending), run_one, jobs=self.jobs, name="run")
        finally:
            pool.close()
            sources.close()
