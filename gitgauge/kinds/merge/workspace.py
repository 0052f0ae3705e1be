"""A merge task's workspace: a checkout of `base` with `other` merged in and the conflicts left
in the files, as a developer finds it (`git status` lists the unmerged paths, MERGE_HEAD is set).

The merge runs in the agent's own git directory before the agent starts, with hooks, rerere, the
user's merge drivers and global configuration off (`core.mergetree`). What the workspace looked
like at the start is kept as a tree in gitgauge's own index (`start_tree`), so scoring can tell a
conflicted path the agent resolved from one it never touched without asking the agent's git.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from gitgauge.core.errors import TaskError
from gitgauge.core.git.mergetree import MergeStart, merge_into
from gitgauge.core.records import Task
from gitgauge.running.workspace import Workspace


@dataclass(frozen=True)
class ConflictState:
    start: MergeStart
    start_tree: str
    """The tree of the workspace right after the merge (conflicted files with their markers),
    written into gitgauge's own object store: the agent's changes are measured against it."""


def enter_conflict(workspace: Workspace, task: Task, *, link: Sequence[str] = ()) -> ConflictState:
    """Merge `task.other` into the checkout of `task.base`, conflicts left in."""
    if task.other is None or task.merge is None:
        raise TaskError(f"task {task.id}: kind: merge needs `other` and `merge`; mine it again")
    start = merge_into(workspace.path, task.base, task.other)
    checkout = workspace.checkout
    # The merge's own index, read into gitgauge's: its stage-0 entries keep what the merge
    # checked out (a file the other side added that .gitignore would hide included), and the
    # work tree's files (markers and all) take the conflicted paths' place.
    shutil.copyfile(workspace.agent_git / "index", checkout.index)
    start_tree = checkout.read_agent_tree_from_index(exclude=link)
    return ConflictState(start=start, start_tree=start_tree)
