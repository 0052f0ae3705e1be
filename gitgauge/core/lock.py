"""One writer at a time in `.gitgauge/`: mine, run and rewrite take an exclusive lock.

An advisory `flock` on `.gitgauge/lock`: the kernel drops it when the holder dies, so a crashed
gitgauge never leaves a stale lock. Readers (`report`) take none: every file they read is
replaced atomically.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from gitgauge.core.errors import GitGaugeError
from gitgauge.core.store import ensure_state_dir

LOCK_FILE = "lock"


class LockBusy(GitGaugeError):
    """Another gitgauge command holds the lock of this `.gitgauge/`."""


@contextmanager
def exclusive(
    state_dir: Path,
    *,
    command: str,
    wait: bool,
    on_wait: Callable[[str], None] = lambda message: None,
) -> Iterator[None]:
    ensure_state_dir(state_dir)
    path = state_dir / LOCK_FILE
    handle = open(path, "a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(path)
            if not wait:
                raise LockBusy(
                    f"{state_dir} is in use by another gitgauge command ({holder}); "
                    "wait for it to finish, or pass --wait to wait for it"
                ) from None
            on_wait(f"waiting for the other gitgauge command ({holder}) to finish...")
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} ({command})\n")
        handle.flush()
        yield
    finally:
        handle.close()  # closing releases the flock


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    return text or "pid unknown"
