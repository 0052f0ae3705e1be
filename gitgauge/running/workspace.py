"""Where an agent works on a task: a checkout of the task's `base` that cannot reach the fix.

`history: isolated` (the default) copies the history up to `base` once per task into a bare
repository of gitgauge's own and gives every config a fresh checkout over that copy, with a git
directory of the agent's own: `git log`, `git blame` and `git show` work for everything up to
`base`, and no ref, reflog, object, alternate or `.git` pointer leads to the fix; its tags are
those in `base`'s history (`core.git.tags`), so a version read from git is the project's own.
`history: full` is the spec's behaviour: the agent's git reads the user's repository's objects
and sees its branches and tags, so every commit (the fix included) is readable; it writes only
its own. The grading checkout holds the tags in `base`'s history either way.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff, Checkout, CheckoutPool
from gitgauge.core.git.checkout import _force_remove as remove_tree
from gitgauge.core.git.history import HistoryCopy
from gitgauge.core.git.tags import Tag
from gitgauge.core.interrupt import deferred
from gitgauge.core.worktree import Warn, write_owner

HistoryMode = Literal["isolated", "full"]
HISTORY_PREFIX = "gitgauge-hist-"
FRESH_PREFIX = "gitgauge-fresh-"


def _history_holder(repo: Repository) -> Path:
    """A new temporary folder for history copies, labelled as `repo`'s for stale cleanup."""
    with deferred():
        holder = Path(tempfile.mkdtemp(prefix=HISTORY_PREFIX))
        try:
            write_owner(holder, repository=repo.root, kind="history")
        except BaseException:
            shutil.rmtree(holder, ignore_errors=True)
            raise
    return holder


def _remove_holder(holder: Path) -> None:
    with deferred():
        shutil.rmtree(holder, ignore_errors=True)


class HistoryCopies:
    """The isolated history copies of one run, one per task `base`, made on first use and
    removed together at the end.

    A copy whose base descends from an earlier copy's base borrows that copy's objects (through
    `objects/info/alternates`) and packs only the commits in between, so a run over many tasks
    of a long history pays for one full copy, not one per task. Run tasks oldest base first to
    get the most out of it.
    """

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self._lock = threading.Lock()
        self._holder: Path | None = None
        self._copies: dict[str, HistoryCopy] = {}
        # Copies that also hold a merge task's other parent: never borrowed from, since the
        # other parent's commits need not be ancestors of a later base.
        self._merge_copies: dict[tuple[str, str], HistoryCopy] = {}

    def get(self, base: str, *, other: str | None = None) -> HistoryCopy:
        with self._lock:
            copy = (
                self._copies.get(base) if other is None else self._merge_copies.get((base, other))
            )
            if copy is not None:
                return copy
            if self._holder is None:
                self._holder = _history_holder(self.repo)
            ancestors = [c for c in self._copies.values() if self.repo.is_ancestor(c.commit, base)]
            # The nearest ancestor leaves the least to pack.
            borrow = max(ancestors, key=lambda c: self.repo.ancestor_count(c.commit), default=None)
            root = self._holder / f"copy-{len(self._copies) + len(self._merge_copies)}.git"
            tags = self.repo.tags_at(base)
            if other is not None:
                copy = HistoryCopy.create(
                    self.repo, base, root, borrow=borrow, also=[other], tags=tags
                )
                self._merge_copies[(base, other)] = copy
                return copy
            copy = HistoryCopy.create(self.repo, base, root, borrow=borrow, tags=tags)
            self._copies[base] = copy
            return copy

    def close(self) -> None:
        with self._lock:
            if self._holder is not None:
                _remove_holder(self._holder)
            self._holder = None
            self._copies.clear()
            self._merge_copies.clear()

    def __enter__(self) -> HistoryCopies:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Workspace:
    """One pair's checkout of `base`: where the agent works (`path`, with its own git directory
    `agent_git`), and gitgauge's `checkout` of it, through which gitgauge alone reads and resets
    it."""

    checkout: Checkout
    stores: tuple[Path, ...]
    """The object stores the checkout (and the agent's git) read: the task's history copy, or
    the user's repository with `run.history: full`."""
    agent_git: Path
    link: tuple[str, ...]
    link_from: Path
    warn: Warn
    tags: Callable[[str], tuple[Tag, ...]]
    """The tags a checkout of a commit holds: those in its history that the stores hold
    (`TaskWorkspaces.tags_at`)."""

    @property
    def path(self) -> Path:
        return self.checkout.path

    def reset(self, commit: str) -> None:
        """The checkout made exactly `commit` again (links relinked, the tags in its history
        written), nothing else left."""
        self.checkout.reset(
            commit,
            stores=self.stores,
            link=self.link,
            link_from=self.link_from,
            tags=self.tags(commit),
            warn=self.warn,
        )

    def lay_fresh(self, tree: str) -> None:
        """The checkout made exactly `tree` (links relinked), nothing else left."""
        self.checkout.lay_tree_fresh(tree, link=self.link, link_from=self.link_from, warn=self.warn)


class TaskWorkspaces:
    """Prepared once per task (`with TaskWorkspaces(...) as prepared:`), then
    `prepared.workspace(slot)` gives each config its own fresh checkout of `base`."""

    def __init__(
        self,
        repo: Repository,
        base: str,
        *,
        history: HistoryMode,
        link: Sequence[str],
        warn: Warn,
        copies: HistoryCopies | None = None,
        other: str | None = None,
        copy: HistoryCopy | None = None,
        pool: CheckoutPool | None = None,
    ) -> None:
        """`copies`: the run's shared history copies; without it, the task makes its own.
        `other`: a merge task's other parent, which an isolated copy must hold too.
        `copy`: a copy made elsewhere (a Ray node's, from the shipped pack, shared by the pairs
        of several processes); it is only ever read. `pool`: the run's checkouts, one per slot
        (without it, every workspace gets a checkout of its own)."""
        self.repo = repo
        self.shared = copies
        self.given = copy
        self.base = base
        self.other = other
        self.history = history
        self.link = list(link)
        self.warn = warn
        self.pool = pool
        self._holder: Path | None = None
        self._copy: HistoryCopy | None = None
        self.tags: tuple[Tag, ...] = ()
        """The tags in `base`'s history (read on entering): the agent's, and the grading's."""

    def __enter__(self) -> TaskWorkspaces:
        self.tags = self.repo.tags_at(self.base)
        if self.given is not None:
            self._copy = self.given
        elif self.history == "isolated" and self.shared is not None:
            self._copy = self.shared.get(self.base, other=self.other)
        elif self.history == "isolated":
            try:
                self._holder = _history_holder(self.repo)
                self._copy = HistoryCopy.create(
                    self.repo,
                    self.base,
                    self._holder / "history.git",
                    also=[self.other] if self.other else [],
                    tags=self.tags,
                )
            except BaseException:
                self._cleanup()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._cleanup()

    def _cleanup(self) -> None:
        if self._holder is not None:
            _remove_holder(self._holder)
            self._holder = None
            self._copy = None

    @property
    def stores(self) -> tuple[Path, ...]:
        if self._copy is None:  # run.history: full, the user's own objects
            return self.repo.object_stores()
        return self._copy.stores

    def tags_at(self, commit: str) -> tuple[Tag, ...]:
        """The tags a checkout of `commit` holds: at `base` its own; at another commit of the
        task (a chain's parent) those of its history that `base`'s are (their objects are in
        the history copy; a tag past `base` never is)."""
        if commit == self.base:
            return self.tags
        held = set(self.tags)
        return tuple(tag for tag in self.repo.tags_at(commit) if tag in held)

    @contextmanager
    def workspace(self, slot: int = 0) -> Iterator[Workspace]:
        """A fresh checkout of `base` with `worktree.link` linked and a git directory of the
        agent's own holding the tags in `base`'s history (with `run.history: full`, the user's
        branches and all its tags)."""
        with ExitStack() as stack:
            pool = self.pool or stack.enter_context(CheckoutPool(owner_repository=self.repo.root))
            checkout = stack.enter_context(pool.slot(slot))
            if checkout.commit is not None:  # used before: this pair gets a path of its own
                checkout.renew_path()
            stores = self.stores
            workspace = Workspace(
                checkout,
                stores,
                checkout.agent_dir,
                tuple(self.link),
                self.repo.root,
                self.warn,
                self.tags_at,
            )
            workspace.reset(self.base)
            full = self._copy is None
            checkout.agent_repository(refs=self.repo.branch_refs() if full else self.tags)
            yield workspace


class WorkReader(Protocol):
    """How a fresh workspace's work is read back: as a tree of gitgauge's own, and the diff
    between two such trees (`core.git.fixture.Snapshot`)."""

    def read(self, *, exclude: Sequence[str] = ()) -> str: ...

    git_dir: Path
    """gitgauge's git directory for it (blob sizes are read there)."""

    def diff(self, start: str, end: str) -> AgentDiff: ...

    def write_patch(self, start: str, end: str, dest: Path, *, limit_bytes: int) -> int | None: ...


@dataclass
class FreshWorkspace:
    """A pair's workspace for a kind that brings its own repository (`TaskKind.own_repository`):
    an empty directory of gitgauge's (`holder`, labelled for stale cleanup, removed with the
    pair) that the kind's `enter` fills. The kind then says where its agent works (`path`),
    what else the agent may write (`writable`: a repository's siblings, an answer file's
    directory), what the agent's environment adds (`env`) and how its work is read
    (`reader`; None: the agent's work is no tree, nothing to diff)."""

    holder: Path
    path: Path
    writable: tuple[Path, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    reader: WorkReader | None = None


@contextmanager
def fresh_workspace(owner_repository: Path) -> Iterator[FreshWorkspace]:
    """An empty `FreshWorkspace`, removed afterwards (whatever its kind and agent left)."""
    with deferred():
        holder = Path(tempfile.mkdtemp(prefix=FRESH_PREFIX))
        write_owner(holder, repository=owner_repository, kind="fresh")
    try:
        work = holder / "work"
        work.mkdir()
        yield FreshWorkspace(holder=holder, path=work)
    finally:
        with deferred():
            remove_tree(holder)
