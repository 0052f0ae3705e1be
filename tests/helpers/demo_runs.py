"""Runs of agent configs on the mined demo (`helpers.demo`) as the tests of what `gitgauge run`
lets start and where it stops start and read them: configs of the fake claude, a run on the
demo's slug task alone, and one config's results."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gitgauge.core.store import config_dir_name
from helpers.cli import run_gitgauge
from helpers.configs import agent_config, configs_args
from helpers.demo import slug_task
from helpers.fakes.claude import fake_claude_env
from helpers.repos import GitRepo


def results_of(run_dir: Path, config: str) -> list[dict[str, Any]]:
    """The results of `config` in the run at `run_dir`, in the order of their files' names."""
    folder = run_dir / "results" / config_dir_name(config)
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))]


def fake_claude_configs(
    tmp_path: Path, scenario: dict[str, Any], *models: str
) -> tuple[dict[str, str], list[str]]:
    """The environment in which the fake claude plays `scenario`, and a claude-code config for
    each of `models`, named after its model."""
    env = {**os.environ, **fake_claude_env(tmp_path, scenario)}
    folder = tmp_path / "configs"
    configs = [agent_config(folder, model, adapter="claude-code", model=model) for model in models]
    return env, configs


def run_slug_task(
    demo: GitRepo, configs: Sequence[str], *flags: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`gitgauge run` of `configs` on the demo's slug task alone, with `flags`."""
    return run_gitgauge(
        "run", *configs_args(*configs), "--task", slug_task(demo)["id"], *flags,
        cwd=demo.root, env=env,
    )  # fmt: skip
