"""History copies: bare repositories gitgauge makes that hold the history up to one commit and
nothing after it, so an agent's worktree cannot reach the fix (run.history: isolated).

A copy is made with `git pack-objects` from the user's repository; a copy of a later commit of
the same history borrows an earlier copy's objects through `objects/info/alternates` and packs
only the difference. The git CLI runs through `gitgauge.core.process`, with the user's hooks off
as in `gitgauge.core.git`, the door to the user's repository.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Repository


class HistoryCopy:
    """A bare repository gitgauge made that holds only the history up to one commit.

    Agents work in worktrees of it: no ref, reflog, object or alternate of it reaches the user's
    later commits (the fix), and the worktree's `.git` file points here, not at the user's
    repository.
    """

    def __init__(self, root: Path, commit: str, borrowed: tuple[HistoryCopy, ...] = ()) -> None:
        self.root = root
        self.commit = commit
        self.borrowed = borrowed
        """Earlier copies (of ancestors of `commit`) whose objects this one uses, oldest first."""

    @classmethod
    def create(
        cls,
        source: Repository,
        commit: str,
        root: Path,
        *,
        borrow: HistoryCopy | None = None,
        also: Sequence[str] = (),
    ) -> HistoryCopy:
        """A new bare repository holding exactly the objects reachable from `commit` (and from
        the commits in `also`: a merge task's other parent).

        With `borrow` (a copy of an ancestor of `commit`) it packs only what lies between the two
        and reads the rest through `objects/info/alternates`: the ancestor's objects are all
        reachable from `commit` anyway, so nothing beyond `commit` becomes reachable.
        """
        # No template: the user's init.templateDir may hold hooks, which must never run when an
        # agent commits in the workspace (and git's sample hooks are only dead weight here).
        _git_ok(["git", "init", "--bare", "--quiet", "--template=", str(root)], cwd=root.parent)
        borrowed: tuple[HistoryCopy, ...] = ()
        revisions = "".join(f"{tip}\n" for tip in (commit, *also))
        if borrow is not None:
            borrowed = (*borrow.borrowed, borrow)
            # Every store listed directly, oldest first: git then never nests alternates deeper
            # than two, far from its limit of five.
            alternates = "".join(f"{copy.root / 'objects'}\n" for copy in borrowed)
            (root / "objects" / "info").mkdir(parents=True, exist_ok=True)
            (root / "objects" / "info" / "alternates").write_text(alternates, encoding="utf-8")
            revisions += f"^{borrow.commit}\n"
        pack_base = root / "objects" / "pack" / "pack"
        result = process.run(
            ["git", "pack-objects", "--revs", "--quiet", str(pack_base)],
            cwd=source.root,
            stdin_text=revisions,
        )
        if not result.ok:
            raise GitError(f"could not copy history up to {commit[:12]}: {result.stderr_tail}")
        copy = cls(root, commit, borrowed)
        _git_ok(["git", "update-ref", "refs/heads/main", commit], cwd=root)
        _git_ok(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=root)
        return copy

    def overlay(self, root: Path) -> HistoryCopy:
        """A new, empty bare repository at `root` that reads this copy's objects through
        `objects/info/alternates` and writes its own: what one agent stages or commits stays
        out of the copy that the task's other configs work in (gold's staged resolution would
        otherwise be readable by the next agent)."""
        _git_ok(["git", "init", "--bare", "--quiet", "--template=", str(root)], cwd=root.parent)
        stores = (*self.borrowed, self)
        (root / "objects" / "info").mkdir(parents=True, exist_ok=True)
        alternates = "".join(f"{copy.root / 'objects'}\n" for copy in stores)
        (root / "objects" / "info" / "alternates").write_text(alternates, encoding="utf-8")
        _git_ok(["git", "update-ref", "refs/heads/main", self.commit], cwd=root)
        _git_ok(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=root)
        return HistoryCopy(root, self.commit, stores)

    def worktree_add(self, path: Path, commit: str) -> None:
        _git_ok(
            ["git", *NO_HOOKS, "worktree", "add", "--detach", "--quiet", str(path), commit],
            cwd=self.root,
        )

    def worktree_remove(self, path: Path) -> None:
        process.run(
            ["git", *NO_HOOKS, "worktree", "remove", "--force", "--force", str(path)],
            cwd=self.root,
            cleanup=True,
        )

    def worktree_prune(self) -> None:
        process.run(["git", "worktree", "prune"], cwd=self.root, cleanup=True)


def _git_ok(argv: list[str], *, cwd: Path) -> str:
    result = process.run(argv, cwd=cwd, tail_bytes=None)
    if not result.ok:
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        raise GitError(f"{' '.join(argv[:3])} failed: {detail}")
    return result.stdout_tail
