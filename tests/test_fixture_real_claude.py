"""Fixture tasks with the REAL claude CLI (npm `@anthropic-ai/claude-code`) through the
`claude-code` adapter, against the loopback fake Messages API (`helpers/fakes/messages_api.py`).

Agent mode: the scripted model recovers the reflog fixture's commit by running git with the CLI's
`Bash` tool in the fixture's repository (in the sandbox when bwrap is there) and writes the hash to
`$GITGAUGE_ANSWER`. Text mode: the model's reply to the history fixture's prompt is the CLI's
`result`, scored as the answer. Skipped when the CLI is missing, failed under `CI=true`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.components import claude_binary, claude_env
from helpers.configs import agent_config
from helpers.fakes.messages_api import Act, Reply, serve
from helpers.repos import new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fixtures"
MODEL = "claude-sonnet-4-5"
REFLOG = "gitbench-reflog-r001"
HISTORY = "gitbench-history-h001"


def test_the_real_claude_cli_solves_an_agent_fixture_with_git_and_a_text_one_by_its_result(
    tmp_path: Path,
) -> None:
    claude_binary()  # skips locally when missing, fails under CI=true
    pack = tmp_path / "pack"
    for path in ("reflog/r001-recover-reset.yaml", "history/h001-subject-of-config.yaml"):
        (pack / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / path, pack / path)
    # Fixtures are done with git: the CLI's Bash tool must be allowed in -p mode.
    config = agent_config(
        tmp_path, "real", adapter="claude-code", model=MODEL, args=["--allowedTools", "Bash"]
    )
    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    with serve() as api:
        # The agent loop of the reflog fixture: recover, answer, then say so.
        api.acts = [
            Act(
                needle="was lost by a hard reset",
                commands=(
                    "git reset -q --hard 'HEAD@{1}'",
                    'git rev-parse HEAD > "$GITGAUGE_ANSWER"',
                ),
            )
        ]
        # The text-mode prompt of the history fixture (its log in the context): the answer.
        api.replies = [Reply("the subject of the commit that added config.yml", "Add config file")]
        repo = new_repo(tmp_path / "repo")
        repo.write("gitgauge.yaml", 'testCommand: "true"\n')
        repo.git("add", "gitgauge.yaml")
        repo.git("commit", "-q", "-m", "gitgauge")
        env = claude_env(api.base_url, tmp_path / "claude-home")
        env["TMPDIR"] = str(private)
        imported = run_gitgauge("import", "gitbench", str(pack), cwd=repo.root, env=env)
        assert imported.returncode == 0, imported.stderr + imported.stdout
        for task, mode in ((REFLOG, "agent"), (HISTORY, "text")):
            ran = run_gitgauge(
                "run", "-c", config, "--task", task, "--mode", mode, cwd=repo.root, env=env
            )
            assert ran.returncode == 0, ran.stderr + ran.stdout
        assert api.escapes() == [], "the CLI tried to reach another host"
        bash_calls = [
            request
            for request in api.agent_requests()
            if request.tool_results > 0 and "was lost by a hard reset" in request.text
        ]
    results = {
        record["task"]: record
        for record in (
            json.loads(path.read_text())
            for path in (repo.root / ".gitgauge" / "runs").glob("*/results/real/*.json")
        )
    }
    agent = results[REFLOG]
    assert (agent["status"], agent["mode"], agent["errorKind"]) == ("resolved", "agent", None), (
        agent
    )
    assert agent["answerSource"] == "file" and len(agent["answer"].strip()) == 40
    assert len(bash_calls) == 2, "the model ran both git commands through the CLI's Bash tool"
    text = results[HISTORY]
    assert (text["status"], text["mode"], text["errorKind"]) == ("resolved", "text", None), text
    assert (text["answerSource"], text["answer"]) == ("message", "Add config file")
