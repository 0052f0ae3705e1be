"""`git log -z` and `git diff -z` output of the user's repository read into gitgauge's own
records (`Commit`, `ChangedPath`): NUL-separated tokens decoded from a byte stream, name-status
records, and a log's commits one at a time (memory bounded by one commit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

COMMIT_MARK = "\x01"
"""What starts each commit's header in the `--format` gitgauge gives `git log`."""
LOG_FORMAT = "--format=" + COMMIT_MARK + "%H%x00%P%x00%s%x00%b%x00"
"""That `--format`: the mark, then the sha, the parents, the subject and the body, each ended by
a NUL (`-z` ends each record after them with one)."""


@dataclass(frozen=True)
class ChangedPath:
    status: str
    """Git's status letter: A, M, D, R (rename), C (copy), T (type change)."""
    path: str
    """The path after the change."""
    old_path: str | None = None
    """The path before a rename or copy."""


@dataclass(frozen=True)
class CommitHeader:
    """A commit as `LOG_FORMAT` writes it, its changes aside."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str


@dataclass(frozen=True)
class Commit(CommitHeader):
    changes: tuple[ChangedPath, ...] = field(default=())

    @property
    def paths(self) -> list[str]:
        """Every path the commit touched, both sides of renames included."""
        return both_sides(self.changes)


def both_sides(changes: Iterable[ChangedPath], seen: Sequence[str] = ()) -> list[str]:
    """`seen`, then every path of `changes` not in it yet, both sides of renames included."""
    paths = list(seen)
    for change in changes:
        for path in (change.old_path, change.path):
            if path is not None and path not in paths:
                paths.append(path)
    return paths


def nul_tokens(chunks: Iterator[bytes]) -> Iterator[str]:
    """NUL-separated tokens of a byte stream, decoded (paths keep undecodable bytes)."""
    pending = b""
    for chunk in chunks:
        complete, nul, rest = (pending + chunk).rpartition(b"\0")
        if nul:
            # NUL is one byte in UTF-8: the complete tokens decode as one text, then split.
            yield from complete.decode("utf-8", errors="surrogateescape").split("\0")
        pending = rest if nul else complete + rest
    if pending:
        yield pending.decode("utf-8", errors="surrogateescape")


def parse_changes(tokens: Iterator[str]) -> Iterator[ChangedPath]:
    for token in tokens:
        change = _change(token, tokens)
        if change is not None:
            yield change


def _change(token: str, tokens: Iterator[str]) -> ChangedPath | None:
    """The name-status record `token` starts, its paths taken from `tokens` (None: no record)."""
    status = token.strip("\n")
    if not status:
        return None
    letter = status[0]
    if letter in "RC":
        old, new = next(tokens), next(tokens)
        return ChangedPath(status=letter, path=new, old_path=old)
    return ChangedPath(status=letter, path=next(tokens))


def read_log(
    tokens: Iterable[str],
    *,
    start: Callable[[], None],
    record: Callable[[str, Iterator[str]], None],
) -> Iterator[CommitHeader]:
    """Walk the tokens of `git log -z` with `LOG_FORMAT`, one commit at a time: `start` is
    called at each commit's header, `record` with every other token and the stream (to take
    the tokens the record owns, such as its paths); each header is yielded once all the records
    after it were read, before the next commit starts."""
    header: list[str] | None = None
    iterator = iter(tokens)
    for token in iterator:
        if token.startswith(COMMIT_MARK):
            if header is not None:
                yield _header(header)
            # The body is read positionally, so a body containing the mark cannot confuse us.
            header = [token[1:], next(iterator), next(iterator), next(iterator)]
            start()
            continue
        record(token, iterator)
    if header is not None:
        yield _header(header)


def _header(fields: Sequence[str]) -> CommitHeader:
    sha, parents, subject, body = fields
    return CommitHeader(sha, tuple(parents.split()), subject, body.strip("\n"))


def parse_log(tokens: Iterator[str]) -> Iterator[Commit]:
    """Parse `git log -z --name-status` with `LOG_FORMAT`."""
    changes: list[ChangedPath] = []

    def record(token: str, rest: Iterator[str]) -> None:
        change = _change(token, rest)
        if change is not None:
            changes.append(change)

    for header in read_log(tokens, start=changes.clear, record=record):
        yield Commit(header.sha, header.parents, header.subject, header.body, tuple(changes))
