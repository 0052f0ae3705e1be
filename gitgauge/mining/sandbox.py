"""The sandbox mining's test runs happen in (`mine`, and `doctor` and `init`, which check that
mine would work)."""

from __future__ import annotations

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.sandbox import prepare as prepare_sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.worktree import Warn


def mining_sandbox(repo: Repository, config: RepoConfig, *, warn: Warn) -> Sandbox | None:
    """`run.sandbox`'s policy with no agent, so a suite that cannot run where `run` grades is
    found now, not as gold 0%."""
    return prepare_sandbox(
        config.run.sandbox,
        network=config.run.sandbox_network,
        repo_root=repo.root,
        link=config.worktree.link,
        exposures=[],
        test_command=config.testCommand,
        home_writable=[],
        env=process.clean_env(),
        warn=warn,
        who="test commands",
    )
