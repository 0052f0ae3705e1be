"""The only door to subprocesses: timeouts, process groups, output capture, a clean environment.

Every child runs in its own session (process group) so a timeout or an interrupt can kill the
whole tree: test runners and agents spawn children that would otherwise outlive them. Output goes
to files, never pipes, so a grandchild that keeps a pipe open cannot hang gitgauge. A watchdog
process kills the groups still running when gitgauge dies without cleaning up (SIGKILL).

What is not about starting and stopping processes lives beside it: the environment children get
(`process_env.py`: `clean_env`, `find_executable`) and what they leave (`process_output.py`:
`CommandResult` and the output files); both are importable from here as before.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from gitgauge.core.process_env import clean_env as clean_env
from gitgauge.core.process_env import find_executable as find_executable
from gitgauge.core.process_output import TAIL_BYTES as TAIL_BYTES
from gitgauge.core.process_output import CommandResult as CommandResult
from gitgauge.core.process_output import anonymous_file, output_file, read_tail, stdin_file

KILL_GRACE_SECONDS = 2.0
"""After SIGTERM to a group, how long before SIGKILL."""

_live_groups: set[int] = set()
_live_lock = threading.Lock()
_cancelled = threading.Event()

# The watchdog reads `+pgid` / `-pgid` lines on stdin (gitgauge's groups as they start and end)
# until gitgauge's end of the pipe closes, which the kernel does however gitgauge dies; then it
# kills every group left. Its own session: a Ctrl-C in the terminal does not reach it.
_WATCHDOG = """# gitgauge's watchdog: kills gitgauge's process groups when gitgauge dies
import os, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups, pending = set(), b""
while chunk := os.read(0, 65536):
    *lines, pending = (pending + chunk).split(b"\\n")
    for line in lines:
        (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
    time.sleep(0.05)  # a burst of commands (a mine's git calls) costs one wake-up, not hundreds
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""
_watchdog_lock = threading.Lock()
_watchdog_pipe: int | None = None
_watchdog_pid: int | None = None
_watchdog_process: subprocess.Popen[bytes] | None = None


class Cancelled(KeyboardInterrupt):
    """Raised instead of starting a command after an interrupt (in any thread)."""


def run(
    command: str | Sequence[str],
    *,
    cwd: Path,
    timeout_seconds: float | None = None,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    tail_bytes: int | None = TAIL_BYTES,
    cleanup: bool = False,
    wrapper: Sequence[str] = (),
    stdout_limit_bytes: int | None = None,
) -> CommandResult:
    """Run `command` (a string goes through the shell) and wait, killing its group on timeout.

    `env` defaults to `clean_env(cwd=cwd)`. Output is written to `stdout_path`/`stderr_path` when
    given (kept whole, for logs) or to anonymous files (in memory); the result keeps the last
    `tail_bytes` of each (all of it with None). After `cancel_all()`, only `cleanup` commands
    (removing worktrees) still start; others raise `Cancelled`. `wrapper` is an argv prefix
    the command runs under (a sandbox: `bwrap ... --`); a string command then goes through
    `/bin/sh -c` inside it. The wrapper is the group's leader, so timeouts and interrupts kill it
    and everything it started. `stdout_limit_bytes`: the group is killed once stdout passes it
    (checked every `LIMIT_POLL_SECONDS`, so a file may run a little past it before it is cut).
    """
    if _cancelled.is_set() and not cleanup:
        raise Cancelled
    if wrapper:
        inner = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        command = [*wrapper, *inner]
    environment = dict(env) if env is not None else clean_env(cwd=cwd)
    started = time.monotonic()
    with (
        output_file(stdout_path) as out,
        output_file(stderr_path) as err,
        stdin_file(stdin_text) as stdin,
    ):
        try:
            child = subprocess.Popen(
                command,
                shell=isinstance(command, str),
                cwd=cwd,
                env=environment,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as error:
            return CommandResult(
                exit_code=None,
                timed_out=False,
                seconds=time.monotonic() - started,
                stdout_tail="",
                stderr_tail="",
                start_error=f"{error.strerror or error}: {error.filename or command!r}",
            )
        ended = _supervise(child, out, timeout_seconds, stdout_limit_bytes, cleanup=cleanup)
        return CommandResult(
            exit_code=ended.exit_code,
            timed_out=ended.timed_out,
            seconds=time.monotonic() - started,
            stdout_tail=read_tail(out, tail_bytes),
            stderr_tail=read_tail(err, TAIL_BYTES),
            output_exceeded=ended.exceeded,
        )


@dataclass(frozen=True)
class _Ended:
    """How a started command ended."""

    exit_code: int | None
    timed_out: bool = False
    exceeded: bool = False


def _supervise(
    child: subprocess.Popen[bytes],
    out: IO[bytes],
    timeout: float | None,
    limit: int | None,
    *,
    cleanup: bool,
) -> _Ended:
    """Guard a started command until it ends: its group watched (by the watchdog, and as live
    for `cancel_all`), killed on an interrupt, when `cancel_all` came first, and whatever it
    left running once it ended."""
    _watch(child.pid)
    if limit is not None:
        _limit_file_size(child.pid, limit)
    with _live_lock:
        _live_groups.add(child.pid)
        cancelled_meanwhile = _cancelled.is_set() and not cleanup
    if cancelled_meanwhile:
        kill_group(child.pid, grace=0.0)
    try:
        return _wait_for_end(child, out, timeout, limit)
    except BaseException:
        # Interrupted while waiting: never leave the child's tree running.
        kill_group(child.pid, grace=0.0)
        child.wait()
        raise
    finally:
        with _live_lock:
            _live_groups.discard(child.pid)
        _unwatch(child.pid)


def _wait_for_end(
    child: subprocess.Popen[bytes], out: IO[bytes], timeout: float | None, limit: int | None
) -> _Ended:
    """Wait for `child` within `timeout` and, with a `limit`, while its stdout stays within it;
    its group killed when either is passed."""
    try:
        if limit is None:
            exit_code = _wait(child, timeout)
        else:
            exit_code = _wait_within(child, timeout, out, limit)
    except _OutputExceeded:
        kill_group(child.pid, grace=0.0)
        child.wait()
        return _Ended(exit_code=None, exceeded=True)
    except subprocess.TimeoutExpired:
        kill_group(child.pid, leader=child)
        child.wait()
        return _Ended(exit_code=None, timed_out=True)
    # The leader is gone; children it left behind in its group must not outlive it (a
    # background server started by a test suite, say).
    kill_group(child.pid, grace=0.0)
    # Past the size limit the write failed (SIGXFSZ, or EFBIG where it is ignored): whatever
    # the exit, the output is cut.
    if limit is not None and os.fstat(out.fileno()).st_size > limit:
        return _Ended(exit_code=None, exceeded=True)
    return _Ended(exit_code=exit_code)


LIMIT_POLL_SECONDS = 0.05


def _limit_file_size(pid: int, limit: int) -> None:
    """Where the kernel can, make a write past `limit` bytes kill the child (SIGXFSZ): a fast
    writer fills gigabytes between two polls. Set just after the child started, before it wrote
    anything of note; the polls stay as the bound where this cannot be set."""
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit + 1, limit + 1))
    except (ImportError, AttributeError, OSError, ValueError):
        pass


class _OutputExceeded(Exception):
    pass


def _wait_within(
    child: subprocess.Popen[bytes], timeout: float | None, out: IO[bytes], limit: int
) -> int:
    """`_wait`, checking the size of `out` every `LIMIT_POLL_SECONDS`: `_OutputExceeded` once
    it passes `limit` (the child still running)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = LIMIT_POLL_SECONDS
        if deadline is not None:
            step = min(step, max(deadline - time.monotonic(), 0))
        try:
            return _wait(child, step)
        except subprocess.TimeoutExpired:
            if os.fstat(out.fileno()).st_size > limit:
                raise _OutputExceeded from None
            if deadline is not None and time.monotonic() >= deadline:
                raise


def _wait(child: subprocess.Popen[bytes], timeout: float | None) -> int:
    """Wait for `child` like `Popen.wait(timeout)`, but woken by the kernel the moment it exits:
    CPython's timed wait polls with sleeps of up to 50 ms, a cost paid on every test run."""
    if timeout is None:
        return child.wait()
    try:
        pidfd = os.pidfd_open(child.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3, or the child is already reaped
        return child.wait(timeout=timeout)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(max(0, int(timeout * 1000))):
            raise subprocess.TimeoutExpired(child.args, timeout)
    finally:
        os.close(pidfd)
    return child.wait()


def kill_group(
    pgid: int, *, grace: float = KILL_GRACE_SECONDS, leader: subprocess.Popen[bytes] | None = None
) -> None:
    """SIGTERM the process group, then SIGKILL it after `grace` seconds if anything is left.

    Pass the group's `leader` when we started it: until it is reaped it stays a zombie member
    of the group, and the group would look alive for the whole grace period.
    """
    try:
        os.killpg(pgid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    if grace <= 0:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if leader is not None:
            leader.poll()
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _watch(pgid: int) -> None:
    """Tell the watchdog (started on first use) about a new group of ours. A line of a few
    bytes: one `write` to a pipe, atomic, for each of the thousands of git commands of a mine."""
    global _watchdog_pipe, _watchdog_pid
    with _watchdog_lock:
        if _watchdog_pid != os.getpid():  # never yet, or in a forked child: its own watchdog
            if _watchdog_pipe is not None:  # the parent's: its watchdog must see it close
                os.close(_watchdog_pipe)
            _watchdog_pipe = _start_watchdog()
            _watchdog_pid = os.getpid()
    _tell_watchdog(f"+{pgid}\n")


def _unwatch(pgid: int) -> None:
    _tell_watchdog(f"-{pgid}\n")


def _tell_watchdog(line: str) -> None:
    pipe = _watchdog_pipe
    if pipe is None:
        return
    try:
        os.write(pipe, line.encode("ascii"))
    except OSError:  # the watchdog is gone (killed by hand): the groups are unguarded, not broken
        pass


def _start_watchdog() -> int | None:
    """Start the watchdog; the write end of its pipe, or None when it cannot start. `-I -S`:
    no site or user paths to import, the start-up costs milliseconds once per gitgauge process."""
    global _watchdog_process
    read_end, write_end = os.pipe()  # not inherited: only the watchdog's stdin holds read_end
    try:
        _watchdog_process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
        )
    except OSError:
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return write_end


def cancel_all() -> int:
    """After an interrupt: start nothing new and kill every running group; returns how many."""
    with _live_lock:
        _cancelled.set()
        groups = list(_live_groups)
    for pgid in groups:
        kill_group(pgid, grace=0.0)
    return len(groups)


def clear_cancel() -> None:
    """Allow commands again once everything cancelled has been cleaned up."""
    _cancelled.clear()


def is_cancelled() -> bool:
    return _cancelled.is_set()


def stream(
    argv: Sequence[str],
    *,
    cwd: Path,
    chunk_size: int = 1 << 16,
    stdin_text: str | None = None,
    then: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Generator[bytes, None, None]:
    """Yield a command's stdout in chunks as it is produced (for `git log` over long histories);
    closing the generator early ends the commands.

    `stdin_text`: the command's stdin (a file, as `run` gives it). `then`: a second command that
    reads the first's stdout through a pipe (`argv | then`); its stdout is what is yielded, and
    what the first writes never passes through gitgauge. `env` defaults to `clean_env(cwd=cwd)`.
    Raises `StreamError` with the stderr of a command that exits non-zero.
    """
    environment = dict(env) if env is not None else clean_env(cwd=cwd)
    commands = [list(argv), *([list(then)] if then is not None else [])]
    with ExitStack() as files:
        source: IO[bytes] | int = files.enter_context(stdin_file(stdin_text)) or subprocess.DEVNULL
        children: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []
        drained = False
        try:
            for command in commands:
                err = files.enter_context(anonymous_file())
                child = subprocess.Popen(
                    command,
                    cwd=cwd,
                    env=environment,
                    stdin=source,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    start_new_session=True,
                )
                if children:  # the next command holds the pipe now: it alone may read it
                    _close_stdout(children[-1][0])
                children.append((child, err))
                assert child.stdout is not None
                source = child.stdout
            last = children[-1][0].stdout
            assert last is not None
            while chunk := last.read(chunk_size):
                yield chunk
            drained = True
        finally:
            # Closing early (the consumer stopped) must not leave git running; once the output
            # is drained the commands are ending by themselves, and are waited for.
            exit_codes = [_end_streamed(child, kill=not drained) for child, _ in children]
        failed = [
            (code, err) for code, (_, err) in zip(exit_codes, children, strict=True) if code != 0
        ]
        if failed:
            # The first that said why (a command after a failed one may only see its end).
            code, err = next(((c, e) for c, e in failed if read_tail(e).strip()), failed[0])
            raise StreamError(code, read_tail(err))


def _close_stdout(child: subprocess.Popen[bytes]) -> None:
    if child.stdout is not None:
        child.stdout.close()


def _end_streamed(child: subprocess.Popen[bytes], *, kill: bool) -> int:
    if kill and child.poll() is None:
        kill_group(child.pid, grace=0.0)
    _close_stdout(child)
    return child.wait()


class StreamError(Exception):
    """A streamed command exited non-zero."""

    def __init__(self, exit_code: int, stderr_tail: str) -> None:
        super().__init__(f"exit {exit_code}: {stderr_tail.strip()}")
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
