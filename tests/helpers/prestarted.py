"""`python -m gitgauge`, without paying for the interpreter's start-up and gitgauge's imports on
each of the suite's hundreds of CLI runs.

A server process per test worker imports every command module once (and the Anthropic SDK,
which takes seconds), then forks a fresh child per `run_gitgauge` call. The child is a process
of its own, as `subprocess.run` would start: its own pid, the call's working directory,
environment and standard streams, `gitgauge/__main__.py` run as `__main__` with the call's
arguments, the exit code of `sys.exit` (or of an uncaught exception), and the interpreter's own
shutdown (non-daemon threads joined, `atexit` run, streams flushed). What it shares with the
server is only what importing gitgauge made, which no gitgauge module makes from the
environment (`tests/test_help.py` checks the import-time reads). So every test still runs the
real CLI in a real process; what it does not test is start-up itself, which tests that need it
do with `subprocess` (`--version`, the lazy imports, the installed wheel, Ctrl-C and SIGTERM).

The children of one server share its string-hash seed (a started process draws its own), so a
bug that depends on set iteration order would not vary between calls. `GITGAUGE_TEST_EXEC=1`
runs every call as a real `python -m gitgauge` instead, to check that the suite passes without
the server.

This file is also the server's program (`Server` starts `python <this file> <fd>`), so it imports
nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict

_MAX_MESSAGE = 1 << 20


class _Request(TypedDict):
    """One call, as `Server.run` sends it to the server (JSON)."""

    args: list[str]
    cwd: str
    env: dict[str, str]


def _serve(channel: socket.socket) -> None:
    """Import gitgauge's commands, then fork a child per request until the channel closes."""
    import importlib
    import importlib.util

    with _reads_of_the_environment() as read:
        from gitgauge import cli

        for module, _attribute in cli.COMMANDS.values():
            importlib.import_module(f"gitgauge.cli.{module}")
        # What the rewrite backends and the fixture judge import on their path.
        if importlib.util.find_spec("anthropic") is not None:
            import anthropic  # noqa: F401
    channel.send(json.dumps({module: sorted(names) for module, names in read.items()}).encode())
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(channel, _MAX_MESSAGE, 3)
        except OSError:
            return
        if not message:
            return
        request: _Request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            channel.close()
            _child(request, fds)  # never returns
        for fd in fds:
            os.close(fd)
        channel.send(json.dumps({"pid": pid}).encode())
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        channel.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())


@contextlib.contextmanager
def _reads_of_the_environment() -> Iterator[dict[str, set[str]]]:
    """Which variables each module read while importing, by the module that asked (through
    `os.environ` or `os.getenv`)."""
    read: dict[str, set[str]] = {}
    environ = type(os.environ)
    getitem = environ.__getitem__

    def spy(self: os._Environ[str], key: str) -> str:
        frame = sys._getframe(1)
        while frame.f_back and frame.f_globals.get("__name__", "").split(".")[0] in _PLUMBING:
            frame = frame.f_back
        read.setdefault(str(frame.f_globals.get("__name__")), set()).add(key)
        return getitem(self, key)

    environ.__getitem__ = spy  # type: ignore[method-assign]
    try:
        yield read
    finally:
        environ.__getitem__ = getitem  # type: ignore[method-assign]


_PLUMBING = {"os", "posixpath", "genericpath", "_collections_abc", "collections"}


def kept_at_import(read: dict[str, set[str]]) -> set[str]:
    """The variables whose value at import could shape what a command does later. GitPython
    copies the whole environment once to run `git version` (and keeps only its GIT_PYTHON_*
    settings), and `sysconfig` reads HOME for a user site the interpreter set up before any
    of this ran; every other read counts."""
    kept: set[str] = set()
    for module, names in read.items():
        if module == "git.cmd":
            names = {name for name in names if name.startswith("GIT_PYTHON_")}
        elif module == "sysconfig":
            names = names - {"HOME"}
        kept |= names
    return kept


def _stream(
    fd: int, mode: str, template: io.TextIOWrapper, env: dict[str, str]
) -> io.TextIOWrapper:
    """A standard stream on `fd` made the way the interpreter makes one at start-up (not a
    terminal: block-buffered, or written through under PYTHONUNBUFFERED)."""
    encoding, errors = template.encoding, template.errors
    if env.get("PYTHONIOENCODING"):
        named, _, named_errors = env["PYTHONIOENCODING"].partition(":")
        encoding, errors = named or encoding, named_errors or errors
    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        buffered,
        encoding=encoding,
        errors=errors,
        line_buffering=raw.isatty(),
        write_through=mode == "w" and bool(env.get("PYTHONUNBUFFERED")),
    )


def _child(request: _Request, fds: list[int]) -> None:
    import runpy
    import tempfile
    import time

    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        env = dict(request["env"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        tempfile.tempdir = None
        # The server's own streams (`Server._start` gives it all three), templates of the child's.
        stdin, stdout, stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
        assert stdin is not None and stdout is not None and stderr is not None
        # typeshed makes sys.__stdin__ and the others Final (a program never rebinds them); this
        # child is the interpreter starting up, which makes them.
        sys.stdin = sys.__stdin__ = _stream(0, "r", stdin, env)  # type: ignore[misc]
        sys.stdout = sys.__stdout__ = _stream(1, "w", stdout, env)  # type: ignore[misc]
        sys.stderr = sys.__stderr__ = _stream(2, "w", stderr, env)  # type: ignore[misc]
        sys.argv = ["-m", *request["args"]]
        # `python -m` puts the working directory first on the path (runpy sets argv[0]).
        sys.path[0] = os.getcwd()
        code = 0
        try:
            runpy.run_module("gitgauge", run_name="__main__", alter_sys=True)
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            sys.excepthook(*sys.exc_info())
            code = -signal.SIGINT
        except BaseException:
            sys.excepthook(*sys.exc_info())
            code = 1
        # What the interpreter does on its way out.
        threading._shutdown()  # type: ignore[attr-defined]
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    finally:
        if code == -signal.SIGINT:
            # As an interpreter dies of an uncaught KeyboardInterrupt: by SIGINT itself.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code & 0xFF)


class Server:
    """The client side: one server per test worker, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._channel: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.read_at_import: set[str] = set()
        # The worker's environment before any test changed it: the server imports with it.
        self._env = dict(os.environ)

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._process = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            # Its stdout is no worker's: xdist talks to the worker over the worker's own.
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=self._env,
            cwd="/",
        )
        theirs.close()
        self._channel = ours
        ours.settimeout(120)
        ready = ours.recv(_MAX_MESSAGE)
        if not ready:
            raise RuntimeError("the prestarted gitgauge CLI did not start")
        read = json.loads(ready)
        self.read_at_import = kept_at_import({module: set(names) for module, names in read.items()})
        return ours

    def _forks_the_same(self, env: dict[str, str]) -> bool:
        """Whether a child forked from the server starts as `python -m gitgauge` would with
        `env`: the interpreter's own start-up settings (PYTHONPATH, PYTHONSAFEPATH, ...) and what
        modules read at import are the server's, so they must be the same."""
        names = self.read_at_import | {n for n in (*env, *self._env) if n.startswith("PYTHON")}
        return all(env.get(name) == self._env.get(name) for name in names)

    def run(
        self, argv: list[str], args: list[str], cwd: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str] | None:
        """Run `gitgauge *args` in a forked child; None when the server is busy (another thread
        is running a command) or cannot take the call, and the caller should start a process."""
        if not Path(cwd).is_dir() or not self._lock.acquire(blocking=False):
            return None
        try:
            channel = self._channel or self._start()
            if not self._forks_the_same(env):
                return None
            out, err = os.memfd_create("stdout"), os.memfd_create("stderr")
            stdin = os.open(os.devnull, os.O_RDONLY)
            try:
                request: _Request = {"args": list(args), "cwd": str(cwd), "env": env}
                channel.settimeout(None)
                socket.send_fds(channel, [json.dumps(request).encode()], [stdin, out, err])
                pid = int(_answer(channel)["pid"])
                channel.settimeout(timeout)
                try:
                    returncode = int(_answer(channel)["returncode"])
                except TimeoutError:
                    os.kill(pid, signal.SIGKILL)
                    channel.settimeout(None)
                    channel.recv(_MAX_MESSAGE)
                    raise subprocess.TimeoutExpired(argv, timeout, _read(out), _read(err)) from None
                return subprocess.CompletedProcess(argv, returncode, _read(out), _read(err))
            finally:
                for fd in (stdin, out, err):
                    os.close(fd)
        finally:
            self._lock.release()

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if self._process is not None:
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


def _answer(channel: socket.socket) -> dict[str, int]:
    message = channel.recv(_MAX_MESSAGE)
    if not message:
        raise RuntimeError("the prestarted gitgauge CLI died (its stderr is the worker's)")
    answer: dict[str, int] = json.loads(message)
    return answer


def _read(fd: int) -> str:
    """What `subprocess.run(text=True)` makes of the bytes: locale encoding, universal newlines."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return io.TextIOWrapper(io.BytesIO(b"".join(chunks))).read()


SERVER = None if os.environ.get("GITGAUGE_TEST_EXEC") == "1" else Server()


if __name__ == "__main__":
    # Run by path, the interpreter put this file's folder first on the path, where a helper's
    # module name could hide a library's while the server imports: tests/ instead (each child
    # puts its own working directory there, as `python -m` does).
    sys.path[0] = str(Path(__file__).resolve().parents[1])
    _serve(socket.socket(fileno=int(sys.argv[1])))
