"""Diff size of an agent's work: everything it changed in the workspace against the tree it
started from, new untracked files included; ignored files, bytecode, nested repositories and
`worktree.link` paths excluded (`core.checkout` reads the work tree into gitgauge's own index).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitgauge.core.git.checkout import AgentDiff


@dataclass(frozen=True)
class FileChange:
    path: str
    insertions: int
    deletions: int
    binary: bool
    old_path: str | None = None
    """The path before a rename."""


@dataclass(frozen=True)
class DiffStat:
    changes: tuple[FileChange, ...]

    @property
    def files(self) -> int:
        return len(self.changes)

    @property
    def insertions(self) -> int:
        return sum(change.insertions for change in self.changes)

    @property
    def deletions(self) -> int:
        return sum(change.deletions for change in self.changes)


def diff_stat(diff: AgentDiff) -> DiffStat:
    """Line counts of the agent's tree (`Checkout.diff`) against the tree it started from.

    Renames are detected, so moving a file counts only the lines that changed. A binary file
    counts as one changed file with no inserted or deleted lines: it has no lines to count.
    """
    return DiffStat(tuple(_parse_numstat(diff.numstat)))


def _parse_numstat(output: str) -> list[FileChange]:
    """Parse `git diff --numstat -z`: `ins TAB del TAB path NUL`, or for a rename
    `ins TAB del TAB NUL old NUL new NUL`; binary files show `-` for both counts."""
    changes: list[FileChange] = []
    tokens = iter(output.split("\0"))
    for token in tokens:
        if not token.strip("\n"):
            continue
        added, deleted, path = token.lstrip("\n").split("\t", 2)
        old_path: str | None = None
        if not path:
            old_path, path = next(tokens), next(tokens)
        binary = added == "-" and deleted == "-"
        changes.append(
            FileChange(
                path=path,
                insertions=0 if binary else int(added),
                deletions=0 if binary else int(deleted),
                binary=binary,
                old_path=old_path,
            )
        )
    return changes
