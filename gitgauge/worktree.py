"""Throwaway checkouts: `git worktree add --detach` in a temporary directory outside the
repository, `worktree.link` directories symlinked in, always removed and pruned afterwards.

Each worktree lives in its own `gitgauge-wt-*` temporary directory holding an owner file (pid and
repository), so a later gitgauge command can find and remove worktrees left by a hard kill, and
only its own.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gitgauge.git import Repository

TEMP_PREFIX = "gitgauge-wt-"
OWNER_FILE = "owner.json"

Warn = Callable[[str], None]


@contextmanager
def checkout(
    repo: Repository, commit: str, *, link: Sequence[str] = (), warn: Warn
) -> Iterator[Path]:
    """Check `commit` out in a fresh detached worktree; yield its path; always remove it."""
    holder = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    owner = {"pid": os.getpid(), "repository": str(repo.root), "links": list(link)}
    (holder / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")
    path = holder / "worktree"
    try:
        repo.worktree_add(path, commit)
        link_directories(repo.root, path, link, warn=warn)
        yield path
    finally:
        remove(repo, holder)


def remove(repo: Repository, holder: Path) -> None:
    """Remove a worktree holder directory and the worktree's registration in the repository."""
    path = holder / "worktree"
    if path.exists():
        # Unlink the links first: removal must never reach into the user's real node_modules.
        owner = _read_owner(holder) or {}
        links = owner.get("links")
        for name in links if isinstance(links, list) else []:
            entry = path / str(name)
            if entry.is_symlink():
                entry.unlink()
        repo.worktree_remove(path)
    shutil.rmtree(holder, ignore_errors=True)
    repo.worktree_prune()


def link_directories(
    source_root: Path, target_root: Path, names: Sequence[str], *, warn: Warn
) -> list[str]:
    """Symlink each `worktree.link` directory of the main checkout into the worktree."""
    linked: list[str] = []
    for name in names:
        source = source_root / name
        target = target_root / name
        if not source.exists():
            warn(f"worktree.link: {name} does not exist in {source_root}; not linked")
            continue
        if target.exists() or target.is_symlink():
            warn(f"worktree.link: {name} is part of the checked-out commit; not linked")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source, target_is_directory=source.is_dir())
        linked.append(name)
    return linked


def remove_stale(repo: Repository, *, report: Warn) -> int:
    """Remove worktrees of this repository left by gitgauge processes that no longer run."""
    temp_root = Path(tempfile.gettempdir())
    removed = 0
    for holder in temp_root.glob(TEMP_PREFIX + "*"):
        owner = _read_owner(holder)
        if owner is None or owner.get("repository") != str(repo.root):
            continue
        pid = owner.get("pid")
        if isinstance(pid, int) and _alive(pid):
            continue
        remove(repo, holder)
        removed += 1
    if removed:
        report(f"removed {removed} stale gitgauge worktree(s) left by an earlier, killed run")
    return removed


def _read_owner(holder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((holder / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lay_files(repo: Repository, commit: str, paths: Sequence[str], dest: Path) -> None:
    """Make each of `paths` in `dest` exactly as it is in `commit`: written when the commit has
    it (bytes, executable bit, symlinks), deleted when it does not.

    Reads from the user's repository, so it works in workspaces whose history ends before
    `commit`.
    """
    for path in paths:
        blob = repo.read_blob(commit, path)
        target = dest / path
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if blob is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if blob.is_symlink:
            target.symlink_to(os.fsdecode(blob.data))
            continue
        target.write_bytes(blob.data)
        target.chmod(0o755 if blob.is_executable else 0o644)
