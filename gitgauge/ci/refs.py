"""Which harness files differ between two refs, and each side's files as its ref holds them.

A harness path is a file (`CLAUDE.md`) or, with a trailing `/`, a directory (`.claude/`); the
agent config's `harnessFiles` names them (default `DEFAULT_HARNESS`). Everything is read through
the repository's git door (`core/git`), from the commits, never from the working tree.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core.errors import ConfigError, GitError, UsageError
from gitgauge.core.git import Repository

DEFAULT_HARNESS = ("CLAUDE.md", "AGENTS.md", ".claude/")
"""The harness paths when an agent config names none."""


@dataclass(frozen=True)
class HarnessPath:
    path: str
    """Relative, `/`-separated, without the trailing `/`."""
    directory: bool


@dataclass(frozen=True)
class HarnessChange:
    """The harness paths whose content differs between `base` and `head` (full shas)."""

    base: str
    head: str
    changed: tuple[HarnessPath, ...]
    files: tuple[str, ...]
    """Every changed file under them, as git names it."""


def harness_paths(names: Sequence[str] | None, *, source: str) -> tuple[HarnessPath, ...]:
    """The config's `harnessFiles` checked (relative, inside the repository, no `.git`)."""
    found: list[HarnessPath] = []
    for name in DEFAULT_HARNESS if names is None else names:
        directory = name.endswith("/")
        pure = PurePosixPath(name.rstrip("/"))
        if (
            not name.strip("/")
            or pure.is_absolute()
            or ".." in pure.parts
            or ".git" in pure.parts
            or "\\" in name
        ):
            raise ConfigError(
                f"{source}: harnessFiles: {name!r} is not a path inside the repository "
                "(relative, no `..` or `.git`; a trailing / names a directory)"
            )
        found.append(HarnessPath(pure.as_posix(), directory))
    if not found:
        raise ConfigError(f"{source}: harnessFiles is empty: name at least one path, or drop it")
    return tuple(found)


def resolve_ref(repo: Repository, ref: str, *, flag: str) -> str:
    try:
        return repo.resolve(ref)
    except GitError:
        raise UsageError(
            f"{flag} {ref!r} is not a commit of this repository (fetch it first: "
            "actions/checkout needs `fetch-depth: 0`)"
        ) from None


def changed_harness(
    repo: Repository, base: str, head: str, paths: Sequence[HarnessPath]
) -> HarnessChange:
    """The harness paths whose files differ between the two commits."""
    changed_files: list[str] = []
    for change in repo.diff_names(base, head):
        for name in (change.path, change.old_path):
            if name is not None and any(_under(name, path) for path in paths):
                changed_files.append(name)
    changed = tuple(path for path in paths if any(_under(name, path) for name in changed_files))
    return HarnessChange(base, head, changed, tuple(dict.fromkeys(changed_files)))


def _under(name: str, path: HarnessPath) -> bool:
    if path.directory:
        return name.startswith(path.path + "/")
    return name == path.path


def write_side(repo: Repository, commit: str, path: HarnessPath, dest: Path) -> bool:
    """The file or directory `path` as `commit` holds it, written to `dest` (made afresh);
    False when the commit has none."""
    if dest.exists() or dest.is_symlink():
        shutil.rmtree(dest) if dest.is_dir() and not dest.is_symlink() else dest.unlink()
    if not path.directory:
        blob = repo.read_blob(commit, path.path)
        if blob is None:
            return False
        _write(dest, blob.data, executable=blob.is_executable)
        return True
    inside = [name for name in repo.paths_at(commit) if name.startswith(path.path + "/")]
    if not inside:
        return False
    dest.mkdir(parents=True)
    for name in inside:
        blob = repo.read_blob(commit, name)
        if blob is None:  # a submodule: nothing to lay down
            continue
        # A symlink is laid as its target's text, as `files:` copies a link as content.
        _write(dest / name[len(path.path) + 1 :], blob.data, executable=blob.is_executable)
    return True


def _write(dest: Path, data: bytes, *, executable: bool) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    if executable:
        dest.chmod(0o755)
