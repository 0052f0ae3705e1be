"""History copies: bare repositories gitgauge makes that hold the history up to one commit and
nothing after it, so an agent's worktree cannot reach the fix (run.history: isolated).

A copy is made with `git pack-objects` from the user's repository; a copy of a later commit of
the same history borrows an earlier copy's objects through `objects/info/alternates` and packs
only the difference. It also holds the objects of the annotated tags in its commit's history
(`core.git.tags`): the checkouts over it hold those tags, and `git describe` reads their
objects. The git CLI runs through `gitgauge.core.process`, with the user's hooks off
as in `gitgauge.core.git`, the door to the user's repository.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Repository, full_file_system
from gitgauge.core.git.checkout import alternates_variable, set_stores
from gitgauge.core.git.tags import Tag, TagCache, write_tags


class HistoryCopy:
    """A bare repository gitgauge made that holds only the history up to one commit.

    Agents work in checkouts over it (`core.checkout`): no ref, reflog, object or alternate of it
    reaches the user's later commits (the fix). It is never written after it is made: an
    agent's objects go to the agent's own git directory.
    """

    def __init__(
        self,
        root: Path,
        commit: str,
        borrowed: tuple[HistoryCopy, ...] = (),
        tags: tuple[Tag, ...] = (),
    ) -> None:
        self.root = root
        self.commit = commit
        self.borrowed = borrowed
        """Earlier copies (of ancestors of `commit`) whose objects this one uses, oldest first."""
        self.tags = tags
        """The tags in `commit`'s history, whose objects the copy (or what it borrows) holds."""

    @property
    def stores(self) -> tuple[Path, ...]:
        """Every object directory a reader of this copy needs, oldest first."""
        return (*(copy.root / "objects" for copy in self.borrowed), self.root / "objects")

    @classmethod
    def create(
        cls,
        source: Repository,
        commit: str,
        root: Path,
        *,
        borrow: HistoryCopy | None = None,
        also: Sequence[str] = (),
        tags: tuple[Tag, ...] = (),
    ) -> HistoryCopy:
        """A new bare repository holding exactly the objects reachable from `commit` (and from
        the commits in `also`: a merge task's other parent), and the tag objects of `tags` (the
        tags in `commit`'s history: what they name is reachable from `commit` already).

        With `borrow` (a copy of an ancestor of `commit`) it packs only what lies between the two
        and reads the rest through `objects/info/alternates`: the ancestor's objects are all
        reachable from `commit` anyway, so nothing beyond `commit` becomes reachable.
        """
        # No template: the user's init.templateDir may hold hooks, which must never run when an
        # agent commits in the workspace (and git's sample hooks are only dead weight here).
        _git_ok(["git", "init", "--bare", "--quiet", "--template=", str(root)], cwd=root.parent)
        borrowed = (*borrow.borrowed, borrow) if borrow is not None else ()
        # A tag object an earlier copy holds is read from there, like its commits.
        held = {tag.object_id for copy in borrowed for tag in copy.tags}
        tag_objects = [tag.object_id for tag in tags if tag.object_id not in held]
        revisions = "".join(f"{tip}\n" for tip in (commit, *also, *tag_objects))
        if borrow is not None:
            # Every store listed directly, oldest first: git then never nests alternates deeper
            # than two, far from its limit of five.
            set_stores(root, [copy.root / "objects" for copy in borrowed])
            revisions += f"^{borrow.commit}\n"
        # The copy's object directory is the primary one and the user's repository is only
        # read: `pack-objects` makes its temporary pack beside the copy, on the copy's file
        # system (a tmpfs TMPDIR is no longer a cross-device rename), and never writes into the
        # user's `.git`. No `--local`: the objects come from that alternate.
        pack_base = root / "objects" / "pack" / "pack"
        result = process.run(
            ["git", "pack-objects", "--revs", "--quiet", str(pack_base)],
            cwd=source.root,
            stdin_text=revisions,
            env=process.clean_env(
                cwd=source.root,
                extra={
                    "GIT_OBJECT_DIRECTORY": str(root / "objects"),
                    "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates_variable(source.object_stores()),
                },
            ),
        )
        if not result.ok:
            detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
            full = full_file_system(root, source.root)
            raise GitError(
                f"could not copy history up to {commit[:12]}: {detail}"
                + (f"\n{full}" if full else "")
            )
        copy = cls(root, commit, borrowed, tags)
        _git_ok(["git", "update-ref", "refs/heads/main", commit], cwd=root)
        _git_ok(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=root)
        return copy


class CopyRepository(Repository):
    """A bare history copy read as the repository: on a Ray node, mining verifies a candidate
    in checkouts over the copy of the history up to its fix (`copy_from_pack`), the way a local
    mine reads the user's repository. There is no work tree and no user checkout here."""

    def __init__(self, root: Path) -> None:  # no super(): a bare repository has no work tree
        self._local = threading.local()
        self.root = root
        self._tags = TagCache(root)  # the copy's own: the tags in the fix's history

    def object_stores(self) -> tuple[Path, ...]:
        return (self.root / "objects",)

    def checkout_state(self) -> str:
        return ""


def pack_of(source: Repository, tips: Sequence[str]) -> bytes:
    """One git pack of exactly the objects reachable from `tips` and the tag objects of the
    tags in the first tip's history (the base's), to ship (a Ray node makes its copy from it).
    Written to stdout, into a file of gitgauge's own: `pack-objects` then makes no temporary
    pack in the user's `.git`, and a TMPDIR elsewhere needs no cross-device rename."""
    tags = [tag.object_id for tag in source.tags_at(tips[0])] if tips else []
    with tempfile.TemporaryDirectory(prefix="gitgauge-pack-") as folder:
        pack = Path(folder) / "history.pack"
        result = process.run(
            ["git", *NO_HOOKS, "pack-objects", "--revs", "--quiet", "--stdout"],
            cwd=source.root,
            stdin_text="".join(f"{tip}\n" for tip in (*tips, *tags)),
            stdout_path=pack,
        )
        if not result.ok:
            where = " and ".join(tip[:12] for tip in tips)
            raise GitError(f"could not pack the history up to {where}: {result.stderr_tail}")
        return pack.read_bytes()


def copy_from_pack(root: Path, pack: bytes, commit: str, *, tags: tuple[Tag, ...] = ()) -> None:
    """A bare history copy at `root` (an empty directory) from a shipped `pack`, `main` at
    `commit`, holding `tags` (the tags in `commit`'s history, whose objects the pack holds; no
    template: the node's init.templateDir may hold hooks)."""
    _git_ok(["git", *NO_HOOKS, "init", "--bare", "--quiet", "--template=", str(root)], cwd=root)
    path = root / "objects" / "pack" / "pack-shipped.pack"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pack)
    _git_ok(["git", *NO_HOOKS, "index-pack", str(path)], cwd=root)
    write_tags(root, tags)
    _git_ok(["git", "update-ref", "refs/heads/main", commit], cwd=root)
    _git_ok(["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=root)


def _git_ok(argv: list[str], *, cwd: Path) -> str:
    result = process.run(argv, cwd=cwd, tail_bytes=None)
    if not result.ok:
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        full = full_file_system(cwd)
        raise GitError(f"{' '.join(argv[:3])} failed: {detail}" + (f"\n{full}" if full else ""))
    return result.stdout_tail
