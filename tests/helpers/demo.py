"""The demo repository as the `gitgauge run` tests use it (conftest.py mines it once a session;
its fixtures `mined_demo` and `demo` copy it): its gitgauge.yaml, its slugify task, and what the
user's checkout must keep."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from helpers.repos import GitRepo

SLUG_TASK_SUFFIX = "-fix-slugify-drops-digits"
SLUG_FILE = "textkit/slug.py"
BUGGY_PATTERN = 'r"[^a-z]+"'
FIXED_PATTERN = 'r"[^a-z0-9]+"'


@dataclass(frozen=True)
class DemoRun:
    root: Path
    home: Path
    output: subprocess.CompletedProcess[str]
    """What `gitgauge demo` printed (tests/test_demo.py reads it)."""
    temp_left: list[str]
    """gitgauge-* entries left in the run's own temporary directory afterwards."""


def write_gitgauge_yaml(
    root: Path,
    *,
    adapter_ms: int = 60_000,
    setup: str | None = None,
    link: tuple[str, ...] = (),
    sandbox: str = "none",
    history: str = "isolated",
) -> None:
    # No sandbox by default: these tests watch agents through files outside their workspace,
    # which the sandbox forbids (tests/test_sandbox.py runs the same adapters inside it).
    from gitgauge.demo import demo_test_command

    lines = [
        f"testCommand: {json.dumps(demo_test_command(sys.executable))}",
        "timeouts:",
        "  test: 60000",
        "  setup: 60000",
        f"  adapter: {adapter_ms}",
        f"run:\n  sandbox: {sandbox}\n  history: {history}",
    ]
    if setup is not None:
        lines.append(f"setupCommand: {json.dumps(setup)}")
    if link:
        lines += ["worktree:", "  link:", *(f"    - {name}" for name in link)]
    (root / "gitgauge.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def slug_task(repo: GitRepo) -> dict[str, Any]:
    (path,) = (repo.root / ".gitgauge" / "tasks").glob(f"*{SLUG_TASK_SUFFIX}.yaml")
    task: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return task


def checkout_state(repo: GitRepo) -> dict[str, str]:
    # `.gitgauge/` is ignored and gains the run's files: compare everything else.
    state = repo.snapshot()
    state["status"] = repo.git("status", "--porcelain", "--untracked-files=all")
    return state
