"""Protected files: an agent may not make the suite pass by editing the tests or how they run.

Before scoring, agent edits to pre-existing files that match the test-file or test-infrastructure
heuristics (`is_protected`) are reverted to the task's base, brand-new test-infrastructure
files (a `conftest.py` that skips everything) are deleted, and brand-new plain test files stay.
It works on the agent's tree (gitgauge's index), never on the files the agent left: an ignored
`conftest.py` or an `--skip-worktree` flag is not part of that tree, so it is never graded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git.checkout import AgentDiff, Checkout
from gitgauge.core.paths import is_protected, is_test_infra


class WorkspaceEscape(GitGaugeError):
    """A path gitgauge must write lies behind a symlink the agent made (it could point anywhere)."""


@dataclass(frozen=True)
class Protection:
    reverted: list[str]
    """Pre-existing protected files the agent changed or deleted, now as they are at base."""
    deleted: list[str]
    """Brand-new test-infrastructure files the agent added, now removed."""


def protect(
    checkout: Checkout, diff: AgentDiff, base: str, *, patterns: Sequence[str] = ()
) -> Protection:
    """Put protected changes of the agent's tree (staged in gitgauge's index by
    `Checkout.read_agent_tree`; `diff` its changes against `base`) back to `base`, and say which
    paths were touched."""
    reverted: list[str] = []
    deleted: list[str] = []
    for change in diff.changes:
        # Without rename detection a rename is a deletion plus an addition: the old path is a
        # pre-existing file (restored when protected), the new one a brand-new file.
        if change.status == "A":
            if is_test_infra(change.path):
                deleted.append(change.path)
        elif is_protected(change.path, patterns=patterns):
            reverted.append(change.path)
    # At base a reverted path has its old content and a deleted one does not exist: one reset
    # of the index puts both right; the graded tree is then laid into a fresh checkout.
    checkout.reset_paths(base, [*reverted, *deleted])
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
