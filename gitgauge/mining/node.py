"""One candidate's verification on a machine without the user's repository (a Ray node).

Travels to the node: the candidate's `Commit` (as the driver's history walk read it), the
config, and one git pack of exactly the objects reachable from the fix, with the tags in its
history (their objects in the pack, their names in the request): never a later commit. The node
turns the pack into a bare history copy of its own, makes its own sandbox from `run.sandbox`
(its bwrap, its paths) and runs the same `verify` as a local mine, in a checkout over the copy.
Comes back: the `Verdict` and the warnings verification gave.

Nothing here imports `ray`: the Ray glue (`running/executors/ray_mine.py`) calls
`verify_on_node` with the node's directory for the mine, and tests can too.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gitgauge import __version__
from gitgauge.core import node_local, process
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Commit
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.git.history import CopyRepository, copy_from_pack
from gitgauge.core.git.tags import Tag
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.sandbox import prepare as prepare_sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.mining.verify import Verdict, verify


@dataclass(frozen=True)
class CandidateRequest:
    """One candidate, as it travels to a node (its history pack travels beside it)."""

    commit: Commit
    config: RepoConfig
    """gitgauge.yaml as the driver read it (without `worktree.link`: see docs/cluster.md)."""
    tags: tuple[Tag, ...] = ()
    """The tags in the fix's history (`Repository.tags_at`), whose objects the pack holds."""
    env: dict[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`, set while the candidate is verified."""
    version: str = __version__
    """The driver's gitgauge version (a node that joined after the start check compares it)."""


@dataclass(frozen=True)
class CandidateOutcome:
    verdict: Verdict | None
    """None when the node could not verify (`error` says why)."""
    node: str
    warnings: list[str] = field(default_factory=list)
    """Verification's own warnings (the same as a local mine's: said once per mine)."""
    node_warnings: list[str] = field(default_factory=list)
    """This node's (its sandbox), said with its name."""
    error: str | None = None


def verify_on_node(
    request: CandidateRequest,
    load_pack: Callable[[], bytes],
    *,
    root: Path,
    node: str,
) -> CandidateOutcome:
    """Verify one candidate here, exactly as a local mine does, in `root` (the mine's
    directory on this node, removed by the driver at the end); `node` names this node."""
    if request.version != __version__:
        error = (
            f"gitgauge {__version__} on node {node}, {request.version} on the driver: install "
            "the same version on the cluster"
        )
        return CandidateOutcome(None, node, error=error)
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
            sandbox = _node_sandbox(request.config, node_warnings.append, temp_root=system_temp)
        except GitGaugeError as error:
            return CandidateOutcome(None, node, error=f"on node {node}: {error}")
        # Checkouts go under the mine's node directory: removing it after an interrupt or a
        # killed worker leaves nothing behind.
        tempfile.tempdir = str(work)
        with node_local.environment(request.env), node_local.slot(root) as slot:
            with CheckoutPool(owner_repository=copy) as pool, pool.slot(0) as checkout:
                verdict = verify(
                    repo,
                    request.commit,
                    request.config,
                    warn=warnings.append,
                    extra_env={"GITGAUGE_JOB": str(slot)},
                    checkout=checkout,
                    sandbox=sandbox,
                )
    finally:
        tempfile.tempdir = previous_temp
        shutil.rmtree(work, ignore_errors=True)
    return CandidateOutcome(
        verdict, node, warnings=list(dict.fromkeys(warnings)), node_warnings=node_warnings
    )


def _node_sandbox(
    config: RepoConfig, warn: Callable[[str], None], *, temp_root: Path
) -> Sandbox | None:
    """This node's sandbox for mining's test runs (`mining.mine.mining_sandbox` with the node's
    paths): no user repository is here to hide, but the node's temporary directory is."""
    return prepare_sandbox(
        config.run.sandbox,
        network=config.run.sandbox_network,
        repo_root=None,
        link=[],
        exposures=[],
        test_command=config.testCommand,
        home_writable=[],
        env=process.clean_env(),
        warn=warn,
        who="test commands",
        temp_root=temp_root,
    )
