#!/usr/bin/env python3
"""A fake `claude` CLI for tests: it edits files and prints what `claude -p` prints, as a
scenario tells it to, and records how it was invoked. With `--output-format json` that is the
result object; with `--output-format stream-json --verbose` (what the claude-code adapter runs)
the event stream of `tests/fixtures/claude-stream-json-2.1.197.jsonl` (a real claude 2.1.197
run): the `system` init event, an `assistant` event per model message (a `tool_use` or a text
block, one message id each), a `user` event with each tool's `tool_result` and a timestamp, and
the same result object last. `claude --version` prints a version and records nothing.

Use it from a test:

    from helpers.fakes.claude import fake_claude_env, read_record

    env = fake_claude_env(tmp_path, {"files": {"src/calc.py": "..."}, "cost": 0.25})
    # env: GITGAUGE_CLAUDE_BIN, FAKE_CLAUDE_SCENARIO, FAKE_CLAUDE_RECORD (merge it into the env
    # of gitgauge / the adapter context); with via_path=True, PATH gets a `claude` instead.
    ...
    record = read_record(env)  # the last invocation; read_records(env) for all of them

Environment:
- FAKE_CLAUDE_SCENARIO: path of a JSON scenario file (missing: an empty scenario, a plain success).
- FAKE_CLAUDE_RECORD: path of a JSON-lines file; each invocation appends one line:
  `argv` (without the program), `program`, `cwd`, `cwdEntries` (what it holds), `stdin`, `env`
  (PWD, HOME, PATH, GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GITGAUGE_PROMPT, GITGAUGE_TASK_ID,
  ANTHROPIC_API_KEY, CLAUDE_CONFIG_DIR, MAX_THINKING_TOKENS: the value, or null when unset), `pid`,
  and `child_pid` (the sleeping child, see `sleep`).

Scenario keys (all optional), applied in this order:
- `cases`: a list of objects with a `match` (`{"prompt_contains": "...", "model": "..."}`, all
  given conditions must hold; `model` is the value after `--model`) and any other scenario keys;
  the first matching case's keys override the top-level ones. Lets one scenario serve several
  tasks (by prompt) or several configs (by model).
- `files`: `{"relative/path": "new contents" | null}`, written in the working directory (parent
  directories created); null deletes the file.
- `replace`: `{"relative/path": [["old", "new"], ...]}`, text replacements in existing files;
  an `old` that is not in the file makes the fake exit 3.
- `stderr`: text written to stderr.
- `stdout_before`: text printed before the result (noise lines claude or hooks may print).
- `raw_stdout`: text printed *instead of* the result object (malformed JSON, say).
- `steps` (stream-json): the agent's tool calls, each `{"tool": "Bash", "input": {...},
  "result": "text", "is_error": false, "denied": false}` (denied: refused by permissions, listed
  in the result's `permission_denials`), or `{"text": "..."}` for a message. Without `steps`,
  each `files` entry is a `Write` step and each `replace` entry an `Edit` step, then the result
  text as the final message.
- `assistant_error`: (stream-json) an `error` on a synthetic assistant message carrying the
  result text, as claude prints when it is not logged in (`authentication_failed`).
- `envelope`: false to print no result object at all (default true). The object is
  `tests/fixtures/claude-print-json-2.1.328.json` (a real claude 2.1.328 output) with overrides:
  - `result` (text), `cost` (-> `total_cost_usd`), `is_error`, `subtype`, `num_turns`,
    `api_error_status`;
  - `usage`: keys merged into `usage` (`input_tokens`, `output_tokens`,
    `cache_creation_input_tokens`, `cache_read_input_tokens`);
  - `fields`: any top-level keys merged as they are (wrong types, say);
  - `drop`: keys to remove, `"usage.input_tokens"` for a usage key.
- `pretty`: true prints the object indented over several lines (default: one line, like claude).
- `sleep`: seconds to sleep after printing; with `sleep`, a child process that inherits stdout
  and stderr sleeps as long (its pid is recorded), to prove a timeout kills the whole process
  group and that nothing waits on the child's pipe. `ignore_sigterm`: true makes the fake
  ignore SIGTERM while sleeping (so only SIGKILL ends it).
- `crash`: true raises an exception at the end (a traceback on stderr, exit 1).
- `exit_code`: the exit status (default 0).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

FAKE_CLAUDE = Path(__file__).resolve()
"""The executable (run by path: its `#!` line; it imports only the standard library)."""
FIXTURES = FAKE_CLAUDE.parents[2] / "fixtures"
FIXTURE = FIXTURES / "claude-print-json-2.1.328.json"
STREAM_FIXTURE = FIXTURES / "claude-stream-json-2.1.197.jsonl"
VERSION = "2.1.197 (Claude Code)"
FAKE_KEY = "sk-ant-fake-claude"
RECORDED_ENV = (
    "PWD",
    "HOME",
    "PATH",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GITGAUGE_PROMPT",
    "GITGAUGE_TASK_ID",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CONFIG_DIR",
    "MAX_THINKING_TOKENS",
)
_ENVELOPE_SHORTCUTS = {
    "result": "result",
    "cost": "total_cost_usd",
    "is_error": "is_error",
    "subtype": "subtype",
    "num_turns": "num_turns",
    "api_error_status": "api_error_status",
}

# A checkout may lose the executable bit (a zip download, core.fileMode=false): restore it.
if not os.access(FAKE_CLAUDE, os.X_OK):
    FAKE_CLAUDE.chmod(0o755)


# -- helpers for tests ---------------------------------------------------------------------------


def fake_claude_env(
    tmp_path: Path, scenario: dict[str, Any], *, via_path: bool = False, api_key: bool = True
) -> dict[str, str]:
    """Write `scenario` under `tmp_path` and return the environment additions that make
    gitgauge run the fake: GITGAUGE_CLAUDE_BIN (or, with `via_path`, a PATH whose first entry
    holds a `claude` link to the fake), FAKE_CLAUDE_SCENARIO, FAKE_CLAUDE_RECORD, and a dummy
    ANTHROPIC_API_KEY (`run` refuses to start a claude with no credentials at all). Without
    `api_key` the key is left out (the caller removes the environment's own): prompt rewriting
    and the judge pick the claude CLI only when there is no key for the SDK."""
    folder = tmp_path / "fake-claude"
    number = 1
    while folder.exists():
        number += 1
        folder = tmp_path / f"fake-claude-{number}"
    folder.mkdir(parents=True)
    scenario_path = folder / "scenario.json"
    scenario_path.write_text(json.dumps(scenario), encoding="utf-8")
    env = {
        "FAKE_CLAUDE_SCENARIO": str(scenario_path),
        "FAKE_CLAUDE_RECORD": str(folder / "record.jsonl"),
    }
    if api_key:
        # `run` checks that claude has credentials before it starts (none are ever used).
        env["ANTHROPIC_API_KEY"] = FAKE_KEY
    if via_path:
        bin_dir = folder / "bin"
        bin_dir.mkdir()
        (bin_dir / "claude").symlink_to(FAKE_CLAUDE)
        env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    else:
        env["GITGAUGE_CLAUDE_BIN"] = str(FAKE_CLAUDE)
    return env


def read_records(env: dict[str, str]) -> list[dict[str, Any]]:
    """Every invocation of the fake made with `env`, oldest first (empty when none)."""
    path = Path(env["FAKE_CLAUDE_RECORD"])
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_record(env: dict[str, str]) -> dict[str, Any]:
    """The last invocation of the fake made with `env`; fails the test when there was none."""
    records = read_records(env)
    assert records, "the fake claude was never invoked"
    return records[-1]


def models_called(env: dict[str, str]) -> list[str | None]:
    """The `--model` of every invocation of the fake made with `env`, oldest first."""
    return [_model(record["argv"]) for record in read_records(env)]


NO_TOKENS = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
"""The usage of a call that made no request."""


def failing(result: str, **keys: Any) -> dict[str, Any]:
    """The scenario of a claude that fails before any request: `result` as an error result,
    exit 1, no token used, no step; `keys`: more of the scenario's keys."""
    return {
        "exit_code": 1,
        "is_error": True,
        "result": result,
        "cost": 0,
        "usage": NO_TOKENS,
        "steps": [],
        **keys,
    }


NOT_LOGGED_IN = failing(
    "Not logged in · Please run /login", assistant_error="authentication_failed"
)
"""What claude 2.1 prints without a login: an assistant message flagged
`authentication_failed`, then an error result, exit 1, no request made."""


def envelope_fixture() -> dict[str, Any]:
    """The real claude 2.1.328 result object the fake starts from."""
    value: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return value


# -- the fake itself -----------------------------------------------------------------------------


def _model(argv: list[str]) -> str | None:
    return argv[argv.index("--model") + 1] if "--model" in argv[:-1] else None


def _load_scenario(argv: list[str], prompt: str) -> dict[str, Any]:
    name = os.environ.get("FAKE_CLAUDE_SCENARIO")
    scenario: dict[str, Any] = json.loads(Path(name).read_text(encoding="utf-8")) if name else {}
    model = _model(argv)
    for case in scenario.pop("cases", []):
        match = case.get("match", {})
        if "prompt_contains" in match and match["prompt_contains"] not in prompt:
            continue
        if "model" in match and match["model"] != model:
            continue
        scenario.update({key: value for key, value in case.items() if key != "match"})
        break
    return scenario


def _record(invocation: dict[str, Any]) -> None:
    name = os.environ.get("FAKE_CLAUDE_RECORD")
    if not name:
        return
    with open(name, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(invocation) + "\n")


def _edit_files(scenario: dict[str, Any]) -> None:
    for path, contents in scenario.get("files", {}).items():
        target = Path(path)
        if contents is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(contents, encoding="utf-8")
    for path, pairs in scenario.get("replace", {}).items():
        target = Path(path)
        text = target.read_text(encoding="utf-8")
        for old, new in pairs:
            if old not in text:
                print(f"fake claude: {old!r} not found in {path}", file=sys.stderr)
                sys.exit(3)
            text = text.replace(old, new)
        target.write_text(text, encoding="utf-8")


def stream_fixture() -> list[dict[str, Any]]:
    """The events of the real claude 2.1.197 stream-json run the fake is shaped on."""
    lines = STREAM_FIXTURE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _steps(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    if "steps" in scenario:
        steps: list[dict[str, Any]] = scenario["steps"]
        return steps
    cwd = os.getcwd()
    made = [
        {"tool": "Write", "input": {"file_path": f"{cwd}/{path}", "content": text or ""},
         "result": f"The file {cwd}/{path} has been updated successfully."}
        for path, text in scenario.get("files", {}).items()
    ]  # fmt: skip
    made += [
        {"tool": "Edit", "input": {"file_path": f"{cwd}/{path}"},
         "result": f"The file {cwd}/{path} has been updated."}
        for path in scenario.get("replace", {})
    ]  # fmt: skip
    return made


def _stream(scenario: dict[str, Any], envelope: dict[str, Any] | None, model: str | None) -> str:
    """The stream-json events of the scenario, shaped on the real run's."""
    real = stream_fixture()
    init = dict(next(event for event in real if event["type"] == "system"))
    assistant = next(event for event in real if event["type"] == "assistant")
    session = envelope["session_id"] if envelope else init["session_id"]
    init.update(cwd=os.getcwd(), session_id=session, model=model or init["model"])
    events: list[dict[str, Any]] = [init]
    denials = []

    def message(content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        body = {**assistant["message"], "id": f"msg_fake{len(events):04d}", "content": content}
        if model:
            body["model"] = model
        return {**assistant, "message": body, "session_id": session, **extra}

    for number, step in enumerate(_steps(scenario)):
        if "text" in step:
            events.append(message([{"type": "text", "text": step["text"]}]))
            continue
        tool_id = f"toolu_fake{number:04d}"
        use = {"type": "tool_use", "id": tool_id, "name": step["tool"], "input": step["input"]}
        events.append(message([use]))
        result: dict[str, Any] = {
            "tool_use_id": tool_id,
            "type": "tool_result",
            "content": step.get("result", ""),
        }
        if step.get("denied"):
            result.update(
                content=f"Claude requested permissions to use {step['tool']}, but you haven't "
                "granted it yet.",
                is_error=True,
            )
            denials.append(
                {"tool_name": step["tool"], "tool_use_id": tool_id, "tool_input": step["input"]}
            )
        elif step.get("is_error"):
            result["is_error"] = True
        events.append(
            {
                "type": "user",
                "message": {"role": "user", "content": [result]},
                "parent_tool_use_id": None,
                "session_id": session,
                "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            }
        )
    if envelope is not None:
        if scenario.get("assistant_error"):
            events.append(
                message(
                    [{"type": "text", "text": envelope.get("result") or ""}],
                    error=scenario["assistant_error"],
                )
            )
        elif envelope.get("result"):
            events.append(message([{"type": "text", "text": envelope["result"]}]))
        if denials:
            envelope = {**envelope, "permission_denials": denials}
    text = "".join(json.dumps(event) + "\n" for event in events)
    if envelope is not None:
        text += json.dumps(envelope, indent=2 if scenario.get("pretty") else None) + "\n"
    return text


def _envelope(scenario: dict[str, Any]) -> dict[str, Any]:
    envelope = envelope_fixture()
    for key, field in _ENVELOPE_SHORTCUTS.items():
        if key in scenario:
            envelope[field] = scenario[key]
    envelope["usage"].update(scenario.get("usage", {}))
    envelope.update(scenario.get("fields", {}))
    for key in scenario.get("drop", []):
        holder, _, leaf = key.rpartition(".")
        (envelope[holder] if holder else envelope).pop(leaf, None)
    return envelope


def main() -> int:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        print(VERSION)
        return 0
    prompt = sys.stdin.read()
    scenario = _load_scenario(argv, prompt)
    child: subprocess.Popen[bytes] | None = None
    sleep = float(scenario.get("sleep", 0))
    if sleep:
        # Same process group, stdout and stderr inherited: a pipe reader would wait for it.
        child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({sleep})"])
    _record(
        {
            "program": sys.argv[0],
            "argv": argv,
            "cwd": os.getcwd(),
            "cwdEntries": sorted(os.listdir(os.getcwd())),
            "stdin": prompt,
            "env": {name: os.environ.get(name) for name in RECORDED_ENV},
            "pid": os.getpid(),
            "child_pid": child.pid if child else None,
        }
    )
    _edit_files(scenario)
    if scenario.get("stderr"):
        sys.stderr.write(scenario["stderr"])
    if scenario.get("stdout_before"):
        sys.stdout.write(scenario["stdout_before"])
    streaming = "stream-json" in argv
    if "raw_stdout" in scenario:
        sys.stdout.write(scenario["raw_stdout"])
    elif streaming:
        model = _model(argv)
        envelope = _envelope(scenario) if scenario.get("envelope", True) else None
        sys.stdout.write(_stream(scenario, envelope, model))
    elif scenario.get("envelope", True):
        indent = 2 if scenario.get("pretty") else None
        sys.stdout.write(json.dumps(_envelope(scenario), indent=indent) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    if sleep:
        if scenario.get("ignore_sigterm"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(sleep)
    if scenario.get("crash"):
        raise RuntimeError("fake claude crashed as its scenario asked")
    return int(scenario.get("exit_code", 0))


if __name__ == "__main__":
    sys.exit(main())
