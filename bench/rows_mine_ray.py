"""Row 3r: `mine --executor ray` on a two-node loopback Ray cluster (one CPU each) against
`mine -j 1` and `mine -j 2` on this machine, on the same repository of sleep-bound suites (the
ratio shows scheduling, not CPU). The cluster is started for the row and stopped by the pids it
started (`ray_executor.Node`), never with `ray stop`. Without the ray extra the row says so.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from common import GITGAUGE, Bench, BenchError, Measured, Row, measure, say, task_texts, verdict
from ray_executor import Node, free_port
from repos import fast_import, verification_commits, write_repo_config

HEAD_IP = "127.0.0.6"
SECOND_IP = "127.0.0.7"
"""Not the addresses of `ray_executor.py` or the tests' clusters: they may run at the same time."""


def ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return shutil.which("ray", path=str(Path(sys.executable).parent)) is not None


def mine_ray_row(bench: Bench) -> None:
    sizes = bench.sizes
    count = max(4, sizes.candidates // 2)
    label = f"speed-up: mine --executor ray, 2 nodes vs -j 1 ({count} candidates, sleep-bound)"
    if not ray_installed():
        bench.rows.append(Row("3r", label, "skipped", "ray is not installed", "n/a"))
        return
    repo = bench.root / "verify-ray"
    say(f"row 3r: building {count} candidates whose suite sleeps {sizes.ray_sleep} s")
    fast_import(
        repo,
        verification_commits(
            candidates=count, fillers=sizes.fillers, tree_files=0, sleep=sizes.ray_sleep
        ),
    )
    write_repo_config(repo)
    # The nodes set $BENCH_TEST_LOG (the suite appends to it) from this machine's value.
    config = repo / "gitgauge.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("run:\n", "run:\n  ray:\n    env: [BENCH_TEST_LOG]\n"))
    one = _mine(bench, repo, count, "-j", "1")
    two = _mine(bench, repo, count, "-j", "2")
    # Short paths: Ray's unix sockets live under its temp dir (at most 107 characters).
    base = Path(tempfile.mkdtemp(prefix="gg-bmr-", dir="/tmp"))
    head, second = Node(base, HEAD_IP, "h"), Node(base, SECOND_IP, "s")
    try:
        port = free_port(HEAD_IP)
        address = f"{HEAD_IP}:{port}"
        say("  starting a two-node cluster")
        head.start(None, port)
        second.start(address, port)
        flags = ("--executor", "ray", "--ray-address", address)
        ray = _mine(bench, repo, count, *flags)
    finally:
        second.stop()
        head.stop()
        shutil.rmtree(base, ignore_errors=True)
    if task_texts(repo) != one.tasks:
        raise BenchError("mine --executor ray did not save the same tasks as mine -j 1")
    speedup = one.run.seconds / ray.run.seconds
    bench.rows.append(
        Row(
            "3r",
            label,
            f"ray: {ray.run.seconds:.2f} s",
            f"-j 1: {one.run.seconds:.2f} s; -j 2: {two.run.seconds:.2f} s "
            f"({one.run.seconds / two.run.seconds:.2f}x)",
            f"{speedup:.2f}x",
            ">= 1.8x",
            verdict(speedup, at_least=1.8),
        )
    )
    bench.notes.append(
        f"row 3r: the suite sleeps {sizes.ray_sleep} s, 3 runs per candidate; the Ray mine "
        f"includes connecting and checking the cluster and starting its workers (best of "
        f"{sizes.mine_repeats}); it saved the same {count} tasks as -j 1"
    )


class _Mined:
    def __init__(self, run: Measured, tasks: list[str]) -> None:
        self.run = run
        self.tasks = tasks


def _mine(bench: Bench, repo: Path, count: int, *flags: str) -> _Mined:
    """The fastest of fresh mines (nothing remembered)."""
    best: _Mined | None = None
    for _ in range(bench.sizes.mine_repeats):
        shutil.rmtree(repo / ".gitgauge", ignore_errors=True)
        log, env = bench.test_log(f"{repo.name}-{'-'.join(flags)}")
        result = measure([*GITGAUGE, "mine", "--last", "1000000", *flags], cwd=repo, env=env)
        tasks = task_texts(repo)
        runs = len(log.read_text().splitlines()) if log.exists() else 0
        if len(tasks) != count or runs != 3 * count:
            raise BenchError(
                f"mine {' '.join(flags)} verified {len(tasks)} of {count} candidates in {runs} "
                f"suite runs:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}"
            )
        if best is None or result.seconds < best.run.seconds:
            best = _Mined(result, tasks)
    assert best is not None
    return best
