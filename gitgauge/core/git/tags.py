"""The tags a checkout of gitgauge's holds: every tag in the history of the commit it is at, and
none past it.

A build that reads its version from git (setuptools-scm, versioneer, `git describe --tags`)
needs the tags of its own history: without them it reads `0.1.devN`, and a suite that checks its
version, or a plugin's minimum, fails at every commit. A tag on the fix or later would show the
answer (`git show v1.2.1`), so a checkout holds exactly what `git tag --merged <commit>` lists:
lightweight and annotated tags (peeled to the commit they name) on a commit of its history; a tag
of a tree or a blob, which is on no commit, is not one.

The user's repository is only read (`git for-each-ref --merged`, once per commit); the tags are
written into gitgauge's own git directories (`write_tags`), whose objects come from stores that
hold the annotated tags' objects too (`core.git.history` packs them into a history copy).
"""

from __future__ import annotations

import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from gitgauge.core import process
from gitgauge.core.errors import GitError

TAGS_REMEMBERED = 64
"""Commits whose tags a `TagCache` keeps (mine asks at a fix, then at its parent; a run at each
reset of a task's base): bounded, so a long mine with many tags holds a few lists, not one per
candidate."""


class Tag(NamedTuple):
    """One tag as a ref: a (ref name, object id) pair, as `packed-refs` holds it."""

    name: str
    """`refs/tags/<tag>`."""
    object_id: str
    """What the ref names: the commit of a lightweight tag, the tag object of an annotated one."""


def merged_tags(root: Path, commit: str) -> tuple[Tag, ...]:
    """The tags of the repository at `root` that point, peeled, at `commit` or one of its
    ancestors, in git's ref order: one `git for-each-ref --merged`, whose cost is a walk of the
    history the tags span (one git process, however many tags; bench figures in
    docs/performance.md)."""
    return tuple(tag for tag, _ in _merged(root, commit))


def _merged(root: Path, commit: str) -> list[tuple[Tag, str | None]]:
    """`merged_tags`, each with the commit it names (None for a tag of a tag: peeled twice)."""
    result = _git(root, "for-each-ref", f"--merged={commit}", FORMAT, "refs/tags")
    found: list[tuple[Tag, str | None]] = []
    for line in result.splitlines():
        fields = line.split(" ", 3)
        if len(fields) != 4:
            continue
        object_id, target, target_type, name = fields
        # A name that is not UTF-8 was read with replacement characters: it could not be
        # written back as the same ref, so it is left out rather than renamed.
        if not name.startswith("refs/tags/") or not object_id or "\ufffd" in name:
            continue
        peeled = object_id if not target else target if target_type == "commit" else None
        found.append((Tag(name, object_id), peeled))
    return found


FORMAT = "--format=%(objectname) %(*objectname) %(*objecttype) %(refname)"
"""A tag's object, what an annotated tag names and its type (empty for a lightweight tag), and
its name: refnames hold no space."""


def _git(root: Path, *args: str) -> str:
    result = process.run(["git", *args], cwd=root, tail_bytes=None)
    if not result.ok:
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        raise GitError(f"git {' '.join(args[:2])} failed in {root}: {detail}")
    return result.stdout_tail


@dataclass(frozen=True)
class _Known:
    tags: tuple[tuple[Tag, str | None], ...]
    """The commit's tags, each with the commit it names (None: not known)."""
    parents: tuple[str, ...] | None
    """The commit's parents; None when not asked (a list derived from its child's)."""


class TagCache:
    """`merged_tags` of one repository, the last `TAGS_REMEMBERED` commits' remembered (safe to
    share between threads: two that ask at once both ask git, and agree).

    A commit whose one child is remembered costs no walk: a commit's history is itself plus its
    only parent's, so the parent's tags are the child's but those on the child. Mine asks at a
    fix, then at its parent: one `for-each-ref` per candidate."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._known: OrderedDict[str, _Known] = OrderedDict()

    def at(self, commit: str) -> tuple[Tag, ...]:
        with self._lock:
            known = self._known.get(commit)
            if known is not None:
                self._known.move_to_end(commit)
            else:
                known = self._from_child(commit)
        if known is None:
            tags = tuple(_merged(self.root, commit))
            listed = _git(self.root, "rev-list", "--parents", "--max-count=1", commit).split()
            known = _Known(tags, tuple(listed[1:]))
        with self._lock:
            self._known[commit] = known
            while len(self._known) > TAGS_REMEMBERED:
                self._known.popitem(last=False)
        return tuple(tag for tag, _ in known.tags)

    def _from_child(self, commit: str) -> _Known | None:
        """`commit`'s tags from a remembered child whose only parent it is, when every tag of
        the child is known to name a commit (held: the caller holds the lock)."""
        for child, known in reversed(self._known.items()):
            if known.parents != (commit,) or any(peeled is None for _, peeled in known.tags):
                continue
            return _Known(tuple(item for item in known.tags if item[1] != child), None)
        return None


PACKED_HEADER = "# pack-refs with: sorted \n"
"""`packed-refs`' first line: the lines are in byte order of their names, so git looks a ref up
without sorting the file first. No `peeled` trait: git peels an annotated tag itself, from its
object, when it needs the commit."""


def write_tags(git_dir: Path, tags: tuple[Tag, ...] | list[Tag]) -> None:
    """Make `git_dir`'s tags exactly `tags`: `packed-refs` rewritten with them alone (gitgauge's
    git directories keep their branch as a loose ref) and every loose tag removed (one a test
    run made with `git tag` goes too; best effort: a folder it made undeletable is left)."""
    loose = git_dir / "refs" / "tags"
    if loose.is_symlink() or loose.is_file():
        loose.unlink()
    else:
        shutil.rmtree(loose, ignore_errors=True)
    loose.mkdir(parents=True, exist_ok=True)
    packed = git_dir / "packed-refs"
    if not tags:
        packed.unlink(missing_ok=True)
        return
    ordered = sorted(tags, key=lambda tag: tag.name.encode("utf-8"))
    lines = "".join(f"{tag.object_id} {tag.name}\n" for tag in ordered)
    partial = git_dir / "packed-refs.gitgauge"
    partial.write_text(PACKED_HEADER + lines, encoding="utf-8")
    partial.replace(packed)
