"""Checking exported Harbor task folders: loaded by Harbor's own task model, and their scripts run
for real on a copy of the task's base (no Docker), the reward read back.

The `harbor` package needs Python >= 3.12 and brings dozens of services' SDKs, so the folders are
loaded with `harbor.models.task.task.Task` by the interpreter `$GITGAUGE_HARBOR_PYTHON` names
(`.ci/run` makes a Python 3.12 virtualenv with harbor; in CI it is required); without it, locally,
against the documented layout of harbor 0.26.0's task model (the keys of `TaskConfig`, the files
`Task` requires).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gitgauge.core.config_text import toml_document

# harbor 0.26.0, harbor/models/task/config.py: the TaskConfig keys gitgauge writes must exist there.
HARBOR_KEYS = {
    "": {"schema_version", "task", "metadata", "verifier", "agent", "environment", "solution",
         "source", "multi_step_reward_strategy", "steps", "artifacts"},
    "verifier": {"timeout_sec", "env", "user", "environment_mode", "environment", "collect",
                 "network_mode", "allowed_hosts"},
    "agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "environment": {"build_timeout_sec", "docker_image", "os", "cpus", "memory_mb", "storage_mb",
                    "gpus", "gpu_types", "tpu", "mcp_servers", "env", "skills_dir", "healthcheck",
                    "workdir", "allow_internet", "network_mode", "allowed_hosts"},
}  # fmt: skip


HARBOR_PYTHON = "GITGAUGE_HARBOR_PYTHON"
"""A Python >= 3.12 with `harbor` installed (`.ci/run` makes one): the folders are loaded there."""

HARBOR_LOADER = """
import json, sys
from harbor.models.task.task import Task
loaded = {}
for folder in sys.argv[1:]:
    task = Task(folder)
    loaded[folder] = {
        "instruction": task.instruction,
        "verifierTimeout": task.config.verifier.timeout_sec,
        "agentTimeout": task.config.agent.timeout_sec,
        "workdir": task.config.environment.workdir,
        "metadata": task.config.metadata,
    }
print(json.dumps(loaded))
"""


def check_harbor_folders(folders: list[Path]) -> None:
    """Harbor's own task model (`harbor.models.task.task.Task`, run by `$GITGAUGE_HARBOR_PYTHON`);
    without that interpreter, harbor 0.26.0's documented layout and keys (locally only: with
    CI=true the real loader is required)."""
    python = os.environ.get(HARBOR_PYTHON)
    if not python:
        if os.environ.get("CI") == "true":
            pytest.fail(f"${HARBOR_PYTHON} must name a Python with harbor installed in CI")
        for folder in folders:
            check_harbor_layout(folder)
        return
    loaded = subprocess.run(
        [python, "-c", HARBOR_LOADER, *map(str, folders)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert loaded.returncode == 0, loaded.stderr
    tasks = json.loads(loaded.stdout)
    for folder in folders:
        task = tasks[str(folder)]
        assert task["instruction"] == (folder / "instruction.md").read_text(encoding="utf-8")
        assert task["verifierTimeout"] > 0 and task["agentTimeout"] > 0
        assert task["workdir"] == "/app"
        assert task["metadata"]["gitgauge_task"] == folder.name


def check_harbor_layout(folder: Path) -> None:
    """harbor 0.26.0's documented task layout and `TaskConfig` keys."""
    config = _task_toml(folder)
    assert set(config) <= HARBOR_KEYS[""]
    for section in ("verifier", "agent", "environment"):
        assert set(config[section]) <= HARBOR_KEYS[section], section
    assert isinstance(config["metadata"], dict)
    assert (folder / "instruction.md").read_text(encoding="utf-8").strip()
    assert (folder / "environment" / "Dockerfile").is_file()
    for script in ("tests/test.sh", "solution/solve.sh"):
        assert os.access(folder / script, os.X_OK), script


def _task_toml(folder: Path) -> dict[str, Any]:
    """The folder's task.toml, parsed as gitgauge parses a project's TOML (`tomllib`, or on
    Python 3.10 pytest's own `tomli`)."""
    config = toml_document((folder / "task.toml").read_text(encoding="utf-8"))
    assert config is not None, (
        f"{folder / 'task.toml'} does not parse as TOML, or there is no TOML reader (tomllib; "
        "tomli on Python 3.10)"
    )
    return config


def grading_of(folder: Path) -> str:
    """`per-test` or `exit-code`: how the folder's test.sh rewards (task.toml's metadata)."""
    lines = (folder / "task.toml").read_text(encoding="utf-8").splitlines()
    found = [line for line in lines if line.startswith("grading = ")]
    assert len(found) == 1, lines
    return str(json.loads(found[0].removeprefix("grading = ")))


def run_script(
    script: Path, checkout: Path, reward: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`bash script` in `checkout`, the reward written to `reward`."""
    return subprocess.run(
        ["bash", str(script)],
        cwd=checkout,
        env=dict(env or os.environ, GITGAUGE_REWARD_FILE=str(reward)),
        capture_output=True,
        text=True,
        check=False,
    )


@dataclass(frozen=True)
class Verified:
    """What test.sh gave one attempt: the reward it wrote and what it printed."""

    reward: str
    stdout: str
    stderr: str


def verify(
    folder: Path,
    scratch: Path,
    *,
    solve: bool,
    agent: Callable[[Path], None] | None = None,
    env: dict[str, str] | None = None,
) -> Verified:
    """A fresh copy of the folder's environment (the base's files) under `scratch`; the reference
    solution (`solution/solve.sh`) when `solve`, then `agent`'s edits; then `tests/test.sh`."""
    checkout = scratch / "app"
    shutil.copytree(folder / "environment/repo", checkout)
    reward = scratch / "logs" / "reward.txt"
    if solve:
        solved = run_script(folder / "solution/solve.sh", checkout, reward, env)
        assert solved.returncode == 0, solved.stderr
    if agent is not None:
        agent(checkout)
    tested = run_script(folder / "tests/test.sh", checkout, reward, env)
    assert tested.returncode == 0, tested.stderr
    return Verified(reward.read_text().strip(), tested.stdout, tested.stderr)
