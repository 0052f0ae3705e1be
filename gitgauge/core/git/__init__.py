"""The door to git and the user's repository: GitPython for discovery and reading objects, the git
CLI (through `gitgauge.core.process`) for history streaming, diffs and worktrees. Returns
gitgauge's own small records (`Commit`, `ChangedPath`, `Blob`), never GitPython objects; the
log's and diff's output is read into them by `logparse`.

The other modules of `core/git/` are the rest of the door: gitgauge's own git directories and
checkouts (`owned`, `checkout`) and the tags they hold (`tags`), history copies (`history`),
merges (`mergetree`), patch ids of many commits in one pipeline (`patchids`), commit-history
tasks (`firstparent`, `series`, `agent_dir`, `agent_history`) and fixtures (`fixture`); those that
read the user's repository take `NO_HOOKS` from here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol, TypeVar

from gitgauge.core import process
from gitgauge.core.errors import GitError, NotAGitRepository
from gitgauge.core.git.logparse import LOG_FORMAT, nul_tokens, parse_changes, parse_log

# Imports written `name as name` are re-exports: the records `Repository.log` returns are the
# door's own, imported from here.
from gitgauge.core.git.logparse import ChangedPath as ChangedPath
from gitgauge.core.git.logparse import Commit as Commit
from gitgauge.core.git.logparse import both_sides as both_sides
from gitgauge.core.git.tags import Tag, TagCache

# Without git on PATH, GitPython raises at import time (a traceback before any command runs);
# quiet, so that `Repository` can say so in one line instead (and not in agents' environment).
_REFRESH_WAS_SET = "GIT_PYTHON_REFRESH" in os.environ
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
import git as gitpython  # noqa: E402

if not _REFRESH_WAS_SET:
    del os.environ["GIT_PYTHON_REFRESH"]

# Hooks of the user's repository must never run in gitgauge's worktrees (a post-checkout hook
# could install things, or take minutes). An empty hooks path disables them all.
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
_GITLINK_MODE = 0o160000
_Logged = TypeVar("_Logged")
"""What a `Repository.stream_log` parser reads each commit into."""


FULL_BYTES = 1 << 20
"""Less free space than this on a file system git wrote to: the likely reason it failed."""


def full_file_system(*places: Path) -> str | None:
    """What to say when git failed for want of space (git names only the file it could not
    write): which of TMPDIR (gitgauge's worktrees and history copies) and `places` is full."""
    temp = Path(tempfile.gettempdir())
    for place, name in [(temp, f"TMPDIR ({temp})"), *((p, str(p)) for p in places)]:
        try:
            found = os.statvfs(place)
        except OSError:
            continue
        if found.f_bavail * found.f_frsize < FULL_BYTES:
            elsewhere = ", or point TMPDIR at a larger file system" if place == temp else ""
            return f"No space left on device: {name} is full; free some space{elsewhere}"
    return None


def fingerprint(root: Path) -> str:
    """A stable name for a repository path that does not reveal the path."""
    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:24]


class WorktreeHost(Protocol):
    """A repository that worktrees can be added to: the user's, or an isolated history copy."""

    root: Path

    def worktree_add(self, path: Path, commit: str) -> None: ...
    def worktree_remove(self, path: Path) -> None: ...
    def worktree_prune(self) -> None: ...


@dataclass(frozen=True)
class Blob:
    mode: int
    data: bytes

    @property
    def is_symlink(self) -> bool:
        return stat.S_ISLNK(self.mode)

    @property
    def is_executable(self) -> bool:
        return bool(self.mode & 0o111)


class Repository:
    """A git work tree the user runs gitgauge in."""

    def __init__(self, start: Path) -> None:
        # GitPython keeps a persistent `git cat-file` per Repo object, which is not safe to share
        # between threads (`-j`): each thread gets its own.
        self._local = threading.local()
        if shutil.which("git") is None:
            raise GitError("git was not found on PATH: install git, or add it to PATH")
        try:
            self._local.repo = gitpython.Repo(start, search_parent_directories=True)
        except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
            raise NotAGitRepository(
                f"{start} is not inside a git repository: run gitgauge from your repository "
                "(or `git init` first)"
            ) from None
        if self._repo.bare or self._repo.working_tree_dir is None:
            raise NotAGitRepository(
                f"{start} is a bare git repository: run gitgauge in a checkout with a work tree"
            )
        self.root = Path(self._repo.working_tree_dir).resolve()
        self._tags = TagCache(self.root)

    @property
    def _repo(self) -> gitpython.Repo:
        repo = getattr(self._local, "repo", None)
        if repo is None:
            repo = self._local.repo = gitpython.Repo(self.root)
        return repo

    # -- reading ---------------------------------------------------------------------------

    def head_sha(self) -> str | None:
        """HEAD's commit, or None in a repository without commits."""
        try:
            return str(self._repo.head.commit.hexsha)
        except ValueError:
            return None

    def object_stores(self) -> tuple[Path, ...]:
        """The repository's object directory, for readers that must not open the repository
        itself (git follows its own `info/alternates`)."""
        return (Path(self._repo.common_dir).resolve() / "objects",)

    def branch_refs(self) -> list[tuple[str, str]]:
        """(ref name, sha) of every branch and tag (tags peeled to what they name is not
        needed: a ref to a tag object is fine for readers of the same objects)."""
        output = self.git(
            "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"
        )
        refs: list[tuple[str, str]] = []
        for line in output.splitlines():
            name, _, sha = line.partition(" ")
            if name and sha:
                refs.append((name, sha))
        return refs

    def tags_at(self, commit: str) -> tuple[Tag, ...]:
        """The tags in `commit`'s history (`git tag --merged`: see `core.git.tags`)."""
        return self._tags.at(commit)

    def is_shallow(self) -> bool:
        return (Path(self._repo.git_dir) / "shallow").exists() or (
            Path(self._repo.common_dir) / "shallow"
        ).exists()

    def shallow_boundary(self) -> set[str]:
        """Commits whose parents a shallow clone does not have."""
        shallow = Path(self._repo.common_dir) / "shallow"
        if not shallow.exists():
            return set()
        return {line.strip() for line in shallow.read_text().splitlines() if line.strip()}

    def recorded_parents(self, sha: str) -> tuple[str, ...]:
        """The parents a commit object names, also where a shallow clone hides them."""
        raw = self.git("cat-file", "commit", sha)
        header = raw.split("\n\n", 1)[0]
        return tuple(
            line[len("parent ") :] for line in header.splitlines() if line.startswith("parent ")
        )

    def has_commit(self, sha: str) -> bool:
        try:
            self._repo.commit(sha)
        except (ValueError, gitpython.BadName):
            return False
        return True

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether `ancestor` is `descendant` or one of its ancestors."""
        result = process.run(
            ["git", "merge-base", "--is-ancestor", ancestor, descendant], cwd=self.root
        )
        return result.exit_code == 0

    def ancestor_count(self, sha: str) -> int:
        """How many commits `sha`'s history holds (itself included)."""
        return int(self.git("rev-list", "--count", sha).strip())

    def commit_time(self, sha: str) -> int:
        """Committer time of `sha` (seconds since the epoch)."""
        return int(self._repo.commit(sha).committed_date)

    def commit_date(self, sha: str) -> str:
        """Committer date of `sha`, ISO 8601 with its own offset (`git show -s --format=%cI`)."""
        return self.git("show", "-s", "--format=%cI", sha).strip()

    def remote_url(self, name: str = "origin") -> str | None:
        """The URL of the remote `name`; None when there is none."""
        try:
            return self.git("remote", "get-url", name).strip()
        except GitError:
            return None

    def recent(self, count: int, rev: str = "HEAD") -> list[str]:
        """The last `count` commits of `rev` (`git rev-list --max-count`), newest first."""
        return self.git("rev-list", f"--max-count={count}", rev).split()

    def stage_all(self, work_tree: Path) -> None:
        """`git add --all` of everything in a work tree of this repository's (gold marking a
        merge's conflicts resolved, in the agent's workspace: its own git, hooks off)."""
        self.git("add", "--all", "--", ".", cwd=work_tree)

    def resolve(self, rev: str) -> str:
        try:
            return str(self._repo.commit(rev).hexsha)
        except (ValueError, gitpython.BadName):
            raise GitError(f"{rev!r} is not a commit of {self.root}") from None

    def read_blob(self, commit: str, path: str) -> Blob | None:
        """The file at `path` in `commit`, or None when the commit has no such file."""
        try:
            entry = self._repo.commit(commit).tree[path]
        except KeyError:
            return None
        if entry.type != "blob":  # a directory or a submodule: not a file we can lay down
            return None
        return Blob(mode=int(entry.mode), data=entry.data_stream.read())

    def is_submodule(self, commit: str, path: str) -> bool:
        """Whether `path` is a submodule pointer (a gitlink) in `commit`."""
        try:
            entry = self._repo.commit(commit).tree[path]
        except KeyError:
            return False
        return stat.S_IFMT(int(entry.mode)) == _GITLINK_MODE

    def commit_info(self, sha: str) -> Commit:
        """One commit with its changes against its first parent."""
        for commit in self.log(sha, max_count=1):
            return commit
        raise GitError(f"commit {sha} not found in {self.root}")

    def log(self, rev: str = "HEAD", *, max_count: int) -> Iterator[Commit]:
        """Stream the last `max_count` commits of `rev` with their changed paths, newest first.

        One `git log` process for the whole walk; memory stays bounded by one commit.
        """
        options = [f"--max-count={max_count}", "-z", "-M", "--name-status", "--no-color"]
        return self.stream_log(
            rev, config=("-c", "diff.renames=true"), options=options, parse=parse_log
        )

    def stream_log(
        self,
        rev: str,
        *,
        config: Sequence[str],
        options: Sequence[str],
        parse: Callable[[Iterator[str]], Iterator[_Logged]],
    ) -> Iterator[_Logged]:
        """`git <config> log <options>` of `rev` in `LOG_FORMAT`, its NUL-separated tokens
        read by `parse` as they stream (a generator: git starts when it is first read)."""
        argv = [
            "git",
            *config,
            "log",
            *options,
            # The user's config must not change what we parse: i18n.logOutputEncoding would
            # re-encode messages, log.showSignature would mix gpg output into the stream.
            "--encoding=UTF-8",
            "--no-show-signature",
            LOG_FORMAT,
            rev,
            "--",
        ]
        try:
            yield from parse(nul_tokens(process.stream(argv, cwd=self.root)))
        except process.StreamError as error:
            raise GitError(f"git log failed in {self.root}: {error.stderr_tail.strip()}") from None

    def diff_names(self, old: str, new: str) -> list[ChangedPath]:
        result = self.git("diff", "--name-status", "-z", "-M", old, new, "--")
        return list(parse_changes(iter(result.split("\0"))))

    def tree_listing(self, commit: str) -> str:
        """`git ls-tree -r -z` of a commit: every file's mode, type, object id and path."""
        return self.git("ls-tree", "-r", "-z", commit)

    def paths_at(self, commit: str) -> list[str]:
        """Every file path of `commit`'s tree."""
        listing = self.git("ls-tree", "-r", "-z", "--name-only", commit)
        return [path for path in listing.split("\0") if path]

    def patch_id(self, old: str, new: str, paths: Sequence[str]) -> str | None:
        """`git patch-id --stable` of the diff of `paths` between two commits: equal for the
        same change made on two lines of history (a cherry-pick, a backport); None when the
        paths do not differ. Two processes: for many commits, `patchids.patch_ids`."""
        diff = self.diff_text(old, new, paths, binary=True)
        if not diff:
            return None
        result = process.run(
            ["git", *NO_HOOKS, "patch-id", "--stable"],
            cwd=self.root,
            stdin_text=diff,
            tail_bytes=None,
        )
        if not result.ok:
            detail = result.stderr_tail.strip() or f"exit {result.exit_code}"
            raise GitError(f"git patch-id failed: {detail}")
        words = result.stdout_tail.split()
        return words[0] if words else None

    def diff_text(self, old: str, new: str, paths: Sequence[str], *, binary: bool = False) -> str:
        """The unified diff of `paths` between two commits (renames detected; no external diff
        or textconv drivers of the user's config; paths taken literally, never as globs).
        `binary`: binary files as git's base85 binary patches, which `git apply` applies."""
        if not paths:
            return ""
        return self.git(
            "--literal-pathspecs",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            *(["--binary"] if binary else []),
            "-M",
            old,
            new,
            "--",
            *paths,
        )

    # -- commands ----------------------------------------------------------------------------

    def git(self, *args: str, cwd: Path | None = None) -> str:
        """Run a git command in the repository (or `cwd`) and return stdout; raise on failure."""
        result = process.run(["git", *NO_HOOKS, *args], cwd=cwd or self.root, tail_bytes=None)
        if not result.ok:
            detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
            full = full_file_system(cwd or self.root)
            raise GitError(f"git {' '.join(args)} failed: {detail}" + (f"\n{full}" if full else ""))
        return result.stdout_tail

    def is_tracked(self, path: str) -> bool:
        """Whether git tracks `path` (a file, or a directory with tracked files) in the index;
        `""` is the repository's root."""
        # `:(top)` alone is the whole tree; `:(top).` matched nothing on git 2.39. Literal: a
        # directory named `a[1]` is that directory, not a glob.
        return bool(self.git("ls-files", "-z", "--", f":(top,literal){path}"))

    def checkout_state(self) -> str:
        """A digest of what an agent must never change in the user's checkout: HEAD, branches,
        tags, stash, index, and the working tree (tracked changes and untracked files)."""
        digest = hashlib.sha256()
        for args in (
            ("rev-parse", "--verify", "-q", "HEAD"),
            ("symbolic-ref", "-q", "HEAD"),
            (
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/heads",
                "refs/tags",
                "refs/stash",
            ),
            ("ls-files", "--stage"),
            ("status", "--porcelain=v1", "-z", "--untracked-files=all"),
            ("diff", "--no-ext-diff", "--binary", "HEAD"),
        ):
            # --no-optional-locks: `status` would otherwise refresh and rewrite the user's index
            # (taking index.lock), and a `git commit` of the user's at that moment would fail.
            result = process.run(
                ["git", "--no-optional-locks", *args], cwd=self.root, tail_bytes=None
            )
            digest.update(repr(args).encode())
            digest.update(str(result.exit_code).encode())
            digest.update(result.stdout_tail.encode("utf-8", "surrogateescape"))
            if args[0] == "status":  # untracked files' contents are in no git output: stat them
                for entry in result.stdout_tail.split("\0"):
                    if entry.startswith("?? "):
                        digest.update(
                            _stat_key(self.root / entry[3:]).encode("utf-8", "surrogateescape")
                        )
        return digest.hexdigest()

    def worktree_add(self, path: Path, commit: str) -> None:
        # --detach: no branch is created in the user's repository.
        self.git("worktree", "add", "--detach", "--quiet", str(path), commit)

    def worktree_remove(self, path: Path) -> None:
        # Failure is fine here: a worktree whose directory is already gone is cleaned by prune.
        process.run(
            ["git", *NO_HOOKS, "worktree", "remove", "--force", "--force", str(path)],
            cwd=self.root,
            cleanup=True,
        )

    def worktree_prune(self) -> None:
        process.run(["git", "worktree", "prune"], cwd=self.root, cleanup=True)

    def worktree_paths(self) -> list[Path]:
        output = self.git("worktree", "list", "--porcelain", "-z")
        prefix = "worktree "
        return [Path(t[len(prefix) :]) for t in output.split("\0") if t.startswith(prefix)]


def _stat_key(path: Path) -> str:
    try:
        info = path.lstat()
    except OSError:
        return f"{path}:missing"
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


@dataclass(frozen=True)
class HistoryStep:
    """One commit to write: its message and the files it writes and deletes."""

    message: str
    write: dict[str, str]
    delete: tuple[str, ...] = ()


def write_history(
    dest: Path, steps: Sequence[HistoryStep], *, author: tuple[str, str], first_at: datetime
) -> None:
    """A new repository at `dest` (existing and empty) holding `steps` on `main`, commit `n` by
    `author` at `first_at` plus `n` hours: the same SHAs on every machine, nothing read from the
    user's git identity or configuration (the demo's sample history)."""
    actor = gitpython.Actor(*author)
    repo = gitpython.Repo.init(dest)
    try:
        # Name the branch ourselves: init.defaultBranch may say otherwise, and old git
        # has no --initial-branch.
        repo.git.symbolic_ref("HEAD", "refs/heads/main")
        with repo.config_writer() as config:
            # A global i18n.commitEncoding would add an encoding header and change SHAs.
            config.set_value("i18n", "commitEncoding", "UTF-8")
        for hours, step in enumerate(steps):
            if step.delete:
                repo.index.remove(list(step.delete), working_tree=True)
            for relative, text in step.write.items():
                path = dest / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                # Bytes, not text mode: LF endings on every platform keep SHAs stable.
                path.write_bytes(text.encode("utf-8"))
            if step.write:
                repo.index.add(list(step.write))
            when = first_at + timedelta(hours=hours)
            repo.index.commit(
                step.message,
                author=actor,
                committer=actor,
                author_date=when,
                commit_date=when,
                # Hooks from a global core.hooksPath must not run or edit the message.
                skip_hooks=True,
            )
    finally:
        repo.close()
