"""The benchmark still runs: `python bench/run.py --smoke` (its least sizes) exits 0 and prints
every row.

No timing is asserted (speed goals live in bench/, not in the test suite); only that each row of
docs/performance.md is still measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The benchmark: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run.py"

ROW_LABELS = (
    "classification: mine --dry-run",
    "with duplicate detection: mine --dry-run --last 300 (",
    "without duplicate detection: mine --dry-run --last 300 (",
    "verification overhead / candidate",
    "verification overhead / candidate, 200-file tree",
    "speed-up: mine -j 2 vs -j 1",
    "speed-up: mine --executor ray, 2 nodes vs -j 1",
    "run overhead / pair (noop adapter)",
    "run overhead / pair (noop adapter), run.history: full",
    "run overhead / pair (noop adapter), 200-file tree",
    "sandbox cost / pair (noop adapter, run.sandbox: bwrap)",
    "peak memory: mine --dry-run (row 1)",
    "peak memory: mine -j 2 (row 3)",
    "isolated workspace: history copy + first checkout",
    "isolated workspace: each further checkout of the same task",
    "isolated workspace of a run's next task",
    "parse a 5,000-test JUnit report",
    "peak Python memory of that parse",
    "suite runs / candidate with per-test reports",
    "checkout cost / candidate, 200-file tree",
    "git work / pair: grading from a fresh checkout vs before",
    "git work / pair, 1,000-file tree: fresh checkout vs before",
    "mine wall / decisive suite time, 1,000-file tree",
    "grading / pair, the agent adds 6 files (additions rule, interpreter asked)",
    "gitgauge's peak memory, the agent writes 40 MB (over run.limits)",
)


def test_the_smoke_benchmark_prints_every_row(tmp_path: Path) -> None:
    # TMPDIR: the benchmark's repositories and gitgauge's worktrees land in tmp_path.
    env = dict(os.environ, TMPDIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "command: " in out and "bench/run.py --smoke" in out
    assert "cores" in out and "python:" in out and "git:" in out
    header = next(line for line in out.splitlines() if line.startswith("| #"))
    for column in ("measure", "gitgauge", "baseline", "ratio", "goal", "met"):
        assert column in header
    rows = [line for line in out.splitlines() if line.startswith("| ") and line != header]
    for label in ROW_LABELS:
        assert any(label in row for row in rows), f"row {label!r} missing:\n{out}"
    # Every row carries a figure, not an error; `run` exists, so row 4 is measured.
    assert "n/a (run not available)" not in out
    assert not list(tmp_path.glob("gitgauge-bench-*")), "the benchmark left its repositories"
