"""`run.executor: ray`: one pair = one Ray task, spread over a Ray cluster (docs/cluster.md).

The only module that imports `ray` (the optional extra `gitgauge[ray]`); it is loaded only when a
run asks for it. Each task's history up to `base` is packed once and put in the object store once;
a node turns it into a history copy the first time one of its pairs needs it. Results and logs
come back and are written into the local run directory as each pair finishes, so `report`,
`compare`, `--resume` and `--retry-errors` work as after a local run.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from gitgauge import __version__
from gitgauge.core import fingerprint, process
from gitgauge.core.errors import ConfigError, GitGaugeError
from gitgauge.core.records import RunResult
from gitgauge.core.schema import RaySettings, RepoConfig
from gitgauge.core.store import atomic_write_bytes, atomic_write_json
from gitgauge.running.executors import PairBatch, PairExecutor
from gitgauge.running.executors.shipped import (
    FixFiles,
    NodeFacts,
    NodePairOutcome,
    NodePairRequest,
    fix_files,
    history_tips,
    node_root,
    pack_history,
    probe_node,
    remove_node_run,
    run_on_node,
)
from gitgauge.running.executors.shipped_harness import (
    ShippedHarness,
    harness_changes,
    ship_harness,
)

if TYPE_CHECKING:
    from gitgauge.running.pair import Pair
    from gitgauge.running.plan import PairJob, PlannedConfig

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError:  # pragma: no cover - the CLI checks first, with a one-line error
    ray = None

EXTRA_HINT = "pip install 'gitgauge[ray]'"
CONNECT_SECONDS = 10.0
"""How long the cluster's address may take to answer before the run gives up."""
PROBE_SECONDS = 60.0
"""How long the version check on every node may take."""
MAX_RETRIES = 2
"""How often Ray runs a pair again after its worker or node died, before it is `executor-lost`."""
STOP_GRACE_SECONDS = 20.0
"""After an interrupt: how long pairs get to stop and remove their workspaces."""
NODE_FILE = "node.json"
"""Written into each pair's log directory: the node that ran it."""


class ExecutorError(GitGaugeError):
    """The Ray cluster cannot be used (unreachable, wrong gitgauge version, no git)."""


def ray_available() -> bool:
    return ray is not None


class RayExecutor(PairExecutor):
    """Every pending pair submitted at once as a Ray task; results as pairs finish."""

    name = "ray"

    def __init__(self, settings: RaySettings, nodes: dict[str, str]) -> None:
        self.settings = settings
        self.nodes = nodes
        """Node id -> its address, as checked at the start of the run (pairs on nodes that
        join later check the version themselves)."""
        self.run_id: str | None = None

    @classmethod
    def connect(cls, config: RepoConfig, *, address: str | None) -> RayExecutor:
        settings = config.run.ray
        if config.worktree.link and settings.link == "error":
            raise ConfigError(
                f"gitgauge.yaml: worktree.link: {', '.join(config.worktree.link)} cannot be "
                "linked on a Ray node (it is a directory of this machine): install dependencies "
                "with setupCommand, or set run.ray.link: skip"
            )
        if config.run.history == "full":
            raise ConfigError(
                "gitgauge.yaml: run.history: full needs your repository next to the agent; "
                "the ray executor ships only the history up to each task's base: use "
                "run.history: isolated (the default)"
            )
        if ray is None:
            raise ConfigError(f"--executor ray needs the optional extra: {EXTRA_HINT}")
        address = address or settings.address or os.environ.get("RAY_ADDRESS") or None
        if address is not None and address != "auto":
            _check_reachable(address)
        options: dict[str, Any] = {
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            # Nothing of this machine's environment travels but `run.ray.env`, per pair.
            "runtime_env": {},
        }
        if address is None:
            options["include_dashboard"] = False
        try:
            ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, TimeoutError) as error:
            raise ExecutorError(
                f"could not connect to the Ray cluster at {address}: {' '.join(str(error).split())}"
            ) from None
        try:
            nodes = _alive_nodes()
            _check_nodes(nodes)
        except BaseException:
            ray.shutdown()
            raise
        return cls(settings, nodes)

    def run_pairs(self, batch: PairBatch) -> Generator[RunResult, None, None]:
        pending, pair, gate = batch.pending, batch.pair, batch.gate
        # Every pair starts at once: `gate` only counts them (a stopped config is reported).
        self.run_id = pair.run_id
        env = {name: os.environ[name] for name in self.settings.env if name in os.environ}
        for name in self.settings.env:
            if name not in os.environ:
                pair.warn(f"run.ray.env: {name} is not set here; the workers do not get it")
        options = task_options(self.settings.resources)
        packs: dict[tuple[str, ...], Any] = {}
        fixes: dict[tuple[str, bool], FixFiles] = {}
        harnesses: dict[str, Any] = {}
        for job in pending:
            name = job.planned.config.name
            if name not in harnesses:
                harnesses[name] = ray.put(self._ship_harness(job.planned, pair))
        running: dict[Any, PairJob] = {}
        try:
            for job in pending:
                task = job.task
                tips = history_tips(task)
                if tips and tips not in packs:  # a fixture has no history: its task file is all
                    packs[tips] = ray.put(pack_history(pair.repo, tips))
                reads_fix = job.planned.adapter.reads_fix
                key = (task.id, reads_fix)
                if key not in fixes:
                    fixes[key] = fix_files(
                        pair.repo, task, with_source=reads_fix, judging=pair.config.chains.judge
                    )
                request = NodePairRequest(
                    run_id=pair.run_id,
                    planned=job.planned,
                    task=task,
                    attempt=job.attempt,
                    config=pair.config,
                    fix=fixes[key],
                    env=env,
                    tags=pair.repo.tags_at(task.base) if tips else (),
                    mode=pair.mode,
                )
                # The pack goes inside a list: Ray then does not fetch it to the node before
                # the pair starts, and a node that already has the copy never fetches it.
                ref = _run_pair.options(**options).remote(
                    request, [packs[tips]] if tips else [], harnesses[job.planned.config.name]
                )
                running[ref] = job
            if pending:
                batch.on_start(pending[0].planned, pending[0].task)
            while running:
                # A short timeout: Ctrl-C is seen between waits.
                ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
                for ref in ready:
                    job = running.pop(ref)
                    result = self._receive(ref, job, pair)
                    if gate is not None:
                        gate.finished(job, result)
                    yield result
        finally:
            if running:
                self._stop(list(running))

    @staticmethod
    def _ship_harness(planned: PlannedConfig, pair: Pair) -> ShippedHarness:
        """The config's harness sources by value, as the run recorded them (a source changed
        since is refused: the pairs would run another harness than the one recorded)."""
        shipped = ship_harness(planned.harness)
        stored = fingerprint.load(pair.store.run_dir(pair.run_id), planned.config.name)
        if stored is not None:
            changed = harness_changes(shipped, stored.record)
            if changed:
                raise ConfigError(
                    f"{planned.source}: {', '.join(changed)} changed since run {pair.run_id} "
                    "recorded it: restore it, or start a new run"
                )
        return shipped

    def _receive(self, ref: Any, job: PairJob, pair: Pair) -> RunResult:
        try:
            outcome: NodePairOutcome = ray.get(ref)
        except ray.exceptions.RayTaskError:
            raise  # a bug in gitgauge on the node: show its traceback
        except ray.exceptions.RayError as error:
            now = _now()
            return RunResult(
                runId=pair.run_id,
                config=job.planned.config.name,
                task=job.task.id,
                attempt=job.attempt,
                status="error",
                errorKind="executor-lost",
                errorMessage=(
                    f"the Ray worker running this pair was lost ({type(error).__name__}), "
                    f"also after {MAX_RETRIES} retries: `gitgauge run --resume "
                    f"{pair.run_id} --retry-errors` runs it again"
                ),
                startedAt=now,
                finishedAt=now,
            )
        log_dir = pair.store.log_dir(pair.run_id, job.planned.config.name, job.task.id, job.attempt)
        for relative, data in outcome.logs.items():
            atomic_write_bytes(log_dir / relative, data)
        atomic_write_json(
            log_dir / NODE_FILE, {"node": outcome.node, "historyCopied": outcome.history_copied}
        )
        for message in outcome.warnings:
            pair.warn(f"{outcome.node}: {message}")
        return outcome.result

    def _stop(self, refs: list[Any]) -> None:
        """Cancel the outstanding pairs; each removes its workspace as it stops."""
        for ref in refs:
            ray.cancel(ref)  # pending ones never start; running ones get KeyboardInterrupt
        if self.run_id is not None:
            # A pair waiting on its agent notices a cancel only when the agent exits: the stop
            # file makes every node kill its agents now.
            stops = [
                _stop_node.options(**_on_node(node)).remote(self.run_id) for node in _alive_nodes()
            ]
            ray.wait(stops, num_returns=len(stops), timeout=STOP_GRACE_SECONDS)
        # No force-cancel after that (it can crash Ray's driver on a task that just ended):
        # a pair still running when the driver disconnects is killed with its worker by Ray,
        # and `close` removes what it left.
        ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_SECONDS)

    def close(self) -> None:
        """Remove the run's directory on every node, then disconnect."""
        try:
            if self.run_id is not None:
                cleanups = [
                    _clean_node.options(**_on_node(node)).remote(self.run_id)
                    for node in _alive_nodes()
                ]
                ray.wait(cleanups, num_returns=len(cleanups), timeout=STOP_GRACE_SECONDS)
        finally:
            ray.shutdown()


def _check_reachable(address: str) -> None:
    """Fail within `CONNECT_SECONDS`, naming the address, when nothing answers there."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"Ray address {address!r} is not host:port (run.ray.address, --ray-address or "
            "RAY_ADDRESS)"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as error:
        raise ExecutorError(
            f"the Ray cluster at {address} does not answer ({error.strerror or error}): check "
            "the address (run.ray.address, --ray-address or RAY_ADDRESS) and that the head node "
            "runs"
        ) from None


def _check_nodes(nodes: dict[str, str]) -> None:
    """Every node runs this gitgauge version and has git, before any pair starts."""
    probes = [_probe.options(**_on_node(node)).remote() for node in nodes]
    try:
        facts: list[NodeFacts] = ray.get(probes, timeout=PROBE_SECONDS)
    except ray.exceptions.GetTimeoutError:
        raise ExecutorError(
            f"the Ray nodes did not answer within {PROBE_SECONDS:g}s: is gitgauge installed "
            "in the cluster's Python environment?"
        ) from None
    for node, fact in zip(nodes, facts, strict=True):
        if fact.version != __version__:
            raise ExecutorError(
                f"Ray node {nodes[node]} has gitgauge {fact.version}, this machine {__version__}: "
                "install the same version on the cluster"
            )
        if not fact.git:
            raise ExecutorError(f"Ray node {nodes[node]} has no git on PATH: install git there")


def _alive_nodes() -> dict[str, str]:
    """Node id -> address of every live node (nodes may join or leave during a run)."""
    return {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"]}


def task_options(resources: dict[str, float]) -> dict[str, Any]:
    """Ray's options for one task asking for `run.ray.resources` (a pair's, or a mine's job)."""
    custom = dict(resources)
    options: dict[str, Any] = {
        "num_cpus": custom.pop("CPU", 0),
        "max_retries": MAX_RETRIES,
        "retry_exceptions": False,
    }
    if "GPU" in custom:
        options["num_gpus"] = custom.pop("GPU")
    if "memory" in custom:
        options["memory"] = custom.pop("memory")
    if custom:
        options["resources"] = custom
    return options


def _on_node(node: str) -> dict[str, Any]:
    return {
        "num_cpus": 0,
        "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node, soft=False),
    }


def this_node() -> str:
    """The address this worker's node has in the cluster (how errors and the ledger name it)."""
    return str(ray.util.get_node_ip_address())


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_watching: set[str] = set()


def watch_stop(run_id: str) -> None:
    """Kill this worker's agent and test processes once the driver asks the node to stop."""
    if run_id in _watching:
        return
    _watching.add(run_id)
    stop_file = node_root(run_id) / "stop"

    def watch() -> None:
        while not stop_file.exists():
            time.sleep(0.2)
        process.cancel_all()

    threading.Thread(target=watch, name="gitgauge-stop", daemon=True).start()


def _run_pair_here(
    request: NodePairRequest, pack: list[Any], harness: ShippedHarness
) -> NodePairOutcome:
    watch_stop(request.run_id)
    return run_on_node(request, lambda: ray.get(pack[0]), harness, node=this_node())


def _stop_here(run_id: str) -> None:
    root = node_root(run_id)
    if root.exists():
        (root / "stop").touch()


# Ray tasks (Any to mypy: ray's decorator is untyped). Ray pickles these by module and name, so
# a worker imports this module, which needs gitgauge of the same version there.
_run_pair: Any = ray.remote(_run_pair_here) if ray is not None else None
_probe: Any = ray.remote(probe_node) if ray is not None else None
_stop_node: Any = ray.remote(_stop_here) if ray is not None else None
_clean_node: Any = ray.remote(remove_node_run) if ray is not None else None
