"""Agent configs written for a run, and the `-c` arguments that name them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gitgauge.core.store import config_dir_name


def agent_config(folder: Path, name: str, **fields: Any) -> str:
    """An agent config `name` with `fields` written in `folder` (made); returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{config_dir_name(name)}.yaml"
    path.write_text(yaml.safe_dump({"name": name, **fields}), encoding="utf-8")
    return str(path)


def configs_args(*paths: str) -> list[str]:
    return [arg for path in paths for arg in ("-c", path)]


def write_configs(folder: Path, configs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each of `configs` (name -> its fields) written in `folder`: their paths by name."""
    return {name: agent_config(folder, name, **fields) for name, fields in configs.items()}


def gold_noop_and(**scripts: str) -> dict[str, dict[str, str]]:
    """The fields of configs gold and noop, then of a script adapter for each of `scripts`
    (config name = the command it runs), by name."""
    fields = {"gold": {"adapter": "gold"}, "noop": {"adapter": "noop"}}
    return fields | {name: {"adapter": "script", "command": run} for name, run in scripts.items()}
