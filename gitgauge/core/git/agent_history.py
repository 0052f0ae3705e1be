"""An agent's commit series read back as data, after the agent: through a git directory of
gitgauge's own whose stores are gitgauge's checkout objects and the history copy first and a
copy of the agent's object files last (`AgentHistory`), so an object the agent forged under a
name the history already has is never the one read; and the series (the agent's or the
original chain) shown as the judge reads it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import Repository
from gitgauge.core.git.agent_dir import OBJECT_ID
from gitgauge.core.git.owned import (
    OWNED_CONFIG,
    git_env,
    init_git_dir,
    owned_git,
    parse_tree_listing,
    read_blob,
)


@dataclass(frozen=True)
class SeriesCommit:
    """One commit of an agent's series (or of the original chain), as its object says."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str

    @property
    def subject(self) -> str:
        """The first paragraph on one line, as `git log --format=%s` shows it."""
        paragraph = self.message.strip("\n").split("\n\n", 1)[0]
        return " ".join(line.strip() for line in paragraph.splitlines()).strip()


SHOW_ARGS = (
    "show", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", "--patch", "--format=%B",
)  # fmt: skip
"""How a commit is shown to the judge: its message, then its diffstat and patch; never its id,
author or date, which would tell the original from the agent's series."""


class AgentHistory:
    """An agent's commits read as data: a git directory of gitgauge's own (`series.git` in
    `holder`) whose objects come from `stores` (gitgauge's checkout objects, the history copy),
    then from `agent_objects` (a `copy_objects` copy), in that order."""

    def __init__(self, holder: Path, *, stores: Sequence[Path], agent_objects: Path) -> None:
        self.git_dir = holder / "series.git"
        if self.git_dir.exists():
            shutil.rmtree(self.git_dir)
        init_git_dir(self.git_dir, stores=[*stores, agent_objects])

    def git(self, *args: str, index: Path | None = None, work_tree: Path | None = None) -> str:
        return owned_git(self.git_dir, *args, index=index, work_tree=work_tree, timeout_seconds=120)

    def commit(self, sha: str) -> SeriesCommit | None:
        """The commit `sha`, or None when no store holds it (or it is not a commit)."""
        out = self.git_dir / "cat-file.out"
        try:
            result = process.run(
                ["git", *OWNED_CONFIG, "cat-file", "commit", sha],
                cwd=self.git_dir,
                env=git_env(self.git_dir, None, None),
                stdout_path=out,
                timeout_seconds=60,
            )
            if not result.ok:
                return None
            return parse_commit(sha, out.read_bytes())
        finally:
            out.unlink(missing_ok=True)

    def walk(self, head: str, stop: str, *, limit: int) -> list[SeriesCommit] | None:
        """The commits from `head` back along first parents until `stop` (excluded), oldest
        first; None when `stop` is not reached within `limit` commits or a commit is missing."""
        series: list[SeriesCommit] = []
        current = head
        while current != stop:
            if len(series) >= limit:
                return None
            commit = self.commit(current)
            if commit is None or not commit.parents:
                return None
            series.append(commit)
            current = commit.parents[0]
        return list(reversed(series))

    def read_blob(self, object_id: str) -> bytes:
        return read_blob(self.git_dir, object_id, scratch=self.git_dir)

    def entries(self, treeish: str) -> dict[str, tuple[str, str]] | None:
        """path -> (mode, object id) of every file of `treeish`; None when it is unreadable."""
        try:
            return parse_tree_listing(self.git("ls-tree", "-r", "-z", treeish))
        except GitError:
            return None

    def index_tree(self, index: Path) -> str | None:
        """The tree an index file (a copy of the agent's) holds; None when it holds unmerged
        entries or cannot be read. Objects it names need not exist (`--missing-ok`)."""
        try:
            return self.git("write-tree", "--missing-ok", index=index).strip()
        except GitError:
            return None

    def show(self, shas: Sequence[str]) -> str:
        """The commits one after another as `SHOW_ARGS` shows them."""
        return show_series([self.git(*SHOW_ARGS, sha) for sha in shas])

    def lay_tree(self, tree: str, *, work_tree: Path, index: Path) -> None:
        """Make `tree` a checkout's index and tracked files (objects read as this reader reads
        them): one commit of the agent's series, to be tested."""
        self.git("read-tree", "--reset", "-u", tree, index=index, work_tree=work_tree)


def show_series(shown: Sequence[str]) -> str:
    """Numbered `git show` texts, the form the judge reads for both series."""
    return "\n".join(
        f"--- commit {number} of {len(shown)} ---\n{text.rstrip()}\n"
        for number, text in enumerate(shown, 1)
    )


def show_original(repo: Repository, shas: Sequence[str]) -> str:
    """The original chain shown as `AgentHistory.show` shows an agent's series."""
    return show_series([repo.git(*SHOW_ARGS, sha) for sha in shas])


def parse_commit(sha: str, raw: bytes) -> SeriesCommit | None:
    """A raw commit object: its tree, parents and message (undecodable bytes replaced)."""
    head, _, message = raw.partition(b"\n\n")
    tree: str | None = None
    parents: list[str] = []
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        text = value.decode("ascii", "replace").strip()
        if key == b"tree" and tree is None and OBJECT_ID.fullmatch(text):
            tree = text
        elif key == b"parent" and OBJECT_ID.fullmatch(text):
            parents.append(text)
    if tree is None:
        return None
    return SeriesCommit(sha, tree, tuple(parents), message.decode("utf-8", "replace"))
