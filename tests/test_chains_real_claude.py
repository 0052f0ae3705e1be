"""A `kind: commits` task done end to end by the REAL claude CLI (npm `@anthropic-ai/claude-code`)
through the `claude-code` adapter, in the sandbox, against the loopback fake Messages API of
`helpers/fakes/messages_api.py`: its scripted model commits the work tree with the Bash tool, and
the judge (the Anthropic SDK, pointed at the same fake) compares that series with the original.
Skipped when the CLI is missing, failed under `CI=true`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import claude_binary, claude_env
from helpers.configs import agent_config
from helpers.environment import isolated
from helpers.fakes.messages_api import INPUT_TOKENS, CommandRule, RecordedRequest, Reply, serve
from helpers.repos.chains import build_chain_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
"""A model the CLI prices, so the pair records a cost."""
MESSAGE = "Add zeta.double with its test and its docs"
BLOCK = re.compile(
    r"<untrusted-series-([ab])-([0-9a-f]{32})>\n(.*?)\n</untrusted-series-\1-\2>", re.S
)


def fewer_commits_win(request: RecordedRequest) -> str:
    found = {name: text for name, _, text in BLOCK.findall(request.text)}
    a, b = found["a"].count("--- commit "), found["b"].count("--- commit ")
    if a == b:
        return "VERDICT: TIE"
    return "One commit tells it whole.\nVERDICT: " + ("A" if a < b else "B")


def test_the_real_claude_cli_commits_the_work_tree_as_a_series(tmp_path: Path) -> None:
    claude_binary()  # skips locally when missing, fails under CI=true
    with isolated(tmp_path):
        built = build_chain_repo(tmp_path / "repo")
        mined = run_gitgauge("mine", "--chains", cwd=built.root)
        assert mined.returncode == 0, mined.stderr
    (task_file,) = (built.root / ".gitgauge" / "tasks").glob("*-commits-document-zeta-double.yaml")
    task = yaml.safe_load(task_file.read_text())
    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    config = agent_config(
        tmp_path, "real", adapter="claude-code", model=MODEL, args=["--allowedTools", "Bash"]
    )
    with serve() as api:
        command = (
            "git add -A && git -c user.name=Agent -c user.email=agent@example.invalid "
            f"commit -q -m '{MESSAGE}'"
        )
        api.rules = [CommandRule(needle="changes of 3 commits", command=command)]
        api.replies = [Reply("untrusted-series-a-", fewer_commits_win)]
        env = claude_env(api.base_url, tmp_path / "claude-home")
        env["TMPDIR"] = str(private)
        outcome = run_gitgauge(
            "run", "--judge", "-c", config, "--task", task["id"], cwd=built.root, env=env
        )
        assert outcome.returncode == 0, outcome.stderr + outcome.stdout
        assert api.escapes() == [], "the CLI tried to reach another host"
        # The CLI came back with the Bash tool's result: it ran the commit.
        assert any(r.tool_results for r in api.agent_requests()), "the CLI ran no tool"
        judged = [r for r in api.requests if r.is_messages and "untrusted-series-a-" in r.text]
    (found,) = (built.root / ".gitgauge" / "runs").glob("*/results/real/*.json")
    result = json.loads(found.read_text())
    assert (result["task"], result["kind"]) == (task["id"], "commits")
    assert (result["status"], result["errorKind"], result["sandbox"]) == (
        "resolved",
        None,
        "bwrap",
    ), result
    assert result["series"] == [MESSAGE]
    assert result["originalSeries"] == task["chainSubjects"]
    assert (result["judgeAsFirst"], result["judgeAsSecond"], result["solved"]) == (
        "win",
        "win",
        True,
    )
    # Two requests for the pair, two for the position check; none runs a tool.
    assert len(judged) == 4 and not any(r.tool_names for r in judged)
    assert result["judgeInputTokens"] == 2 * INPUT_TOKENS
    assert result["costUsd"] > 0
    assert [p.name for p in private.iterdir() if p.name.startswith("gitgauge-")] == []
