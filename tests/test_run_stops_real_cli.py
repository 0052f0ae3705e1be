"""An unreachable API stops its config after the first pair with the REAL claude and codex CLIs
(issue 37, item 4): each is pointed at a loopback port that refuses every connection (bound,
never listening: nothing leaves the machine, and as the CLIs' proxy it refuses any other host
too). Claude gives up (its retries cut to none by the config's `env`) with "Unable to connect to
API (ConnectionRefused)", or, still retrying when `timeouts.adapter` ends its pair, shows only
retries no answer came to; codex waits for the network with no end, so its pair times out, and
its "Reconnecting... waiting for network" notices say why. Skipped without the CLI, failed under
`CI=true`. The same stop with the fake claude, and its resume: tests/test_run_stops.py."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
from helpers.components import claude_binary, claude_env, require
from helpers.configs import agent_config
from helpers.demo import write_gitgauge_yaml
from helpers.demo_runs import results_of, run_slug_task
from helpers.fakes.responses_api import codex_env, codex_home
from helpers.repos import GitRepo
from helpers.results import only_run_dir

from gitgauge.core.errors import ExitCode

# The real CLIs: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


@contextmanager
def refusing_port() -> Iterator[str]:
    """The URL of a loopback port that refuses connections while the context lasts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


RESUME = "; 2 of its pairs were not started. Fix it, then `gitgauge run --resume"


def assert_stopped_after_one_pair(
    demo: GitRepo,
    name: str,
    config: str,
    env_for: Callable[[str], dict[str, str]],
    kind: str,
    said: str,
    then: str = RESUME,
) -> None:
    """Three repeats of one task by config `name` (at `config`), run in `env_for(url)` with the
    API at `url` refusing connections: the run stops the config after its first pair, which
    failed of an unreachable API (`kind`); the closing error line says `said`, later `then`."""
    with refusing_port() as url:
        outcome = run_slug_task(demo, [config], "--repeat", "3", env=env_for(url))
    assert outcome.returncode == ExitCode.CONFIG_STOPPED, outcome.stderr
    (stopped,) = results_of(only_run_dir(demo), name)
    assert (stopped["errorKind"], stopped["errorCause"]) == (kind, "unreachable")
    line = outcome.stderr.strip().splitlines()[-1]
    assert line.startswith(
        f"gitgauge: error: config {name} stopped after its first pair failed: {said}"
    ), line
    assert then in line


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
    offline = partial(claude_env, home=tmp_path / "home")
    said = "claude: the API cannot be reached (API Error: Unable to connect to API"
    assert_stopped_after_one_pair(demo, "offline", config, offline, "adapter-exit", said)


def test_the_real_claude_still_retrying_at_its_timeout_stops_its_config_after_one_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    claude_binary()
    # Its own ten retries would take minutes: timeouts.adapter ends the pair first.
    write_gitgauge_yaml(demo.root, adapter_ms=6000)
    config = agent_config(
        tmp_path / "configs", "retrying", adapter="claude-code", model="claude-sonnet-4-5"
    )
    offline = partial(claude_env, home=tmp_path / "home")
    said = "claude: the API cannot be reached (claude retried "
    killed = "(killed after 6s (timeouts.adapter)); 2 of its pairs were not started."
    assert_stopped_after_one_pair(
        demo, "retrying", config, offline, "adapter-timeout", said, killed
    )


def test_the_real_codex_waiting_for_an_unreachable_api_stops_its_config_after_one_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    require(shutil.which("codex") is not None, "the codex CLI (npm install -g @openai/codex)")
    # Codex would wait for ever: the pair ends at timeouts.adapter.
    write_gitgauge_yaml(demo.root, adapter_ms=8000)
    config = agent_config(tmp_path / "configs", "codex-offline", adapter="codex")

    def offline(url: str) -> dict[str, str]:
        codex_home(Path(os.environ["HOME"]), f"{url}/v1")
        proxy = {"HTTPS_PROXY": url, "HTTP_PROXY": url, "NO_PROXY": "127.0.0.1,localhost"}
        return {**os.environ, **codex_env(tmp_path), **proxy}

    said = "codex: the API cannot be reached (Reconnecting... waiting for network"
    assert_stopped_after_one_pair(demo, "codex-offline", config, offline, "adapter-timeout", said)
