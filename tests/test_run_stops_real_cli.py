"""An unreachable API stops its config after the first pair with the REAL claude and codex CLIs
(issue 37, item 4): each is pointed at a loopback port that refuses every connection (bound,
never listening: nothing leaves the machine, and as the CLIs' proxy it refuses any other host
too). Claude gives up (its retries cut to none by the config's `env`) with "Unable to connect to
API (ConnectionRefused)", or, still retrying when `timeouts.adapter` ends its pair, shows only
retries no answer came to; codex waits for the network with no end, so its pair times out, and
its "Reconnecting... waiting for network" notices say why. Skipped without the CLI, failed under
`CI=true`. The same stop with the fake claude, and its resume: tests/test_run_stops.py."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.components import claude_binary, claude_env, require
from helpers.configs import agent_config, configs_args
from helpers.demo import slug_task, write_gitgauge_yaml
from helpers.fakes.responses_api import codex_env, codex_home
from helpers.repos import GitRepo
from helpers.results import only_run_dir

from gitgauge.core.errors import ExitCode
from gitgauge.core.store import config_dir_name

# The real CLIs: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


@contextmanager
def refusing_port() -> Iterator[str]:
    """The URL of a loopback port that refuses connections while the context lasts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


def results_of(run_dir: Path, config: str) -> list[dict[str, Any]]:
    folder = run_dir / "results" / config_dir_name(config)
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))]


def stopped_after_one_pair(
    demo: GitRepo, config: str, name: str, env: dict[str, str], kind: str
) -> str:
    """Three repeats of one task by `config`: the run stops the config after its first pair,
    which failed of an unreachable API (`kind`); the closing error line."""
    outcome = run_gitgauge(
        "run", *configs_args(config), "--task", slug_task(demo)["id"], "--repeat", "3",
        cwd=demo.root, env=env,
    )  # fmt: skip
    assert outcome.returncode == ExitCode.CONFIG_STOPPED, outcome.stderr
    (stopped,) = results_of(only_run_dir(demo), name)
    assert (stopped["errorKind"], stopped["errorCause"]) == (kind, "unreachable")
    return outcome.stderr.strip().splitlines()[-1]


def test_the_real_claude_with_no_api_to_reach_stops_its_config_after_one_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    claude_binary()
    config = agent_config(
        tmp_path / "configs",
        "offline",
        adapter="claude-code",
        model="claude-sonnet-4-5",
        env={"CLAUDE_CODE_MAX_RETRIES": "0"},  # its ten retries took minutes
    )
    with refusing_port() as url:
        env = claude_env(url, tmp_path / "home")
        line = stopped_after_one_pair(demo, config, "offline", env, "adapter-exit")
    assert line.startswith(
        "gitgauge: error: config offline stopped after its first pair failed: claude: the API "
        "cannot be reached (API Error: Unable to connect to API"
    ), line
    assert "; 2 of its pairs were not started. Fix it, then `gitgauge run --resume" in line


def test_the_real_claude_still_retrying_at_its_timeout_stops_its_config_after_one_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    claude_binary()
    # Its own ten retries would take minutes: timeouts.adapter ends the pair first.
    write_gitgauge_yaml(demo.root, adapter_ms=6000)
    config = agent_config(
        tmp_path / "configs", "retrying", adapter="claude-code", model="claude-sonnet-4-5"
    )
    with refusing_port() as url:
        env = claude_env(url, tmp_path / "home")
        line = stopped_after_one_pair(demo, config, "retrying", env, "adapter-timeout")
    assert line.startswith(
        "gitgauge: error: config retrying stopped after its first pair failed: claude: the API "
        "cannot be reached (claude retried "
    ), line
    assert "(killed after 6s (timeouts.adapter)); 2 of its pairs were not started." in line


def test_the_real_codex_waiting_for_an_unreachable_api_stops_its_config_after_one_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    require(shutil.which("codex") is not None, "the codex CLI (npm install -g @openai/codex)")
    # Codex would wait for ever: the pair ends at timeouts.adapter.
    write_gitgauge_yaml(demo.root, adapter_ms=8000)
    config = agent_config(tmp_path / "configs", "codex-offline", adapter="codex")
    with refusing_port() as url:
        codex_home(Path(os.environ["HOME"]), f"{url}/v1")
        env = {
            **os.environ,
            **codex_env(tmp_path),
            "HTTPS_PROXY": url,
            "HTTP_PROXY": url,
            "NO_PROXY": "127.0.0.1,localhost",
        }
        line = stopped_after_one_pair(demo, config, "codex-offline", env, "adapter-timeout")
    assert line.startswith(
        "gitgauge: error: config codex-offline stopped after its first pair failed: codex: the "
        "API cannot be reached (Reconnecting... waiting for network"
    ), line
    assert "; 2 of its pairs were not started. Fix it, then `gitgauge run --resume" in line
