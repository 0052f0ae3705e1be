"""What an adapter is run with outside `gitgauge run`: a context on a workspace, for a task."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.running.adapters.base import AdapterContext
from helpers.records import fix_task
from helpers.repos import GitRepo

ADAPTER_MINED_AT = "2024-01-01T00:00:00Z"


def adapter_context(
    repo_root: Path,
    workspace: Path,
    task: Task,
    *,
    timeout_seconds: float = 60.0,
    env_additions: Mapping[str, str] | None = None,
) -> AdapterContext:
    """The context of a run of `task` in `workspace` (of the repository at `repo_root`), its
    logs beside the workspace."""
    return AdapterContext(
        workspace=workspace,
        task=task,
        repo=Repository(repo_root),
        timeout_seconds=timeout_seconds,
        env=process.clean_env(cwd=workspace, extra=env_additions),
        log_dir=workspace.parent / "logs",
    )


def context_for(
    workspace: GitRepo,
    env_additions: Mapping[str, str],
    *,
    prompt: str,
    timeout_seconds: float = 120.0,
) -> AdapterContext:
    """An agent adapter's context in `workspace` itself, for a task at its HEAD ("fix: divide
    crashes on zero") given `prompt`, with `env_additions` (the fake agent's or the real CLI's
    variables)."""
    head = workspace.git("rev-parse", "HEAD").strip()
    task = fix_task(
        head,
        head,
        "fix: divide crashes on zero",
        ["tests/test_calc.py"],
        id=f"{head[:7]}-fix-divide",
        prompt=prompt,
        minedAt=ADAPTER_MINED_AT,
    )
    return adapter_context(
        workspace.root,
        workspace.root,
        task,
        timeout_seconds=timeout_seconds,
        env_additions=env_additions,
    )
