"""What may start next in a run: a config whose setup is broken is stopped, a budget is kept.

- **A broken setup.** When the first `STOP_AFTER` pairs of a config (in the order they finish,
  whatever `-j`) all fail the same way, that config is stopped: none of its other pairs starts
  (those already running finish and are kept), and the run goes on with the other configs. The
  same way is one of two things (`failure_key`):
  - the same cause that no retry of that setup fixes (`ErrorCause`: not logged in, a model that
    does not exist, refused credentials, no quota, the command or binary not found); an API that
    cannot be reached (`STOP_AT_ONCE`) stops the config after its first pair, whatever came
    before it: the CLI spent minutes on its own retries, and every pair would again;
  - the same adapter error (`COUNTED_KINDS`: the agent's process exited non-zero or printed
    output the adapter cannot read) with the same message once the task's id, quoted names,
    paths and URLs, hex ids, durations and numbers are masked (`masked`).
  A pair that ends any other way clears the config for the rest of the run: a result, resolved
  or not (an agent that is merely wrong), a timeout (hard tasks time out on a sound setup too;
  one spent waiting for an unreachable API has that cause), an error of setup, of grading or of
  the executor, or an adapter error unlike the first ones.
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

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean

from gitgauge.core.records import ErrorCause, ErrorKind, RunResult
from gitgauge.running.plan import PairJob

STOP_AFTER = 3
"""How many first pairs of a config must fail the same way before it is stopped."""
STOP_AT_ONCE: frozenset[ErrorCause] = frozenset({"unreachable"})
"""Causes that stop a config after its first pair."""
COUNTED_KINDS: frozenset[ErrorKind] = frozenset({"adapter-exit", "adapter-output"})
"""Errors of the agent's process whose repeated message stops a config, with no known cause."""

MASKED_LIMIT = 2000
"""How much of an error message is compared (an adapter's messages end with an output tail)."""
_MASKS = (
    (re.compile(r"(?<!\w)(['\"`])[^'\"`\n]{0,300}?\1(?!\w)"), "<name>"),
    (
        re.compile(r"(?<![\w.~%+@:-])(?:[A-Za-z][\w+.-]*://)?[\w.~%+@-]*(?:/[\w.~%+@:-]*)+"),
        "<path>",
    ),
    (
        re.compile(r"(?<![\w-])(?=[0-9a-f-]*\d)[0-9a-f]{7,}(?:-[0-9a-f]{4,})*(?![\w-])", re.I),
        "<hex>",
    ),
    (
        re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?|m|min|minutes?|h|hours?)\b"),
        "<time>",
    ),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
)


def masked(message: str, *, task: str = "") -> str:
    """`message` with what differs from pair to pair of one broken setup masked: the task's id,
    then quoted names, paths and URLs, hex ids (a commit, a session's uuid), durations and
    numbers; whitespace collapsed."""
    text = message[:MASKED_LIMIT]
    text = text.replace(task, "<task>") if task else text
    for pattern, mask in _MASKS:
        text = pattern.sub(mask, text)
    return " ".join(text.split())


def failure_key(result: RunResult, *, stop_after: int = STOP_AFTER) -> tuple[str, int] | None:
    """How `result` failed, for comparing a config's first pairs, and how many pairs failing
    so stop the config; None for a pair that does not count (see the module's doc)."""
    if result.status != "error":
        return None
    if result.errorCause is not None:
        return f"cause {result.errorCause}", 1 if result.errorCause in STOP_AT_ONCE else stop_after
    if result.errorKind in COUNTED_KINDS and result.errorMessage:
        return f"{result.errorKind} {masked(result.errorMessage, task=result.task)}", stop_after
    return None


@dataclass(frozen=True)
class StoppedConfig:
    """A config the run stopped, and why."""

    config: str
    cause: ErrorCause | None
    """None: the same adapter error with no known cause."""
    message: str
    """The first of its errors on one line, the reason first (`claude: Not logged in: ...`)."""
    failed: int
    """Its pairs that failed before it was stopped."""
    task: str
    """The task of the first of them (its logs say more)."""
    attempt: int = 1


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
    ended_otherwise: dict[str, int] = field(default_factory=dict)
    """Pairs of a stopped config, already running when it was stopped, that then ended another
    way than its first ones (a hint that the stop was not the setup's fault)."""
    _first: dict[str, list[RunResult]] = field(default_factory=dict)
    _first_key: dict[str, str] = field(default_factory=dict)
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
            failed = "pair failed" if stop.failed == 1 else f"{stop.failed} pairs all failed alike"
            self.warn(
                f"stopping config {name}: its first {failed} ({stop.message}); its other pairs "
                "are not started, the other configs go on"
            )

    def _judge(self, name: str, result: RunResult) -> StoppedConfig | None:
        if name in self._cleared:
            return None
        found = failure_key(result, stop_after=self.stop_after)
        if name in self.stopped:
            if found is None or found[0] != self._first_key.get(name):
                self.ended_otherwise[name] = self.ended_otherwise.get(name, 0) + 1
            return None
        if found is None:
            self._cleared.add(name)
            return None
        key, needed = found
        first = self._first.setdefault(name, [])
        if needed > 1 and first and self._first_key[name] != key:
            self._cleared.add(name)
            return None
        if needed == 1:
            first.clear()  # conclusive alone, whatever came before it
        first.append(result)
        self._first_key[name] = key
        if len(first) < needed:
            return None
        stopped = StoppedConfig(
            config=name,
            cause=result.errorCause,
            message=" ".join((first[0].errorMessage or result.errorCause or key).split()),
            failed=len(first),
            task=first[0].task,
            attempt=first[0].attempt,
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
