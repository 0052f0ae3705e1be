"""The door to git's merge machinery, shared by mining (which merges conflict when re-made?) and
running (a workspace left in the conflicted state a developer faces).

Every merge runs with the user's hooks, rerere, global and system configuration (and so their
global merge drivers and conflict style) off, and a fixed conflict style, so the conflict an
agent sees is the one git makes by default, the same on every machine. Merge drivers defined in
the repository's own configuration are replaced one by one by git's text merge
(`git merge-file`), so an attribute that names one merges as if it named none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS

CONFLICT_MARKER = b"<<<<<<< "
"""The opening line of a conflict region (git's default `merge` conflict style)."""
_MARKER_PREFIXES = (b"<<<<<<< ", b">>>>>>> ")
_SUPPORTED_KINDS = frozenset({"contents", "modify/delete"})


def merge_env() -> dict[str, str]:
    """A clean environment that reads no global or system git configuration. `git merge` wants
    an identity even with `--no-commit`; this one is never recorded in a commit."""
    return process.clean_env(
        extra={
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_COMMITTER_NAME": "gitgauge",
            "GIT_COMMITTER_EMAIL": "gitgauge@localhost",
            "GIT_AUTHOR_NAME": "gitgauge",
            "GIT_AUTHOR_EMAIL": "gitgauge@localhost",
        }
    )


def merge_config(root: Path, *, labels: tuple[str, str] = ("HEAD", "MERGE_HEAD")) -> list[str]:
    """`-c` options for a merge in `root`: no hooks, no rerere, the default conflict style, and
    every merge driver of the repository's own configuration replaced by git's text merge
    (`git merge-file`, markers labelled `labels` as `git merge` labels them)."""
    options = [*NO_HOOKS, "-c", "rerere.enabled=false", "-c", "merge.conflictStyle=merge"]
    listed = process.run(
        ["git", "config", "--get-regexp", r"^merge\..*\.driver$"],
        cwd=root,
        env=merge_env(),
        tail_bytes=None,
    )
    ours, theirs = labels
    text_merge = f"git merge-file --marker-size=%L -L {ours} -L base -L {theirs} %A %O %B"
    for line in listed.stdout_tail.splitlines():
        key = line.split(" ", 1)[0]
        options += ["-c", f"{key}={text_merge}"]
    return options


MIN_GIT_VERSION = (2, 38)
"""`git merge-tree --write-tree` came with git 2.38."""


def git_version(root: Path) -> str:
    """`git version 2.43.0` as git prints it (`gitgauge doctor`), or what went wrong."""
    result = process.run(["git", "--version"], cwd=root, tail_bytes=None)
    said = result.stdout_tail.strip() or result.start_error or result.stderr_tail.strip()
    return said.splitlines()[0] if said else f"git --version: exit {result.exit_code}"


def check_git_version(root: Path) -> None:
    """Raise when git is too old to re-merge without a work tree."""
    result = process.run(["git", "--version"], cwd=root, tail_bytes=None)
    words = result.stdout_tail.split()
    numbers = words[2].split(".")[:2] if len(words) > 2 else []
    try:
        found = tuple(int(number) for number in numbers)
    except ValueError:
        return  # an unusual version string: let git itself say what it cannot do
    if found < MIN_GIT_VERSION:
        raise GitError(
            f"mining merge tasks needs git 2.38 or later (`git merge-tree --write-tree`); "
            f"this is {' '.join(words[2:3])}: upgrade git, or mine without --merges"
        )


@dataclass(frozen=True)
class ReMerge:
    """What re-merging two commits gives, without touching any work tree or ref."""

    tree: str | None
    """The merged tree (conflicted files hold markers); None when git refused to merge."""
    conflicted: tuple[str, ...] = ()
    """Paths left with unmerged stages."""
    kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Conflict types git reported per path (`contents`, `modify/delete`, `binary`, ...)."""
    refused: str | None = None
    """Why git refused (unrelated histories, a missing object), in its own words."""

    @property
    def unsupported(self) -> str | None:
        """The first conflict a faithful task cannot be made of, as a skip reason."""
        for path in self.conflicted:
            for kind in self.kinds.get(path, ()):
                if kind == "binary":
                    return f"binary file in conflict ({path})"
                if kind not in _SUPPORTED_KINDS:
                    return f"{kind} conflict ({path})"
        return None


def re_merge(root: Path, base: str, other: str) -> ReMerge:
    """`git merge-tree --write-tree base other` in the repository at `root`."""
    result = process.run(
        [
            "git",
            *merge_config(root, labels=(base, other)),
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            "--messages",
            base,
            other,
        ],
        cwd=root,
        env=merge_env(),
        tail_bytes=None,
    )
    if result.exit_code not in (0, 1):
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        return ReMerge(tree=None, refused=detail.splitlines()[-1] if detail else "failed")
    tokens = result.stdout_tail.split("\0")
    tree = tokens[0]
    position = 1
    conflicted: list[str] = []
    if result.exit_code == 1:
        while position < len(tokens) and tokens[position]:
            conflicted.append(tokens[position])
            position += 1
        position += 1  # the empty token that ends the path list
    kinds: dict[str, list[str]] = {}
    # Messages: <count> NUL <path>... NUL <type> NUL <message> NUL, repeated.
    while position < len(tokens) and tokens[position].strip().isdigit():
        count = int(tokens[position])
        paths = tokens[position + 1 : position + 1 + count]
        kind = tokens[position + 1 + count]
        position += count + 3
        if kind.startswith("CONFLICT (") and kind.endswith(")"):
            for path in paths:
                kinds.setdefault(path, []).append(kind[len("CONFLICT (") : -1])
    return ReMerge(
        tree=tree,
        conflicted=tuple(conflicted),
        kinds={path: tuple(found) for path, found in kinds.items()},
    )


def read_text(root: Path, treeish: str, path: str) -> bytes | None:
    """The blob at `path` in `treeish` (a commit or tree id) as UTF-8 (undecodable bytes
    replaced: enough to count conflict markers), or None when there is none."""
    result = process.run(
        ["git", "cat-file", "blob", f"{treeish}:{path}"], cwd=root, tail_bytes=None
    )
    if not result.ok:
        return None
    return result.stdout_tail.encode("utf-8")


def count_regions(data: bytes | None) -> int:
    """Conflict regions in a file's content."""
    if data is None:
        return 0
    return sum(1 for line in data.splitlines() if line.startswith(CONFLICT_MARKER))


def has_markers(data: bytes) -> bool:
    """Whether a file still holds the opening or closing line of a conflict region."""
    return any(line.startswith(_MARKER_PREFIXES) for line in data.splitlines())


def tree_of(root: Path, commit: str) -> str:
    result = process.run(["git", "rev-parse", f"{commit}^{{tree}}"], cwd=root, tail_bytes=None)
    if not result.ok:
        raise GitError(f"commit {commit[:12]} is not in {root}: {result.stderr_tail.strip()}")
    return result.stdout_tail.strip()


@dataclass(frozen=True)
class MergeStart:
    """The conflicted state a workspace starts in."""

    unmerged: tuple[str, ...]
    """Paths with unmerged index entries after `git merge`."""
    automerged_tree: str
    """The tree git's merge writes, conflicted files with their markers: the agent's changes
    are measured against it."""


def merge_into(
    workspace: Path, base: str, other: str, *, exclude: Sequence[str] = ()
) -> MergeStart:
    """`git merge --no-ff --no-commit other` in a checkout of `base`: the conflicts stay in the
    files, the index holds the unmerged stages, MERGE_HEAD is set. `exclude`: paths (linked
    directories) kept out of the starting tree."""
    merged = process.run(
        [
            "git",
            *merge_config(workspace, labels=("HEAD", other)),
            "merge",
            "--no-ff",
            "--no-commit",
            "--quiet",
            other,
        ],
        cwd=workspace,
        env=merge_env(),
        tail_bytes=None,
    )
    if merged.exit_code not in (0, 1) or not (workspace / ".git").exists():
        raise GitError(
            f"could not merge {other[:12]} into {base[:12]}: {merged.stderr_tail.strip()}"
        )
    return MergeStart(
        unmerged=unmerged_paths(workspace), automerged_tree=_tree_of_files(workspace, exclude)
    )


def _tree_of_files(workspace: Path, exclude: Sequence[str]) -> str:
    """The tree of the work tree's files as they are (markers and all), written through a
    temporary copy of the index so the real one keeps its unmerged stages."""
    index = _git_out(workspace, "rev-parse", "--git-path", "index")
    real = (workspace / index).resolve()
    temporary = real.with_name(real.name + ".gitgauge-start")
    try:
        shutil.copyfile(real, temporary)
        env = {**merge_env(), "GIT_INDEX_FILE": str(temporary)}
        pathspecs = [".", *(f":(exclude,literal){name}" for name in exclude)]
        _git_out(workspace, "add", "--all", "--", *pathspecs, env=env)
        return _git_out(workspace, "write-tree", env=env)
    finally:
        temporary.unlink(missing_ok=True)


def _git_out(workspace: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = process.run(
        ["git", *NO_HOOKS, *args], cwd=workspace, env=env or merge_env(), tail_bytes=None
    )
    if not result.ok:
        raise GitError(
            f"git {' '.join(args[:2])} failed in a merge workspace: {result.stderr_tail.strip()}"
        )
    return result.stdout_tail.strip()


def unmerged_paths(workspace: Path) -> tuple[str, ...]:
    listed = process.run(["git", "ls-files", "-u", "-z"], cwd=workspace, tail_bytes=None)
    paths: list[str] = []
    for entry in listed.stdout_tail.split("\0"):
        if "\t" in entry:
            path = entry.split("\t", 1)[1]
            if path not in paths:
                paths.append(path)
    return tuple(paths)


def write_tree(workspace: Path) -> str | None:
    """The tree of the workspace's index, or None while paths are unmerged."""
    result = process.run(["git", "write-tree"], cwd=workspace, tail_bytes=None)
    return result.stdout_tail.strip() if result.ok else None
