"""Independent work on N threads, results in a stable order (used by `mine -j` and `run -j`).

The work is waiting on child processes, so threads are enough. Results come back in the order of
the items whatever finishes first, so output and saved files do not depend on N.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from gitgauge.core import process

Item = TypeVar("Item")
Result = TypeVar("Result")


def in_order(
    items: Sequence[Item],
    work: Callable[[Item, int], Result],
    *,
    jobs: int,
    name: str,
) -> Generator[Result, None, None]:
    """Run `work(item, slot)` for every item, `jobs` at a time; yield results in item order.

    `slot` (0..jobs-1) is unique among the items running at once: it becomes GITGAUGE_JOB, from
    which a test suite can derive a free port or a database name. When the consumer stops early
    (an error) or is interrupted, nothing new starts, running commands are killed, and the workers
    are waited for, so their `finally` blocks remove their worktrees before this returns.
    """
    if not items:
        return
    slots: queue.Queue[int] = queue.Queue()
    for slot in range(jobs):
        slots.put(slot)

    def run(item: Item) -> Result:
        slot = slots.get()
        try:
            return work(item, slot)
        finally:
            slots.put(slot)

    executor = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=f"gitgauge-{name}")
    futures: list[Future[Result]] = [executor.submit(run, item) for item in items]
    try:
        for future in futures:
            yield future.result()
    except BaseException:
        for future in futures:
            future.cancel()
        process.cancel_all()
        executor.shutdown(wait=True, cancel_futures=True)
        process.clear_cancel()
        raise
    executor.shutdown(wait=True)
