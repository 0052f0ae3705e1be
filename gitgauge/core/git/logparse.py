"""`git log -z` and `git diff -z` output of the user's repository read into gitgauge's own
records (`Commit`, `ChangedPath`): NUL-separated tokens decoded from a byte stream, name-status
records, and a log's commits one at a time (memory bounded by one commit).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

COMMIT_MARK = "\x01"
"""What starts each commit's header in the `--format` gitgauge gives `git log`."""


@dataclass(frozen=True)
class ChangedPath:
    status: str
    """Git's status letter: A, M, D, R (rename), C (copy), T (type change)."""
    path: str
    """The path after the change."""
    old_path: str | None = None
    """The path before a rename or copy."""


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    changes: tuple[ChangedPath, ...] = field(default=())

    @property
    def paths(self) -> list[str]:
        """Every path the commit touched, both sides of renames included."""
        seen: list[str] = []
        for change in self.changes:
            for path in (change.old_path, change.path):
                if path is not None and path not in seen:
                    seen.append(path)
        return seen


def nul_tokens(chunks: Iterator[bytes]) -> Iterator[str]:
    """NUL-separated tokens of a byte stream, decoded (paths keep undecodable bytes)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *complete, pending = pending.split(b"\0")
        for token in complete:
            yield token.decode("utf-8", errors="surrogateescape")
    if pending:
        yield pending.decode("utf-8", errors="surrogateescape")


def parse_changes(tokens: Iterator[str]) -> Iterator[ChangedPath]:
    for token in tokens:
        status = token.strip("\n")
        if not status:
            continue
        letter = status[0]
        if letter in "RC":
            old, new = next(tokens), next(tokens)
            yield ChangedPath(status=letter, path=new, old_path=old)
        else:
            yield ChangedPath(status=letter, path=next(tokens))


def parse_log(tokens: Iterator[str]) -> Iterator[Commit]:
    """Parse `git log -z --name-status --format=<mark>%H%x00%P%x00%s%x00%b%x00`."""
    header: list[str] | None = None
    changes: list[ChangedPath] = []

    def finish(fields: Sequence[str]) -> Commit:
        sha, parents, subject, body = fields
        return Commit(
            sha=sha,
            parents=tuple(parents.split()),
            subject=subject,
            body=body.strip("\n"),
            changes=tuple(changes),
        )

    iterator = iter(tokens)
    for token in iterator:
        if token.startswith(COMMIT_MARK):
            if header is not None:
                yield finish(header)
            # The body is read positionally, so a body containing the mark cannot confuse us.
            header = [token[1:], next(iterator), next(iterator), next(iterator)]
            changes = []
            continue
        status = token.strip("\n")
        if not status:
            continue
        letter = status[0]
        if letter in "RC":
            old, new = next(iterator), next(iterator)
            changes.append(ChangedPath(status=letter, path=new, old_path=old))
        else:
            changes.append(ChangedPath(status=letter, path=next(iterator)))
    if header is not None:
        yield finish(header)
