"""Which failures of an agent stop its config (issue 37, item 4), read from what the real CLIs
print: an unreachable API in claude's and codex's own words (real outputs captured with no API
to reach: `tests/fixtures/claude-stream-json-2.1.197-unreachable.jsonl`, and `-retrying.jsonl`
killed while it still retried; `tests/fixtures/codex-exec-json-0.171.0-unreachable.jsonl`,
waiting for the network), the causes known before, the rule for errors with no known cause (the
same message once what differs from pair to pair is masked), and the adapters naming a command
or binary not found. `gitgauge run` stopping on them is in tests/test_run_stops.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.adapters import context_for
from helpers.fakes.claude import envelope_fixture
from helpers.repos import GitRepo

from gitgauge.core.claude import classify_failure
from gitgauge.core.records import RunResult
from gitgauge.core.schema import AgentConfig
from gitgauge.running.adapters import codex
from gitgauge.running.adapters.base import create
from gitgauge.running.gate import STOP_AFTER, failure_key, masked

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_UNREACHABLE = FIXTURES / "claude-stream-json-2.1.197-unreachable.jsonl"
CLAUDE_RETRYING = FIXTURES / "claude-stream-json-2.1.197-retrying.jsonl"
CODEX_UNREACHABLE = FIXTURES / "codex-exec-json-0.171.0-unreachable.jsonl"


def claude_result(text: str, *, is_error: bool = True) -> str:
    """The `--output-format json` result of claude 2.1.328 with `text` as its result."""
    envelope = envelope_fixture() | {"is_error": is_error, "result": text, "total_cost_usd": 0}
    return json.dumps(envelope)


def cause_of(found: tuple[str, str] | None) -> str | None:
    return found[0] if found is not None else None


@pytest.mark.parametrize(
    ("classify", "output", "said"),
    [
        pytest.param(
            classify_failure,
            CLAUDE_UNREACHABLE,
            "the API cannot be reached (API Error: Unable to connect to API (ConnectionRefused)): "
            "check the network, the proxy variables (HTTPS_PROXY) and ANTHROPIC_BASE_URL",
            id="claude",
        ),
        pytest.param(
            codex.classify_failure,
            CODEX_UNREACHABLE,
            "the API cannot be reached (Reconnecting... waiting for network (Connection failed: "
            "error sending request)): check the network",
            id="codex-waiting-for-the-network",
        ),
    ],
)
def test_an_agent_with_no_api_to_reach_is_unreachable_in_its_real_output(
    classify: Callable[[str], tuple[str, str] | None], output: Path, said: str
) -> None:
    found = classify(output.read_text(encoding="utf-8"))

    assert found is not None
    cause, sentence = found
    assert cause == "unreachable"
    assert sentence.startswith(said)


def test_claude_stopped_while_it_retries_unanswered_requests_is_unreachable() -> None:
    # Killed 10 s in (a timeout, doctor's probe): no result yet, 5 retries without a status.
    partial = CLAUDE_RETRYING.read_text(encoding="utf-8")
    found = classify_failure(partial)

    assert found == (
        "unreachable",
        "the API cannot be reached (claude retried 5 requests that got no answer (api_retry, no "
        "HTTP status)): check the network, the proxy variables (HTTPS_PROXY) and "
        "ANTHROPIC_BASE_URL, and `run.sandbox_network` when the sandbox runs the agent",
    )
    # An answer with a status (overloaded), or any message from the model: not unreachable.
    overloaded = partial.replace('"error_status":null', '"error_status":529')
    assert classify_failure(overloaded) is None
    lines = partial.splitlines()
    answered = [*lines[:2], json.dumps({"type": "assistant", "message": {}}), *lines[2:]]
    assert classify_failure("\n".join(answered)) is None


@pytest.mark.parametrize(
    "said",
    [
        "API Error: Can't reach the API server (ENOTFOUND)",
        "API Error: Connection error.",
        "getaddrinfo EAI_AGAIN api.anthropic.com",
        "connect ECONNREFUSED 127.0.0.1:443",
        "API Error: Unable to connect to API (FailedToOpenSocket)",
    ],
)
def test_every_way_claude_says_the_api_is_unreachable(said: str) -> None:
    assert cause_of(classify_failure(claude_result(said))) == "unreachable", said


@pytest.mark.parametrize(
    ("said", "cause"),
    [
        ("Not logged in · Please run /login", "not-logged-in"),
        ("Invalid API key · Fix external API key", "auth"),
        ("Credit balance is too low", "quota"),
        ("There's an issue with the selected model (claude-nope).", "bad-model"),
        # A reset or a timeout happens on a reachable server too: no cause, the same-message
        # rule decides after 3 pairs.
        ("API Error: Request timed out.", None),
        ("API Error: read ECONNRESET", None),
    ],
)
def test_the_other_causes_are_unchanged_and_a_slow_server_is_none(
    said: str, cause: str | None
) -> None:
    assert cause_of(classify_failure(claude_result(said))) == cause


def test_a_claude_run_that_succeeded_has_no_cause() -> None:
    assert (
        classify_failure(claude_result("Fixed. The connection error is gone.", is_error=False))
        is None
    )
    assert classify_failure("", "") is None


def test_codex_giving_up_on_the_api_is_unreachable_and_a_refused_key_is_auth() -> None:
    url = "http://127.0.0.1:9/v1/responses"
    failed = json.dumps(
        {"type": "turn.failed", "error": {"message": f"error sending request for url ({url})"}}
    )
    refused = json.dumps(
        {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}}
    )

    assert cause_of(codex.classify_failure(failed)) == "unreachable"
    assert cause_of(codex.classify_failure(refused)) == "auth"


def test_codex_that_worked_before_a_notice_is_not_unreachable() -> None:
    # A run that made progress and then saw a notice: the notice alone says nothing.
    events = [
        '{"type":"item.completed","item":{"type":"agent_message","text":"Looking."}}',
        '{"type":"error","message":"Reconnecting... waiting for network (Connection failed)"}',
    ]
    assert codex.classify_failure("\n".join(events)) is None


# A cause stops the whole config, so an HTTP status counts only where the text says it is one: a
# crash whose traceback names line 402 is no quota, an agent's "401 tests" no refused key.
@pytest.mark.parametrize(
    ("said", "cause"),
    [
        ('API Error: 402 {"type":"error","error":{"message":"payment"}}', "quota"),
        ("API Error: 429 Too Many Requests", "quota"),
        ('request failed: {"status":401}', "auth"),
        ("HTTP/1.1 403 Forbidden", "auth"),
        ('File "agent.py", line 402, in main\nRuntimeError: crashed', None),
        ("Stopped after 401 tests; 429 of 1,403 files left", None),
    ],
)
def test_a_status_is_a_cause_only_where_it_is_said_to_be_one(said: str, cause: str | None) -> None:
    assert cause_of(classify_failure("", said)) == cause
    codex_said = json.dumps({"type": "turn.failed", "error": {"message": said}})
    codex_cause = cause_of(codex.classify_failure(codex_said))
    assert codex_cause == (None if cause is None or "402" in said else cause)


# -- the rule for errors with no known cause ------------------------------------------------------


def error(
    message: str, *, kind: str = "adapter-exit", task: str = "abc1234-fix-slug", **more: object
) -> RunResult:
    fields = {
        "runId": "20240501T093000Z-3fa9c2",
        "config": "agent",
        "task": task,
        "status": "error",
        "errorKind": kind,
        "errorMessage": message,
        "startedAt": "2024-05-01T09:30:00Z",
        "finishedAt": "2024-05-01T09:31:00Z",
        **more,
    }
    return RunResult.model_validate(fields)


def test_masked_leaves_out_what_differs_between_pairs_of_one_broken_setup() -> None:
    first = masked(
        'command exited 1: File "/tmp/pytest-3/run-812/agent.py", line 12: ModuleNotFoundError: '
        "No module named 'agentkit' (session 17552c40-6864-4d2f-bdab-d6771efb4677, 2.5s) at "
        "abc1234-fix-slug",
        task="abc1234-fix-slug",
    )
    second = masked(
        'command exited 1: File "/var/tmp/x/agent.py", line 40: ModuleNotFoundError: No module '
        "named 'agentkit2' (session 82f1e0db-0590-49a5-95a5-d9b6d38397c2, 31s) at "
        "def5678-fix-wrap",
        task="def5678-fix-wrap",
    )
    assert first == second
    assert first == (
        "command exited <n>: File <name>, line <n>: ModuleNotFoundError: No module named <name> "
        "(session <hex>, <time>) at <task>"
    )
    # Words are kept: an apostrophe is no quote, and different errors stay different.
    assert masked("Can't reach the API server") == "Can't reach the API server"
    assert masked("disk full") != masked("bad gateway")


def test_which_pairs_count_towards_a_stop() -> None:
    here = error("command exited 2: boom at /tmp/a/1", task="t1")
    there = error("command exited 2: boom at /tmp/b/22", task="t2")
    found = failure_key(here)
    assert found is not None and found == failure_key(there)
    assert found[1] == STOP_AFTER
    assert failure_key(error("command exited 2: bang")) != found
    # An unreachable API stops at once; the causes known before after STOP_AFTER pairs.
    assert failure_key(error("x", errorCause="unreachable")) == ("cause unreachable", 1)
    assert failure_key(error("x", errorCause="not-logged-in")) == (
        "cause not-logged-in",
        STOP_AFTER,
    )
    # Not the setup's fault: a timeout, setup, grading, the agent's own doing, a result.
    for kind in ("adapter-timeout", "setup", "internal", "escaped-workspace", "patch-too-large"):
        assert failure_key(error("killed after 900s", kind=kind)) is None, kind
    unresolved = error("", kind="adapter-exit").model_copy(
        update={"status": "unresolved", "errorKind": None, "errorMessage": None}
    )
    assert failure_key(unresolved) is None


# -- the adapters: the command or binary not found ------------------------------------------------


@pytest.fixture
def workspace(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("add calc", files={"src/calc.py": "x = 1\n"})
    return git_repo


def test_a_script_command_not_found_or_not_executable_has_its_cause(workspace: GitRepo) -> None:
    (workspace.root / "agent.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    for command, code in (("gitgauge-no-such-agent --fix", 127), ("./agent.sh", 126)):
        config = AgentConfig(name="agent", adapter="script", command=command)
        context = context_for(workspace, {}, prompt="Fix it.")

        outcome = create(config, source="agent.yaml").run(context)

        assert (outcome.error_kind, outcome.error_cause) == ("adapter-exit", "command-not-found")
        assert outcome.error_message is not None
        assert outcome.error_message.startswith(
            f"command not found or not executable (exit {code}: "
        ), outcome.error_message
        assert outcome.error_message.endswith(
            "): check `command:` in agent.yaml; it runs through /bin/sh in the workspace, inside "
            "the sandbox when there is one"
        )
    # A command that runs and fails is no such cause.
    config = AgentConfig(name="agent", adapter="script", command="exit 1")
    outcome = create(config, source="agent.yaml").run(context_for(workspace, {}, prompt="Fix it."))
    assert (outcome.error_kind, outcome.error_cause) == ("adapter-exit", None)


def test_a_claude_whose_launcher_finds_no_interpreter_has_its_cause(
    tmp_path: Path, workspace: GitRepo
) -> None:
    # What an npm launcher (`#!/usr/bin/env node`) does where node is missing: env exits 127.
    launcher = tmp_path / "claude"
    launcher.write_text("#!/usr/bin/env gitgauge-no-such-node\n", encoding="utf-8")
    launcher.chmod(0o755)
    env = {"GITGAUGE_CLAUDE_BIN": str(launcher), "ANTHROPIC_API_KEY": "sk-ant-dummy"}
    config = AgentConfig(name="claude", adapter="claude-code")

    outcome = create(config, source="claude.yaml").run(context_for(workspace, env, prompt="Fix."))

    assert (outcome.error_kind, outcome.error_cause) == ("adapter-exit", "command-not-found")
    assert outcome.error_message is not None
    assert outcome.error_message.startswith(
        "claude: not found or not executable where it runs ("
    ), outcome.error_message
    assert "gitgauge-no-such-node" in outcome.error_message
    assert outcome.error_message.endswith("(claude exited 127)")
