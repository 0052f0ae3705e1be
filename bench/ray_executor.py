"""The Ray executor's benchmark: `python bench/ray_executor.py [--pairs N] [--sleep S]`.

Needs the ray extra (`pip install -e '.[ray]'`). Starts its own Ray cluster on loopback addresses
(127.0.0.2 head, 127.0.0.3 second node, one CPU each; stopped by the pids it started, never with
`ray stop`), mines a small repository whose test command takes milliseconds, and prints ratios
measured in the same run:

- 7: per-pair time of `run --executor ray` against a local run (`-j 1`), noop adapter: what a pair
  costs to travel (Ray task, history copy, results and logs back), on one node;
- 7b: the speed-up of two nodes over one on sleep-bound agents (`script: sleep S`).

See docs/performance.md for the figures of the reference machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GITGAUGE = [sys.executable, "-m", "gitgauge"]
RUNNER = "import runpy, sys\nsys.path.insert(0, 'src')\n" + (
    "[runpy.run_path(str(p)) for p in sorted(__import__('pathlib').Path('tests').glob('*.py'))]\n"
)


def say(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def build_repo(root: Path, tasks: int) -> None:
    """`tasks` independent fixes, each adding its test; testCommand runs them all."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "bench")
    git(root, "config", "user.email", "bench@gitgauge.invalid")
    (root / "run_tests.py").write_text(RUNNER)
    (root / "src").mkdir()
    (root / "tests").mkdir()
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Initial")
    for number in range(tasks):
        module = root / "src" / f"m{number}.py"
        module.write_text("def value():\n    return 0\n")
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"Add m{number}")
        module.write_text("def value():\n    return 1\n")
        (root / "tests" / f"test_m{number}.py").write_text(
            f"from m{number} import value\nassert value() == 1\n"
        )
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"Fix m{number} value being wrong")
    config = {"testCommand": f"{sys.executable} -B run_tests.py"}
    (root / "gitgauge.yaml").write_text(json.dumps(config))


class Node:
    def __init__(self, base: Path, ip: str, name: str) -> None:
        self.ip = ip
        self.marker = f"{base.name}-{name}"
        # Short paths: Ray's unix sockets live under its temp dir (at most 107 characters).
        self.temp = base / name / "tmp"
        self.ray_temp = base / name / "ray"
        self.temp.mkdir(parents=True)

    def start(self, head: str | None, port: int) -> None:
        env = dict(os.environ, TMPDIR=str(self.temp), GITGAUGE_BENCH_RAY_NODE=self.marker)
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        where = (
            [f"--address={head}"]
            if head
            else ["--head", f"--port={port}", "--include-dashboard=false"]
        )
        subprocess.run(
            [
                str(Path(sys.executable).parent / "ray"),
                "start",
                *where,
                f"--node-ip-address={self.ip}",
                "--num-cpus=1",
                "--disable-usage-stats",
                f"--temp-dir={self.ray_temp}",
            ],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        """SIGTERM to every process of the node, SIGKILL to what is left after 2 s: waits only
        as long as a process still runs."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self._pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            deadline = time.monotonic() + 2
            while pids and time.monotonic() < deadline:
                time.sleep(0.1)
                pids = self._pids()
            if not pids:
                return

    def _pids(self) -> list[int]:
        wanted = f"GITGAUGE_BENCH_RAY_NODE={self.marker}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass
        return found


def free_port(ip: str) -> int:
    while True:
        with socket.socket() as probe:
            probe.bind((ip, 0))
            port = int(probe.getsockname()[1])
        if not 10002 <= port <= 19999:
            return port


def timed_run(repo: Path, config: Path, *flags: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [*GITGAUGE, "run", "-c", str(config), *flags], cwd=repo, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"bench: gitgauge run failed: {result.stderr[-2000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=6, help="tasks (= pairs per run)")
    parser.add_argument("--sleep", type=float, default=3.0, help="seconds a sleeping agent takes")
    options = parser.parse_args()
    if shutil.which("ray", path=str(Path(sys.executable).parent)) is None:
        print("bench: ray is not installed: pip install -e '.[ray]'", file=sys.stderr)
        return 1
    base = Path(tempfile.mkdtemp(prefix="gg-bench-ray-"))
    head = Node(base, "127.0.0.2", "h")
    second = Node(base, "127.0.0.3", "s")
    try:
        repo = base / "repo"
        say(f"building and mining {options.pairs} tasks")
        build_repo(repo, options.pairs)
        subprocess.run([*GITGAUGE, "mine"], cwd=repo, check=True, capture_output=True)
        noop = base / "noop.yaml"
        noop.write_text("name: noop\nadapter: noop\n")
        sleeper = base / "sleep.yaml"
        sleeper.write_text(f"name: sleep\nadapter: script\ncommand: sleep {options.sleep:g}\n")
        port = free_port(head.ip)
        address = f"{head.ip}:{port}"
        say("starting the head node")
        head.start(None, port)
        ray_flags = ("--executor", "ray", "--ray-address", address)
        # The first Ray run of a cluster pays for starting its workers: warm up once.
        timed_run(repo, noop, *ray_flags)
        say("row 7: noop, local vs ray (one node)")
        local = timed_run(repo, noop)
        remote = timed_run(repo, noop, *ray_flags)
        say("row 7b: sleeping agents on one node, then two")
        one_node = timed_run(repo, sleeper, *ray_flags)
        second.start(address, port)
        timed_run(repo, noop, *ray_flags)  # warm the second node's workers
        two_nodes = timed_run(repo, sleeper, *ray_flags)
    finally:
        second.stop()
        head.stop()
        shutil.rmtree(base, ignore_errors=True)
    pairs = options.pairs
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) at the end")
    print()
    print("| # | measure | gitgauge | baseline | ratio |")
    print("| --- | --- | --- | --- | --- |")
    print(
        f"| 7 | time / pair, `--executor ray` (1 node), noop | {remote / pairs * 1000:.0f} ms "
        f"| local `-j 1`: {local / pairs * 1000:.0f} ms | {remote / local:.2f}x |"
    )
    print(
        f"| 7b | {pairs} pairs of `sleep {options.sleep:g}` agents, 2 nodes | {two_nodes:.1f} s "
        f"| 1 node: {one_node:.1f} s | {one_node / two_nodes:.2f}x speed-up |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
