"""Protected files: an agent may not make the suite pass by editing the tests or how they run.

Before scoring, agent edits to pre-existing files that match the test-file or test-infrastructure
heuristics (`is_protected`) are reverted to the task's base, brand-new test-infrastructure
files (a `conftest.py` that skips everything) are deleted, and brand-new plain test files stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.paths import is_protected, is_test_infra
from gitgauge.core.worktree import lay_files
from gitgauge.running.scoring.diffstat import exclude_pathspecs


class WorkspaceEscape(GitGaugeError):
    """A path gitgauge must write lies behind a symlink the agent made (it could point anywhere)."""


@dataclass(frozen=True)
class Protection:
    reverted: list[str]
    """Pre-existing protected files the agent changed or deleted, now as they are at base."""
    deleted: list[str]
    """Brand-new test-infrastructure files the agent added, now removed."""


@dataclass(frozen=True)
class _Change:
    status: str
    path: str


def protect(
    repo: Repository,
    workspace: Path,
    base: str,
    *,
    link: Sequence[str],
    patterns: Sequence[str] = (),
) -> Protection:
    """Revert / delete protected changes in a workspace whose changes are staged
    (`diffstat.stage_all`), and say which paths were touched."""
    reverted: list[str] = []
    deleted: list[str] = []
    for change in _staged_changes(repo, workspace, base, link=link):
        # Without rename detection a rename is a deletion plus an addition: the old path is a
        # pre-existing file (restored when protected), the new one a brand-new file.
        if change.status == "A":
            if is_test_infra(change.path):
                deleted.append(change.path)
        elif is_protected(change.path, patterns=patterns):
            reverted.append(change.path)
    ensure_inside(workspace, [*reverted, *deleted])
    # At base a reverted path has its old content and a deleted one does not exist: one call
    # puts both right.
    lay_files(repo, base, [*reverted, *deleted], workspace)
    return Protection(reverted=reverted, deleted=deleted)


def ensure_inside(workspace: Path, paths: Iterable[str]) -> None:
    """Raise `WorkspaceEscape` when writing `paths` would follow a symlinked directory.

    The agent could have replaced `tests/` by a link to anywhere on the machine; laying files
    through it would write there.
    """
    for path in paths:
        parents = PurePosixPath(path).parents
        for parent in reversed(list(parents)[:-1]):  # shortest prefix first; skip "."
            if (workspace / parent).is_symlink():
                raise WorkspaceEscape(
                    f"{parent} is a symlink in the workspace, so gitgauge cannot safely "
                    f"write {path}; the agent's work was not scored"
                )


def _staged_changes(
    repo: Repository, workspace: Path, base: str, *, link: Sequence[str]
) -> list[_Change]:
    output = repo.git(
        "diff",
        "--cached",
        "--name-status",
        "-z",
        "--no-renames",
        base,
        "--",
        *exclude_pathspecs(link),
        cwd=workspace,
    )
    tokens = iter(output.split("\0"))
    changes: list[_Change] = []
    for token in tokens:
        status = token.strip("\n")
        if status:
            changes.append(_Change(status=status[0], path=next(tokens)))
    return changes
