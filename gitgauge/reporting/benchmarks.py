"""`gitgauge report --by benchmark`: fixture tasks' pass rates per benchmark and per difficulty,
each with its 95% interval (Wilson with one attempt per task, else a bootstrap over tasks, as
the report's RATE), for every config row that ran fixture tasks. Pure functions of the report's
rows; the text is here too (a table, markdown, csv or json).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from gitgauge.core.records import RunResult
from gitgauge.reporting import intervals
from gitgauge.reporting.attempts import tally
from gitgauge.reporting.formatting import csv_text
from gitgauge.reporting.intervals import Interval
from gitgauge.reporting.render import format_rate, interval_fields
from gitgauge.reporting.rows import CONFIDENCE, SEED, ReportRow, attempts_by_task, outcomes

GROUPINGS = ("benchmark", "difficulty")
DIFFICULTY_ORDER = ("trivial", "easy", "medium", "hard", "expert")
NO_DIFFICULTY = "-"
NO_FIXTURES = "no fixture tasks in these runs: `gitgauge import gitbench PATH`, then run them"
HEADERS = ("CONFIG", "RESOLVED", "ERRORS", "RATE")
CSV_FIELDS = (
    "config", "run", "by", "group", "tasks", "attempts", "resolved", "errors", "unscored",
    "resolveRate", "resolveRateLow", "resolveRateHigh", "confidence",
)  # fmt: skip


@dataclass(frozen=True)
class GroupRow:
    """One config's fixture tasks of one benchmark (or one difficulty)."""

    config: str
    run_id: str
    by: str
    """`benchmark` or `difficulty`."""
    group: str
    tasks: int
    attempts: int
    resolved: int
    errors: int
    unscored: int
    rate: Interval


def has_fixtures(row: ReportRow) -> bool:
    """Whether the row counts fixture tasks (their results name a benchmark)."""
    return any(result.benchmark for result in (*row.results, *row.unscored))


def group_rows(rows: Sequence[ReportRow]) -> list[GroupRow]:
    """Per benchmark, then per difficulty, for each fixture row in the report's order."""
    found: list[GroupRow] = []
    for by in GROUPINGS:
        for row in rows:
            if not has_fixtures(row):
                continue
            groups: dict[str, list[RunResult]] = {}
            for result in (*row.results, *row.unscored):
                groups.setdefault(_group_of(result, by), []).append(result)
            for group in sorted(groups, key=lambda name: _order(name, by)):
                found.append(_summarize(row, by, group, groups[group]))
    return found


def _group_of(result: RunResult, by: str) -> str:
    value = result.benchmark if by == "benchmark" else result.difficulty
    return value or NO_DIFFICULTY


def _order(name: str, by: str) -> tuple[int, str]:
    if by == "difficulty" and name in DIFFICULTY_ORDER:
        return (DIFFICULTY_ORDER.index(name), name)
    return (len(DIFFICULTY_ORDER), name)


def _summarize(row: ReportRow, by: str, group: str, results: Sequence[RunResult]) -> GroupRow:
    counted = [result for result in results if result.status != "unscored"]
    per_task = [outcomes(attempts) for attempts in attempts_by_task(counted).values()]
    rate = (
        intervals.rate_interval(per_task, confidence=CONFIDENCE, seed=SEED)
        if per_task
        else Interval(0.0, 1.0, None)
    )
    return GroupRow(
        config=row.name,
        run_id=row.run_id,
        by=by,
        group=group,
        tasks=len(per_task),
        **tally(counted),
        unscored=len(results) - len(counted),
        rate=rate,
    )


def render(groups: Sequence[GroupRow], *, output_format: str, with_run: bool = False) -> str:
    if output_format == "json":
        return json.dumps([_record(group) for group in groups], indent=2)
    if output_format == "csv":
        return csv_text(CSV_FIELDS, [_record(group) for group in groups])
    tables: list[str] = []
    for by in GROUPINGS:
        chosen = [group for group in groups if group.by == by]
        if not chosen:
            continue
        headers = [*(("RUN",) if with_run else ()), "CONFIG", by.upper(), *HEADERS[1:]]
        body = [
            [
                *([group.run_id] if with_run else []),
                group.config,
                group.group,
                f"{group.resolved}/{group.attempts}"
                + (f", {group.unscored} unscored" if group.unscored else ""),
                str(group.errors),
                format_rate(group.rate),
            ]
            for group in chosen
        ]
        table_format = "github" if output_format == "markdown" else "simple"
        tables.append(tabulate(body, headers=headers, tablefmt=table_format, disable_numparse=True))
    note = (
        "Fixture tasks only. RATE: resolved / tasks with its 95% interval (Wilson; a bootstrap "
        "over tasks with repeats); unscored attempts (no LLM judge) are left out."
    )
    wrapped = textwrap.fill(note, 100, break_on_hyphens=False, break_long_words=False)
    return "\n\n".join([*tables, wrapped]) if tables else NO_FIXTURES


def _record(group: GroupRow) -> dict[str, Any]:
    return {
        "config": group.config,
        "run": group.run_id,
        "by": group.by,
        "group": group.group,
        "tasks": group.tasks,
        "attempts": group.attempts,
        "resolved": group.resolved,
        "errors": group.errors,
        "unscored": group.unscored,
        **interval_fields("resolveRate", group.rate),
        "confidence": CONFIDENCE,
    }
