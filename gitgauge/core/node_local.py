"""What a Ray node's worker holds while it runs one piece of work (a pair of `run`, a candidate
of `mine`): a slot number unique among those running on the node at once (GITGAUGE_JOB, as with
`-j`), and `run.ray.env`'s values in the process environment (a worker runs one task at a
time, so the process environment is the task's)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def slot(root: Path) -> Iterator[int]:
    """The lowest number whose lock file under `root/slots` no other worker holds."""
    slots = root / "slots"
    slots.mkdir(exist_ok=True)
    number = 0
    while True:
        handle = open(slots / f"{number}.lock", "a+b")  # noqa: SIM115 - held while it runs
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            number += 1
            continue
        try:
            yield number
        finally:
            handle.close()
        return


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """`values` set in the process environment, and the previous values back afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
