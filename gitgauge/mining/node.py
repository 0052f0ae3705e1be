"""One job of `mine --executor ray` on a machine without the user's repository (a Ray node):
a fix candidate's verification, or another kind's per-candidate suite run (`core.suite_jobs`).

Travels to the node: the job's work (a module-level function, shipped by reference), its payload,
its `Commit` (as the driver's history walk read it), the config, and one git pack of exactly the
objects reachable from that commit, with the tags in its history (their objects in the pack,
their names in the request): never a later commit. The node turns the pack into a bare history
copy of its own, makes its own sandbox from `run.sandbox` (its bwrap, its paths) and runs the
work in a checkout over the copy, as a local mine would. Comes back: the work's value and the
warnings it gave.

Nothing here imports `ray`: the Ray glue (`running/executors/ray_mine.py`) calls `run_on_node`
with the node's directory for the mine, and tests can too.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitgauge import __version__
from gitgauge.core import node_local
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Commit
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.git.history import CopyRepository, copy_from_pack
from gitgauge.core.git.tags import Tag
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite_jobs import Place
from gitgauge.mining.sandbox import suite_sandbox
from gitgauge.mining.verify import Verdict, verify


@dataclass(frozen=True)
class NodeRequest:
    """One job, as it travels to a node (its history pack travels beside it)."""

    work: Callable[[Place, Any], object]
    """A module-level function: the node imports it from its own gitgauge."""
    payload: object
    commit: Commit
    """The job's commit: the pack holds its history; the copy's `main` points at it."""
    config: RepoConfig
    """gitgauge.yaml as the driver read it (without `worktree.link`: see docs/cluster.md)."""
    tags: tuple[Tag, ...] = ()
    """The tags in the commit's history (`Repository.tags_at`), whose objects the pack holds."""
    env: dict[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`, set while the candidate is verified."""
    version: str = __version__
    """The driver's gitgauge version (a node that joined after the start check compares it)."""


@dataclass(frozen=True)
class NodeOutcome:
    value: object | None
    """The work's value; None when the node could not run it (`error` says why)."""
    node: str
    warnings: list[str] = field(default_factory=list)
    """The work's own warnings (the same as a local mine's: said once per mine)."""
    node_warnings: list[str] = field(default_factory=list)
    """This node's (its sandbox), said with its name."""
    error: str | None = None


def run_on_node(
    request: NodeRequest,
    load_pack: Callable[[], bytes],
    *,
    root: Path,
    node: str,
) -> NodeOutcome:
    """Run one job here, exactly as a local mine does, in `root` (the mine's directory on this
    node, removed by the driver at the end); `node` names this node."""
    if request.version != __version__:
        error = (
            f"gitgauge {__version__} on node {node}, {request.version} on the driver: install "
            "the same version on the cluster"
        )
        return NodeOutcome(None, node, error=error)
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="candidate-", dir=root / "tmp"))
    warnings: list[str] = []
    node_warnings: list[str] = []
    system_temp = Path(tempfile.gettempdir()).resolve()
    previous_temp = tempfile.tempdir
    try:
        copy = work / "history.git"
        copy.mkdir()
        copy_from_pack(copy, load_pack(), request.commit.sha, tags=request.tags)
        repo = CopyRepository(copy)
        try:
            # No user repository is here to hide, but the node's temporary directory is.
            sandbox = suite_sandbox(
                request.config,
                repo_root=None,
                link=[],
                warn=node_warnings.append,
                temp_root=system_temp,
            )
        except GitGaugeError as error:
            return NodeOutcome(None, node, error=f"on node {node}: {error}")
        # Checkouts go under the mine's node directory: removing it after an interrupt or a
        # killed worker leaves nothing behind.
        tempfile.tempdir = str(work)
        with node_local.environment(request.env), node_local.slot(root) as slot:
            with CheckoutPool(owner_repository=copy) as pool, pool.slot(0) as checkout:
                place = Place(repo, request.config, checkout, sandbox, warnings.append, slot)
                value = request.work(place, request.payload)
    finally:
        tempfile.tempdir = previous_temp
        shutil.rmtree(work, ignore_errors=True)
    return NodeOutcome(
        value, node, warnings=list(dict.fromkeys(warnings)), node_warnings=node_warnings
    )


def verify_fix(place: Place, commit: Commit) -> Verdict:
    """The fix kind's job: the candidate's verification (`mining.verify.verify`)."""
    return verify(
        place.repo,
        commit,
        place.config,
        warn=place.warn,
        extra_env=place.job_env,
        checkout=place.checkout,
        sandbox=place.sandbox,
    )
