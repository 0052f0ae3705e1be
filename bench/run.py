"""gitgauge's speed benchmark: `python bench/run.py [--quick]`.

Builds synthetic repositories in a temporary directory with `git fast-import` (no network), runs
the real CLI (`python -m gitgauge ...`) on them as a user would, and prints one table of ratios,
each measured against a baseline taken in the same run on the same repository. What each row
means and the figures of the reference machine are in docs/performance.md.

The test command of the verification repositories sleeps a fixed time and then decides pass/fail
from file contents, so every candidate is really verified (passes at the fix, fails at the parent
with the fix's tests laid over). Each test run appends its own start and end to
`$BENCH_TEST_LOG`: the benchmark counts the runs instead of assuming them, and subtracts the test
time they really took (the jitter of `sleep` would otherwise swamp an overhead of milliseconds).

`--dir` puts the repositories and gitgauge's worktrees elsewhere (a tmpfs keeps a rate-limited
disk out of the figures); the load average printed with the figures tells whether other work
shared the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate

GITGAUGE = [sys.executable, "-m", "gitgauge"]
EPOCH = 1_700_000_000
"""Commit dates start here (one second per commit): fixed, so the repositories are identical."""

TEST_COMMAND = "sh run_tests.sh"
HEADER = ("#", "measure", "gitgauge", "baseline", "ratio", "goal", "met")


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


# -- building repositories -------------------------------------------------------------------


@dataclass
class CommitSpec:
    subject: str
    body: str = ""
    files: dict[str, str | None] = field(default_factory=dict)
    """Path -> new content (None: delete)."""


def fast_import(root: Path, commits: Iterator[CommitSpec]) -> int:
    """Create a repository at `root` whose `main` is exactly `commits` (oldest first); check the
    last one out. Returns the number of commits."""
    root.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(root), cwd=root.parent)
    count = 0
    with tempfile.TemporaryFile() as err:
        importer = subprocess.Popen(
            ["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE, stderr=err
        )
        assert importer.stdin is not None
        for count, spec in enumerate(commits, start=1):
            importer.stdin.write(_fast_import_commit(spec, EPOCH + count))
        importer.stdin.close()
        if importer.wait() != 0:
            err.seek(0)
            raise BenchError(f"git fast-import failed: {err.read().decode()[-2000:]}")
    git("reset", "-q", "--hard", "main", cwd=root)
    return count


def _fast_import_commit(spec: CommitSpec, stamp: int) -> bytes:
    message = f"{spec.subject}\n\n{spec.body}\n" if spec.body else f"{spec.subject}\n"
    raw = message.encode()
    who = f"Bench <bench@gitgauge.invalid> {stamp} +0000"
    parts = [f"commit refs/heads/main\nauthor {who}\ncommitter {who}\ndata {len(raw)}\n".encode()]
    parts.append(raw + b"\n")
    for path, content in spec.files.items():
        if content is None:
            parts.append(f"D {path}\n".encode())
            continue
        data = content.encode()
        parts.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    parts.append(b"\n")
    return b"".join(parts)


def history_commits(count: int) -> Iterator[CommitSpec]:
    """A long, linear history with a realistic mix: ~5% fix subjects that touch a test and a
    source file (candidates), ~8% bug words that touch no test (classified, then dropped by the
    path rule), the rest features, refactors, docs and chores."""
    rng = random.Random(20240601)
    sources = [f"src/pkg{i % 20}/mod{i}.py" for i in range(400)]
    tests = [f"tests/pkg{i % 20}/test_mod{i}.py" for i in range(400)]
    docs = [f"docs/page{i}.md" for i in range(40)]
    yield CommitSpec(
        "Initial import",
        files={path: f"# {path}\n" for path in [*sources, *tests, *docs, "README.md"]},
    )
    plain = ("feat: add option", "refactor: tidy", "chore: bump", "docs: explain", "Update")
    for n in range(1, count):
        roll = rng.random()
        module = rng.randrange(400)
        body = f"Details of change {n}: what changed and why,\nover two lines.\n"
        if roll < 0.05:
            subject = rng.choice(
                (f"fix: handle empty input in mod{module}", f"Fix crash in mod{module}")
            )
            touched = [sources[module], tests[module]]
        elif roll < 0.10:
            subject, touched = f"Fix typo in page{module % 40}", [docs[module % 40]]
        elif roll < 0.13:
            subject, touched = f"fix: log errors in mod{module}", [sources[module]]
        else:
            subject = f"{rng.choice(plain)} {n}"
            pool = rng.choice((sources, sources, tests, docs))
            touched = rng.sample(pool, rng.randint(1, 3))
        yield CommitSpec(
            subject,
            body if rng.random() < 0.3 else "",
            {path: f"# {path}\nrevision {n}\n" for path in touched},
        )


RUN_TESTS = """\
# Sleeps a fixed time, then passes when every tests/<name>.expect equals src/<name>.txt (shell
# builtins only). Appends its own start and end (ns) to $BENCH_TEST_LOG: the benchmark sums
# the real test time instead of assuming it, so the jitter of sleep stays out of the overhead.
started=$(date +%s%N)
sleep {sleep}
status=0
for expect in tests/*.expect; do
  name=${{expect#tests/}}
  name=${{name%.expect}}
  read -r want < "$expect"
  read -r got < "src/$name.txt"
  if [ "$want" != "$got" ]; then
    echo "FAIL $name: want '$want', got '$got'"
    status=1
    break
  fi
done
echo "$started $(date +%s%N)" >> "$BENCH_TEST_LOG"
exit $status
"""


def verification_commits(
    *, candidates: int, fillers: int, tree_files: int, sleep: float
) -> Iterator[CommitSpec]:
    """`candidates` fix commits, each preceded by `fillers` ordinary commits. Fix i changes
    src/mod<i>.txt and tests/mod<i>.expect from "bug i" to "fixed i"."""
    initial: dict[str, str | None] = {"run_tests.sh": RUN_TESTS.format(sleep=sleep)}
    initial["README.md"] = "A benchmark repository.\n"
    for i in range(candidates):
        initial[f"src/mod{i}.txt"] = f"bug {i}\n"
        initial[f"tests/mod{i}.expect"] = f"bug {i}\n"
    for j in range(tree_files):
        initial[f"vendor/d{j // 250}/f{j}.txt"] = f"vendored file {j}\n"
    yield CommitSpec("Initial import", files=initial)
    for i in range(candidates):
        for k in range(fillers):
            yield CommitSpec(f"docs: note {i}.{k}", files={"README.md": f"note {i}.{k}\n"})
        yield CommitSpec(
            f"fix: wrong value in mod{i}",
            f"mod{i} returned its old value; it must return the fixed one ({i}).",
            {f"src/mod{i}.txt": f"fixed {i}\n", f"tests/mod{i}.expect": f"fixed {i}\n"},
        )


def write_repo_config(root: Path, *, history: str = "isolated") -> None:
    text = f"testCommand: '{TEST_COMMAND}'\n"
    if history != "isolated":
        text += f"run:\n  history: {history}\n"
    (root / "gitgauge.yaml").write_text(text, encoding="utf-8")


# -- measurements ----------------------------------------------------------------------------


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
class Mined:
    run: Measured
    runs: int
    """Test runs counted in the test log."""
    test_seconds: float
    """Their total time."""
    tasks: list[str]

    @property
    def overhead(self) -> float:
        """Everything that is not the test command."""
        return self.run.seconds - self.test_seconds


class Bench:
    def __init__(self, sizes: Sizes, root: Path) -> None:
        self.sizes = sizes
        self.root = root
        self.rows: list[Row] = []
        self.notes: list[str] = []

    def test_log(self, name: str) -> tuple[Path, dict[str, str]]:
        log = self.root / f"{name}.tests.log"
        log.unlink(missing_ok=True)
        return log, dict(os.environ, BENCH_TEST_LOG=str(log))

    # 1 and 5a ----------------------------------------------------------------------------

    def classification(self) -> Path:
        sizes = self.sizes
        say(f"building a {sizes.history_commits:,}-commit history with git fast-import")
        repo = self.root / "history"
        started = time.perf_counter()
        fast_import(repo, history_commits(sizes.history_commits))
        say(f"  built in {time.perf_counter() - started:.1f} s")
        write_repo_config(repo)
        last = str(sizes.history_commits)
        say("row 1: mine --dry-run vs git log --name-only")
        dry, log, version = best_of(
            sizes.classification_repeats,
            [*GITGAUGE, "mine", "--dry-run", "--last", last],
            ["git", "log", "--name-only", f"--max-count={last}", "HEAD"],
            [*GITGAUGE, "--version"],
            cwd=repo,
        )
        candidates = dry.stdout.count("[candidate (")
        if candidates == 0:
            raise BenchError(f"mine --dry-run found no candidates:\n{dry.stdout[-2000:]}")
        ratio = dry.seconds / log.seconds
        self.rows.append(
            Row(
                "1",
                f"classification: mine --dry-run --last {last} ({candidates:,} candidates)",
                f"{dry.seconds:.2f} s",
                f"git log --name-only: {log.seconds:.2f} s",
                f"{ratio:.2f}x",
                "<= 1.5x",
                verdict(ratio, at_most=1.5),
            )
        )
        tenth = str(sizes.history_commits // 10)
        shorter = measure([*GITGAUGE, "mine", "--dry-run", "--last", tenth], cwd=repo)
        self.notes.append(
            f"row 1: `gitgauge --version` (interpreter start-up and imports alone) takes "
            f"{version.seconds:.2f} s of the {dry.seconds:.2f} s"
        )
        self.notes.append(
            f"row 5a: gitgauge's peak with --last {tenth}: {mib(shorter.peak_kib)}, with --last "
            f"{last}: {mib(dry.peak_kib)}; the git log it streams from peaks apart, like the "
            "baseline's"
        )
        own = dry.peak_kib
        self.rows.append(
            Row(
                "5a",
                "peak memory: mine --dry-run (row 1)",
                mib(own),
                f"gitgauge --version: {mib(version.peak_kib)}; "
                f"git log --name-only: {mib(log.peak_kib)}",
                "n/a" if own is None else f"{own / (version.peak_kib or own):.2f}x",
            )
        )
        return repo

    # 2, 3, 4, 5b ---------------------------------------------------------------------------

    def build_verification_repo(self, name: str, *, candidates: int, tree_files: int) -> Path:
        say(f"building {name}: {candidates} candidates, {tree_files:,} extra files in the tree")
        repo = self.root / name
        fast_import(
            repo,
            verification_commits(
                candidates=candidates,
                fillers=self.sizes.fillers,
                tree_files=tree_files,
                sleep=self.sizes.sleep,
            ),
        )
        write_repo_config(repo)
        return repo

    def test_clock(self, repo: Path) -> TestClock:
        """Run the test command directly in the checkout, started as gitgauge starts it (through
        the shell), and split its wall time into what its own clock sees and the launch."""
        walls: list[float] = []
        launches: list[float] = []
        unclocked = TestClock(wall=0.0, launch=0.0)
        for _ in range(max(3, 3 * self.sizes.repeats)):
            log, env = self.test_log("direct")
            started = time.perf_counter()
            subprocess.run(
                TEST_COMMAND, shell=True, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL
            )
            walls.append(time.perf_counter() - started)
            _, inside = unclocked.total(log)
            launches.append(max(0.0, walls[-1] - inside))
        return TestClock(wall=statistics.mean(walls), launch=statistics.mean(launches))

    def bare_worktree_seconds(self, repo: Path, cycles: int) -> float:
        """Mean cost of one plain `git worktree add` + `git worktree remove`, cycling through
        the commits gitgauge checks out (each fix and its parent)."""
        shas = git("rev-list", "--max-count", str(max(cycles, 2)), "HEAD", cwd=repo).split()
        holder = Path(tempfile.mkdtemp(prefix="bare-wt-", dir=self.root))
        total = 0.0
        for n in range(cycles):
            path = holder / f"wt{n}"
            started = time.perf_counter()
            git("worktree", "add", "--detach", "--quiet", str(path), shas[n % len(shas)], cwd=repo)
            git("worktree", "remove", "--force", str(path), cwd=repo)
            total += time.perf_counter() - started
        shutil.rmtree(holder)
        return total / cycles

    def mine(self, repo: Path, clock: TestClock, *, jobs: int, expect: int) -> Mined:
        """Fresh `mine`s (nothing remembered from an earlier one); the one with the least
        overhead, since the machine only ever adds noise."""
        best: Mined | None = None
        for _ in range(self.sizes.mine_repeats):
            shutil.rmtree(repo / ".gitgauge", ignore_errors=True)
            log, env = self.test_log(f"{repo.name}-j{jobs}")
            argv = [*GITGAUGE, "mine", "--last", "1000000", "-j", str(jobs)]
            result = measure(argv, cwd=repo, env=env)
            tasks = task_texts(repo)
            if len(tasks) != expect:
                raise BenchError(
                    f"mine -j {jobs} verified {len(tasks)} of {expect} candidates:\n"
                    f"{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
                )
            runs, test_seconds = clock.total(log)
            # Each candidate runs the suite three times: at the fix, at the parent with the
            # fix's tests, and the parent's own suite.
            if runs != 3 * expect:
                raise BenchError(f"mine -j {jobs}: expected {3 * expect} test runs, counted {runs}")
            mined = Mined(result, runs, test_seconds, tasks)
            if best is not None and (mined.tasks, mined.run.stdout) != (
                best.tasks,
                best.run.stdout,
            ):
                raise BenchError("two identical mines saved different tasks or printed other lines")
            if best is None or mined.overhead < best.overhead:
                best = mined
        assert best is not None
        return best

    def verification(self) -> None:
        sizes = self.sizes
        count = sizes.candidates
        small = self.build_verification_repo("verify", candidates=count, tree_files=0)
        clock = self.test_clock(small)
        say(f"  test command: {ms(clock.wall)} per run (sleep {sizes.sleep} s)")
        say(f"row 2: mine -j 1 of {count} candidates")
        one = self.mine(small, clock, jobs=1, expect=count)
        bare = self.bare_worktree_seconds(small, 2 * count)
        self.overhead_row("2", "verification overhead / candidate", one, bare, count)

        say("row 3: mine -j 2")
        two = self.mine(small, clock, jobs=2, expect=count)
        if two.tasks != one.tasks or two.run.stdout != one.run.stdout:
            raise BenchError(
                "mine -j 2 did not save the same tasks or print the same lines as -j 1:\n"
                f"-j 1:\n{one.run.stdout[-2000:]}\n-j 2:\n{two.run.stdout[-2000:]}"
            )
        self.notes.append(
            f"rows 2-3: the test command takes {ms(clock.wall)} a run started directly; -j 2 "
            f"saved the same {count} tasks and printed the same lines as -j 1; best of "
            f"{sizes.mine_repeats} mine(s) each"
        )
        speedup = one.run.seconds / two.run.seconds
        self.rows.append(
            Row(
                "3",
                f"speed-up: mine -j 2 vs -j 1 ({count} candidates, {os.cpu_count()} cores)",
                f"-j 2: {two.run.seconds:.2f} s",
                f"-j 1: {one.run.seconds:.2f} s",
                f"{speedup:.2f}x",
                ">= 1.8x",
                verdict(speedup, at_least=1.8),
            )
        )
        own_one, own_two = one.run.peak_kib, two.run.peak_kib
        self.rows.append(
            Row(
                "5b",
                "peak memory: mine -j 2 (row 3)",
                mib(own_two),
                f"mine -j 1: {mib(own_one)}",
                "n/a" if not (own_one and own_two) else f"{own_two / own_one:.2f}x",
            )
        )
        # Two test runs a pair (the fix's tests, then the base suite) and one worktree.
        self.run_overhead("4", "run overhead / pair (noop adapter)", small, clock, bare)
        self.run_overhead(
            "4b",
            "run overhead / pair (noop adapter), run.history: full",
            small,
            clock,
            bare,
            history="full",
        )

        large = self.build_verification_repo(
            "verify-large", candidates=sizes.large_candidates, tree_files=sizes.large_tree_files
        )
        say(f"row 2b: mine -j 1 of {sizes.large_candidates} candidates, large tree")
        clock_large = self.test_clock(large)
        big = self.mine(large, clock_large, jobs=1, expect=sizes.large_candidates)
        bare_large = self.bare_worktree_seconds(large, 2 * sizes.large_candidates)
        self.overhead_row(
            "2b",
            f"verification overhead / candidate, {sizes.large_tree_files:,}-file tree",
            big,
            bare_large,
            sizes.large_candidates,
        )
        self.run_overhead(
            "4c",
            f"run overhead / pair (noop adapter), {sizes.large_tree_files:,}-file tree",
            large,
            clock_large,
            bare_large,
        )

    def overhead_row(
        self, number: str, label: str, mined: Mined, bare: float, candidates: int
    ) -> None:
        overhead = mined.overhead / candidates
        # Each candidate takes two worktrees: one at the fix, one at its parent.
        bare_per_candidate = 2 * bare
        ratio = overhead / bare_per_candidate
        wall, runs, tests = mined.run.seconds, mined.runs, mined.test_seconds
        self.rows.append(
            Row(
                number,
                label,
                f"{ms(overhead)} (wall {wall:.2f} s - {runs} tests {tests:.2f} s)",
                f"2 x (worktree add + remove): {ms(bare_per_candidate)}",
                f"{ratio:.2f}x",
                "<= 2x",
                verdict(ratio, at_most=2.0),
            )
        )

    def run_available(self, repo: Path) -> bool:
        probe = measure([*GITGAUGE, "run", "--help"], cwd=repo, check=False)
        if probe.exit_code != 0:
            self.notes.append("rows 4: `gitgauge run --help` failed: run is not available")
        return probe.exit_code == 0

    def run_overhead(
        self,
        number: str,
        label: str,
        repo: Path,
        clock: TestClock,
        bare: float,
        *,
        history: str = "isolated",
    ) -> None:
        """`gitgauge run` of the noop adapter on every mined task: (wall - test time) / pairs."""
        if not self.run_available(repo):
            self.rows.append(Row(number, label, "n/a (run not available)", "-", "-"))
            return
        say(f"row {number}: run -c noop.yaml (run.history: {history})")
        config = self.root / "noop.yaml"
        config.write_text("name: noop\nadapter: noop\n", encoding="utf-8")
        write_repo_config(repo, history=history)
        log, env = self.test_log("run")
        try:
            result = measure([*GITGAUGE, "run", "-c", str(config)], cwd=repo, env=env)
        finally:
            write_repo_config(repo)
        pairs = len(task_texts(repo))
        runs, test_seconds = clock.total(log)
        if runs != 2 * pairs:
            raise BenchError(f"run: expected {2 * pairs} test runs, counted {runs}")
        overhead = (result.seconds - test_seconds) / pairs
        self.rows.append(
            Row(
                number,
                label,
                f"{ms(overhead)} (wall {result.seconds:.2f} s - {runs} tests {test_seconds:.2f} s)",
                f"test run: {ms(clock.wall)}; worktree add + remove: {ms(bare)}",
                f"{overhead / clock.wall:.2f}x test, {overhead / bare:.2f}x worktree",
            )
        )

    # 6 -------------------------------------------------------------------------------------

    def isolated_workspace(self, history: Path) -> None:
        # Imported here: everything else goes through the CLI, as a user would.
        from gitgauge.core.git import Repository
        from gitgauge.running.workspace import TaskWorkspaces

        say("row 6: isolated workspace vs git worktree add")
        repo = Repository(history)
        # The newest possible base: the copy holds (almost) the whole history, the worst case.
        base = git("rev-parse", "HEAD~1", cwd=history).strip()
        commits = int(git("rev-list", "--count", base, cwd=history))
        warnings: list[str] = []
        prepare: list[float] = []
        further: list[float] = []
        for _ in range(self.sizes.repeats):
            started = time.perf_counter()
            with TaskWorkspaces(
                repo, base, history="isolated", link=[], warn=warnings.append
            ) as prepared:
                with prepared.workspace():
                    prepare.append(time.perf_counter() - started)
                started = time.perf_counter()
                with prepared.workspace():
                    further.append(time.perf_counter() - started)
        plain: list[float] = []
        holder = Path(tempfile.mkdtemp(prefix="plain-wt-", dir=self.root))
        for n in range(self.sizes.repeats):
            path = holder / f"wt{n}"
            started = time.perf_counter()
            git("worktree", "add", "--detach", "--quiet", str(path), base, cwd=history)
            plain.append(time.perf_counter() - started)
            git("worktree", "remove", "--force", str(path), cwd=history)
        shutil.rmtree(holder)
        first, again, checkout = min(prepare), min(further), min(plain)
        self.rows.append(
            Row(
                "6",
                f"isolated workspace: history copy + first checkout ({commits:,} commits)",
                f"{first:.2f} s",
                f"git worktree add of base: {ms(checkout)}",
                f"{first / checkout:.2f}x",
            )
        )
        self.rows.append(
            Row(
                "6b",
                "isolated workspace: each further checkout of the same task",
                ms(again),
                f"git worktree add of base: {ms(checkout)}",
                f"{again / checkout:.2f}x",
            )
        )
        # A run over several tasks shares its copies: the next task (base 100 commits later)
        # borrows the previous copy's objects and packs only the commits in between.
        from gitgauge.running.workspace import HistoryCopies

        older = git("rev-parse", "HEAD~101", cwd=history).strip()
        chained: list[float] = []
        for _ in range(self.sizes.repeats):
            with HistoryCopies(repo) as copies:
                copies.get(older)
                started = time.perf_counter()
                with TaskWorkspaces(
                    repo, base, history="isolated", link=[], warn=warnings.append, copies=copies
                ) as prepared:
                    with prepared.workspace():
                        chained.append(time.perf_counter() - started)
        next_task = min(chained)
        self.rows.append(
            Row(
                "6c",
                "isolated workspace of a run's next task (base 100 commits later): chained copy",
                ms(next_task),
                f"git worktree add of base: {ms(checkout)}",
                f"{next_task / checkout:.2f}x",
            )
        )
        if warnings:
            self.notes.append(f"row 6 warnings: {'; '.join(warnings)}")


def task_texts(repo: Path) -> list[str]:
    """The saved tasks without their time stamps, to compare one mine with another."""
    texts = []
    for path in sorted((repo / ".gitgauge" / "tasks").glob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts.append("\n".join(line for line in lines if not line.startswith("minedAt")))
    return texts


def isolate_environment(root: Path) -> None:
    """Children see a fresh HOME and git config (the user's aliases, hooks and signing settings
    must not change the figures) and make their temporary worktrees under `root`."""
    home = root / "home"
    temp = root / "tmp"
    home.mkdir()
    temp.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench\n\temail = bench@gitgauge.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
    ):
        os.environ.pop(name, None)
    os.environ.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        TMPDIR=str(temp),
    )
    tempfile.tempdir = str(temp)


def machine_facts() -> list[str]:
    model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    return [
        f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}",
        f"machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores"
        + (f" ({model})" if model else ""),
        f"python:  {platform.python_version()}",
        f"git:     {git_version.strip().removeprefix('git version ')}",
        f"load:    {load_average()} at the start",
    ]


def load_average() -> str:
    """Other work on the machine skews every figure: print it with them."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--quick", action="store_true", help="small sizes (seconds, for the smoke test)"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where to build the repositories and worktrees (default: the system temporary "
        "directory; a tmpfs such as /dev/shm keeps a throttled disk out of the figures)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    options = parser.parse_args(argv)
    sizes = Sizes.quick() if options.quick else Sizes.full()
    for line in machine_facts():
        print(line, flush=True)
    root = Path(tempfile.mkdtemp(prefix="gitgauge-bench-", dir=options.dir)).resolve()
    started = time.perf_counter()
    try:
        isolate_environment(root)
        bench = Bench(sizes, root)
        history = bench.classification()
        bench.verification()
        bench.isolated_workspace(history)
    except BenchError as error:
        print(f"bench: error: {error}", file=sys.stderr)
        return 1
    finally:
        if options.keep:
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    rows = sorted(bench.rows, key=lambda row: (int(row.number[0]), row.number))
    print(f"total: {time.perf_counter() - started:.0f} s")
    print()
    print(
        tabulate(
            [(r.number, r.measure, r.gitgauge, r.baseline, r.ratio, r.goal, r.met) for r in rows],
            headers=HEADER,
            tablefmt="github",
        )
    )
    print()
    for note in bench.notes:
        print(f"- {note}")
    print(f"- load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
