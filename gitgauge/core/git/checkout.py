"""Checkouts that gitgauge owns: a work tree that git reads and resets only through a git
directory, an index and a configuration of gitgauge's own.

An agent works in a work tree and may leave anything in it: a `.git` file pointing at a git
directory of its own (whose config names an fsmonitor, a filter, hooks, `includeIf`s,
alternates), index flags (`--skip-worktree`), ignore rules, caches. None of it decides what git
does for gitgauge: every git command here runs with an explicit `GIT_DIR`, `GIT_WORK_TREE` and
`GIT_INDEX_FILE` that gitgauge made, no global or system configuration, no hooks, no fsmonitor,
no filters or text conversion, and objects read from stores gitgauge names (`objects/info/
alternates` written from gitgauge's records). Nested repositories in the work tree are never
entered.

A `Checkout` is reset to a commit in place (`reset`): git rewrites every file whose content or
stat data differs from gitgauge's index (a file changed behind a forged mtime still has a new
ctime), `git clean -ffdx` removes everything untracked or ignored, and what git never touches
(`.git`s below the root, FIFOs and sockets) is swept away first; when git cannot finish, the
work tree is rebuilt from scratch. That is what lets a checkout an agent (or an agent's code, in
a test run) wrote into be used again, fresh, and a pool of checkouts (one per parallel slot)
serve a whole `mine` or `run` without a `git worktree add` per candidate or pair.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import full_file_system
from gitgauge.core.interrupt import deferred
from gitgauge.core.worktree import Warn, link_directories, write_owner

CHECKOUT_PREFIX = "gitgauge-co-"
OWNED_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "checkout.workers=0",  # files written in parallel (one worker per core)
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.excludesFile=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.symlinks=true",
    "-c", "core.fileMode=true",
    "-c", "core.trustctime=true",
    "-c", "core.checkStat=default",
    "-c", "core.sparseCheckout=false",
    "-c", "core.splitIndex=false",
    "-c", "core.quotePath=false",
    "-c", "index.sparse=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "diff.ignoreSubmodules=all",
    "-c", "submodule.recurse=false",
    "-c", "color.ui=never",
    "-c", "advice.addEmbeddedRepo=false",
    "-c", "protocol.allow=never",
)  # fmt: skip
"""Configuration for every git command gitgauge runs over a work tree it did not write itself:
command-line settings outrank every file, and they reach git's own child processes too."""
OWNED_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol !diff !merge\n"
"""`$GIT_DIR/info/attributes`, which outranks every `.gitattributes` in the work tree: bytes are
read and written as they are (no line-ending or encoding conversion, no filter, no `$Id$`), and
binary detection is git's own (a `-diff` in the work tree would hide a file's lines)."""
BYTECODE_EXCLUDES = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.py[co]")
"""Compiled bytecode never crosses from a work tree into a patch: an unchecked-hash `.pyc` runs
in place of its source, which the patch would not show."""


def git_env(git_dir: Path, work_tree: Path | None, index: Path | None) -> dict[str, str]:
    """An environment in which git reads no configuration but `git_dir`'s and the command
    line's, and finds its repository, work tree and index only where gitgauge says."""
    extra = {
        "GIT_DIR": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "gitgauge",
        "GIT_AUTHOR_EMAIL": "gitgauge@localhost",
        "GIT_COMMITTER_NAME": "gitgauge",
        "GIT_COMMITTER_EMAIL": "gitgauge@localhost",
    }
    if work_tree is not None:
        extra["GIT_WORK_TREE"] = str(work_tree)
    if index is not None:
        extra["GIT_INDEX_FILE"] = str(index)
    return process.clean_env(cwd=work_tree, extra=extra)


def owned_git(
    git_dir: Path,
    *args: str,
    work_tree: Path | None = None,
    index: Path | None = None,
    stdin_text: str | None = None,
    ok_codes: Sequence[int] = (0,),
    timeout_seconds: float | None = None,
    extra_env: dict[str, str] | None = None,
) -> str:
    """Run git on gitgauge's own `git_dir` (and `work_tree`); stdout, or `GitError`."""
    result = process.run(
        ["git", *OWNED_CONFIG, *args],
        cwd=work_tree or git_dir,
        env={**git_env(git_dir, work_tree, index), **(extra_env or {})},
        stdin_text=stdin_text,
        tail_bytes=None,
        timeout_seconds=timeout_seconds,
    )
    # `git add` with an exclusion naming a path the work tree's .gitignore ignores stages
    # everything else, then says so and exits 1: what the agent ignored is not its patch anyway.
    if (
        result.exit_code == 1
        and args[:1] == ("add",)
        and "ignored by one of your .gitignore files" in result.stderr_tail
        and "fatal:" not in result.stderr_tail
    ):
        return result.stdout_tail
    if result.exit_code not in ok_codes or result.timed_out:
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        full = full_file_system(git_dir)
        raise GitError(f"git {' '.join(args[:2])} failed: {detail}" + (f"\n{full}" if full else ""))
    return result.stdout_tail


def init_git_dir(git_dir: Path, *, stores: Sequence[Path], head: str | None = None) -> None:
    """A new git directory of gitgauge's own that reads its objects from `stores` (and writes
    new ones into its own `objects/`), written directly rather than by `git init`: no template
    (the user's `init.templateDir` may hold hooks), gitgauge's attributes, a work tree beside it
    rather than a bare repository, HEAD at `head` (detached) or an unborn `main`."""
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
        (git_dir / folder).mkdir(parents=True, exist_ok=True)
    (git_dir / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
        encoding="utf-8",
    )
    (git_dir / "HEAD").write_text(f"{head}\n" if head else "ref: refs/heads/main\n")
    (git_dir / "info" / "attributes").write_text(OWNED_ATTRIBUTES, encoding="utf-8")
    set_stores(git_dir, stores)


def set_stores(git_dir: Path, stores: Sequence[Path]) -> None:
    """Point `git_dir` at the object stores it reads (written by gitgauge, from its records)."""
    info = git_dir / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{alternates_line(store)}\n" for store in stores)
    (info / "alternates").write_text(lines, encoding="utf-8", errors="surrogateescape")


def edit_tree(
    git_dir: Path,
    tree: str,
    *,
    scratch: Path,
    remove: Sequence[str] = (),
    put: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """`tree` with the files `remove` taken out and `put` (path -> mode, object id) set, as a
    new tree of `git_dir`, made in a scratch index (`scratch`, a directory of gitgauge's): no
    work tree is read or written."""
    if not remove and not put:
        return tree
    index = scratch / "edit-tree.index"
    zero = "0" * len(tree)
    records = [f"0 {zero}\t{path}" for path in remove]
    records += [f"{mode} {object_id}\t{path}" for path, (mode, object_id) in (put or {}).items()]
    try:
        owned_git(git_dir, "read-tree", tree, index=index)
        owned_git(
            git_dir,
            "update-index",
            "-z",
            "--index-info",
            index=index,
            stdin_text="".join(f"{record}\0" for record in records),
        )
        return owned_git(git_dir, "write-tree", index=index).strip()
    finally:
        index.unlink(missing_ok=True)


def read_blob(git_dir: Path, object_id: str, *, scratch: Path) -> bytes:
    """The bytes of a blob `git_dir` reads (through a file in `scratch`: a blob may be big)."""
    out = scratch / f"blob-{threading.get_ident()}.out"
    try:
        result = process.run(
            ["git", *OWNED_CONFIG, "cat-file", "blob", object_id],
            cwd=git_dir,
            env=git_env(git_dir, None, None),
            stdout_path=out,
        )
        if not result.ok:
            raise GitError(f"git cat-file blob {object_id[:12]} failed: {result.stderr_tail}")
        return out.read_bytes()
    finally:
        out.unlink(missing_ok=True)


def alternates_line(store: Path) -> str:
    """One line of `objects/info/alternates`: git reads a line that starts with `"` as a
    C-quoted path, so a store whose path holds a newline, a quote or a backslash (or starts
    with one) is written quoted, and every other as it is."""
    text = os.fsdecode(store)
    if not any(char in text for char in '\n"\\') and not text.startswith((" ", "#")):
        return text
    return c_quote(text)


def alternates_variable(stores: Sequence[Path]) -> str:
    """`GIT_ALTERNATE_OBJECT_DIRECTORIES` naming `stores`: `:`-separated, and an entry that
    holds a `:` (or anything `alternates_line` quotes) C-quoted, which git reads the same way."""
    entries = []
    for store in stores:
        line = alternates_line(store)
        entries.append(c_quote(os.fsdecode(store)) if ":" in line and line[:1] != '"' else line)
    return os.pathsep.join(entries)


def c_quote(text: str) -> str:
    """`text` as git's C-style quoting writes it (`"a\\nb"`); non-ASCII bytes as octal."""
    out = ['"']
    for byte in os.fsencode(text):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


@dataclass(frozen=True)
class TreeChange:
    status: str
    """A (added), M, D or T against the tree the agent started from; a rename is a deletion
    plus an addition."""
    path: str
    object_id: str = ""
    """The blob the agent's tree has at `path` (all zeros for a deletion)."""


@dataclass(frozen=True)
class AgentDiff:
    """The agent's tree against the tree it started from (its patch is written apart, to a
    file: `write_patch`, so a huge one is never held in memory)."""

    changes: tuple[TreeChange, ...]
    numstat: str
    """`--numstat -z` records (renames detected)."""


DIFF_OPTIONS = ("--find-renames", "--no-ext-diff", "--no-textconv", "--no-color")


def diff_records(
    git_dir: Path, *revisions: str, work_tree: Path | None, index: Path | None
) -> AgentDiff:
    """The changes and line counts of `git diff REVISIONS` (no patch: a few bytes per file)."""
    output = owned_git(
        git_dir,
        "diff", "--raw", "--no-abbrev", "--numstat", "-z", *DIFF_OPTIONS, *revisions,
        work_tree=work_tree,
        index=index,
    )  # fmt: skip
    raw, numstat, _ = _split_diff(output)
    return AgentDiff(changes=tuple(raw), numstat=numstat)


def blob_sizes(git_dir: Path, object_ids: Sequence[str]) -> dict[str, int]:
    """object id -> size in bytes, of the ids `git_dir` has (one `cat-file --batch-check`)."""
    wanted = [object_id for object_id in object_ids if object_id.strip("0")]
    if not wanted:
        return {}
    listed = owned_git(
        git_dir,
        "cat-file",
        "--batch-check=%(objectname) %(objectsize)",
        stdin_text="".join(f"{object_id}\n" for object_id in wanted),
    )
    sizes: dict[str, int] = {}
    for line in listed.splitlines():
        name, _, size = line.partition(" ")
        if size.isdigit():
            sizes[name] = int(size)
    return sizes


def write_patch(
    git_dir: Path,
    *revisions: str,
    work_tree: Path | None,
    index: Path | None,
    dest: Path,
    limit_bytes: int,
) -> int | None:
    """Write the patch of `git diff REVISIONS` (one `git apply` accepts, binary too) to `dest`,
    streamed by git into the file; its size, or None when it passed `limit_bytes` (then
    nothing is left at `dest`)."""
    partial = dest.with_name(f".{dest.name}.partial")
    try:
        result = process.run(
            ["git", *OWNED_CONFIG, "diff", "-p", "--binary", *DIFF_OPTIONS, *revisions],
            cwd=work_tree or git_dir,
            # No opportunistic index refresh: the size limit holds for every file git writes.
            env={**git_env(git_dir, work_tree, index), "GIT_OPTIONAL_LOCKS": "0"},
            stdout_path=partial,
            tail_bytes=0,
            stdout_limit_bytes=limit_bytes,
        )
        if result.output_exceeded:
            return None
        if not result.ok:
            detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
            raise GitError(f"git diff failed: {detail}")
        size = partial.stat().st_size
        if size > limit_bytes:
            return None
        os.replace(partial, dest)
        return size
    finally:
        partial.unlink(missing_ok=True)


class Checkout:
    """A work tree (`path`) and gitgauge's git directory for it, in one temporary holder.

    `reset` makes the work tree exactly a commit; `agent_repository` gives an agent a fresh git
    directory of its own over that state; `read_agent_tree` stages what the work tree holds into
    gitgauge's own index, whatever the agent did to its git. The tree graded is then laid into
    the checkout reset again (`reset`, then `lay_tree`): nothing the agent left but that tree
    reaches the grader.
    """

    def __init__(self, holder: Path) -> None:
        self.holder = holder
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
    def create(cls, *, owner_repository: Path) -> Checkout:
        with deferred():
            holder = Path(tempfile.mkdtemp(prefix=CHECKOUT_PREFIX))
            write_owner(holder, repository=owner_repository, kind="checkout")
        checkout = cls(holder)
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
        warn: Warn,
    ) -> None:
        """Make the work tree exactly `commit` (objects from `stores`), `link` directories of
        `link_from` linked in. What the last occupant left (files, a replaced `.git`, `.git`s
        deeper down, which git never cleans) goes; when git cannot remove it (a file made
        undeletable), the work tree is rebuilt from scratch."""
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
        commit, the index as gitgauge's, objects read from the same stores, `refs`), and the
        work tree's `.git` pointing at it. The agent may do anything to it: gitgauge never
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


def _split_diff(output: str) -> tuple[list[TreeChange], str, str]:
    """Split `git diff --raw --numstat -p -z`: raw records (`:modes ids status NUL path NUL`, a
    rename with two paths), numstat records, an empty record, then the patch."""
    marker = output.find("\0\0diff --git ")
    head, patch = (output[: marker + 1], output[marker + 2 :]) if marker != -1 else (output, "")
    tokens = head.split("\0")
    changes: list[TreeChange] = []
    position = 0
    while position < len(tokens) and tokens[position].startswith(":"):
        fields = tokens[position].split()
        status, object_id = fields[-1][0], fields[3] if len(fields) > 3 else ""
        if status in "RC":
            old, new = tokens[position + 1], tokens[position + 2]
            if status == "R":
                changes.append(TreeChange(status="D", path=old))
            changes.append(TreeChange(status="A", path=new, object_id=object_id))
            position += 3
        else:
            changes.append(TreeChange(status, tokens[position + 1], object_id))
            position += 2
    numstat = "\0".join(tokens[position:])
    return changes, numstat, patch


def parse_tree_listing(listing: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) from `git ls-tree -r -z` (`mode type id\tpath`)."""
    entries: dict[str, tuple[str, str]] = {}
    for record in listing.split("\0"):
        if "\t" not in record:
            continue
        meta, path = record.split("\t", 1)
        fields = meta.split()
        entries[path] = (fields[0], fields[2])
    return entries


@dataclass(frozen=True)
class MergeState:
    """What an agent's git directory says of a merge, read from its files as data."""

    in_progress: bool
    """MERGE_HEAD is there."""
    head: str | None
    """The commit HEAD names (detached, or through a branch), when it names one."""
    unmerged_index: Path | None
    """A copy of the agent's index (to list its unmerged paths), when it is a plain file."""


def read_merge_state(agent_dir: Path, copy_to: Path) -> MergeState:
    """MERGE_HEAD, HEAD and the index of an agent's git directory, read as plain files (never
    followed through a symlink, never through git's own discovery or configuration)."""
    in_progress = _plain_file(agent_dir / "MERGE_HEAD") is not None
    head_text = (_plain_file(agent_dir / "HEAD") or b"").decode("utf-8", "replace").strip()
    head: str | None = None
    if head_text.startswith("ref: "):
        name = head_text.removeprefix("ref: ").strip()
        if PurePosixPath(name).parts[:1] == ("refs",) and ".." not in PurePosixPath(name).parts:
            loose = _plain_file(agent_dir / name)
            if loose is not None:
                head = loose.decode("ascii", "replace").strip()
            else:
                packed = _plain_file(agent_dir / "packed-refs") or b""
                for line in packed.decode("utf-8", "replace").splitlines():
                    sha, _, ref = line.partition(" ")
                    if ref == name:
                        head = sha
    elif head_text:
        head = head_text
    if head is not None and not (len(head) == 40 and all(c in "0123456789abcdef" for c in head)):
        head = None
    index = _plain_file(agent_dir / "index")
    copied: Path | None = None
    if index is not None:
        copy_to.write_bytes(index)
        copied = copy_to
    return MergeState(in_progress=in_progress, head=head, unmerged_index=copied)


def _plain_file(path: Path) -> bytes | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


class CheckoutPool:
    """One `Checkout` per parallel slot, reused by every candidate or pair of that slot and
    removed together at the end (`with CheckoutPool(...) as pool:`)."""

    def __init__(self, *, owner_repository: Path) -> None:
        self.owner_repository = owner_repository
        self._lock = threading.Lock()
        self._free: dict[int, Checkout] = {}
        self._all: list[Checkout] = []

    @contextmanager
    def slot(self, slot: int) -> Iterator[Checkout]:
        with self._lock:
            checkout = self._free.pop(slot, None)
        if checkout is None:
            checkout = Checkout.create(owner_repository=self.owner_repository)
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
