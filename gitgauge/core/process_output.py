"""What a command of `core/process.py` leaves: its result (`CommandResult`), and the files its
output and input go through (anonymous ones in memory, so a full TMPDIR cannot swallow what git
says about it; never pipes, so a grandchild holding one cannot hang gitgauge)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

TAIL_BYTES = 16 * 1024
"""How much of a command's output a result keeps (the full output goes to the log file)."""


@dataclass(frozen=True)
class CommandResult:
    """What a finished (or killed) command did."""

    exit_code: int | None
    """None when the command was killed by its timeout or could not start."""
    timed_out: bool
    seconds: float
    stdout_tail: str
    stderr_tail: str
    start_error: str | None = None
    """Why the command could not start (argv form), e.g. the binary is missing."""
    output_exceeded: bool = False
    """Killed because its stdout passed `stdout_limit_bytes` (`exit_code` is then None)."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def failed_to_start(self) -> bool:
        """The program was not found or not executable (a shell reports 127 / 126)."""
        return self.start_error is not None or self.exit_code in (126, 127)

    def output_tail(self, limit: int = 4000) -> str:
        """The last `limit` characters of stdout and stderr together, for a result file."""
        text = self.stdout_tail
        if self.stderr_tail:
            text = f"{text}\n--- stderr ---\n{self.stderr_tail}" if text else self.stderr_tail
        return text[-limit:]


@contextmanager
def anonymous_file() -> Iterator[IO[bytes]]:
    """A file with no name for a child's output or input: in memory on Linux (`memfd_create`),
    so a full TMPDIR cannot swallow what git says about the full TMPDIR ("No space left on
    device"); a temporary file elsewhere."""
    try:
        descriptor = os.memfd_create("gitgauge-output", os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        with tempfile.TemporaryFile() as handle:
            yield handle
        return
    with open(descriptor, "w+b") as handle:
        yield handle


@contextmanager
def output_file(path: Path | None) -> Iterator[IO[bytes]]:
    """A command's output file: `path` (kept whole, for the logs), else an anonymous one."""
    if path is None:
        with anonymous_file() as handle:
            yield handle
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w+b") as handle:
            yield handle


@contextmanager
def stdin_file(text: str | None) -> Iterator[IO[bytes] | None]:
    """A command's stdin holding `text` (None: no stdin file)."""
    # A file, not a pipe: a child that never reads its stdin cannot block us on a full pipe.
    if text is None:
        yield None
        return
    with anonymous_file() as handle:
        handle.write(text.encode("utf-8"))
        handle.seek(0)
        yield handle


def read_tail(handle: IO[bytes], limit: int | None = TAIL_BYTES) -> str:
    """The last `limit` bytes written to `handle` (all with None), as text."""
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    handle.seek(0 if limit is None else max(0, size - limit))
    return handle.read().decode("utf-8", errors="replace")
