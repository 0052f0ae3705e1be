"""`run --estimate`: the expected cost and wall time of a run, before it runs.

Per config, the mean cost and wall time of a pair come from, in this order:

1. the pairs of this run already finished (a resumed run, or the sample `--estimate` just ran);
2. the latest earlier run with results of a config of the same name (its harness may have
   changed since: the estimate says which run it used);
3. neither: `run --estimate` first runs a sample of `SAMPLE_PAIRS` pairs of that config (kept:
   `run --resume` goes on from them) and estimates from those.

The cost of the run is the sum over configs of pairs still to run x mean cost per pair (pairs
that report no cost, script/gold/noop, count nothing). The wall time is the sum of pairs x mean
wall time per pair (setup, agent and grading), divided by `-j`: pairs run that many at a time.
Both are rough: a pair's cost and time vary from task to task, and a sample of three pairs is
small; the estimate is a budget's order of magnitude, not a quote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from gitgauge.core.records import RunResult, wall_seconds
from gitgauge.core.store import Store, StoredRun
from gitgauge.running.plan import RunPlan

SAMPLE_PAIRS = 3
"""Pairs of a config `run --estimate` runs when no earlier pair of it is known."""


@dataclass(frozen=True)
class ConfigEstimate:
    config: str
    pairs: int
    """Pairs of this config still to run."""
    cost_per_pair: float | None
    """Mean reported cost of its known pairs; None when none reported one."""
    wall_per_pair: float | None
    """Mean wall-clock seconds of its known pairs; None when none is known."""
    basis: str
    """Where the means come from: `run R (n pairs)`, or `no earlier pair`."""

    @property
    def cost(self) -> float | None:
        return None if self.cost_per_pair is None else self.pairs * self.cost_per_pair

    @property
    def wall(self) -> float | None:
        return None if self.wall_per_pair is None else self.pairs * self.wall_per_pair


@dataclass(frozen=True)
class RunEstimate:
    configs: list[ConfigEstimate]
    jobs: int

    @property
    def pairs(self) -> int:
        return sum(config.pairs for config in self.configs)

    @property
    def cost(self) -> float | None:
        """The expected cost of every pair still to run (None: no config reported a cost)."""
        costs = [config.cost for config in self.configs if config.cost is not None]
        return sum(costs) if costs else None

    @property
    def wall(self) -> float | None:
        """Expected wall-clock seconds, pairs running `jobs` at a time."""
        walls = [config.wall for config in self.configs if config.wall is not None]
        return sum(walls) / self.jobs if walls else None

    @property
    def unknown(self) -> list[str]:
        """Configs with pairs to run and no known pair to estimate them from."""
        return [c.config for c in self.configs if c.pairs and c.wall_per_pair is None]


def pending_pairs(
    store: Store,
    plan: RunPlan,
    *,
    run_id: str | None,
    repeat: int,
    retry_errors: bool,
    warn: Callable[[str], None],
) -> dict[str, int]:
    """Pairs per config that a run (or the continuation of `run_id`) would run."""
    counts: dict[str, int] = {}
    for planned in plan.configs:
        name = planned.config.name
        counts[name] = 0
        for task in plan.tasks:
            for attempt in range(1, repeat + 1):
                done = None
                if run_id is not None:
                    path = store.result_path(run_id, name, task.id, attempt)
                    done = store.load_result(path, warn=warn)
                if done is None or (retry_errors and done.status == "error"):
                    counts[name] += 1
    return counts


def known_pairs(
    runs: Sequence[StoredRun], config: str, *, run_id: str | None, mode: str | None = None
) -> tuple[str, list[RunResult]] | None:
    """The results to estimate `config` from: this run's (`run_id`), else the latest earlier
    run's of a config of that name; None when there are none. With `mode` (`--mode`), a pair
    that ran in another mode is no basis: a fixture answered as text costs no agent's session."""

    def basis(result: RunResult) -> bool:
        return result.config == config and (mode is None or result.mode in (None, mode))

    own = [r for run in runs if run.run_id == run_id for r in run.results if basis(r)]
    if own:
        return "this run", own
    for run in reversed(runs):  # oldest first: the latest is last
        found = [result for result in run.results if basis(result)]
        if found and run.run_id != run_id:
            return f"run {run.run_id}", found
    return None


def estimate(
    plan: RunPlan,
    runs: Sequence[StoredRun],
    pending: Mapping[str, int],
    *,
    run_id: str | None,
    jobs: int,
    mode: str | None = None,
) -> RunEstimate:
    configs: list[ConfigEstimate] = []
    for planned in plan.configs:
        name = planned.config.name
        known = known_pairs(runs, name, run_id=run_id, mode=mode)
        if known is None:
            configs.append(ConfigEstimate(name, pending.get(name, 0), None, None, "no pair yet"))
            continue
        where, results = known
        costs = [result.costUsd for result in results if result.costUsd is not None]
        walls = [seconds for seconds in map(wall_seconds, results) if seconds is not None]
        configs.append(
            ConfigEstimate(
                config=name,
                pairs=pending.get(name, 0),
                cost_per_pair=fmean(costs) if costs else None,
                wall_per_pair=fmean(walls) if walls else None,
                basis=f"{where}, {len(results)} pair{'' if len(results) == 1 else 's'}",
            )
        )
    return RunEstimate(configs=configs, jobs=jobs)
