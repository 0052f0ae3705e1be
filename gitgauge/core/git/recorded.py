"""Reads of the user's repository recorded in one place and answered in another: a Ray node
has a history copy, not the user's repository, and a kind's pair may read past that copy (a
commits task's chain, past its base: `TaskKind.remote_reads`).

On the driver a `RecordingRepository` asks the user's repository and keeps each answer by its
call (`git` with its arguments, `read_blob`, `is_submodule`, `diff_names`, `tree_listing`); the
record travels in memory with the pair, and on the node a `ReplayingRepository` answers those
calls from it, byte for byte what the user's repository said, and every other call from its own
repository (the history copy).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from gitgauge.core.git import Blob, ChangedPath, Repository


@dataclass(frozen=True)
class RecordedReads:
    """What the user's repository answered, by call."""

    git: dict[tuple[str, ...], str] = field(default_factory=dict)
    """`Repository.git` arguments (run in the repository's root) -> its stdout."""
    blobs: dict[tuple[str, str], Blob | None] = field(default_factory=dict)
    """(commit, path) -> `read_blob`."""
    submodules: dict[tuple[str, str], bool] = field(default_factory=dict)
    """(commit, path) -> `is_submodule`."""
    changes: dict[tuple[str, str], tuple[ChangedPath, ...]] = field(default_factory=dict)
    """(old, new) -> `diff_names`."""
    trees: dict[str, str] = field(default_factory=dict)
    """commit -> `tree_listing`."""


class RecordingRepository(Repository):
    """`inner`, keeping the answer of each call `RecordedReads` holds. Only those calls are
    meant to be made through it: it opens no repository of its own."""

    def __init__(self, inner: Repository) -> None:  # no super(): it only delegates
        self._local = threading.local()
        self.inner = inner
        self.root = inner.root
        self.reads = RecordedReads()

    def git(self, *args: str, cwd: Path | None = None) -> str:
        answer = self.inner.git(*args, cwd=cwd)
        if cwd is None:
            self.reads.git[args] = answer
        return answer

    def read_blob(self, commit: str, path: str) -> Blob | None:
        answer = self.reads.blobs[(commit, path)] = self.inner.read_blob(commit, path)
        return answer

    def is_submodule(self, commit: str, path: str) -> bool:
        answer = self.reads.submodules[(commit, path)] = self.inner.is_submodule(commit, path)
        return answer

    def diff_names(self, old: str, new: str) -> list[ChangedPath]:
        answer = self.reads.changes[(old, new)] = tuple(self.inner.diff_names(old, new))
        return list(answer)

    def tree_listing(self, commit: str) -> str:
        answer = self.reads.trees[commit] = self.inner.tree_listing(commit)
        return answer


class ReplayingRepository(Repository):
    """A repository that answers the recorded calls from `reads` first (a subclass sets it and
    `root`, and checks `reads` in its own overrides of the other calls)."""

    reads: RecordedReads

    def git(self, *args: str, cwd: Path | None = None) -> str:
        if cwd is None and args in self.reads.git:
            return self.reads.git[args]
        return super().git(*args, cwd=cwd)
