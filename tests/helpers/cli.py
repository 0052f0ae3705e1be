"""The real CLI as a user runs it: `python -m gitgauge ...`, through this worker's prestarted
server (helpers/prestarted.py says what that changes) or in a process started for it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers.prestarted import SERVER

GITGAUGE = [sys.executable, "-m", "gitgauge"]


def run_gitgauge(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would (`python -m gitgauge ...`), in a process forked from a
    server that has imported gitgauge already (helpers/prestarted.py says what that changes)."""
    env = env if env is not None else dict(os.environ)
    if SERVER is not None:
        done = SERVER.run([*GITGAUGE, *args], list(args), cwd, env, timeout)
        if done is not None:
            return done
    return start_gitgauge(*args, cwd=cwd, env=env, timeout=timeout)


def start_gitgauge(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m gitgauge ...` in a process started for it, interpreter start-up and all."""
    return subprocess.run(
        [*GITGAUGE, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def start_in_background(
    *args: str, cwd: Path, env: dict[str, str] | None = None, output: bool = True
) -> subprocess.Popen[str]:
    """`python -m gitgauge ...` started in a process of its own and left running, for a test to
    signal, kill or race it: no stdin; stdout and stderr piped (without `output`: discarded)."""
    stream = subprocess.PIPE if output else subprocess.DEVNULL
    return subprocess.Popen(
        [*GITGAUGE, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stream,
        stderr=stream,
        text=True,
    )


@contextmanager
def in_background(
    *args: str, cwd: Path, env: dict[str, str] | None = None, output: bool = True
) -> Iterator[subprocess.Popen[str]]:
    """`start_in_background` for the block, the process killed (and reaped) if it still runs
    when the block ends, whatever failed."""
    child = start_in_background(*args, cwd=cwd, env=env, output=output)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
