"""Diff size of an agent's work: everything it changed in the workspace against the task's base,
new untracked files included, `worktree.link` paths excluded.

Staging happens in the throwaway workspace's own index, never in the user's checkout. Linked
directories are kept out with exclude pathspecs rather than relying on `.gitignore`: a linked
`.venv` is a symlink, and `.venv/` in `.gitignore` only matches directories, so git would stage it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core.git import Repository


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


def exclude_pathspecs(link: Sequence[str]) -> list[str]:
    """Pathspecs for `git add`/`git diff`: the whole tree minus each `worktree.link` path."""
    return [".", *(f":(exclude,literal){name}" for name in link)]


def stage_all(repo: Repository, workspace: Path, *, link: Sequence[str]) -> None:
    """Stage every change in the workspace (new files too), except linked paths."""
    # `git add` fails when a pathspec, even an exclusion, names a path .gitignore ignores
    # (`.venv` ignored without a trailing slash, a linked `node_modules` directory): leave out
    # the links git ignores anyway.
    ignored = repo.git(
        "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--",
        *(f":(literal){name}" for name in link),
        cwd=workspace,
    ) if link else ""  # fmt: skip
    skipped = {name.rstrip("/") for name in ignored.split("\0") if name}
    kept = [name for name in link if name.rstrip("/") not in skipped]
    repo.git("add", "--all", "--", *exclude_pathspecs(kept), cwd=workspace)


def diff_stat(repo: Repository, workspace: Path, base: str, *, link: Sequence[str]) -> DiffStat:
    """Line counts of the staged workspace against `base` (call `stage_all` first).

    Renames are detected, so moving a file counts only the lines that changed. A binary file
    counts as one changed file with no inserted or deleted lines: it has no lines to count.
    """
    output = repo.git(
        "diff",
        "--cached",
        "--numstat",
        "-z",
        "--find-renames",
        "--no-ext-diff",
        "--no-textconv",
        base,
        "--",
        *exclude_pathspecs(link),
        cwd=workspace,
    )
    return DiffStat(tuple(_parse_numstat(output)))


def patch(repo: Repository, workspace: Path, base: str, *, link: Sequence[str]) -> str:
    """The agent's staged changes against `base` as a patch `git apply` accepts (binary too)."""
    return repo.git(
        "diff",
        "--cached",
        "--binary",
        "--find-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        base,
        "--",
        *exclude_pathspecs(link),
        cwd=workspace,
    )


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
