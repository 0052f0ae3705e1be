"""A real two-node Ray cluster on loopback addresses, started once per test module with
`ray start` (each node its own TMPDIR, HOME and marker, so a test can find and kill a node's
processes), and the flags and run folder the Ray tests read. A module that uses the `cluster`
fixture beside another one sets `RAY_NODE_IPS` (two loopback addresses of its own): the test
workers run modules side by side, and two clusters must not share a node address."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.repos import GitRepo

HEAD_IP = "127.0.0.2"
SECOND_IP = "127.0.0.3"


def ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return shutil.which("ray", path=str(Path(sys.executable).parent)) is not None


def need_ray() -> None:
    if ray_installed():
        return
    if os.environ.get("CI") == "true":
        pytest.fail("the ray extra is missing in CI: .ci/run installs '.[test,ray]'")
    pytest.skip("ray is not installed: pip install -e '.[ray]'")


@dataclass
class Cluster:
    address: str
    temp: dict[str, Path]
    """Node ip -> that node's TMPDIR (where gitgauge works on the node)."""
    ray_temp: dict[str, Path]
    markers: dict[str, str]

    def pids(self, ip: str) -> list[int]:
        """The processes of one node: those whose environment carries its marker."""
        wanted = f"GITGAUGE_TEST_RAY_NODE={self.markers[ip]}".encode()
        found: list[int] = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if wanted in environ.split(b"\0"):
                found.append(int(entry.name))
        return found

    def kill(self, ip: str) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids(ip):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 2
            while self.pids(ip) and time.monotonic() < deadline:
                time.sleep(0.1)

    def leftovers(self) -> list[str]:
        return sorted(
            f"{ip}:{path.name}"
            for ip, folder in self.temp.items()
            for path in folder.iterdir()
            if path.name.startswith("gitgauge-")
        )


def free_port(ip: str) -> int:
    # Outside Ray's default worker port range (10002-19999).
    while True:
        with socket.socket() as probe:
            probe.bind((ip, 0))
            port = int(probe.getsockname()[1])
        if not 10002 <= port <= 19999:
            return port


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The module's cluster. Another module that imports this fixture sets `RAY_NODE_IPS` (two
    loopback addresses of its own): the test workers run modules side by side, and two clusters
    must not share a node address."""
    need_ray()
    head_ip, second_ip = getattr(request.module, "RAY_NODE_IPS", (HEAD_IP, SECOND_IP))
    # Short paths: Ray's unix sockets live under its temp dir (at most 107 characters).
    base = Path(tempfile.mkdtemp(prefix="gg-ray-"))
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@t.invalid\n", "utf-8")
    ray_bin = str(Path(sys.executable).parent / "ray")
    port = free_port(head_ip)
    nodes = Cluster(f"{head_ip}:{port}", {}, {}, {})
    try:
        for ip in (head_ip, second_ip):
            name = "n1" if ip == head_ip else "n2"
            nodes.temp[ip] = base / name / "tmp"
            nodes.ray_temp[ip] = base / name / "ray"
            nodes.temp[ip].mkdir(parents=True)
            nodes.markers[ip] = f"{base.name}-{name}"
            env = {
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC_", "GIT_", "RAY_", "GG_"))
            }
            env.update(
                HOME=str(home),
                TMPDIR=str(nodes.temp[ip]),
                GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
                GIT_CONFIG_NOSYSTEM="1",
                RAY_USAGE_STATS_ENABLED="0",
                GITGAUGE_TEST_RAY_NODE=nodes.markers[ip],
                # The nodes have no claude binary (this machine's may have one on PATH).
                GITGAUGE_CLAUDE_BIN=str(base / "no-claude-here"),
            )
            where = (
                ["--head", f"--port={port}", "--include-dashboard=false"]
                if ip == head_ip
                else [f"--address={nodes.address}"]
            )
            started = subprocess.run(
                [
                    ray_bin,
                    "start",
                    *where,
                    f"--node-ip-address={ip}",
                    "--num-cpus=1",
                    "--disable-usage-stats",
                    f"--temp-dir={nodes.ray_temp[ip]}",
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert started.returncode == 0, started.stderr[-2000:]
        yield nodes
    finally:
        for ip in nodes.markers:
            nodes.kill(ip)
        shutil.rmtree(base, ignore_errors=True)


def ray_flags(cluster: Cluster) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address]


def run_dir(repo: GitRepo, output: str) -> Path:
    match = re.search(r"results and logs: (\S+)/\n", output)
    assert match, output
    return Path(match.group(1))
