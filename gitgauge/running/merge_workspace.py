"""A merge task's workspace: a checkout of `base` with `other` merged in and the conflicts left
in the files, as a developer finds it (`git status` lists the unmerged paths, MERGE_HEAD is set).

The merge runs with hooks, rerere, the user's merge drivers and global configuration off
(`core.mergetree`). What the workspace looked like at the start is kept, so scoring can tell a
conflicted path the agent resolved from one it never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core.errors import TaskError
from gitgauge.core.mergetree import MergeStart, merge_into
from gitgauge.core.records import Task


@dataclass(frozen=True)
class ConflictState:
    start: MergeStart
    files: dict[str, bytes | None]
    """Each conflicted path's content right after the merge (None: absent)."""


def enter_conflict(workspace: Path, task: Task, *, link: Sequence[str] = ()) -> ConflictState:
    """Merge `task.other` into the checkout of `task.base` at `workspace`, conflicts left in."""
    if task.other is None or task.merge is None:
        raise TaskError(f"task {task.id}: kind: merge needs `other` and `merge`; mine it again")
    start = merge_into(workspace, task.base, task.other, exclude=link)
    return ConflictState(start=start, files=read_files(workspace, task.conflictFiles))


def read_files(workspace: Path, paths: list[str]) -> dict[str, bytes | None]:
    files: dict[str, bytes | None] = {}
    for path in paths:
        target = workspace / path
        files[path] = target.read_bytes() if target.is_file() else None
    return files
