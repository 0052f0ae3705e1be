"""A result file, `.gitgauge/runs/<run>/results/<config>/<task>.json`, and the drafts a pair
fills before it becomes one.

`RunResult` composes the pair's identity, every group of `fields.py` and the keys older results
hold; a kind's draft composes the common group and its kind's groups. Each field is declared
once, so a draft's field and the result's are the same field: same type, same docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field, StrictInt, StrictStr, ValidationError
from pydantic_core import InitErrorDetails

from gitgauge.core.records.fields import (
    ChainResultFields,
    CommonResultFields,
    ErrorKind,
    FixResultFields,
    FixtureResultFields,
    MergeResultFields,
)
from gitgauge.core.records.group import FieldGroup

RESULT_SCHEMA_VERSION = 1


class ResultIdentity(FieldGroup):
    """The pair.

    Which run, config, task and attempt the file is the result of, and when the pair ran."""

    schemaVersion: StrictInt = RESULT_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    runId: StrictStr
    """The run this pair belongs to (the name of its run directory)."""
    config: StrictStr
    """The agent config's `name` (the real name, also when its directory is a slug)."""
    task: StrictStr
    """Task id."""
    attempt: StrictInt = 1
    """Which attempt of this pair (`run --repeat N` makes N independent attempts)."""
    startedAt: str
    """UTC time the pair started, ISO 8601 with milliseconds."""
    finishedAt: str
    """UTC time the pair finished, ISO 8601 with milliseconds."""


class OlderResultFields(FieldGroup):
    """Older results.

    Keys that results written by an older gitgauge hold; still read, filled by no pair now."""

    deleted: list[str] = Field(default_factory=list)
    """Brand-new test-infrastructure files the agent added, deleted before scoring (results
    written before `dropped`, which holds them now; empty since)."""


# Bases from the last group to the first: pydantic orders the fields by the reversed MRO, so a
# file reads the pair, every result's fields, then the kinds' groups.
class RunResult(
    OlderResultFields,
    FixtureResultFields,
    ChainResultFields,
    MergeResultFields,
    FixResultFields,
    CommonResultFields,
    ResultIdentity,
):
    """One config x task pair: `.gitgauge/runs/<run>/results/<config>/<task>.json`.

    Read leniently (`extra="ignore"`: a newer gitgauge may add fields); made from a pair's draft
    strictly (`from_draft`)."""

    model_config = ConfigDict(extra="ignore", defer_build=False)

    @classmethod
    def from_draft(
        cls,
        draft: ResultDraft,
        *,
        mask: Callable[[Any], Any] | None = None,
        **identity: Any,
    ) -> RunResult:
        """The result of a pair: what its `draft` measured (each string through `mask` first,
        when given) and the pair's `identity` (`runId`, `config`, `task`, `attempt`,
        `startedAt`, `finishedAt`). A key `RunResult` does not have raises, as the draft
        would: a field a draft gained and the result lacks is a bug that shows, not a value
        silently dropped by the lenient reading."""
        fields = draft.fields()
        values = {**(fields if mask is None else mask(fields)), **identity}
        unknown = [name for name in values if name not in cls.model_fields]
        if unknown:
            errors: list[InitErrorDetails] = [
                {"type": "extra_forbidden", "loc": (name,), "input": values[name]}
                for name in unknown
            ]
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return cls.model_validate(values)


class ResultDraft(CommonResultFields):
    """What a pair has measured so far, before it becomes a `RunResult`: filled step by step (an
    error keeps what was measured), and refusing a field its kind does not have, so a misspelt
    or misplaced key is a bug that shows, not a value silently dropped. Its fields are
    `RunResult`'s own (the groups of `fields.py`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=False)

    def __init__(self, **fields: Any) -> None:
        """A draft starts as an error: a pair that stops before it is graded is one."""
        super().__init__(**{"status": "error", **fields})

    def update(self, **fields: Any) -> None:
        """Set `fields` (each validated; an unknown one raises)."""
        for name, value in fields.items():
            setattr(self, name, value)

    def error(self, kind: ErrorKind, message: str) -> None:
        self.update(status="error", errorKind=kind, errorMessage=message)

    def fields(self) -> dict[str, Any]:
        """What was set, as `RunResult` keyword arguments."""
        return self.model_dump(exclude_unset=True) | {"kind": self.kind, "status": self.status}


class FixResultDraft(FixResultFields, ResultDraft):
    """A fix task's pair: protection and the base suite."""


class MergeResultDraft(MergeResultFields, ResultDraft):
    """A merge task's pair: exact match and what is left unmerged."""


class ChainResultDraft(ChainResultFields, ResultDraft):
    """A commit-history task's pair: its checks, per-commit tests and the judge."""


class FixtureResultDraft(FixtureResultFields, ResultDraft):
    """A fixture task's pair: its mode, its answer and the scorer's verdict."""


CHAIN_CHECKS = (
    "checkTree",
    "checkNothingInProgress",
    "checkNothingUncommitted",
    "checkSeriesLength",
    "checkSubjectsDistinct",
    "checkBranch",
)
"""The checks of a chain task's pair, in the order docs/guide/chain-tasks.md lists them: RESOLVED
when all hold."""


MAX_COST_USD = 1_000_000.0
"""Past a million dollars a pair's cost is a corrupt or forged record, not a measurement."""
MAX_COUNT = 10**12
"""Tokens, turns and diff lines past a trillion: corrupt, not measured."""
MAX_SECONDS = 7 * 86_400.0
"""A week of adapter time: timeouts are at most a day."""
_COUNT_FIELDS = (
    "inputTokens",
    "outputTokens",
    "cacheCreationInputTokens",
    "cacheReadInputTokens",
    "reasoningOutputTokens",
    "numTurns",
    "diffFiles",
    "diffInsertions",
    "diffDeletions",
    "judgeInputTokens",
    "judgeOutputTokens",
    "seriesTested",
    "seriesPassing",
)


_SECONDS_FIELDS = ("wallSeconds", "setupSeconds", "agentSeconds", "gradingSeconds")


def implausible(result: RunResult) -> str | None:
    """`key: why` for the first number of `result` no pair could have measured (NaN, infinite,
    negative, past its cap), or None. Such a result would poison every average it joins."""
    limits = {"costUsd": (MAX_COST_USD, "USD"), "adapterSeconds": (MAX_SECONDS, "seconds")}
    limits["judgeCostUsd"] = (MAX_COST_USD, "USD")
    limits.update({name: (MAX_SECONDS, "seconds") for name in _SECONDS_FIELDS})
    limits.update({name: (float(MAX_COUNT), "") for name in _COUNT_FIELDS})
    for name, (cap, unit) in limits.items():
        value = getattr(result, name)
        if value is None:
            continue
        shown = f"{value} {unit}".strip()
        if not math.isfinite(value):
            return f"{name}: {value} is not a finite number"
        if value < 0:
            return f"{name}: {shown} is negative"
        if value > cap:
            return f"{name}: {shown} is past the plausible {cap:,.0f} {unit}".rstrip()
    return None


def wall_seconds(result: RunResult) -> float | None:
    """A pair's wall-clock time: its `wallSeconds`, else (results written before gitgauge
    recorded it) the time between its `startedAt` and `finishedAt`."""
    if result.wallSeconds is not None:
        return result.wallSeconds
    try:
        started = datetime.fromisoformat(result.startedAt.replace("Z", "+00:00"))
        finished = datetime.fromisoformat(result.finishedAt.replace("Z", "+00:00"))
        seconds = (finished - started).total_seconds()
    except (ValueError, TypeError):
        return None
    return seconds if 0 <= seconds <= MAX_SECONDS else None
