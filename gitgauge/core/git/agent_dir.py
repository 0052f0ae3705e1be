"""An agent's git directory read as data, never run: HEAD, the ref it names, a merge's
MERGE_HEAD and index, the in-progress markers, and its object files copied into a directory of
gitgauge's. Files are opened as plain files (never followed through a symlink, never through
git's own discovery or configuration), so nothing the agent wrote there (a config, hooks,
alternates, a symlinked ref) decides what gitgauge reads.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_OBJECT_BYTES = 2 * 1024**3
"""An agent's object files past this are not copied: its history is then unreadable."""
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A full object name (SHA-1 or SHA-256)."""
_LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
_LOOSE_NAME = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
_PACK_NAME = re.compile(r"pack-[0-9a-f]{40,64}\.(?:pack|idx)")


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
    in_progress = plain_file(agent_dir / "MERGE_HEAD") is not None
    head_text = (plain_file(agent_dir / "HEAD") or b"").decode("utf-8", "replace").strip()
    head: str | None = None
    if head_text.startswith("ref: "):
        name = head_text.removeprefix("ref: ").strip()
        if PurePosixPath(name).parts[:1] == ("refs",) and ".." not in PurePosixPath(name).parts:
            loose = plain_file(agent_dir / name)
            if loose is not None:
                head = loose.decode("ascii", "replace").strip()
            else:
                packed = plain_file(agent_dir / "packed-refs") or b""
                for line in packed.decode("utf-8", "replace").splitlines():
                    sha, _, ref = line.partition(" ")
                    if ref == name:
                        head = sha
    elif head_text:
        head = head_text
    if head is not None and not (len(head) == 40 and all(c in "0123456789abcdef" for c in head)):
        head = None
    index = plain_file(agent_dir / "index")
    copied: Path | None = None
    if index is not None:
        copy_to.write_bytes(index)
        copied = copy_to
    return MergeState(in_progress=in_progress, head=head, unmerged_index=copied)


def plain_file(path: Path) -> bytes | None:
    """The bytes of `path` when it is a regular file (not a symlink, a directory or a FIFO)."""
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


IN_PROGRESS_MARKERS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("sequencer", "cherry-pick or revert sequence"),
)
"""Files and directories git leaves in a git directory while an operation is unfinished."""


@dataclass(frozen=True)
class HeadState:
    """What an agent's git directory says of HEAD, read from its files."""

    ref: str | None
    """The branch HEAD is on (`refs/heads/main`); None when HEAD is detached or unreadable."""
    sha: str | None
    """The commit HEAD names, when it names one."""
    in_progress: tuple[str, ...]
    """Operations left unfinished (`rebase`, `merge`, ...)."""


def read_head_state(agent_dir: Path) -> HeadState:
    """HEAD, the ref it names (loose or packed) and the in-progress markers of an agent's git
    directory, as plain files: never followed through a symlink, never through git."""
    in_progress: list[str] = []
    for name, operation in IN_PROGRESS_MARKERS:
        try:
            (agent_dir / name).lstat()
        except OSError:
            continue
        if operation not in in_progress:
            in_progress.append(operation)
    text = (plain_file(agent_dir / "HEAD") or b"").decode("utf-8", "replace").strip()
    ref: str | None = None
    sha: str | None = None
    if text.startswith("ref: "):
        name = text.removeprefix("ref: ").strip()
        parts = PurePosixPath(name).parts
        if parts[:2] == ("refs", "heads") and ".." not in parts and len(parts) > 2:
            ref = name
            sha = read_ref(agent_dir, name)
    elif text:
        sha = text
    if sha is not None and not OBJECT_ID.fullmatch(sha):
        sha = None
    return HeadState(ref=ref, sha=sha, in_progress=tuple(in_progress))


def read_ref(agent_dir: Path, name: str) -> str | None:
    """The sha a ref names in a git directory: its loose file, else `packed-refs`."""
    loose = plain_file(agent_dir / name)
    if loose is not None:
        found = loose.decode("ascii", "replace").strip()
        return found if OBJECT_ID.fullmatch(found) else None
    packed = (plain_file(agent_dir / "packed-refs") or b"").decode("utf-8", "replace")
    for line in packed.splitlines():
        sha, _, ref = line.partition(" ")
        if ref.strip() == name and OBJECT_ID.fullmatch(sha):
            return sha
    return None


def copy_objects(agent_dir: Path, dest: Path, *, max_bytes: int = MAX_OBJECT_BYTES) -> bool:
    """Copy the agent's object files (loose objects and packs: regular files with git's names,
    never a symlink, never `info/alternates`) into `dest`, a new object directory of gitgauge's.
    False when there are more than `max_bytes` of them (nothing more is copied)."""
    source = agent_dir / "objects"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "pack").mkdir(exist_ok=True)
    try:
        if not stat.S_ISDIR(source.lstat().st_mode):
            return True
    except OSError:
        return True
    copied = 0
    for folder in sorted(os.listdir(source)):
        here = source / folder
        if not (_LOOSE_DIR.fullmatch(folder) or folder == "pack") or not _is_dir(here):
            continue
        for name in sorted(os.listdir(here)):
            wanted = _PACK_NAME.fullmatch(name) if folder == "pack" else _LOOSE_NAME.fullmatch(name)
            entry = here / name
            try:
                info = entry.lstat()
            except OSError:
                continue
            if not wanted or not stat.S_ISREG(info.st_mode):
                continue
            copied += info.st_size
            if copied > max_bytes:
                return False
            (dest / folder).mkdir(exist_ok=True)
            try:
                shutil.copyfile(entry, dest / folder / name, follow_symlinks=False)
            except OSError:
                continue
    return True


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
