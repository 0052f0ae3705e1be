"""`mine --executor ray`: the Ray glue of mining (docs/cluster.md), one Ray task per candidate.

Generic over what runs on the node (mining passes `mining.node.run_on_node`, which Ray ships by
reference: the node imports it from its own gitgauge), so the running stage does not import
mining. The cluster is connected and checked as for `run` (`RayExecutor.connect`: the
address answers, every node has this gitgauge version and git, `worktree.link` refused unless
`run.ray.link: skip`), and its directory on the nodes is removed the same way at the end.

Memory stays flat: jobs are pulled from their iterator only while fewer than a window (twice
the tasks the cluster runs at once) are in flight, and a job's history pack is built when it is
submitted and dropped when its result arrives. A job whose worker or node dies is run once more
by Ray; lost again, it comes back as lost, naming the nodes it started on.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Generator, Iterator
from datetime import datetime, timezone
from typing import Any

from gitgauge.core.schema import RepoConfig
from gitgauge.running.executors.ray import (
    RayExecutor,
    task_options,
    this_node,
    watch_stop,
)
from gitgauge.running.executors.shipped import node_root

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError:  # pragma: no cover - the CLI checks first (`ray.ray_available`)
    ray = None

RETRIES = 1
"""How often a candidate whose worker or node died is run again before it is an error."""
LEDGER_SECONDS = 10.0
"""How long asking the ledger of which node started a job may take."""

PoolJob = tuple[str, object, Callable[[], bytes]]
PoolResult = tuple[str, object | None, str | None]


class RayCandidatePool:
    """A `mining.remote.CandidatePool` on a Ray cluster."""

    def __init__(self, executor: RayExecutor, mine_id: str) -> None:
        self.executor = executor
        self.mine_id = mine_id
        """Names this mine's directory on the nodes (`gitgauge-ray-<mine id>`)."""
        # Started now, while the history is walked, on the driver's own node: it outlives any
        # other node's loss.
        here = NodeAffinitySchedulingStrategy(
            node_id=ray.get_runtime_context().get_node_id(), soft=True
        )
        self.ledger: Any = _Ledger.options(num_cpus=0, scheduling_strategy=here).remote()

    @classmethod
    def connect(cls, config: RepoConfig, *, address: str | None) -> RayCandidatePool:
        # `run.history` is the run's concern: mining ships the history up to each fix anyway.
        run = config.run.model_copy(update={"history": "isolated"})
        executor = RayExecutor.connect(config.model_copy(update={"run": run}), address=address)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        mine_id = f"mine-{stamp}-{secrets.token_hex(3)}"
        executor.run_id = mine_id  # what `close` and an interrupt clean on every node
        return cls(executor, mine_id)

    @property
    def env(self) -> dict[str, str]:
        """The values of `run.ray.env` set here (the unset ones are left out)."""
        return {name: os.environ[name] for name in self.executor.settings.env if name in os.environ}

    def unset_env(self) -> list[str]:
        return [name for name in self.executor.settings.env if name not in os.environ]

    def window(self) -> int:
        """How many jobs may be in flight: twice what the cluster runs at once."""
        wanted = self.executor.settings.resources.get("CPU", 0.0)
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        slots = int(cpus // wanted) if wanted > 0 else 4 * len(self.executor.nodes)
        return max(2, 2 * slots)

    def map(
        self, work: Callable[..., object], jobs: Iterator[PoolJob]
    ) -> Generator[PoolResult, None, None]:
        options = {**task_options(self.executor.settings.resources), "max_retries": RETRIES}
        ledger = self.ledger
        window = self.window()
        # Result ref -> (the job's key, its pack's ref, held until the result is in).
        running: dict[Any, tuple[str, Any]] = {}
        more = True
        try:
            while more or running:
                while more and len(running) < window:
                    job = next(jobs, None)
                    if job is None:
                        more = False
                        break
                    key, request, make_pack = job
                    pack = ray.put(make_pack())
                    # The pack goes inside a list: Ray then fetches it on the node only when
                    # the job asks for it.
                    ref = _run_job.options(**options).remote(
                        work, key, request, [pack], ledger, self.mine_id
                    )
                    running[ref] = (key, pack)
                if not running:
                    break
                # A short timeout: Ctrl-C is seen between waits.
                ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
                for ref in ready:
                    key, _ = running.pop(ref)
                    yield self._receive(ref, key, ledger)
        finally:
            if running:
                self.executor._stop(list(running))

    @staticmethod
    def _receive(ref: Any, key: str, ledger: Any) -> PoolResult:
        try:
            return key, ray.get(ref), None
        except ray.exceptions.RayTaskError:
            raise  # a bug in gitgauge on the node: show its traceback
        except ray.exceptions.RayError as error:
            try:
                nodes: list[str] = ray.get(ledger.where.remote(key), timeout=LEDGER_SECONDS)
            except ray.exceptions.RayError:
                nodes = []
            where = " and again on ".join(f"node {node}" for node in nodes) or "an unknown node"
            return (
                key,
                None,
                (
                    f"its Ray worker was lost on {where} ({type(error).__name__}), also after "
                    f"{RETRIES} retry: not judged, `gitgauge mine` verifies it again"
                ),
            )

    def close(self) -> None:
        """Remove the mine's directory on every node, then disconnect."""
        try:
            ray.kill(self.ledger)
        finally:
            self.executor.close()


class _LedgerOfNodes:
    """Which node each job started on (a job lost with its node cannot say so itself)."""

    def __init__(self) -> None:
        self.nodes: dict[str, list[str]] = {}

    def started(self, key: str, node: str) -> None:
        self.nodes.setdefault(key, []).append(node)

    def where(self, key: str) -> list[str]:
        return self.nodes.get(key, [])


def _run_job_here(
    work: Callable[..., object],
    key: str,
    request: object,
    pack: list[Any],
    ledger: Any,
    mine_id: str,
) -> object:
    node = this_node()
    try:
        ray.get(ledger.started.remote(key, node), timeout=LEDGER_SECONDS)
    except ray.exceptions.RayError:
        pass  # the ledger is gone: the job runs, unnamed should it be lost
    watch_stop(mine_id)
    return work(request, lambda: ray.get(pack[0]), root=node_root(mine_id), node=node)


# Ray tasks and actors (Any to mypy: ray's decorators are untyped). Ray pickles these by module
# and name, so a worker imports this module, which needs gitgauge of the same version there.
_run_job: Any = ray.remote(_run_job_here) if ray is not None else None
_Ledger: Any = ray.remote(_LedgerOfNodes) if ray is not None else None
