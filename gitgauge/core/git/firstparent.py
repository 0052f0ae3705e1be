"""Mining commit-history tasks (`kind: rebase`, `kind: commits`) from the user's repository:
the first-parent history with each commit's line counts (one streamed `git log`), and whether a
chain's commit, re-applied on its parent, gives its own tree again (`replay_problem`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Repository
from gitgauge.core.git.logparse import COMMIT_MARK, nul_tokens
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
class LoggedCommit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    changes: tuple[FileChange, ...]

    def change_of(self, path: str) -> FileChange | None:
        return next((change for change in self.changes if change.path == path), None)


def first_parent_log(
    repo: Repository, rev: str = "HEAD", *, max_count: int
) -> Iterator[LoggedCommit]:
    """The last `max_count` first-parent commits of `rev`, newest first, each with its changes
    and line counts against its first parent (a merge lists none). One streamed `git log`."""
    argv = [
        "git",
        *NO_HOOKS,
        "log",
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
        "--encoding=UTF-8",
        "--no-show-signature",
        "--format=" + COMMIT_MARK + "%H%x00%P%x00%s%x00%b%x00",
        rev,
        "--",
    ]
    try:
        yield from _parse_numstat_log(nul_tokens(process.stream(argv, cwd=repo.root)))
    except process.StreamError as error:
        raise GitError(f"git log failed in {repo.root}: {error.stderr_tail.strip()}") from None


def _parse_numstat_log(tokens: Iterator[str]) -> Iterator[LoggedCommit]:
    header: list[str] | None = None
    raw: dict[str, tuple[str, str, str]] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}

    def finish(fields: Sequence[str]) -> LoggedCommit:
        sha, parents, subject, body = fields
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
        return LoggedCommit(sha, tuple(parents.split()), subject, body.strip("\n"), changes)

    iterator = iter(tokens)
    for token in iterator:
        if token.startswith(COMMIT_MARK):
            if header is not None:
                yield finish(header)
            header = [token[1:], next(iterator), next(iterator), next(iterator)]
            raw, counts = {}, {}
            continue
        record = token.lstrip("\n")
        if not record:
            continue
        if record.startswith(":"):  # `:old_mode new_mode old_id new_id status` NUL path
            fields = record[1:].split()
            raw[next(iterator)] = (fields[4][0], fields[0], fields[1])
            continue
        added, _, rest = record.partition("\t")
        deleted, _, path = rest.partition("\t")
        counts[path] = (_count(added), _count(deleted))
    if header is not None:
        yield finish(header)


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
