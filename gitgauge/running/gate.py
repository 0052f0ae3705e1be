"""What may start next in a run: a config whose setup is broken is stopped, a budget is kept.

- **A broken setup.** When the first `STOP_AFTER` pairs of a config (in the order they finish)
  all end in an adapter error with the same cause that no retry of that setup fixes (not
  logged in, a model that does not exist, refused credentials, no quota: `ErrorCause`), that
  config is stopped: none of its other pairs starts, and the run goes on with the other configs.
  One pair of the config that ends any other way clears it for the rest of the run.
- **A budget** (`run --max-cost USD`). Before a pair starts: the money spent by this run so far
  plus the expected cost of the pairs already running plus this one's must stay within the
  budget; the expected cost of a pair is the mean cost per pair of its config in this run
  (earlier invocations of a resumed run count), else of every config, else nothing is known
  yet and the pair starts. Once a pair does not fit, no new pair starts. Pairs that report no
  cost (script, gold, noop) spend nothing.

Pairs that are not started get no result, so `run --resume` runs them later. Thread-safe: the
`-j` workers ask `admit` from their threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from gitgauge.core.records import ErrorCause, RunResult
from gitgauge.running.plan import PairJob

STOP_AFTER = 3
"""How many first pairs of a config must fail the same way before it is stopped."""


@dataclass(frozen=True)
class StoppedConfig:
    """A config the run stopped, and why."""

    config: str
    cause: ErrorCause
    message: str
    """The first of its errors, the reason first (`claude: Not logged in: run ...`)."""
    failed: int
    """Its pairs that failed before it was stopped."""


@dataclass
class Budget:
    """`run --max-cost`: how much this run may spend, and what it spent."""

    limit: float
    spent: float = 0.0
    """What the pairs this invocation ran reported, errors included (their money was spent)."""
    reached: bool = False
    """A pair did not fit: nothing new started after it."""
    priced: int = 0
    """Pairs of this invocation that reported a cost."""
    mean: float | None = None
    """The mean cost per pair when the budget was reached (or at the end)."""


@dataclass
class RunGate:
    """Admission of each pair of a run (see the module's doc)."""

    budget: Budget | None = None
    stop_after: int = STOP_AFTER
    warn: Callable[[str], None] = lambda message: None
    costs: dict[str, list[float]] = field(default_factory=dict)
    """Reported costs per config, of this run (earlier invocations included)."""
    stopped: dict[str, StoppedConfig] = field(default_factory=dict)
    not_started: dict[str, int] = field(default_factory=dict)
    """Pairs per config that the gate kept from starting."""
    _first: dict[str, list[RunResult]] = field(default_factory=dict)
    _cleared: set[str] = field(default_factory=set)
    _running: dict[tuple[str, str, int], float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def for_run(
        cls,
        *,
        max_cost: float | None,
        earlier: Sequence[RunResult],
        warn: Callable[[str], None],
        stop_after: int = STOP_AFTER,
    ) -> RunGate:
        gate = cls(
            budget=Budget(max_cost) if max_cost is not None else None,
            stop_after=stop_after,
            warn=warn,
        )
        for result in earlier:
            if result.costUsd is not None:
                gate.costs.setdefault(result.config, []).append(result.costUsd)
        return gate

    def admit(self, job: PairJob) -> bool:
        """Whether `job` may start now; True counts it as running until `finished`."""
        name = job.planned.config.name
        with self._lock:
            if name in self.stopped or (self.budget is not None and self.budget.reached):
                self.not_started[name] = self.not_started.get(name, 0) + 1
                return False
            expected = self._expected(name)
            budget = self.budget
            if budget is not None and expected is not None:
                ahead = budget.spent + sum(self._running.values()) + expected
                if ahead > budget.limit + 1e-12:
                    budget.reached = True
                    budget.mean = expected
                    self.not_started[name] = self.not_started.get(name, 0) + 1
                    return False
            self._running[_key(job)] = expected or 0.0
            return True

    def finished(self, job: PairJob, result: RunResult) -> None:
        """Count `result`: its cost, and whether its config's first pairs say it is broken."""
        name = job.planned.config.name
        with self._lock:
            self._running.pop(_key(job), None)
            if result.costUsd is not None:
                self.costs.setdefault(name, []).append(result.costUsd)
                if self.budget is not None:
                    self.budget.spent += result.costUsd
                    self.budget.priced += 1
            stop = self._judge(name, result)
        if stop is not None:
            self.warn(
                f"stopping config {name}: its first {stop.failed} pairs all failed the same way "
                f"({stop.message}); its other pairs are not started, the other configs go on"
            )

    def _judge(self, name: str, result: RunResult) -> StoppedConfig | None:
        if name in self._cleared or name in self.stopped:
            return None
        if result.status != "error" or result.errorCause is None:
            self._cleared.add(name)
            return None
        first = self._first.setdefault(name, [])
        if first and first[0].errorCause != result.errorCause:
            self._cleared.add(name)
            return None
        first.append(result)
        if len(first) < self.stop_after:
            return None
        assert result.errorCause is not None
        stopped = StoppedConfig(
            config=name,
            cause=result.errorCause,
            message=first[0].errorMessage or result.errorCause,
            failed=len(first),
        )
        self.stopped[name] = stopped
        return stopped

    def _expected(self, name: str) -> float | None:
        own = self.costs.get(name)
        if own:
            return fmean(own)
        every = [cost for costs in self.costs.values() for cost in costs]
        return fmean(every) if every else None

    def mean_cost(self) -> float | None:
        """The mean reported cost per pair of the run, over every config."""
        every = [cost for costs in self.costs.values() for cost in costs]
        return fmean(every) if every else None


def _key(job: PairJob) -> tuple[str, str, int]:
    return (job.planned.config.name, job.task.id, job.attempt)
