"""What gitgauge's temporary directories share: owner files (pid and repository, by fingerprint),
so a later command removes what a hard-killed one left, and only its own; `worktree.link`
directories symlinked into a checkout; files laid from a commit; warnings said once.

gitgauge's checkouts are `core.checkout`'s; `gitgauge-wt-*` worktrees registered in the user's
repository were made by earlier gitgauge versions; `remove_stale` still removes them.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from gitgauge.core import links
from gitgauge.core.git import Repository, WorktreeHost, fingerprint
from gitgauge.core.interrupt import deferred

TEMP_PREFIX = "gitgauge-wt-"
OWNER_FILE = "owner.json"

Warn = Callable[[str], None]

# git deletes `$GIT_DIR/worktrees/` when its last worktree is removed or pruned; a `worktree add`
# running at that moment in another thread fails ("could not create directory of
# .git/worktrees/..."). gitgauge's own add / remove / prune of one repository therefore take turns
# (each is milliseconds; the test runs inside the worktrees stay parallel).
_admin_locks: dict[str, threading.Lock] = {}
_admin_locks_guard = threading.Lock()


def admin_lock(host: WorktreeHost) -> threading.Lock:
    """The lock that serializes worktree administration of `host` within this process."""
    key = os.path.realpath(host.root)
    with _admin_locks_guard:
        return _admin_locks.setdefault(key, threading.Lock())


def warn_once(warn: Warn) -> Warn:
    """`warn`, saying each distinct message once: a missing `worktree.link` directory would
    otherwise be reported again for every worktree of a mine or a run."""
    said: set[str] = set()
    lock = threading.Lock()  # verification and runs may use several threads

    def say_once(message: str) -> None:
        with lock:
            if message in said:
                return
            said.add(message)
        warn(message)

    return say_once


def worktree_path(holder: Path) -> Path:
    """The worktree inside its holder. Named after the holder, not a fixed name: git names a
    worktree's admin directory after its base name, and concurrent `git worktree add`s of one
    name race for `.git/worktrees/<name>`."""
    return holder / ("w" + holder.name.removeprefix(TEMP_PREFIX))


def remove(repo: WorktreeHost, holder: Path) -> None:
    """Remove a worktree holder directory and the worktree's registration in the repository.

    A second Ctrl-C waits until this is done: a half-removed worktree would stay registered.
    """
    with deferred():
        _remove(repo, holder)


def _remove(repo: WorktreeHost, holder: Path) -> None:
    path = worktree_path(holder)
    removed = False
    if path.exists():
        # Unlink the links first: removal must never reach into the user's real node_modules.
        owner = _read_owner(holder) or {}
        links = owner.get("links")
        for name in links if isinstance(links, list) else []:
            entry = path / str(name)
            if entry.is_symlink():
                entry.unlink()
        # Delete the checked-out files first, outside the lock: on a large tree that is most of
        # the work of `worktree remove`, and it needs no turn-taking.
        _clear_except_git(path)
        with admin_lock(repo):
            repo.worktree_remove(path)
        removed = not path.exists()
    shutil.rmtree(holder, ignore_errors=True)
    # Prune only when `worktree remove` did not do the job (the directory was already gone, or
    # removal failed): a prune per worktree is a measurable cost when mining many candidates.
    if not removed:
        with admin_lock(repo):
            repo.worktree_prune()


def _clear_except_git(path: Path) -> None:
    """Best effort: whatever stays (an agent may have made files undeletable) is left to
    `worktree remove --force --force` and the holder's removal."""
    try:
        entries = list(path.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git":
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        except OSError:
            pass


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
        # Entries leading back into the checkout (workspace packages) lead into this worktree.
        if not links.link_into(source_root, target_root, name):
            target.symlink_to(source, target_is_directory=source.is_dir())
        linked.append(name)
    return linked


def remove_stale(repo: Repository, *, report: Warn) -> int:
    """Remove what gitgauge processes that no longer run left for this repository: worktrees
    (and their registration in the repository) and isolated history copies."""
    temp_root = Path(tempfile.gettempdir())
    ours = fingerprint(repo.root)
    removed = 0
    for holder in sorted(temp_root.glob("gitgauge-*")):
        owner = _read_owner(holder)
        if owner is None or owner.get("repository") != ours:
            continue
        pid = owner.get("pid")
        if isinstance(pid, int) and _alive(pid):
            continue
        if owner.get("host") == ours:
            remove(repo, holder)
        else:  # a worktree of an isolated history copy, or the copy itself: nothing registered
            with deferred():
                shutil.rmtree(holder, ignore_errors=True)
        removed += 1
    if removed:
        report(f"removed {removed} stale gitgauge temporary director(ies) left by a killed run")
    return removed


def write_owner(holder: Path, *, repository: Path, kind: str) -> None:
    """Label a gitgauge temporary directory that is not a worktree (for stale cleanup)."""
    owner = {"pid": os.getpid(), "host": kind, "repository": fingerprint(repository)}
    (holder / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")


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
    `commit`. A submodule pointer is left alone: worktrees have no submodule checkouts, and
    deleting the empty directory that stands for one would show up as a change.
    """
    for path in paths:
        if repo.is_submodule(commit, path):
            continue
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
