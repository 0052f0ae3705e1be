"""The claude-code adapter against the fake `claude` (tests/helpers/fakes/claude.py): argv, stdin,
working directory, the JSON result's cost and tokens, and every way a run can fail."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers.adapters import context_for
from helpers.fakes.claude import FAKE_CLAUDE, envelope_fixture, fake_claude_env, read_record
from helpers.processes import pid_alive
from helpers.repos import GitRepo

from gitgauge.core.claude import parse_result
from gitgauge.core.errors import AdapterError
from gitgauge.core.schema import AgentConfig
from gitgauge.core.usage import AgentUsage
from gitgauge.running.adapters.base import Adapter, AdapterOutcome, create

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

BASE_ARGV = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
]
# Shell syntax and a flag inside the prompt: harmless only because it never reaches argv.
PROMPT = "Fix the following bug:\n\nfix: divide crashes on zero\n\n--model opus $(touch pwned)\n"
CALC = "def divide(a, b):\n    return a / b\n"
FIXED_CALC = "def divide(a, b):\n    return a / b if b else 0\n"


@pytest.fixture
def workspace(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("add calc", files={"src/calc.py": CALC})
    return git_repo


def claude_adapter(
    *, model: str | None = None, args: list[str] | None = None, source: str = "sonnet.yaml"
) -> Adapter:
    config = AgentConfig(name="sonnet", adapter="claude-code", model=model, args=args or [])
    return create(config, source=source)


def run_fake(
    tmp_path: Path,
    workspace: GitRepo,
    scenario: dict[str, Any],
    *,
    adapter: Adapter | None = None,
    timeout_seconds: float = 120.0,
) -> tuple[AdapterOutcome, dict[str, str]]:
    env = fake_claude_env(tmp_path, scenario)
    context = context_for(workspace, env, prompt=PROMPT, timeout_seconds=timeout_seconds)
    outcome = (adapter or claude_adapter()).run(context)
    return outcome, env


# -- a successful run ----------------------------------------------------------------------------


def test_argv_stdin_and_working_directory(tmp_path: Path, workspace: GitRepo) -> None:
    outcome, env = run_fake(tmp_path, workspace, {"files": {"src/calc.py": FIXED_CALC}})

    assert outcome.ok, outcome.error_message
    record = read_record(env)
    assert Path(record["program"]) == FAKE_CLAUDE
    assert record["argv"] == BASE_ARGV
    assert not any("divide" in arg or "Fix" in arg for arg in record["argv"])
    assert record["stdin"] == PROMPT
    assert Path(record["cwd"]).resolve() == workspace.root.resolve()
    assert record["env"]["PWD"] == str(workspace.root)
    assert record["env"]["GIT_DIR"] is None
    assert (workspace.root / "src/calc.py").read_text() == FIXED_CALC
    assert not (workspace.root / "pwned").exists()


def test_cost_tokens_and_turns_are_copied_from_the_result(
    tmp_path: Path, workspace: GitRepo
) -> None:
    outcome, _ = run_fake(tmp_path, workspace, {})

    fixture = envelope_fixture()
    assert outcome.ok
    assert outcome.usage.cost_usd == fixture["total_cost_usd"] == 0.010799999999999999
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (2400, 600)
    assert (outcome.usage.cache_creation_input_tokens, outcome.usage.cache_read_input_tokens) == (
        0,
        0,
    )
    assert outcome.usage.num_turns == 2
    assert outcome.seconds > 0
    stdout_log = workspace.root.parent / "logs" / "agent.stdout"
    last = stdout_log.read_text().splitlines()[-1]
    assert json.loads(last)["session_id"] == fixture["session_id"]


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"pretty": True},
        {"stdout_before": 'warning: update available\n{"type": "system", "subtype": "init"}\n'},
        {"stdout_before": "[1, 2]\n{not json\n", "pretty": True, "stderr": "some noise\n"},
    ],
    ids=["one-line", "indented", "after-other-lines", "after-junk-indented"],
)
def test_result_is_found_among_other_output(
    tmp_path: Path, workspace: GitRepo, layout: dict[str, Any]
) -> None:
    scenario = {
        **layout,
        "cost": 1.25,
        "num_turns": 7,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_creation_input_tokens": 30,
            "cache_read_input_tokens": 40,
        },
    }
    outcome, _ = run_fake(tmp_path, workspace, scenario)

    assert outcome.ok, outcome.error_message
    assert outcome.usage.cost_usd == 1.25
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (10, 20)
    assert (outcome.usage.cache_creation_input_tokens, outcome.usage.cache_read_input_tokens) == (
        30,
        40,
    )
    assert outcome.usage.num_turns == 7


def test_missing_numbers_are_none(tmp_path: Path, workspace: GitRepo) -> None:
    scenario = {"drop": ["total_cost_usd", "num_turns", "usage.input_tokens"], "usage": {}}
    outcome, _ = run_fake(tmp_path, workspace, scenario)

    assert outcome.ok, outcome.error_message
    assert outcome.usage.cost_usd is None
    assert outcome.usage.num_turns is None
    assert outcome.usage.input_tokens is None
    assert outcome.usage.output_tokens == 600


def test_model_then_args_are_appended(tmp_path: Path, workspace: GitRepo) -> None:
    args = ["--max-turns", "5", "--permission-mode", "plan"]
    adapter = claude_adapter(model="opus", args=args)
    outcome, env = run_fake(tmp_path, workspace, {}, adapter=adapter)

    assert outcome.ok
    assert read_record(env)["argv"] == [*BASE_ARGV, "--model", "opus", *args]


def test_args_without_model(tmp_path: Path, workspace: GitRepo) -> None:
    adapter = claude_adapter(args=["--verbose"])
    _, env = run_fake(tmp_path, workspace, {}, adapter=adapter)

    assert read_record(env)["argv"] == [*BASE_ARGV, "--verbose"]


def test_claude_found_on_path(
    tmp_path: Path, workspace: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_claude_env(tmp_path, {"cost": 0.5}, via_path=True)
    monkeypatch.setenv("PATH", env["PATH"])
    adapter = claude_adapter()
    adapter.check()

    outcome = adapter.run(context_for(workspace, env, prompt=PROMPT))

    assert outcome.ok and outcome.usage.cost_usd == 0.5
    assert Path(read_record(env)["program"]).name == "claude"


# -- failures are data ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "kind", "fragments", "cost"),
    [
        pytest.param(
            {"crash": True},
            "adapter-exit",
            ["claude exited 1", "RuntimeError: fake claude crashed"],
            0.010799999999999999,
            id="crash-after-printing",
        ),
        pytest.param(
            {"exit_code": 2, "is_error": True, "subtype": "error_max_turns", "cost": 0.3},
            "adapter-exit",
            ["claude exited 2", "subtype='error_max_turns'"],
            0.3,
            id="non-zero-exit",
        ),
        pytest.param(
            {"exit_code": 1, "envelope": False, "stderr": "Error: not logged in\n"},
            "adapter-exit",
            ["claude: Not logged in: run `claude /login`", "claude exited 1"],
            None,
            id="non-zero-exit-without-json",
        ),
        pytest.param(
            {"raw_stdout": '{"type": "result", "total_cost_usd": 0.5, "usage": {'},
            "adapter-output",
            ["invalid JSON", '"total_cost_usd": 0.5'],
            None,
            id="malformed-json",
        ),
        pytest.param(
            {
                "is_error": True,
                "subtype": "error_during_execution",
                "result": "API Error: Overloaded",
                "api_error_status": 529,
                "cost": 0.02,
            },
            "adapter-output",
            ["is_error: true", "error_during_execution", "529", "API Error: Overloaded"],
            0.02,
            id="is-error-with-exit-0",
        ),
        pytest.param(
            {"fields": {"total_cost_usd": "0.5"}},
            "adapter-output",
            ["total_cost_usd: expected a number", '"0.5"'],
            None,
            id="cost-of-the-wrong-type",
        ),
        pytest.param(
            {"raw_stdout": '{"type": "result", "total_cost_usd": NaN}'},
            "adapter-output",
            ["total_cost_usd: expected dollars from 0 to 1,000,000, got nan"],
            None,
            id="cost-that-is-nan",
        ),
        pytest.param(
            {"fields": {"total_cost_usd": -0.5}},
            "adapter-output",
            ["total_cost_usd: expected dollars from 0", "got -0.5"],
            None,
            id="negative-cost",
        ),
        pytest.param(
            {"usage": {"output_tokens": -5}},
            "adapter-output",
            ["usage.output_tokens: expected 0 to 1,000,000,000,000, got -5"],
            None,
            id="negative-tokens",
        ),
        pytest.param(
            {"usage": {"output_tokens": 1.5}},
            "adapter-output",
            ["usage.output_tokens: expected a whole number"],
            None,
            id="tokens-of-the-wrong-type",
        ),
        pytest.param(
            {"raw_stdout": ""},
            "adapter-output",
            ["stdout is empty", "no output"],
            None,
            id="no-output",
        ),
        pytest.param(
            {"fields": {"type": "assistant"}},
            "adapter-output",
            ['no JSON object with "type": "result"'],
            None,
            id="object-that-is-not-a-result",
        ),
    ],
)
def test_failures_are_outcomes_with_reason_and_tail(
    tmp_path: Path,
    workspace: GitRepo,
    scenario: dict[str, Any],
    kind: str,
    fragments: list[str],
    cost: float | None,
) -> None:
    outcome, _ = run_fake(tmp_path, workspace, scenario)

    assert outcome.error_kind == kind
    assert not outcome.ok
    assert outcome.error_message is not None
    for fragment in fragments:
        assert fragment in outcome.error_message
    assert outcome.usage.cost_usd == cost


def test_error_message_keeps_only_the_tail(tmp_path: Path, workspace: GitRepo) -> None:
    noise = "".join(f"line {n}\n" for n in range(2000))
    outcome, _ = run_fake(tmp_path, workspace, {"raw_stdout": noise + "not json at the end"})

    assert outcome.error_kind == "adapter-output"
    assert outcome.error_message is not None
    assert outcome.error_message.endswith("not json at the end")
    assert "line 0\n" not in outcome.error_message
    assert len(outcome.error_message) < 1000


@pytest.mark.parametrize("ignore_sigterm", [False, True], ids=["sigterm", "needs-sigkill"])
def test_timeout_kills_the_whole_group(
    tmp_path: Path, workspace: GitRepo, ignore_sigterm: bool
) -> None:
    # The child sleeps as long and holds stdout: waiting on a pipe (or only on the leader)
    # would take two minutes.
    scenario = {"sleep": 120, "ignore_sigterm": ignore_sigterm, "stdout_before": "thinking...\n"}
    scenario["envelope"] = False
    outcome, env = run_fake(tmp_path, workspace, scenario, timeout_seconds=1.0)

    assert outcome.error_kind == "adapter-timeout"
    assert outcome.error_message is not None
    assert "killed after 1s" in outcome.error_message
    assert "thinking..." in outcome.error_message
    assert outcome.seconds < 120
    record = read_record(env)
    assert not pid_alive(record["pid"])
    assert not pid_alive(record["child_pid"])


def test_timeout_still_copies_a_printed_cost(tmp_path: Path, workspace: GitRepo) -> None:
    outcome, _ = run_fake(tmp_path, workspace, {"sleep": 120, "cost": 0.75}, timeout_seconds=1.0)

    assert outcome.error_kind == "adapter-timeout"
    assert outcome.usage.cost_usd == 0.75


# -- the binary ----------------------------------------------------------------------------------


def test_missing_claude_on_path_is_an_adapter_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    with pytest.raises(AdapterError) as raised:
        claude_adapter(source="configs/sonnet.yaml").check()

    message = str(raised.value)
    assert "configs/sonnet.yaml" in message
    assert "not found on PATH" in message
    assert "GITGAUGE_CLAUDE_BIN" in message


def test_override_that_does_not_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "claude"
    monkeypatch.setenv("GITGAUGE_CLAUDE_BIN", str(missing))

    with pytest.raises(AdapterError) as raised:
        claude_adapter().check()

    assert f"GITGAUGE_CLAUDE_BIN={missing}: no such file" in str(raised.value)


@pytest.mark.parametrize("kind", ["not-executable", "directory"])
def test_override_that_is_not_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    target = tmp_path / "claude"
    if kind == "directory":
        target.mkdir()
    else:
        target.write_text("#!/bin/sh\nexit 0\n")
        target.chmod(0o644)
    monkeypatch.setenv("GITGAUGE_CLAUDE_BIN", str(target))

    with pytest.raises(AdapterError) as raised:
        claude_adapter().check()

    message = str(raised.value)
    assert "GITGAUGE_CLAUDE_BIN" in message
    assert "chmod +x" in message


def test_override_beats_path(
    tmp_path: Path, workspace: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A `claude` on PATH that must not run: the override wins.
    decoy = tmp_path / "decoy-bin"
    decoy.mkdir()
    (decoy / "claude").write_text("#!/bin/sh\nexit 42\n")
    (decoy / "claude").chmod(0o755)
    env = fake_claude_env(tmp_path, {})
    env["PATH"] = f"{decoy}{os.pathsep}{os.environ['PATH']}"

    outcome = claude_adapter().run(context_for(workspace, env, prompt=PROMPT))

    assert outcome.ok, outcome.error_message
    assert Path(read_record(env)["program"]) == FAKE_CLAUDE


def test_binary_gone_at_run_time_is_an_outcome(tmp_path: Path, workspace: GitRepo) -> None:
    env = {"GITGAUGE_CLAUDE_BIN": str(tmp_path / "gone")}

    outcome = claude_adapter().run(context_for(workspace, env, prompt=PROMPT))

    assert outcome.error_kind == "adapter-exit"
    assert outcome.error_message is not None
    assert "GITGAUGE_CLAUDE_BIN" in outcome.error_message


# -- parsing -------------------------------------------------------------------------------------


def test_the_last_result_object_wins() -> None:
    first = json.dumps({"type": "result", "total_cost_usd": 1.0, "num_turns": 1})
    last = json.dumps({"type": "result", "total_cost_usd": 2.0, "num_turns": 3})

    parsed = parse_result(f"{first}\nprogress\n{last}\n")

    assert (parsed.usage.cost_usd, parsed.usage.num_turns) == (2.0, 3)


def test_real_fixture_parses_exactly() -> None:
    text = (Path(__file__).parent / "fixtures" / "claude-print-json-2.1.328.json").read_text()

    parsed = parse_result(text)

    assert parsed.is_error is False
    assert parsed.subtype == "success"
    assert parsed.result == "Fixed."
    assert parsed.api_error_status is None
    assert parsed.usage == AgentUsage(
        cost_usd=0.010799999999999999,
        input_tokens=2400,
        output_tokens=600,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
        num_turns=2,
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"type": "result", "is_error": "no"}', "is_error: expected true or false"),
        ('{"type": "result", "usage": [1]}', "usage: expected an object"),
        ('{"type": "result", "num_turns": true}', "num_turns: expected a whole number"),
        ('{"type": "result", "result": 5}', "result: expected text"),
        ("[]", "no JSON object at all"),
    ],
)
def test_wrong_types_name_the_field(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_result(text)


# -- the fake itself (other tests rely on its scenario keys) -------------------------------------


def test_fake_picks_the_first_matching_case_and_replaces_text(
    tmp_path: Path, workspace: GitRepo
) -> None:
    scenario = {
        "cost": 0.1,
        "cases": [
            {"match": {"model": "haiku"}, "cost": 0.2},
            {
                "match": {"model": "opus", "prompt_contains": "divide crashes"},
                "cost": 0.3,
                "replace": {"src/calc.py": [["return a / b", "return a / b if b else 0"]]},
            },
            {"match": {"model": "opus"}, "cost": 0.4},
        ],
    }
    outcome, _ = run_fake(tmp_path, workspace, scenario, adapter=claude_adapter(model="opus"))

    assert outcome.usage.cost_usd == 0.3
    assert (workspace.root / "src/calc.py").read_text() == FIXED_CALC
