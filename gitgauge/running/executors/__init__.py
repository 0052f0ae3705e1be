"""Where the pairs of a run execute: `local` (`local.py`: `-j` threads of this process, the
default) or `ray` (`ray.py`: a Ray cluster; the only module that imports `ray`, loaded only when
a run asks for it). Both are a `PairExecutor`, opened by name from `EXECUTORS` (`open_executor`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from gitgauge.core import kinds
from gitgauge.core.errors import UsageError
from gitgauge.core.records import RunResult, Task
from gitgauge.core.registry import Registry
from gitgauge.core.schema import RepoConfig

if TYPE_CHECKING:
    from gitgauge.running.gate import RunGate
    from gitgauge.running.pair import Pair
    from gitgauge.running.plan import PairJob, PlannedConfig


@dataclass(frozen=True)
class PairBatch:
    """What an executor is given to run: the pending pairs of a run and how they run."""

    pending: Sequence[PairJob]
    pair: Pair
    """Runs one pair (`Pair.run`)."""
    on_start: Callable[[PlannedConfig, Task], None]
    gate: RunGate | None = None
    """Whether each pair may start, and the count of those finished (None: every pair runs)."""


class PairExecutor(ABC):
    """Runs the pending pairs of a run, each with `Pair.run`, and yields their results."""

    name: ClassVar[str]

    @abstractmethod
    def run_pairs(self, batch: PairBatch) -> Generator[RunResult | None, None, None]:
        """Run every pending pair with `batch.pair.run`; yield each result as its pair finishes
        (its logs already in the local run directory), None for a pair the gate kept from
        starting. Each finished pair is counted by the gate (`RunGate.finished`) before it is
        yielded; an executor that starts every pair at once does not ask `gate.admit`. Closing
        the generator stops every pair and removes their workspaces."""

    def close(self) -> None:  # noqa: B027 - the local executor leaves nothing behind
        """Disconnect; remove what the run left elsewhere (on remote nodes)."""


class Opener(Protocol):
    def __call__(self, config: RepoConfig, *, address: str | None, jobs: int) -> PairExecutor: ...


def _open_local(config: RepoConfig, *, address: str | None, jobs: int) -> PairExecutor:
    from gitgauge.running.executors.local import LocalExecutor

    return LocalExecutor(jobs=jobs)


def _open_ray(config: RepoConfig, *, address: str | None, jobs: int) -> PairExecutor:
    from gitgauge.running.executors.ray import RayExecutor

    return RayExecutor.connect(config, address=address)


EXECUTORS: Registry[Opener] = Registry("executor", error=UsageError)
"""Every executor by the name `run.executor` and `--executor` give it: how to open it."""
EXECUTORS.add("local", _open_local)
EXECUTORS.add("ray", _open_ray)


def open_executor(config: RepoConfig, *, address: str | None = None, jobs: int = 1) -> PairExecutor:
    """The executor `run.executor` names; `address` overrides `run.ray.address`, `jobs` is the
    local executor's `-j`. A remote one connects and checks its cluster before any pair
    starts."""
    return EXECUTORS.get(config.run.executor)(config, address=address, jobs=jobs)


def other_parent(task: Task) -> str | None:
    """A second commit whose history the task's workspace holds (a merge's other parent)."""
    tips = kinds.get(task.kind).history_tips(task)
    return tips[1] if len(tips) > 1 else None
