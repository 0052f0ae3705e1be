"""A pair's node side in this process (`shipped.run_on_node`, what a Ray worker runs): no
cluster needed. `plan` plans a run of agent configs in a repository, `node_run` names a test's
run on this node and removes what it left there, and `run_pair` sends one pair to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gitgauge.core.config import load_repo_config
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.running.executors.shipped import (
    NodePairOutcome,
    NodePairRequest,
    fix_files,
    pack_history,
    remove_node_run,
    run_on_node,
)
from gitgauge.running.executors.shipped_harness import ShippedHarness, ship_harness
from gitgauge.running.plan import PlannedConfig, RunPlan, plan_run


def plan(
    root: Path, configs: Sequence[Path | str], *, warn: Callable[[str], None] = print
) -> tuple[Repository, RunPlan]:
    """The repository at `root` and the plan of a run of `configs` on all its tasks."""
    repo = Repository(root)
    return repo, plan_run(repo, Store(root), [Path(c) for c in configs], task_id=None, warn=warn)


@contextmanager
def node_run(tmp_path: Path) -> Iterator[str]:
    """The run id of a test's pairs on this node; what they leave there is removed after."""
    run_id = f"inproc-{tmp_path.name}"
    try:
        yield run_id
    finally:
        remove_node_run(run_id)


def run_pair(
    repo: Repository,
    run_id: str,
    planned: PlannedConfig,
    task: Task,
    *,
    config: RepoConfig | None = None,
    harness: ShippedHarness | None = None,
    with_source: bool = False,
    node: str = "here",
    **fields: Any,
) -> NodePairOutcome:
    """The first attempt of `planned` on `task`, with the repository's config (or `config`) and
    the harness shipped now (or `harness`, shipped earlier); `fields`: the request's others."""
    request = NodePairRequest(
        run_id=run_id,
        planned=planned,
        task=task,
        attempt=1,
        config=load_repo_config(repo.root) if config is None else config,
        fix=fix_files(repo, task, with_source=with_source),
        **fields,
    )
    return run_on_node(
        request,
        lambda: pack_history(repo, (task.base,)),
        ship_harness(planned.harness) if harness is None else harness,
        node=node,
    )
