"""Watching the processes a test started (or must not have left behind)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (dead, not yet reaped by its new parent) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def processes_with(token: str, *, also: str = "") -> list[str]:
    """Running processes whose command line holds `token` (and `also`), as "pid: command line".
    A zombie's command line is empty: a dead process is never found."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():  # /proc/self and /proc/thread-self are the caller again
            continue
        try:
            # Other tests run processes whose arguments are not UTF-8 (a hostile agent's bytes).
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone
            continue
        # Not the test runner itself (`pytest -k 86399`); a path under pytest's tmp_path counts.
        runner = any("pytest" in word for word in command.split()[:3])
        if token in command and also in command and not runner:
            found.append(f"{entry.name}: {command}")
    return found


def wait_until_gone(pid: int, *, seconds: float = 10.0) -> bool:
    """Signals are delivered asynchronously: give a killed process a moment to be gone."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return not pid_alive(pid)


def wait_for_file(path: Path, *, seconds: float = 60.0) -> str:
    """The content of `path` once something has written it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text().strip()):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")
