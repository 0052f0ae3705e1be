"""Task and result files are data, not paths: a task id is what `mine` makes, every path in a task
stays inside the work tree, and a result's numbers and place agree with what a pair can produce.
The CLI side (warnings, victims next to the repository) is in tests/test_bad_input.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitgauge.core.paths import repository_path_problem
from gitgauge.core.records import TASK_ID, TASK_ID_MAX_LENGTH
from gitgauge.mining.classify import task_id


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
