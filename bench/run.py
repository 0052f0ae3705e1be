"""gitgauge's speed benchmark: `python bench/run.py [--quick | --smoke]`.

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

The rows live by family: rows_mine.py (1, 1b, 1c, 2, 3, 5), rows_mine_ray.py (3r: a two-node Ray
cluster), rows_run.py (4), rows_workspace.py (6), rows_pertest.py (7), rows_grading.py (8, and
2c), rows_additions.py (8c, 8d);
common.py measures and holds the rows, repos.py builds the repositories.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import rows_additions
import rows_grading
import rows_mine
import rows_mine_ray
import rows_pertest
import rows_run
import rows_workspace
from common import Bench, BenchError, Sizes, say
from tabulate import tabulate

HEADER = ("#", "measure", "gitgauge", "baseline", "ratio", "goal", "met")


def measure_rows(bench: Bench) -> None:
    """Every row, in the order they are measured (the table sorts them by number)."""
    history = rows_mine.classification(bench)  # 1, 5a
    rows_mine.duplicate_detection(bench)  # 1b, 1c
    verified = rows_mine.verification(bench)  # 2, 3, 5b
    rows_mine_ray.mine_ray_row(bench)  # 3r
    rows_run.run_rows(bench, verified)  # 4, 4b
    rows_additions.additions_rows(bench, verified)  # 8c, 8d (on the tasks mined)
    large_tree = rows_mine.verification_large_tree(bench)  # 2b
    rows_run.run_row_large_tree(bench, large_tree)  # 4c
    rows_workspace.isolated_workspace(bench, history)  # 6, 6b, 6c
    rows_pertest.parsing(bench)  # 7a, 7b
    rows_pertest.suite_runs(bench, verified)  # 7c
    rows_pertest.checkout_cost(bench, large_tree)  # 7d
    rows_grading.grading_rows(bench, verified.repo)  # 8, 8b
    rows_grading.mine_large_tree(bench)  # 2c


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
    sizes_group = parser.add_mutually_exclusive_group()
    sizes_group.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    sizes_group.add_argument(
        "--smoke",
        action="store_true",
        help="the least that measures every row (tests/test_bench_smoke.py); no figures to quote",
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
    sizes = Sizes.smoke() if options.smoke else Sizes.quick() if options.quick else Sizes.full()
    for line in machine_facts():
        print(line, flush=True)
    root = Path(tempfile.mkdtemp(prefix="gitgauge-bench-", dir=options.dir)).resolve()
    started = time.perf_counter()
    try:
        isolate_environment(root)
        bench = Bench(sizes, root)
        measure_rows(bench)
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
