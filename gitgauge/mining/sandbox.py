"""The sandbox mining's test runs happen in (`mine`, on this machine or a Ray node, and `doctor`
and `init`, which check that mine would work)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.sandbox import prepare as prepare_sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.worktree import Warn


def mining_sandbox(repo: Repository, config: RepoConfig, *, warn: Warn) -> Sandbox | None:
    """`run.sandbox`'s policy with no agent, so a suite that cannot run where `run` grades is
    found now, not as gold 0%."""
    return suite_sandbox(config, repo_root=repo.root, link=config.worktree.link, warn=warn)


def suite_sandbox(
    config: RepoConfig,
    *,
    repo_root: Path | None,
    link: Sequence[str],
    warn: Warn,
    temp_root: Path | None = None,
) -> Sandbox | None:
    """`run.sandbox`'s policy for the test commands alone: `repo_root` hidden but for `link`
    (None: no user repository here, as on a Ray node); `temp_root`: where workspaces and
    history copies live (default: `TMPDIR`)."""
    return prepare_sandbox(
        config.run.sandbox,
        network=config.run.sandbox_network,
        repo_root=repo_root,
        link=link,
        exposures=[],
        test_command=config.testCommand,
        home_writable=[],
        env=process.clean_env(),
        warn=warn,
        who="test commands",
        temp_root=temp_root,
    )
