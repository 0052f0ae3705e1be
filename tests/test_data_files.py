"""Task and result files are data, not paths: a task id is what `mine` makes, every path in a task
stays inside the work tree, and a result's numbers and place agree with what a pair can produce.
The CLI side (warnings, victims next to the repository) is in tests/test_bad_input.py."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitgauge.core.paths import repository_path_problem
from gitgauge.core.records import (
    MAX_COST_USD,
    MAX_COUNT,
    MAX_SECONDS,
    TASK_ID,
    TASK_ID_MAX_LENGTH,
    RunResult,
    implausible,
)
from gitgauge.core.store import Store
from gitgauge.mining.classify import task_id

RUN = "20240101T000000Z-aaaaaa"


@given(sha=st.text("0123456789abcdef", min_size=40, max_size=40), subject=st.text(max_size=200))
def test_every_id_mine_makes_is_a_task_id(sha: str, subject: str) -> None:
    made = task_id(sha, subject)
    assert TASK_ID.fullmatch(made) and len(made) <= TASK_ID_MAX_LENGTH, made


@pytest.mark.parametrize(
    "text",
    ["../../x", "deadbeef/../../x", "DEADBEEF-fix", "deadbee-fix", "deadbeef-", "deadbeef--x"],
)
def test_ids_that_are_not_task_ids(text: str) -> None:
    assert not TASK_ID.fullmatch(text)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_calc.py",
        'tests/odd name/it\'s "quoted"/ünïcödé 수정/test_mul ü.py',
        "tests/back\\slash.txt",  # an ordinary character in a file name on POSIX
        ".github/workflows/ci.yml",
        ".gitignore",
        "a/.gitkeep",
        "tests/...",
        "tests/.hidden/test_x.py",
    ],
)
def test_paths_git_could_have_written_are_accepted(path: str) -> None:
    assert repository_path_problem(path) is None


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("../../victim", "`..`"),
        ("tests/../../victim", "`..`"),
        ("./tests/test_x.py", "`.`"),
        ("tests/./test_x.py", "`.`"),
        ("tests//test_x.py", "empty segment"),
        ("tests/", "empty segment"),
        (".git/hooks/pre-commit", "`.git`"),
        ("sub/.GIT/config", "`.git`"),
        ("tests/a\0b", "NUL"),
    ],
)
def test_paths_that_leave_the_work_tree_are_refused(path: str, why: str) -> None:
    problem = repository_path_problem(path)
    assert problem is not None and why in problem, problem


def result(**fields: Any) -> RunResult:
    return RunResult.model_validate(
        {
            "runId": RUN,
            "config": "gold",
            "task": "t1",
            "status": "resolved",
            "startedAt": "2024-01-01T00:00:00+00:00",
            "finishedAt": "2024-01-01T00:01:00+00:00",
            **fields,
        }
    )


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"costUsd": math.nan}, "costUsd: nan is not a finite number"),
        ({"costUsd": math.inf}, "costUsd: inf is not a finite number"),
        ({"costUsd": -0.01}, "costUsd: -0.01 USD is negative"),
        ({"costUsd": MAX_COST_USD * 2}, "costUsd: 2000000.0 USD is past the plausible 1,000,000"),
        ({"adapterSeconds": -math.inf}, "adapterSeconds: -inf is not a finite number"),
        ({"adapterSeconds": MAX_SECONDS + 1}, "adapterSeconds: 604801.0 seconds is past"),
        ({"inputTokens": -1}, "inputTokens: -1 is negative"),
        ({"outputTokens": MAX_COUNT + 1}, "outputTokens: 1000000000001 is past the plausible"),
        ({"numTurns": -2}, "numTurns: -2 is negative"),
        ({"diffInsertions": 10**15}, "diffInsertions"),
    ],
)
def test_impossible_numbers_are_named(fields: dict[str, Any], why: str) -> None:
    problem = implausible(result(**fields))
    assert problem is not None and problem.startswith(why), problem


def test_numbers_at_their_caps_are_plausible() -> None:
    at_caps = result(
        costUsd=MAX_COST_USD, adapterSeconds=MAX_SECONDS, inputTokens=MAX_COUNT, diffFiles=0
    )
    assert implausible(at_caps) is None


@pytest.mark.parametrize(
    ("relocate", "why"),
    [
        (
            lambda path: path.parents[3] / "20240202T000000Z-bbbbbb" / "results/gold/t1.json",
            "runId",
        ),
        (lambda path: path.parent.parent / "noop" / "t1.json", "config: 'gold'"),
        (lambda path: path.parent / "t2.json", "task: 't1'"),
        (lambda path: path.parent / "t1.attempt-2.json", "task: 't1' (attempt 1)"),
    ],
    ids=["another-run", "another-config", "another-task", "another-attempt"],
)
def test_a_result_that_lies_where_it_does_not_belong_is_skipped(
    tmp_path: Path, relocate: Any, why: str
) -> None:
    store = Store(tmp_path)
    written = store.save_result(result())
    moved = Path(relocate(written))
    moved.parent.mkdir(parents=True, exist_ok=True)
    written.rename(moved)
    warnings: list[str] = []

    runs = store.load_runs(warn=warnings.append)

    assert [r for run in runs for r in run.results] == []
    assert len(warnings) == 1 and f"{moved}: {why}" in warnings[0], warnings
    assert store.load_result(moved, warn=warnings.append) is None
    assert "its pair runs again" in warnings[-1]


def test_a_result_named_by_an_unsafe_task_is_skipped(tmp_path: Path) -> None:
    # `...json` is the file of task "..": log_dir(.., "..") would be the logs folder itself.
    store = Store(tmp_path)
    path = store.save_result(result()).with_name("...json")
    path.write_text(json.dumps(result(task="..").model_dump(mode="json")), encoding="utf-8")
    warnings: list[str] = []

    store.load_runs(warn=warnings.append)

    assert any(f"{path}: task: '..'" in line for line in warnings), warnings


def test_a_result_where_it_belongs_loads(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.save_result(result(costUsd=0.5))
    store.save_result(result(attempt=2, costUsd=0.25))
    warnings: list[str] = []

    (run,) = store.load_runs(warn=warnings.append)

    assert warnings == []
    assert sorted((r.attempt, r.costUsd) for r in run.results) == [(1, 0.5), (2, 0.25)]
