"""The rows of `gitgauge mine`: classification speed (1), duplicate detection's share of it (1b,
1c), verification overhead (2, 2b), the speed-up of `-j 2` (3), and the peak memory of those
same mines (5a, 5b)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import (
    GITGAUGE,
    TEST_COMMAND,
    Bench,
    BenchError,
    Measured,
    Row,
    TestClock,
    Verification,
    best_of,
    git,
    measure,
    mib,
    ms,
    say,
    task_texts,
    verdict,
)
from repos import (
    backport_history_commits,
    fast_import,
    history_commits,
    verification_commits,
    write_repo_config,
)


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


# 1 and 5a ------------------------------------------------------------------------------------


def classification(bench: Bench) -> Path:
    sizes = bench.sizes
    say(f"building a {sizes.history_commits:,}-commit history with git fast-import")
    repo = bench.root / "history"
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
    bench.rows.append(
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
    bench.notes.append(
        f"row 1: `gitgauge --version` (interpreter start-up and imports alone) takes "
        f"{version.seconds:.2f} s of the {dry.seconds:.2f} s"
    )
    bench.notes.append(
        f"row 5a: gitgauge's peak with --last {tenth}: {mib(shorter.peak_kib)}, with --last "
        f"{last}: {mib(dry.peak_kib)}; the git log it streams from peaks apart, like the "
        "baseline's"
    )
    own = dry.peak_kib
    bench.rows.append(
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


# 1b, 1c --------------------------------------------------------------------------------------

WITHOUT_DUPLICATES = (
    # gitgauge has no option to leave duplicate detection out: the same CLI, with the one
    # function that finds duplicates answering "none" (what `mine` did before it had them).
    "import gitgauge.mining.mine as mine\n"
    "mine.duplicates = lambda repo, candidates, *, mined: {}\n"
    "from gitgauge.cli import main\n"
    "main()\n"
)


def duplicate_detection(bench: Bench) -> None:
    """Rows 1b and 1c: `mine --dry-run` on a history with backported fixes, with and without
    duplicate detection, each against a bare `git log --name-only` taken in turns with them."""
    sizes = bench.sizes
    say(f"building a {sizes.history_commits:,}-commit history with backports (git fast-import)")
    repo = bench.root / "backports"
    started = time.perf_counter()
    fast_import(repo, backport_history_commits(sizes.history_commits))
    say(f"  built in {time.perf_counter() - started:.1f} s")
    write_repo_config(repo)
    backports = git("log", "--format=%s", "HEAD", cwd=repo).count("for a backport")
    last = str(sizes.history_commits)
    say("rows 1b, 1c: mine --dry-run with and without duplicate detection vs git log --name-only")
    dry = ["mine", "--dry-run", "--last", last]
    with_, without, log = best_of(
        sizes.classification_repeats,
        [*GITGAUGE, *dry],
        [sys.executable, "-c", WITHOUT_DUPLICATES, *dry],
        ["git", "log", "--name-only", f"--max-count={last}", "HEAD"],
        cwd=repo,
    )
    found = with_.stdout.count("[duplicate of ")
    candidates = without.stdout.count("[candidate (")
    if found != backports or "[duplicate of " in without.stdout:
        raise BenchError(
            f"mine --dry-run found {found} duplicates of {backports} backports:\n"
            f"{with_.stdout[-2000:]}"
        )
    if with_.stdout.count("[candidate (") + found != candidates:
        raise BenchError("with and without duplicate detection, the candidates differ")
    label = f"mine --dry-run --last {last} ({candidates:,} candidates, {found} duplicates)"
    baseline = f"git log --name-only: {log.seconds:.2f} s"
    for number, measured, what, goal in (
        ("1b", with_, "with duplicate detection", "<= 1.5x"),
        ("1c", without, "without duplicate detection", "-"),
    ):
        ratio = measured.seconds / log.seconds
        met = verdict(ratio, at_most=1.5) if goal != "-" else "-"
        seconds = f"{measured.seconds:.2f} s"
        bench.rows.append(
            Row(number, f"{what}: {label}", seconds, baseline, f"{ratio:.2f}x", goal, met)
        )
    bench.notes.append(
        f"rows 1b-1c: duplicate detection (one git log -p | git patch-id of {candidates:,} "
        f"candidates) adds {with_.seconds - without.seconds:+.2f} s; gitgauge's peak "
        f"{mib(with_.peak_kib)} with it, {mib(without.peak_kib)} without"
    )


# 2, 2b, 3, 5b --------------------------------------------------------------------------------


def build_verification_repo(bench: Bench, name: str, *, candidates: int, tree_files: int) -> Path:
    say(f"building {name}: {candidates} candidates, {tree_files:,} extra files in the tree")
    repo = bench.root / name
    fast_import(
        repo,
        verification_commits(
            candidates=candidates,
            fillers=bench.sizes.fillers,
            tree_files=tree_files,
            sleep=bench.sizes.sleep,
        ),
    )
    write_repo_config(repo)
    return repo


def test_clock(bench: Bench, repo: Path) -> TestClock:
    """Run the test command directly in the checkout, started as gitgauge starts it (through
    the shell), and split its wall time into what its own clock sees and the launch."""
    walls: list[float] = []
    launches: list[float] = []
    unclocked = TestClock(wall=0.0, launch=0.0)
    for _ in range(max(3, 3 * bench.sizes.repeats)):
        log, env = bench.test_log("direct")
        started = time.perf_counter()
        subprocess.run(
            TEST_COMMAND, shell=True, cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL
        )
        walls.append(time.perf_counter() - started)
        _, inside = unclocked.total(log)
        launches.append(max(0.0, walls[-1] - inside))
    return TestClock(wall=statistics.mean(walls), launch=statistics.mean(launches))


def bare_worktree_seconds(bench: Bench, repo: Path, cycles: int) -> float:
    """Mean cost of one plain `git worktree add` + `git worktree remove`, cycling through
    the commits gitgauge checks out (each fix and its parent)."""
    shas = git("rev-list", "--max-count", str(max(cycles, 2)), "HEAD", cwd=repo).split()
    holder = Path(tempfile.mkdtemp(prefix="bare-wt-", dir=bench.root))
    total = 0.0
    for n in range(cycles):
        path = holder / f"wt{n}"
        started = time.perf_counter()
        git("worktree", "add", "--detach", "--quiet", str(path), shas[n % len(shas)], cwd=repo)
        git("worktree", "remove", "--force", str(path), cwd=repo)
        total += time.perf_counter() - started
    shutil.rmtree(holder)
    return total / cycles


def mine(bench: Bench, repo: Path, clock: TestClock, *, jobs: int, expect: int) -> Mined:
    """Fresh `mine`s (nothing remembered from an earlier one); the one with the least
    overhead, since the machine only ever adds noise."""
    best: Mined | None = None
    for _ in range(bench.sizes.mine_repeats):
        shutil.rmtree(repo / ".gitgauge", ignore_errors=True)
        log, env = bench.test_log(f"{repo.name}-j{jobs}")
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


def verification(bench: Bench) -> Verification:
    """Rows 2, 3 and 5b on the verification repository; the run rows measure on it next."""
    sizes = bench.sizes
    count = sizes.candidates
    small = build_verification_repo(bench, "verify", candidates=count, tree_files=0)
    clock = test_clock(bench, small)
    say(f"  test command: {ms(clock.wall)} per run (sleep {sizes.sleep} s)")
    say(f"row 2: mine -j 1 of {count} candidates")
    one = mine(bench, small, clock, jobs=1, expect=count)
    bare = bare_worktree_seconds(bench, small, 2 * count)
    overhead_row(bench, "2", "verification overhead / candidate", one, bare, count)

    say("row 3: mine -j 2")
    two = mine(bench, small, clock, jobs=2, expect=count)
    if two.tasks != one.tasks or two.run.stdout != one.run.stdout:
        raise BenchError(
            "mine -j 2 did not save the same tasks or print the same lines as -j 1:\n"
            f"-j 1:\n{one.run.stdout[-2000:]}\n-j 2:\n{two.run.stdout[-2000:]}"
        )
    bench.notes.append(
        f"rows 2-3: the test command takes {ms(clock.wall)} a run started directly; -j 2 "
        f"saved the same {count} tasks and printed the same lines as -j 1; best of "
        f"{sizes.mine_repeats} mine(s) each"
    )
    speedup = one.run.seconds / two.run.seconds
    bench.rows.append(
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
    bench.rows.append(
        Row(
            "5b",
            "peak memory: mine -j 2 (row 3)",
            mib(own_two),
            f"mine -j 1: {mib(own_one)}",
            "n/a" if not (own_one and own_two) else f"{own_two / own_one:.2f}x",
        )
    )
    return Verification(small, clock, bare)


def verification_large_tree(bench: Bench) -> Verification:
    """Row 2b on a repository with a large tree; the run rows measure on it next."""
    sizes = bench.sizes
    large = build_verification_repo(
        bench,
        "verify-large",
        candidates=sizes.large_candidates,
        tree_files=sizes.large_tree_files,
    )
    say(f"row 2b: mine -j 1 of {sizes.large_candidates} candidates, large tree")
    clock_large = test_clock(bench, large)
    big = mine(bench, large, clock_large, jobs=1, expect=sizes.large_candidates)
    bare_large = bare_worktree_seconds(bench, large, 2 * sizes.large_candidates)
    overhead_row(
        bench,
        "2b",
        f"verification overhead / candidate, {sizes.large_tree_files:,}-file tree",
        big,
        bare_large,
        sizes.large_candidates,
    )
    return Verification(large, clock_large, bare_large)


def overhead_row(
    bench: Bench, number: str, label: str, mined: Mined, bare: float, candidates: int
) -> None:
    overhead = mined.overhead / candidates
    # Each candidate takes two worktrees: one at the fix, one at its parent.
    bare_per_candidate = 2 * bare
    ratio = overhead / bare_per_candidate
    wall, runs, tests = mined.run.seconds, mined.runs, mined.test_seconds
    bench.rows.append(
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
