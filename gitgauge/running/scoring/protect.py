"""Protected files and the agent's additions: an agent may not make the suite pass by editing
the tests or how they run, nor by adding tests, configuration or stand-ins of its own.

Before scoring, agent edits to pre-existing files that match the test-file or test-infrastructure
heuristics (`is_protected`) are reverted to the tree the agent started from, and every file the
agent added that is not ordinary project code is dropped (`running.scoring.additions`; the
stand-ins, which need the grading interpreter, are dropped when the graded checkout is laid:
`running.pair.PairSteps.lay_graded`). It works on the agent's tree (gitgauge's index), never on
the files the agent left: an ignored `conftest.py` or an `--skip-worktree` flag is not part of
that tree, so it is never graded.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git.checkout import AgentDiff, Checkout
from gitgauge.core.paths import is_protected
from gitgauge.running.scoring.additions import SYMLINK_MODE, Added, dropped_by_rule


class WorkspaceEscape(GitGaugeError):
    """A path gitgauge must write lies behind a symlink the agent made (it could point anywhere)."""


@dataclass(frozen=True)
class Protection:
    reverted: list[str]
    """Pre-existing protected files the agent changed or deleted, now as they were."""
    dropped: dict[str, str] = field(default_factory=dict)
    """Files the agent added that are not ordinary project code, removed: path -> why."""
    kept: list[str] = field(default_factory=list)
    """The files the agent added that stay (to be asked about stand-ins when laid)."""
    start_files: frozenset[str] = frozenset()
    """The files of the tree the agent started from (read when it added any)."""
    tree_files: frozenset[str] = frozenset()
    """The files of the agent's tree, before protection (read when it added any)."""


def protect(
    checkout: Checkout,
    diff: AgentDiff,
    start: str,
    *,
    patterns: Sequence[str] = (),
    test_files: Collection[str] = (),
    editable: Collection[str] = (),
) -> Protection:
    """Put protected changes of the agent's tree (staged in gitgauge's index by
    `Checkout.read_agent_tree`; `diff` its changes against `start`, the tree it started from)
    back to `start`, drop the additions the rules refuse, and say which paths were touched.
    `test_files` are the task's own (a test whatever its name); `editable` are protected paths
    the agent had to change (a merge's conflicted files)."""
    reverted: list[str] = []
    added: list[str] = []
    for change in diff.changes:
        # Without rename detection a rename is a deletion plus an addition: the old path is a
        # pre-existing file (restored when protected), the new one a brand-new file.
        if change.status == "A":
            added.append(change.path)
        elif change.path not in editable and is_protected(change.path, patterns=patterns):
            reverted.append(change.path)
    dropped: dict[str, str] = {}
    start_files: frozenset[str] = frozenset()
    tree: dict[str, tuple[str, str]] = {}
    if added:
        tree = checkout.entries(checkout.write_tree())
        start_files = frozenset(checkout.entries(start))
        dropped = dropped_by_rule(
            _added(checkout, tree, added),
            start_files=start_files,
            test_files=test_files,
            patterns=patterns,
        )
    # At `start` a reverted path has its old content and a dropped one does not exist: one
    # reset of the index puts both right; the graded tree is then laid into a fresh checkout.
    checkout.reset_paths(start, [*reverted, *dropped])
    return Protection(
        reverted=reverted,
        dropped=dropped,
        kept=[path for path in added if path not in dropped],
        start_files=start_files,
        tree_files=frozenset(tree),
    )


def _added(
    checkout: Checkout, tree: dict[str, tuple[str, str]], paths: Iterable[str]
) -> list[Added]:
    items: list[Added] = []
    for path in paths:
        mode, object_id = tree.get(path, ("100644", ""))
        target = None
        if mode == SYMLINK_MODE and object_id:
            target = checkout.read_blob(object_id).decode("utf-8", "surrogateescape")
        items.append(Added(path, mode, target))
    return items


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
