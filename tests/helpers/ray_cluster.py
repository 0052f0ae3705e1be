"""A real two-node Ray cluster on loopback addresses, started once per test module with
`ray start` (each node its own TMPDIR, HOME and marker, so a test can find and kill a node's
processes), the flags and run folder the Ray tests read, and what they share besides: a driver
without the ray extra or of another gitgauge version, a command interrupted or a node killed while
both nodes work. A module that uses the `cluster` fixture beside another one sets `RAY_NODE_IPS`
(two loopback addresses of its own): the test workers run modules side by side, and two clusters
must not share a node address."""

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import gitgauge
from helpers.processes import wait_until_gone
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


def nodes_sandboxed() -> bool:
    """Whether the pairs run in bwrap here (and on the loopback nodes): under CI it must work."""
    from gitgauge.core.sandbox import probe

    boxed = probe(os.environ, network=True)[0] is not None
    if not boxed and os.environ.get("CI") == "true":
        pytest.fail("the ray tests need a working bwrap in CI")
    return boxed


def statuses_by_config_and_kind(
    rows: Iterable[tuple[str, object, object]],
) -> dict[tuple[str, object], set[object]]:
    """The statuses of (config, kind, status) rows, by config and kind."""
    grouped: dict[tuple[str, object], set[object]] = {}
    for config, kind, status in rows:
        grouped.setdefault((config, kind), set()).add(status)
    return grouped


NEEDS_THE_EXTRA = (
    "gitgauge: error: --executor ray needs the optional extra: pip install 'gitgauge[ray]'"
)
NEVER_IMPORTS_RAY = (
    "import sys\n"
    "from gitgauge.cli import main\n"
    "sys.argv = ['gitgauge', *sys.argv[1:]]\n"
    "try:\n    main()\nexcept SystemExit as end:\n    assert not end.code, end.code\n"
    "assert 'ray' not in sys.modules, 'ray was imported'\n"
)
"""`python -c` it with gitgauge's arguments: the command succeeds and never imports ray."""


def without_ray(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine without the extra: a `ray` package that fails to import."""
    shadow = tmp_path / "no-ray" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    return dict(os.environ, PYTHONPATH=str(shadow.parent))


def assert_runs_without_importing_ray(args: list[str], cwd: Path) -> None:
    """`gitgauge ARGS` (the local executor) works and leaves ray unimported: start-up time and
    memory stay what they were without the extra."""
    local = subprocess.run(
        [sys.executable, "-c", NEVER_IMPORTS_RAY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert local.returncode == 0, local.stderr


DRIVER_VERSION = "0.0.0+driver"


def driver_of_another_version(tmp_path: Path) -> dict[str, str]:
    """The environment of a driver whose gitgauge (a copy of the installed one) says it is
    DRIVER_VERSION; the nodes run the installed one."""
    shadow = tmp_path / "driver" / "gitgauge"
    shutil.copytree(Path(gitgauge.__file__).parent, shadow)
    init = shadow / "__init__.py"
    init.write_text(
        re.sub(r'__version__ = "[^"]*"', f'__version__ = "{DRIVER_VERSION}"', init.read_text())
    )
    return dict(os.environ, PYTHONPATH=str(shadow.parent))


def version_refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a command of `driver_of_another_version` fails with, naming both versions."""
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert f"has gitgauge {gitgauge.__version__}, this machine {DRIVER_VERSION}" in line
    return line


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    """A folder for the marks the processes a test starts on the nodes leave (the loopback nodes
    share this machine's file system)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


def wait_while_running(
    child: subprocess.Popen[str], ready: Callable[[], bool], *, pause: float
) -> None:
    """Until `ready()` (90 seconds at most), `child` still running all along."""
    deadline = time.monotonic() + 90
    while not ready() and time.monotonic() < deadline:
        assert child.poll() is None, child.communicate()
        time.sleep(pause)


def interrupt_once_both_nodes_work(
    child: subprocess.Popen[str], marks: Path, pid_of: Callable[[Path], int]
) -> None:
    """Ctrl-C for `child` once each node runs one of its processes (each leaves a mark in
    `marks`, `pid_of` reads its pid); asserts `child` stopped as interrupted, those gone."""
    wait_while_running(child, lambda: len(list(marks.iterdir())) >= 2, pause=0.2)
    pids = [pid_of(path) for path in marks.iterdir()]
    assert len(pids) == 2, "both nodes should be running a process of the command"
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=90)
    assert child.returncode == 130, stderr
    assert "interrupted" in stderr
    assert all(wait_until_gone(pid) for pid in pids), "a process outlived the command"


def kill_the_second_node_once_it_works(
    cluster: Cluster, child: subprocess.Popen[str], marks: Path, ip: str
) -> str:
    """Kills node `ip` (the fixture's `n2`) once a process of `child` runs there (its mark in
    `marks` starts `n2-`); what `child` printed, which must end well all the same."""
    wait_while_running(child, lambda: bool(list(marks.glob("n2-*"))), pause=0.1)
    assert list(marks.glob("n2-*")), "nothing started on the second node"
    cluster.kill(ip)
    stdout, stderr = child.communicate(timeout=180)
    assert child.returncode == 0, stderr
    return stdout
