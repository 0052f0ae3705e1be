"""Mining commit-history tasks (`kind: rebase`, `kind: commits`) from the user's repository:
the first-parent history with each commit's line counts (one streamed `git log`), and whether a
chain's commit, re-applied on its parent, gives its own tree again (`replay_problem`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import NO_HOOKS, Repository
from gitgauge.core.git.logparse import CommitHeader, read_log
from gitgauge.core.git.owned import alternates_variable


@dataclass(frozen=True)
class FileChange:
    """One path a commit changed against its first parent (renames seen as delete + add)."""

    status: str
    """A, M, D or T."""
    path: str
    old_mode: str
    new_mode: str
    added: int | None
    """Lines added; None for a binary file."""
    deleted: int | None

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.deleted or 0)

    @property
    def is_submodule(self) -> bool:
        return "160000" in (self.old_mode, self.new_mode)


@dataclass(frozen=True)
class LoggedCommit(CommitHeader):
    changes: tuple[FileChange, ...]

    def change_of(self, path: str) -> FileChange | None:
        return next((change for change in self.changes if change.path == path), None)


def first_parent_log(
    repo: Repository, rev: str = "HEAD", *, max_count: int
) -> Iterator[LoggedCommit]:
    """The last `max_count` first-parent commits of `rev`, newest first, each with its changes
    and line counts against its first parent (a merge lists none). One streamed `git log`."""
    options = [
        "--first-parent",
        f"--max-count={max_count}",
        "-z",
        "--raw",
        "--numstat",
        "--no-renames",
        "--no-abbrev",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
    ]
    return repo.stream_log(rev, config=NO_HOOKS, options=options, parse=_parse_numstat_log)


def _parse_numstat_log(tokens: Iterator[str]) -> Iterator[LoggedCommit]:
    raw: dict[str, tuple[str, str, str]] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}

    def start() -> None:
        raw.clear()
        counts.clear()

    def record(token: str, rest: Iterator[str]) -> None:
        line = token.lstrip("\n")
        if not line:
            return
        if line.startswith(":"):  # `:old_mode new_mode old_id new_id status` NUL path
            fields = line[1:].split()
            raw[next(rest)] = (fields[4][0], fields[0], fields[1])
            return
        added, _, remainder = line.partition("\t")
        deleted, _, path = remainder.partition("\t")
        counts[path] = (_count(added), _count(deleted))

    for header in read_log(tokens, start=start, record=record):
        changes = tuple(
            FileChange(
                status=status,
                path=path,
                old_mode=old_mode,
                new_mode=new_mode,
                added=counts.get(path, (None, None))[0],
                deleted=counts.get(path, (None, None))[1],
            )
            for path, (status, old_mode, new_mode) in raw.items()
        )
        yield LoggedCommit(header.sha, header.parents, header.subject, header.body, changes)


def _count(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def replay_problem(repo: Repository, parent: str, commit: str) -> str | None:
    """None when `commit`'s patch (binary included), applied to `parent`'s tree in an index of
    gitgauge's own, gives exactly `commit`'s tree; else what went wrong, in git's words. New
    objects go to a temporary object directory: nothing is written into the user's `.git`."""
    with tempfile.TemporaryDirectory(prefix="gitgauge-replay-") as folder:
        patch = Path(folder) / "commit.patch"
        made = process.run(
            [
                "git", *NO_HOOKS, "diff", "--binary", "--full-index", "--no-renames", "--no-color",
                "--no-ext-diff", "--no-textconv", parent, commit, "--",
            ],
            cwd=repo.root,
            stdout_path=patch,
        )  # fmt: skip
        if not made.ok:
            return f"git diff failed: {made.stderr_tail.strip()}"
        (Path(folder) / "objects" / "pack").mkdir(parents=True)
        env = process.clean_env(
            cwd=repo.root,
            extra={
                "GIT_INDEX_FILE": str(Path(folder) / "index"),
                "GIT_OBJECT_DIRECTORY": str(Path(folder) / "objects"),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates_variable(repo.object_stores()),
            },
        )
        steps = [["read-tree", parent]]
        if patch.stat().st_size:  # an empty commit has nothing to apply
            steps.append(["apply", "--cached", "--whitespace=nowarn", str(patch)])
        for step in steps:
            result = process.run(["git", *NO_HOOKS, *step], cwd=repo.root, env=env)
            if not result.ok:
                lines = result.stderr_tail.strip().splitlines()
                return lines[-1] if lines else f"git {step[0]}: exit {result.exit_code}"
        written = process.run(["git", *NO_HOOKS, "write-tree"], cwd=repo.root, env=env)
        if not written.ok or written.stdout_tail.strip() != tree_of(repo, commit):
            return "re-applied on its parent, it gives another tree than its own"
    return None


def tree_of(repo: Repository, commit: str) -> str:
    return repo.git("rev-parse", f"{commit}^{{tree}}").strip()
