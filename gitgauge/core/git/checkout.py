"""Checkouts that gitgauge owns: a work tree that git reads and resets only through a git
directory, an index and a configuration of gitgauge's own (`core.git.owned`).

An agent works in a work tree and may leave anything in it: a `.git` file pointing at a git
directory of its own (whose config names an fsmonitor, a filter, hooks, `includeIf`s,
alternates), index flags (`--skip-worktree`), ignore rules, caches. None of it decides what git
does for gitgauge: every git command here runs with gitgauge's own `GIT_DIR`, `GIT_WORK_TREE`
and `GIT_INDEX_FILE` and `core.git.owned`'s settings and environment, none of the user's or the
agent's configuration. Nested repositories in the work tree are never entered.

A `Checkout` is reset to a commit in place (`reset`): git rewrites every file whose content or
stat data differs from gitgauge's index (a file changed behind a forged mtime still has a new
ctime), `git clean -ffdx` removes everything untracked or ignored, and what git never touches
(`.git`s below the root, FIFOs and sockets) is swept away first; when git cannot finish, the
work tree is rebuilt from scratch. That is what lets a checkout an agent (or an agent's code, in
a test run) wrote into be used again, fresh, and a pool of checkouts (one per parallel slot,
`CheckoutPool`) serve a whole `mine` or `run` without a `git worktree add` per candidate or pair.

Every reset also writes the tags of the commit's history into gitgauge's git directory, and
none past it (`core.git.tags`): a build that reads its version from git sees its own.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError

# Imports written `name as name` are re-exports: modules across the package import the owned-git
# primitives and the agent-directory reader (which lived here) from this module.
from gitgauge.core.git.agent_dir import MergeState as MergeState
from gitgauge.core.git.agent_dir import plain_file
from gitgauge.core.git.agent_dir import read_merge_state as read_merge_state
from gitgauge.core.git.owned import BYTECODE_EXCLUDES, OWNED_CONFIG, git_env
from gitgauge.core.git.owned import AgentDiff as AgentDiff
from gitgauge.core.git.owned import alternates_line as alternates_line
from gitgauge.core.git.owned import alternates_variable as alternates_variable
from gitgauge.core.git.owned import blob_sizes as blob_sizes
from gitgauge.core.git.owned import diff_records as diff_records
from gitgauge.core.git.owned import edit_tree as edit_tree
from gitgauge.core.git.owned import init_git_dir as init_git_dir
from gitgauge.core.git.owned import owned_git as owned_git
from gitgauge.core.git.owned import parse_tree_listing as parse_tree_listing
from gitgauge.core.git.owned import read_blob as read_blob
from gitgauge.core.git.owned import set_stores as set_stores
from gitgauge.core.git.owned import write_patch as write_patch
from gitgauge.core.git.tags import Tag, TagCache, write_tags
from gitgauge.core.interrupt import deferred
from gitgauge.core.worktree import Warn, link_directories, write_owner

CHECKOUT_PREFIX = "gitgauge-co-"
_plain_file = plain_file  # the name kinds/chain/kind.py imports from here


class Checkout:
    """A work tree (`path`) and gitgauge's git directory for it, in one temporary holder.

    `reset` makes the work tree exactly a commit; `agent_repository` gives an agent a fresh git
    directory of its own over that state; `read_agent_tree` stages what the work tree holds into
    gitgauge's own index, whatever the agent did to its git. The tree graded is then laid into
    the checkout reset again (`reset`, then `lay_tree`): nothing the agent left but that tree
    reaches the grader.
    """

    def __init__(self, holder: Path, *, owner_tags: TagCache | None = None) -> None:
        self.holder = holder
        self.owner_tags = owner_tags
        """Where `reset` reads a commit's tags when it is given none (the owner repository's)."""
        self.path = holder / ("w" + holder.name.removeprefix(CHECKOUT_PREFIX))
        self.git_dir = holder / "git"
        self.agent_dir = holder / "agent.git"
        self.index = self.git_dir / "index"
        self.commit: str | None = None
        self.stores: tuple[Path, ...] = ()
        self.links: tuple[str, ...] = ()
        self.index_holds: str | None = None
        """The tree gitgauge's index holds as a whole (after a reset or `lay_tree`), if known."""

    @classmethod
    def create(cls, *, owner_repository: Path, owner_tags: TagCache | None = None) -> Checkout:
        with deferred():
            holder = Path(tempfile.mkdtemp(prefix=CHECKOUT_PREFIX))
            write_owner(holder, repository=owner_repository, kind="checkout")
        checkout = cls(holder, owner_tags=owner_tags or TagCache(owner_repository))
        try:
            checkout.path.mkdir()
            init_git_dir(checkout.git_dir, stores=())
        except BaseException:
            checkout.remove()
            raise
        return checkout

    def renew_path(self) -> None:
        """Move the work tree to a new name (a rename: git's index stays valid). Every pair
        then works at a path no earlier pair had: an agent CLI that keeps state per project
        directory (sessions, memory, trust) finds none of another pair's."""
        with deferred():
            fresh = self.holder / f"w{os.urandom(6).hex()}"
            os.rename(self.path, fresh)
            self.path = fresh

    def git(self, *args: str, ok_codes: Sequence[int] = (0,)) -> str:
        return owned_git(
            self.git_dir, *args, work_tree=self.path, index=self.index, ok_codes=ok_codes
        )

    # -- resetting -----------------------------------------------------------------------------

    def reset(
        self,
        commit: str,
        *,
        stores: Sequence[Path],
        link: Sequence[str] = (),
        link_from: Path | None = None,
        tags: Sequence[Tag] | None = None,
        warn: Warn,
    ) -> None:
        """Make the work tree exactly `commit` (objects from `stores`), `link` directories of
        `link_from` linked in, and gitgauge's git directory hold `tags` (by default the owner
        repository's tags in `commit`'s history: `stores` must hold their objects). What the
        last occupant left (files, a replaced `.git`, `.git`s deeper down, which git never
        cleans) goes; when git cannot remove it (a file made undeletable), the work tree is
        rebuilt from scratch."""
        if tuple(stores) != self.stores:
            set_stores(self.git_dir, stores)
            self.stores = tuple(stores)
        self._remove_agent_repository()
        self._unlink_links()
        try:
            self._sweep()
            self.git("reset", "--quiet", "--hard", "--no-recurse-submodules", commit)
            self.git("clean", "-ffdxq")
        except (GitError, OSError) as error:
            if process.is_cancelled():
                # gitgauge's own stop (an interrupt, or mining giving up) killed this git, not
                # anything in the tree: no warning and no rebuild. Whoever resets it next starts
                # over, without the lock the killed git left.
                self.index_holds = None
                (self.git_dir / "index.lock").unlink(missing_ok=True)
                raise process.Cancelled from error
            if self.commit is None:  # a new checkout: nothing of anyone's to clean away
                raise
            warn(f"a checkout could not be cleaned ({error}); rebuilding it")
            _force_remove(self.path)
            self.path.mkdir()
            self.index.unlink(missing_ok=True)
            (self.git_dir / "index.lock").unlink(missing_ok=True)
            self.git("reset", "--quiet", "--hard", "--no-recurse-submodules", commit)
        if tags is None:
            tags = self.owner_tags.at(commit) if self.owner_tags is not None else ()
        write_tags(self.git_dir, list(tags))
        self._point_git_file(self.git_dir)
        self.commit = commit
        self.index_holds = commit
        self.links = tuple(
            link_directories(link_from, self.path, link, warn=warn) if link_from else ()
        )

    def _sweep(self) -> list[str]:
        """Remove every `.git` below the work tree's root and every special file (a FIFO, a
        socket, a device): git neither cleans nor stages them. Returns the directories that
        held a `.git` (nested repositories), relative to the root."""
        nested: list[str] = []
        for root, dirs, files in os.walk(self.path):
            here = Path(root)
            if here == self.path:
                dirs[:] = [name for name in dirs if name != ".git"]
                files = [name for name in files if name != ".git"]
            elif ".git" in dirs or ".git" in files:
                nested.append(here.relative_to(self.path).as_posix())
                _force_remove(here / ".git")
                dirs[:] = [name for name in dirs if name != ".git"]
            for name in files:
                entry = here / name
                try:
                    mode = entry.lstat().st_mode
                except OSError:
                    continue
                if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                    entry.unlink(missing_ok=True)
        return nested

    def _pathspecs(self, extra: Sequence[str]) -> list[str]:
        return [".", *(f":(exclude,literal){name}" for name in self.links), *extra]

    def _point_git_file(self, git_dir: Path) -> None:
        marker = self.path / ".git"
        if marker.is_dir() and not marker.is_symlink():
            _force_remove(marker)
        else:
            marker.unlink(missing_ok=True)
        marker.write_bytes(b"gitdir: " + os.fsencode(git_dir) + b"\n")  # the path's own bytes

    def _unlink_links(self) -> None:
        """Remove the linked entries before git cleans: a symlink is unlinked, never followed,
        and whatever the last occupant put in a link's place goes too (relinked afterwards)."""
        for name in self.links:
            entry = self.path / name
            if entry.is_symlink() or entry.is_file():
                entry.unlink()
            elif entry.is_dir():
                _force_remove(entry)  # a per-checkout directory of links (links.link_into)
        self.links = ()

    # -- an agent's git ------------------------------------------------------------------------

    def agent_repository(self, *, refs: Sequence[tuple[str, str]] = ()) -> Path:
        """A fresh git directory for the agent over the reset state (HEAD detached at the
        commit, the index as gitgauge's, objects read from the same stores, `refs`: the tags of
        the commit's history, or with `run.history: full` all the user's), and the work tree's
        `.git` pointing at it. The agent may do anything to it: gitgauge never
        reads it through git (`merge_state` reads two files of it as data)."""
        assert self.commit is not None
        self._remove_agent_repository()
        init_git_dir(self.agent_dir, stores=self.stores, head=self.commit)
        shutil.copyfile(self.index, self.agent_dir / "index")
        packed = "".join(
            f"{sha} {name}\n" for name, sha in (("refs/heads/main", self.commit), *refs)
        )
        (self.agent_dir / "packed-refs").write_text(packed, encoding="utf-8")
        self._point_git_file(self.agent_dir)
        return self.agent_dir

    def _remove_agent_repository(self) -> None:
        if self.agent_dir.exists() or self.agent_dir.is_symlink():
            _force_remove(self.agent_dir)

    # -- what the agent left -------------------------------------------------------------------

    def read_agent_tree(self, start: str, *, exclude: Sequence[str] = ()) -> str:
        """Stage everything the work tree holds (new files too; ignored files, bytecode, links,
        nested repositories and `exclude` paths not) into gitgauge's index over `start` (the
        tree the agent started from), and return its tree. Reads files only: the agent's `.git`,
        config and index play no part."""
        if self.index_holds != start:
            self.git("read-tree", start)
        return self.read_agent_tree_from_index(exclude=exclude)

    def read_agent_tree_from_index(self, *, exclude: Sequence[str] = ()) -> str:
        """`read_agent_tree` over whatever gitgauge's index holds now (a merge's index, copied
        from the agent's git directory before the agent started)."""
        self.index_holds = None
        # Nested repositories: staged, git would record them as submodules and look inside.
        nested = [f":(exclude,literal){path}" for path in self._sweep()]
        skipped = [f":(exclude,literal){path}" for path in exclude]
        self.git("add", "--all", "--", *self._pathspecs([*nested, *skipped, *BYTECODE_EXCLUDES]))
        return self.write_tree()

    def write_tree(self) -> str:
        return self.git("write-tree").strip()

    def reset_paths(self, treeish: str, paths: Sequence[str]) -> None:
        """Put `paths` (files or directories) of gitgauge's index back to `treeish` (removed
        when it has none); the work tree is not touched."""
        if paths:
            self.index_holds = None
            self.git("reset", "-q", treeish, "--", *(f":(literal){path}" for path in paths))

    def lay_tree(self, tree: str) -> None:
        """Make `tree` the index and the work tree's tracked files: a file that differs from it
        is written again (`read-tree --reset -u`, as `git reset --hard` does). After `reset`
        and the setup step, what setupCommand made stays unless `tree` has a file there."""
        self.git("read-tree", "--reset", "-u", tree)
        self.index_holds = tree

    def lay_tree_fresh(
        self, tree: str, *, link: Sequence[str] = (), link_from: Path | None = None, warn: Warn
    ) -> None:
        """The work tree made exactly `tree` in place, as `reset` makes it a commit (for when
        no setup step runs in between): the files that differ written again, everything else
        (what the agent left that its tree does not hold) removed, links linked again."""
        self._remove_agent_repository()
        self._unlink_links()
        self._sweep()
        self.lay_tree(tree)
        self.git("clean", "-ffdxq")
        self._point_git_file(self.git_dir)
        self.links = tuple(
            link_directories(link_from, self.path, link, warn=warn) if link_from else ()
        )

    def untracked(self) -> set[str]:
        """Untracked, not ignored files (what a setup step made)."""
        listed = self.git(
            "ls-files", "-z", "--others", "--exclude-standard", "--", *self._pathspecs(())
        )
        return {path for path in listed.split("\0") if path}

    def entries(self, treeish: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, object id) of every file of `treeish` (`git ls-tree -r`)."""
        return parse_tree_listing(self.git("ls-tree", "-r", "-z", treeish))

    def read_blob(self, object_id: str) -> bytes:
        return read_blob(self.git_dir, object_id, scratch=self.holder)

    def is_ancestor(self, ancestor: str, descendant: str, *, also_read: Sequence[Path]) -> bool:
        """Whether `ancestor` is an ancestor of `descendant`, reading objects also from
        `also_read` (an agent's object directory: its commits; only read, with a time limit)."""
        result = process.run(
            ["git", *OWNED_CONFIG, "merge-base", "--is-ancestor", ancestor, descendant],
            cwd=self.git_dir,
            env={
                **git_env(self.git_dir, None, None),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates_variable(also_read),
            },
            timeout_seconds=60,
        )
        return result.exit_code == 0

    def unmerged_in(self, index: Path) -> list[str]:
        """Paths with unmerged entries in an index file (read as data)."""
        listed = owned_git(self.git_dir, "ls-files", "-u", "-z", work_tree=self.path, index=index)
        paths: list[str] = []
        for entry in listed.split("\0"):
            if "\t" in entry:
                path = entry.split("\t", 1)[1]
                if path not in paths:
                    paths.append(path)
        return paths

    def diff(self, start: str) -> AgentDiff:
        """gitgauge's index (the agent's tree) against `start`: its changes and line counts."""
        return diff_records(self.git_dir, "--cached", start, work_tree=self.path, index=self.index)

    def write_patch(self, start: str, dest: Path, *, limit_bytes: int) -> int | None:
        """The patch of `diff` written to `dest` (see `write_patch`)."""
        return write_patch(
            self.git_dir,
            "--cached",
            start,
            work_tree=self.path,
            index=self.index,
            dest=dest,
            limit_bytes=limit_bytes,
        )

    def remove(self) -> None:
        with deferred():
            _force_remove(self.holder)


class CheckoutPool:
    """One `Checkout` per parallel slot, reused by every candidate or pair of that slot and
    removed together at the end (`with CheckoutPool(...) as pool:`)."""

    def __init__(self, *, owner_repository: Path) -> None:
        self.owner_repository = owner_repository
        self.owner_tags = TagCache(owner_repository)
        """The tags a reset writes when it is given none, shared by the slots."""
        self._lock = threading.Lock()
        self._free: dict[int, Checkout] = {}
        self._all: list[Checkout] = []

    @contextmanager
    def slot(self, slot: int) -> Iterator[Checkout]:
        with self._lock:
            checkout = self._free.pop(slot, None)
        if checkout is None:
            checkout = Checkout.create(
                owner_repository=self.owner_repository, owner_tags=self.owner_tags
            )
            with self._lock:
                self._all.append(checkout)
        try:
            yield checkout
        finally:
            with self._lock:
                self._free[slot] = checkout

    def close(self) -> None:
        # One deferred block for all: a second Ctrl-C must not stop the removal half-way.
        with deferred():
            with self._lock:
                checkouts, self._all, self._free = self._all, [], {}
            for checkout in checkouts:
                checkout.remove()

    def __enter__(self) -> CheckoutPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _force_remove(path: Path) -> None:
    """Remove `path` and everything below it, making directories writable where a test run or
    an agent took the permission away (never following a symlink)."""

    def unblock(function: object, failed: str, excinfo: object) -> None:
        parent = os.path.dirname(failed)
        try:
            os.chmod(parent, 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)
        except OSError:
            pass

    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
        return
    shutil.rmtree(path, onerror=unblock)
