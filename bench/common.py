"""What every row of the benchmark uses: its sizes, running a child and measuring it, git, a
row of the table, the test clock and the shared state of one benchmark (`Bench`)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GITGAUGE = [sys.executable, "-m", "gitgauge"]
TEST_COMMAND = "sh run_tests.sh"


class BenchError(Exception):
    """A step of the benchmark did not do what it must (a wrong count, a failed command)."""


@dataclass(frozen=True)
class Sizes:
    history_commits: int
    """Commits of the classification history (row 1, 5a, 6)."""
    candidates: int
    """Fix commits of the verification repository (rows 2, 3, 4)."""
    fillers: int
    """Ordinary commits before each fix of the verification repository."""
    large_tree_files: int
    large_candidates: int
    sleep: float
    """Seconds the test command sleeps: the known, fixed test time."""
    repeats: int
    """Repeats of the short measurements (the best is kept)."""
    classification_repeats: int
    """Repeats of row 1's commands, taken in turns (the fastest of each is kept)."""
    mine_repeats: int
    """Repeats of each verifying mine (the one with the least overhead is kept)."""
    wide_tree_files: int = 5_000
    """Files of the tree of rows 2c and 8b (a real project's size)."""
    report_tests: int = 50_000
    """Tests of the JUnit report rows 7a and 7b parse."""
    decisive_sleep: float = 1.0
    """Seconds the suite of row 2c sleeps: the order of a real project's small suite."""
    ray_sleep: float = 2.0
    """Seconds the suite of row 3r sleeps (`mine --executor ray`): long beside a Ray task's
    overhead, as a real suite is."""

    @classmethod
    def full(cls) -> Sizes:
        return cls(
            history_commits=50_000,
            candidates=40,
            fillers=5,
            large_tree_files=20_000,
            large_candidates=10,
            sleep=0.2,
            repeats=3,
            classification_repeats=5,
            mine_repeats=2,
        )

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            history_commits=2_000,
            candidates=6,
            fillers=2,
            large_tree_files=1_000,
            large_candidates=2,
            sleep=0.05,
            repeats=1,
            classification_repeats=1,
            mine_repeats=1,
        )

    @classmethod
    def smoke(cls) -> Sizes:
        """The least that still measures every row: for the test that the benchmark runs, not
        for figures."""
        return cls(
            history_commits=300,
            candidates=2,
            fillers=1,
            large_tree_files=200,
            large_candidates=1,
            sleep=0.02,
            repeats=1,
            classification_repeats=1,
            mine_repeats=1,
            wide_tree_files=1_000,
            report_tests=5_000,
            decisive_sleep=0.2,
            ray_sleep=0.1,
        )


# -- running children ------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_kib: int | None
    """Peak RSS (VmHWM) of the command's own process, sampled from /proc; None without /proc.
    Not ru_maxrss: on Linux a child's ru_maxrss starts at its parent's RSS at fork (this
    benchmark's own), which would swamp a small command."""
    stdout: str
    stderr: str
    exit_code: int


def _sample_own_peak(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """VmHWM is a high-water mark: sampling it until the process ends misses at most a spike
    in its last few milliseconds."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        for line in text.splitlines():
            if line.startswith("VmHWM:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        if stop.wait(0.01):
            return


def measure(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None, check: bool = True
) -> Measured:
    """Run `argv`, draining its stdout through a pipe (as gitgauge drains `git log`); wall time,
    and the peak memory of its own process."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        own_peak = [0]
        stop = threading.Event()
        sampler = threading.Thread(target=_sample_own_peak, args=(child.pid, stop, own_peak))
        sampler.start()
        assert child.stdout is not None
        chunks = []
        while chunk := child.stdout.read(1 << 16):
            chunks.append(chunk)
        child.stdout.close()
        child.wait()
        seconds = time.perf_counter() - started
        stop.set()
        sampler.join()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    result = Measured(
        seconds=seconds,
        peak_kib=own_peak[0] or None,
        stdout=b"".join(chunks).decode("utf-8", "replace"),
        stderr=stderr,
        exit_code=child.returncode,
    )
    if check and result.exit_code != 0:
        raise BenchError(
            f"{shlex.join(argv)} exited {result.exit_code} in {cwd}:\n"
            f"{result.stdout[-2000:]}\n{stderr[-2000:]}"
        )
    return result


def best_of(times: int, *commands: Sequence[str], cwd: Path) -> list[Measured]:
    """The fastest of `times` runs of each command, taken in turns so that a slow spell of the
    machine hits every command alike."""
    runs: list[list[Measured]] = [[] for _ in commands]
    for _ in range(times):
        for runs_of_command, argv in zip(runs, commands, strict=True):
            runs_of_command.append(measure(argv, cwd=cwd))
    return [min(measured, key=lambda m: m.seconds) for measured in runs]


def git(*args: str, cwd: Path, stdin: bytes | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    if result.returncode != 0:
        raise BenchError(f"git {' '.join(args)} failed: {result.stderr.decode()[-2000:]}")
    return result.stdout.decode()


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# -- rows and the state of one benchmark -----------------------------------------------------


@dataclass
class Row:
    number: str
    measure: str
    gitgauge: str
    baseline: str
    ratio: str
    goal: str = "-"
    met: str = "-"


def verdict(ratio: float, *, at_most: float | None = None, at_least: float | None = None) -> str:
    if at_most is not None:
        return "yes" if ratio <= at_most else "NO"
    if at_least is not None:
        return "yes" if ratio >= at_least else "NO"
    return "-"


def mib(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.0f} MiB"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


@dataclass(frozen=True)
class TestClock:
    """How long the test command takes, measured on the repository before gitgauge runs it."""

    wall: float
    """Mean wall time of one run started as gitgauge starts it (`sh -c`)."""
    launch: float
    """The part of `wall` the script's own clock does not see (shell start-up, exit)."""

    def total(self, log: Path) -> tuple[int, float]:
        """Test runs recorded in `log`, and their total time: what each run's own clock saw,
        plus the launch share; where `date +%s%N` is missing, runs x the mean wall."""
        lines = log.read_text().splitlines() if log.exists() else []
        try:
            inside = sum(int(end) - int(start) for start, end in map(str.split, lines)) / 1e9
        except ValueError:
            return len(lines), len(lines) * self.wall
        return len(lines), inside + len(lines) * self.launch


@dataclass(frozen=True)
class Verification:
    """A verification repository mined and measured: what the run rows measure against."""

    repo: Path
    clock: TestClock
    bare: float
    """Mean cost of one plain `git worktree add` + `git worktree remove` in it."""


class Bench:
    """One benchmark: its sizes, its temporary root, and the rows and notes gathered so far."""

    def __init__(self, sizes: Sizes, root: Path) -> None:
        self.sizes = sizes
        self.root = root
        self.rows: list[Row] = []
        self.notes: list[str] = []

    def test_log(self, name: str) -> tuple[Path, dict[str, str]]:
        log = self.root / f"{name}.tests.log"
        log.unlink(missing_ok=True)
        return log, dict(os.environ, BENCH_TEST_LOG=str(log))


def task_texts(repo: Path) -> list[str]:
    """The saved tasks without their time stamps, to compare one mine with another."""
    texts = []
    for path in sorted((repo / ".gitgauge" / "tasks").glob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts.append("\n".join(line for line in lines if not line.startswith("minedAt")))
    return texts
