"""`mine --executor ray`: the cluster opened for a mine, joining the mining stage's driver
(`mining.remote`) to the Ray glue (`running.executors.ray_mine`), which is imported only here,
only on that path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitgauge.cli.common import warn
from gitgauge.core.errors import ConfigError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.schema import RepoConfig, WorktreeSettings

if TYPE_CHECKING:
    from gitgauge.mining.remote import RemoteVerifier
    from gitgauge.running.executors.ray_mine import RayCandidatePool

EXECUTORS = ("local", "ray")


def mine_executor(
    config: RepoConfig, *, executor: str | None, ray_address: str | None, dry_run: bool
) -> RepoConfig:
    """gitgauge.yaml's `mine.executor` as `--executor` sets it (`--ray-address` checked); with
    ray and `run.ray.link: skip`, the config without `worktree.link` (verified, and remembered,
    without the links)."""
    if executor is not None:
        if executor not in EXECUTORS:
            raise UsageError(f"--executor must be {' or '.join(EXECUTORS)}, got {executor!r}")
        config = config.model_copy(
            update={"mine": config.mine.model_copy(update={"executor": executor})}
        )
    if ray_address is not None and config.mine.executor != "ray":
        raise UsageError("--ray-address goes with --executor ray (or mine.executor: ray)")
    if config.mine.executor == "ray" and config.worktree.link and not dry_run:
        if config.run.ray.link == "error":
            raise ConfigError(
                f"gitgauge.yaml: worktree.link: {', '.join(config.worktree.link)} cannot be "
                "linked on a Ray node (it is a directory of this machine): install dependencies "
                "with setupCommand, or set run.ray.link: skip"
            )
        config = config.model_copy(update={"worktree": WorktreeSettings()})
    return config


@dataclass
class MineCluster:
    pool: RayCandidatePool

    def verifier(self, repo: Repository, config: RepoConfig) -> RemoteVerifier:
        from gitgauge.mining.remote import RemoteVerifier

        for name in self.pool.unset_env():
            warn(f"run.ray.env: {name} is not set here; the workers do not get it")
        return RemoteVerifier(repo, config, self.pool, warn, env=self.pool.env)

    def close(self) -> None:
        self.pool.close()


def open_cluster(config: RepoConfig, address: str | None, *, jobs: int) -> MineCluster | None:
    """The Ray cluster `mine.executor: ray` asks for, connected and checked (every node's
    gitgauge version) before any candidate is classified; None for a local mine."""
    if config.mine.executor != "ray":
        return None
    from gitgauge.running.executors.ray import EXTRA_HINT, ray_available

    if not ray_available():
        raise ConfigError(f"--executor ray needs the optional extra: {EXTRA_HINT}")
    from gitgauge.running.executors.ray_mine import RayCandidatePool

    if jobs != 1:
        warn("--jobs does not apply with --executor ray: the cluster's resources decide")
    return MineCluster(RayCandidatePool.connect(config, address=address))
