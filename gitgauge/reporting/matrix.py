"""The report's per-task matrix: rows tasks, columns the report's rows (configs), each cell one
config's attempts at one task (its outcome, the failing tests, the kind's notes, what the agent
did), and the commit-history tasks' series beside the original.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from gitgauge.core import kinds
from gitgauge.core.kinds import CellNotes
from gitgauge.core.records import wall_seconds
from gitgauge.core.text import plural
from gitgauge.reporting.attempts import attempts_by_task, tally, task_mean, total_of
from gitgauge.reporting.behaviour import BEHAVIOUR_METRICS, measured, ran_tests

if TYPE_CHECKING:
    # Only a type here: `rows` imports this module (its `ReportRow`s are the columns).
    from gitgauge.reporting.rows import ReportRow


@dataclass(frozen=True)
class MatrixCell:
    """One config's attempts at one task."""

    attempts: int
    resolved: int
    errors: int
    regressed: int
    fail_to_pass_failed: tuple[str, ...] = ()
    """FAIL_TO_PASS tests that did not pass in some attempt (per-test scoring)."""
    pass_to_pass_failed: tuple[str, ...] = ()
    """PASS_TO_PASS tests that did not pass in some attempt: the regressions, by name."""
    notes: CellNotes = field(default_factory=CellNotes)
    """What the task's kind adds to the outcome (`, exact`, `, 5/6 checks`)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The kind's own fields of the cell's JSON record (`TaskKind.matrix_fields`)."""
    unscored: int = 0
    """Attempts nothing could score (left out of the counts)."""
    behaviour: dict[str, float | None] = field(default_factory=dict)
    """Per behaviour metric key: the mean over the cell's measured attempts (empty: none)."""
    ran_tests: int = 0
    """Measured attempts that ran the suite."""
    measured: int = 0
    """Attempts whose behaviour was measured (scored, with a transcript)."""
    wall_seconds: float | None = None
    """The wall-clock time of the cell's attempts, summed."""

    @property
    def behaviour_text(self) -> str:
        """`9 turns, tests run, 5 read, 1 edited`; empty when nothing was measured."""
        if not self.measured:
            return ""
        turns = self.behaviour.get("turns")
        parts = [] if turns is None else [f"{_number(turns)} turns"]
        if self.measured == 1:
            parts.append("ran the tests" if self.ran_tests else "no test run")
        else:
            parts.append(f"ran the tests {self.ran_tests}/{self.measured}")
        for key, word in (("filesRead", "read"), ("filesEdited", "edited")):
            found = self.behaviour.get(key)
            if found is not None:
                parts.append(f"{_number(found)} {word}")
        return ", ".join(parts)

    @property
    def text(self) -> str:
        """`resolved` / `unresolved` / `error` (`, regressed` when the base suite broke,
        `, exact` when a merge matched the recorded one); with repeats `k/N` resolved and the
        errors, regressions and exact matches among the N. Per-test tasks name the failing tests
        (`F2P failed: ...`, `P2P failed: ...`)."""
        return self._status_text() + self._tests_text()

    def _status_text(self) -> str:
        if self.unscored and self.unscored == self.attempts:
            return "unscored"
        if self.attempts == 1:
            status = "resolved" if self.resolved else "error" if self.errors else "unresolved"
            return status + (", regressed" if self.regressed else "") + self.notes.single
        parts = [f"{self.resolved}/{self.attempts}" + self.notes.per_count, *self.notes.parts]
        if self.errors:
            parts.append(plural(self.errors, "error"))
        if self.regressed:
            parts.append(f"{self.regressed} regressed")
        return ", ".join(parts)

    def _tests_text(self) -> str:
        parts = [
            f"{label} failed: {few(names)}"
            for label, names in (
                ("F2P", self.fail_to_pass_failed),
                ("P2P", self.pass_to_pass_failed),
            )
            if names
        ]
        return f" ({'; '.join(parts)})" if parts else ""

    @property
    def kind(
        self,
    ) -> Literal["resolved", "partial", "unresolved", "error", "regressed", "unscored"]:
        """The cell's dominant outcome, for colouring."""
        if self.unscored and self.unscored == self.attempts:
            return "unscored"
        if self.regressed:
            return "regressed"
        if self.errors == self.attempts:
            return "error"
        if self.resolved == self.attempts:
            return "resolved"
        return "partial" if self.resolved else "unresolved"


@dataclass(frozen=True)
class TaskMatrix:
    columns: list[ReportRow]
    tasks: list[str]
    """Every task any column ran, sorted by id."""
    cells: dict[tuple[str, int], MatrixCell]
    """(task, column index) -> cell; missing when that column did not run the task."""
    groups: dict[str, str] = field(default_factory=dict)
    """task -> its benchmark, for fixture tasks (the HTML page groups the matrix by it)."""

    def cell(self, task: str, column: int) -> MatrixCell | None:
        return self.cells.get((task, column))


def build_matrix(rows: Sequence[ReportRow]) -> TaskMatrix:
    cells: dict[tuple[str, int], MatrixCell] = {}
    groups: dict[str, str] = {}
    for index, row in enumerate(rows):
        kind = kinds.get(row.kind)
        for result in (*row.results, *row.unscored):
            group = kind.group_of(result)
            if group:
                groups[result.task] = group
        for task, attempts in attempts_by_task(row.unscored).items():
            cells[(task, index)] = MatrixCell(
                attempts=len(attempts), resolved=0, errors=0, regressed=0, unscored=len(attempts)
            )
        for task, attempts in attempts_by_task(row.results).items():
            cells[(task, index)] = MatrixCell(
                **tally(attempts),
                regressed=sum(1 for attempt in attempts if attempt.regressed),
                fail_to_pass_failed=_failed(attempt.failToPassFailed for attempt in attempts),
                pass_to_pass_failed=_failed(attempt.passToPassFailed for attempt in attempts),
                notes=kind.cell_notes(attempts),
                extra=kind.matrix_fields(attempts),
                behaviour={
                    metric.key: task_mean(attempts, metric.value) for metric in BEHAVIOUR_METRICS
                },
                ran_tests=sum(1 for attempt in attempts if ran_tests(attempt)),
                measured=sum(1 for attempt in attempts if measured(attempt)),
                wall_seconds=total_of(attempts, wall_seconds),
            )
    tasks = sorted({task for task, _ in cells})
    return TaskMatrix(columns=list(rows), tasks=tasks, cells=cells, groups=groups)


@dataclass(frozen=True)
class SeriesView:
    """One chain task: the original series and each column's series beside it."""

    task: str
    original: tuple[str, ...]
    columns: list[tuple[int, int, tuple[str, ...] | None]]
    """(column index, attempt number, series) for every attempt that ran the task."""


def series_views(matrix: TaskMatrix) -> list[SeriesView]:
    """The chain tasks of `matrix`, each with the series every column's attempts made."""
    views: list[SeriesView] = []
    for task in matrix.tasks:
        original: tuple[str, ...] = ()
        columns: list[tuple[int, int, tuple[str, ...] | None]] = []
        for index in range(len(matrix.columns)):
            cell = matrix.cell(task, index)
            if cell is None or "series" not in cell.extra:
                continue
            original = original or tuple(cell.extra.get("originalSeries") or ())
            columns += [
                (index, number, None if series is None else tuple(series))
                for number, series in enumerate(cell.extra["series"], 1)
            ]
        if columns:
            views.append(SeriesView(task, original, columns))
    return views


def _failed(lists: Iterable[list[str] | None]) -> tuple[str, ...]:
    return tuple(sorted({name for names in lists for name in names or ()}))


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def few(names: Sequence[str], shown: int = 2) -> str:
    """The first `shown` names, then how many more (`a, b and 3 more`)."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
