"""What the agents did, from their transcripts, as the report and `compare` count it: the
behaviour metrics (`BEHAVIOUR_METRICS`: turns, test runs, files read and edited, tokens and cost
per turn, time to the first edit), which attempts are measured (scored, with a transcript), and a
row's summary over its tasks (per task the mean over its attempts; the median over tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from statistics import median

from gitgauge.core.records import RunResult
from gitgauge.reporting.attempts import task_mean


@dataclass(frozen=True)
class BehaviourMetric:
    """One number counted from a pair's transcript."""

    key: str
    """Its JSON key (`turns`, `filesRead`)."""
    label: str
    """How `compare` and the report name it (`turns`, `files read`)."""
    value: Callable[[RunResult], float | None]
    unit: str = ""


def measured(result: RunResult) -> bool:
    """A scored attempt with a transcript: its behaviour counts (errors are not measured)."""
    return result.behaviour is not None and result.status != "error"


def _behaviour_value(name: str) -> Callable[[RunResult], float | None]:
    def value(result: RunResult) -> float | None:
        if not measured(result) or result.behaviour is None:
            return None
        found = getattr(result.behaviour, name)
        return None if found is None else float(found)

    return value


def tokens_per_turn(result: RunResult) -> float | None:
    """Tokens the agent used per turn: input and output (and, for claude, the prompt cache)."""
    behaviour = result.behaviour
    if not measured(result) or behaviour is None or not behaviour.turns:
        return None
    if result.inputTokens is None and result.outputTokens is None:
        return None
    tokens = (result.inputTokens or 0) + (result.outputTokens or 0)
    if behaviour.source == "claude":  # codex counts its cached tokens among the input ones
        tokens += (result.cacheCreationInputTokens or 0) + (result.cacheReadInputTokens or 0)
    return tokens / behaviour.turns


def cost_per_turn(result: RunResult) -> float | None:
    behaviour = result.behaviour
    if not measured(result) or behaviour is None or not behaviour.turns:
        return None
    return None if result.costUsd is None else result.costUsd / behaviour.turns


BEHAVIOUR_METRICS: tuple[BehaviourMetric, ...] = (
    BehaviourMetric("turns", "turns", _behaviour_value("turns")),
    BehaviourMetric("testRuns", "test runs", _behaviour_value("testRuns")),
    BehaviourMetric("shellCommands", "shell commands", _behaviour_value("shellCommands")),
    BehaviourMetric("filesRead", "files read", _behaviour_value("filesRead")),
    BehaviourMetric("filesEdited", "files edited", _behaviour_value("filesEdited")),
    BehaviourMetric("tokensPerTurn", "tokens per turn", tokens_per_turn),
    BehaviourMetric("costPerTurn", "cost per turn", cost_per_turn, unit="$"),
    BehaviourMetric(
        "firstEditSeconds", "seconds to first edit", _behaviour_value("firstEditSeconds"), "s"
    ),
)
"""What `compare` tests B against A on, per task, and the report carries."""


def ran_tests(result: RunResult) -> bool | None:
    """Whether a measured attempt ran the suite; None when it is not measured."""
    if not measured(result) or result.behaviour is None:
        return None
    return result.behaviour.ran_tests


@dataclass(frozen=True)
class BehaviourSummary:
    """A row's (or a side's) behaviour over its tasks."""

    tasks: int
    """Tasks with at least one measured attempt."""
    attempts: int
    """Measured attempts."""
    ran_tests_tasks: int
    """Tasks where some measured attempt ran the suite."""
    ran_tests_attempts: int
    medians: dict[str, float | None]
    """Per metric key: the median over tasks of each task's mean over its measured attempts."""


def summarize_behaviour(by_task: dict[str, list[RunResult]]) -> BehaviourSummary | None:
    measured_by_task = {
        task: [attempt for attempt in attempts if measured(attempt)]
        for task, attempts in by_task.items()
    }
    measured_by_task = {task: found for task, found in measured_by_task.items() if found}
    if not measured_by_task:
        return None
    medians: dict[str, float | None] = {}
    for metric in BEHAVIOUR_METRICS:
        means = [task_mean(found, metric.value) for found in measured_by_task.values()]
        known = [mean for mean in means if mean is not None]
        medians[metric.key] = median(known) if known else None
    return BehaviourSummary(
        tasks=len(measured_by_task),
        attempts=sum(len(found) for found in measured_by_task.values()),
        ran_tests_tasks=sum(
            1 for found in measured_by_task.values() if any(ran_tests(a) for a in found)
        ),
        ran_tests_attempts=sum(
            1 for found in measured_by_task.values() for a in found if ran_tests(a)
        ),
        medians=medians,
    )
