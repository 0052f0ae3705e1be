"""Where the pairs of a run execute: here on `-j` threads (the default, `running/run.py`), or on a
Ray cluster (`ray.py`, the only module that imports `ray`, loaded only when asked for)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Protocol

from gitgauge.core.records import RunResult, Task
from gitgauge.core.schema import RepoConfig

if TYPE_CHECKING:
    from gitgauge.running.pair import Pair
    from gitgauge.running.plan import PairJob, PlannedConfig


class PairExecutor(Protocol):
    def run_pairs(
        self,
        pending: Sequence[PairJob],
        pair: Pair,
        *,
        on_start: Callable[[PlannedConfig, Task], None],
    ) -> Generator[RunResult, None, None]:
        """Run every pending pair with `pair.run`; yield each result as its pair finishes (its
        logs already in the local run directory). Closing the generator stops every pair and
        removes their workspaces."""
        ...

    def close(self) -> None:
        """Disconnect; remove what the run left on remote nodes."""
        ...


def open_executor(config: RepoConfig, *, address: str | None = None) -> PairExecutor | None:
    """The executor `run.executor` names (None: the local one); `address` overrides
    `run.ray.address`. Connects and checks the cluster before any pair starts."""
    if config.run.executor == "local":
        return None
    from gitgauge.running.executors.ray import RayExecutor

    return RayExecutor.connect(config, address=address)
