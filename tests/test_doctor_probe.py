"""`gitgauge doctor -c CONFIG [--probe]` through the real CLI, with the fake `claude` executable
(tests/helpers/fakes/claude.py) in place of the real one: never the real API.

`-c` checks an agent config as `run` does (loaded, adapter and harness made, binary and
credentials) without a call; `--probe` makes one short call through the same adapter, sandbox
and harness a pair of `run` uses, in a throwaway directory, and says what it cost, how long it
took, or why it failed with the cause `run`'s early stop knows it by.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require_bwrap
from helpers.fakes.claude import (
    FAKE_CLAUDE,
    FIXTURES,
    NOT_LOGGED_IN,
    failing,
    fake_claude_env,
    read_records,
)
from helpers.repos import GitRepo, new_repo

from gitgauge.doctor.probe import PROBE_PROMPT

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

UNREACHABLE = failing("API Error: Can't reach the API server (ENOTFOUND)")
"""The issue's key set, API unreachable: claude gives up with this result once its own retries
are spent."""
BAD_MODEL = failing(
    "There's an issue with the selected model (claude-nope). It may not exist.",
    api_error_status=404,
)
ANSWER = {
    "steps": [{"text": "OK"}],
    "result": "OK",
    "cost": 0.0123,
    "num_turns": 1,
    "usage": {"input_tokens": 1203, "output_tokens": 7, "cache_read_input_tokens": 4000},
}


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    repo = new_repo(tmp_path / "project")
    repo.commit("Initial", files={"README.md": "# a project\n"})
    return repo


def configure(repo: GitRepo, **config: Any) -> None:
    config.setdefault("testCommand", "true")
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def agent(folder: Path, **config: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config.setdefault("name", "sonnet")
    config.setdefault("adapter", "claude-code")
    path = folder / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def doctor(repo: GitRepo, *args: str, env: dict[str, str]) -> tuple[int, list[str], str]:
    result = run_gitgauge("doctor", *args, cwd=repo.root, env={**os.environ, **env})
    return result.returncode, result.stdout.splitlines(), result.stderr


def line(lines: list[str], start: str) -> str:
    found = [text for text in lines if text.startswith(start)]
    assert found, f"no line starting {start!r} in:\n" + "\n".join(lines)
    return found[0]


def _fake_in_home() -> dict[str, str]:
    """The fake claude and the fixtures it prints, copied under HOME (the sandbox shows HOME
    read-only, and neither this checkout's tests/ nor the test's directory); its record goes
    nowhere (HOME's entries are read-only in there)."""
    copy = Path(os.environ["HOME"]) / "fake"
    (copy / "helpers" / "fakes").mkdir(parents=True)
    shutil.copy2(FAKE_CLAUDE, copy / "helpers" / "fakes" / "claude.py")
    shutil.copytree(FIXTURES, copy / "fixtures")
    return {
        "GITGAUGE_CLAUDE_BIN": str(copy / "helpers" / "fakes" / "claude.py"),
        "FAKE_CLAUDE_RECORD": os.devnull,
    }


@pytest.mark.parametrize("sandbox", ["none", "auto"])
def test_a_probe_says_what_the_call_cost_and_how_long_it_took(
    project: GitRepo, tmp_path: Path, sandbox: str
) -> None:
    if sandbox == "auto":
        require_bwrap()
    configure(project, run={"sandbox": sandbox})
    # In HOME: the sandbox hides /tmp and the test's directory, not HOME (read-only there).
    env = fake_claude_env(Path(os.environ["HOME"]), ANSWER)
    if sandbox == "auto":
        env.update(_fake_in_home())
    config = agent(tmp_path / "configs", model="sonnet")
    code, lines, stderr = doctor(project, "--probe", "-c", str(config), env=env)
    assert code == 0, stderr + "\n".join(lines)
    said = line(lines, "ok    probe: sonnet (claude-code) worked in ")
    assert said.endswith(
        ", answered 'OK'; cost: $0.0123, 1,203 input tokens (+4,000 cached), 7 output, 1 turn"
    ), said
    assert lines[-1] == "doctor: `gitgauge mine` should work here"
    if sandbox == "none":  # the fake's record is written where the test can read it
        [call] = read_records(env)
        assert call["stdin"] == PROBE_PROMPT
        assert call["argv"][call["argv"].index("--model") + 1] == "sonnet"
        assert Path(call["cwd"]).name == "work" and "gitgauge-fresh-" in call["cwd"]
        assert call["cwdEntries"] == []
        assert not Path(call["cwd"]).exists()  # thrown away


@pytest.mark.parametrize(
    ("scenario", "cause", "said"),
    [
        (NOT_LOGGED_IN, "not-logged-in", "claude: Not logged in: run `claude /login`"),
        (UNREACHABLE, "unreachable", "claude: the API cannot be reached (API Error: Can't reach"),
        (BAD_MODEL, "bad-model", "claude: model 'claude-nope' not available"),
    ],
)
def test_a_failed_probe_is_said_with_the_cause_runs_early_stop_uses(
    project: GitRepo, tmp_path: Path, scenario: dict[str, Any], cause: str, said: str
) -> None:
    configure(project, run={"sandbox": "none"})
    env = fake_claude_env(tmp_path, scenario)
    config = agent(tmp_path / "configs", model="claude-nope")
    code, lines, _ = doctor(project, "--probe", "-c", str(config), env=env)
    assert code == 1
    failed = line(lines, "FAIL  probe: sonnet (claude-code) failed after ")
    assert f"(adapter-exit): {said}" in failed, failed
    assert (
        f"`gitgauge run` stops this config once its first pairs fail alike ({cause})"
        in (lines[lines.index(failed) + 1])
    )
    assert "doctor: `gitgauge mine` should work here" in lines
    assert lines[-1] == (
        "doctor: 1 agent config problem(s) marked FAIL: `gitgauge run` with them would not work yet"
    )


def test_a_probe_that_hangs_is_stopped_and_read_for_its_cause(
    project: GitRepo, tmp_path: Path
) -> None:
    """claude 2.1.197 still retrying requests that get no answer when the probe's time is up
    (its real stream-json, `api_retry` events with no HTTP status): the failure is said with
    its cause, as `run` says it."""
    configure(project, run={"sandbox": "none"}, timeouts={"adapter": 1500})
    retrying = (FIXTURES / "claude-stream-json-2.1.197-retrying.jsonl").read_text(encoding="utf-8")
    env = fake_claude_env(tmp_path, {"raw_stdout": retrying, "steps": [], "sleep": 30})
    config = agent(tmp_path / "configs")
    code, lines, _ = doctor(project, "--probe", "-c", str(config), env=env)
    assert code == 1
    failed = line(lines, "FAIL  probe: sonnet (claude-code) failed after ")
    # The adapter names the cause itself, or doctor reads it from the output: the same words.
    assert "(adapter-timeout): " in failed and "the API cannot be reached (claude retried" in failed
    assert "(unreachable)" in lines[lines.index(failed) + 1]


def test_a_script_that_runs_claude_and_hangs_is_read_for_claudes_cause(
    project: GitRepo, tmp_path: Path
) -> None:
    """A `script` agent (a harness around claude) stopped at the probe's time limit while
    claude retries: the script adapter knows no cause, so doctor reads what it printed with
    core.claude.classify_failure."""
    configure(project, run={"sandbox": "none"}, timeouts={"adapter": 1500})
    retrying = FIXTURES / "claude-stream-json-2.1.197-retrying.jsonl"
    config = agent(
        tmp_path / "configs", name="harness", adapter="script", command=f"cat {retrying}; sleep 30"
    )
    code, lines, _ = doctor(project, "--probe", "-c", str(config), env={})
    assert code == 1
    failed = line(lines, "FAIL  probe: harness (script) failed after ")
    assert "(adapter-timeout): no answer within 1.5 s: the API cannot be reached (" in failed
    assert "(unreachable)" in lines[lines.index(failed) + 1]


def test_without_probe_a_config_is_checked_but_its_agent_not_called(
    project: GitRepo, tmp_path: Path
) -> None:
    configure(project, run={"sandbox": "none"})
    env = fake_claude_env(tmp_path, ANSWER)
    config = agent(tmp_path / "configs")
    code, lines, _ = doctor(project, "-c", str(config), env=env)
    assert code == 0, "\n".join(lines)
    assert line(lines, f"ok    agent config {config}: sonnet (claude-code) loads, its binary runs")
    assert read_records(env) == []

    # Every unknown key of the agent config at once, each with its path.
    config.write_text(
        "name: sonnet\nadapter: claude-code\nmodle: sonnet\nprmpt: '{prompt}'\n", encoding="utf-8"
    )
    code, lines, _ = doctor(project, "-c", str(config), env=env)
    assert code == 1
    assert line(lines, "FAIL  ") == (
        f"FAIL  {config}: unknown keys 'modle' (did you mean 'model'?), 'prmpt' (did you mean "
        "'prompt'?)"
    )


def test_probe_needs_a_config_and_the_baselines_need_no_call(project: GitRepo) -> None:
    configure(project, run={"sandbox": "none"})
    code, _, stderr = doctor(project, "--probe", env={})
    assert code == 2
    assert stderr.strip() == (
        "gitgauge: error: --probe needs an agent config to call: gitgauge doctor --probe -c CONFIG"
    )
    code, lines, _ = doctor(project, "--probe", "-c", "gold", env={})
    assert code == 0, "\n".join(lines)
    assert line(lines, "info  probe: gold (gold) calls no agent: nothing to probe")
