"""`gitgauge report --tasks` and `--series`: the per-task matrix (`reporting.matrix`) as a table,
markdown, csv (each config's behaviour in columns of its own) or json (one record per task and
column), and each commit-history task's series beside the original.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from gitgauge.reporting.behaviour import BEHAVIOUR_METRICS
from gitgauge.reporting.formatting import csv_text
from gitgauge.reporting.matrix import MatrixCell, TaskMatrix, series_views


def column_labels(matrix: TaskMatrix, *, with_run: bool) -> list[str]:
    """Each column's name (`RUN:NAME` with `with_run`), as the table and the HTML page head it."""
    # `row.name` is the config for fix rows; merge rows say `(merge)`.
    return [f"{row.run_id}:{row.name}" if with_run else row.name for row in matrix.columns]


def render_matrix(matrix: TaskMatrix, *, output_format: str, with_run: bool = False) -> str:
    labels = column_labels(matrix, with_run=with_run)
    if output_format == "json":
        return json.dumps(_matrix_records(matrix), indent=2)
    # What the agent did goes under the outcome (beside it in markdown, whose cells hold one
    # line): a cell says both what came out and how.
    joiner = "; " if output_format in ("markdown", "csv") else "\n"
    body = [
        [task, *(_cell_text(matrix.cell(task, index), joiner) for index in range(len(labels)))]
        for task in matrix.tasks
    ]
    if output_format == "csv":
        return _matrix_csv(matrix, labels)
    return tabulate(
        body,
        headers=["TASK", *labels],
        tablefmt="github" if output_format == "markdown" else "simple",
        disable_numparse=True,
    )


def _cell_text(cell: MatrixCell | None, joiner: str = "") -> str:
    if cell is None:
        return "-"
    behaviour = cell.behaviour_text
    return cell.text + (joiner + behaviour if behaviour and joiner else "")


MATRIX_CSV_EXTRA = (
    ("turns", "turns"),
    ("test runs", "testRuns"),
    ("ran tests", None),
    ("files read", "filesRead"),
    ("files edited", "filesEdited"),
    ("shell commands", "shellCommands"),
    ("first edit s", "firstEditSeconds"),
    ("wall s", None),
)
"""The behaviour columns the csv matrix adds per config (`<config> turns`, ...)."""


def _matrix_csv(matrix: TaskMatrix, labels: Sequence[str]) -> str:
    """Rows tasks; per config its cell, then its behaviour in columns of their own."""
    fields = ["task", *labels]
    fields += [f"{label} {name}" for label in labels for name, _ in MATRIX_CSV_EXTRA]
    records = []
    for task in matrix.tasks:
        record: dict[str, Any] = {"task": task}
        for index, label in enumerate(labels):
            cell = matrix.cell(task, index)
            record[label] = _cell_text(cell)
            for name, key in MATRIX_CSV_EXTRA:
                value: Any = None
                if cell is not None and key is not None:
                    value = cell.behaviour.get(key)
                elif cell is not None and name == "ran tests" and cell.measured:
                    value = cell.ran_tests
                elif cell is not None and name == "wall s":
                    value = cell.wall_seconds
                record[f"{label} {name}"] = value
        records.append(record)
    return csv_text(fields, records)


def _matrix_records(matrix: TaskMatrix) -> list[dict[str, Any]]:
    """Long form, one record per task x column that ran it: easy to filter in a script."""
    records = []
    for task in matrix.tasks:
        for index, row in enumerate(matrix.columns):
            cell = matrix.cell(task, index)
            if cell is None:
                continue
            record: dict[str, Any] = {
                "task": task,
                "config": row.config,
                "run": row.run_id,
                "attempts": cell.attempts,
                "resolved": cell.resolved,
                "errors": cell.errors,
                "regressed": cell.regressed,
                "failToPassFailed": list(cell.fail_to_pass_failed),
                "passToPassFailed": list(cell.pass_to_pass_failed),
                "cell": cell.text,
                "measured": cell.measured,
                "ranTests": cell.ran_tests if cell.measured else None,
                **{metric.key: cell.behaviour.get(metric.key) for metric in BEHAVIOUR_METRICS},
                "wallSeconds": cell.wall_seconds,
            }
            record.update(cell.extra)  # the kind's own fields (merge: `exact`)
            records.append(record)
    return records


def render_series(matrix: TaskMatrix, *, output_format: str, with_run: bool = False) -> str:
    """Each commit-history task's series beside the original: a column per config (and
    attempt), a row per commit, subjects oldest first; "" when no cell holds one."""
    labels = column_labels(matrix, with_run=with_run)
    blocks: list[str] = []
    for view in series_views(matrix):
        headers = ["original"]
        columns: list[Sequence[str]] = [view.original]
        for index, attempt, series in view.columns:
            repeated = sum(1 for other, _, _ in view.columns if other == index) > 1
            headers.append(labels[index] + (f" #{attempt}" if repeated else ""))
            columns.append(("(no series)",) if series is None else series)
        depth = max(len(column) for column in columns)
        body = [[column[n] if n < len(column) else "" for column in columns] for n in range(depth)]
        table = tabulate(
            body,
            headers=headers,
            tablefmt="github" if output_format == "markdown" else "simple",
            disable_numparse=True,
        )
        blocks.append(f"{view.task}:\n{table}")
    return "\n\n".join(blocks)
