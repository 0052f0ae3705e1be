"""Ctrl-C and SIGTERM: stop starting work, kill what runs, clean up, exit 130.

SIGTERM is turned into the same KeyboardInterrupt as Ctrl-C. Cleanup (removing worktrees) runs
inside `deferred()`, where a second Ctrl-C is remembered instead of raised, so it cannot leave a
half-removed worktree behind; it is raised once cleanup is done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from gitgauge.core import process

_pending: list[int] = []
_depth = 0


def install() -> None:
    """Make SIGTERM behave like Ctrl-C (call once, from the main thread). SIGINT is set
    explicitly too: a shell starting gitgauge in the background hands it SIGINT ignored."""
    signal.signal(signal.SIGINT, _raise_interrupt)
    signal.signal(signal.SIGTERM, _raise_interrupt)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    # Only the first signal interrupts: a second, impatient Ctrl-C must not break off the
    # cleanup the first one started.
    _stop_interrupting()
    raise KeyboardInterrupt


def _stop_interrupting() -> None:
    signal.signal(signal.SIGINT, _remember)
    signal.signal(signal.SIGTERM, _remember)


def _remember(signum: int, frame: FrameType | None) -> None:
    _pending.append(signum)
    # Children started before the signal must still die promptly.
    process.cancel_all()


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM until the block ends (main thread only; others never get signals)."""
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    if _depth == 0:
        for sig in previous:
            signal.signal(sig, _remember)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if _pending:
                _pending.clear()
                _stop_interrupting()
                raise KeyboardInterrupt
