#!/usr/bin/env python3
"""A fake `claude` CLI for tests: it edits files and prints the JSON result of `claude -p
--output-format json` as a scenario tells it to, and records how it was invoked.

Use it from a test:

    from fake_claude import fake_claude_env, read_record

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
from pathlib import Path
from typing import Any

FAKE_CLAUDE = Path(__file__).resolve()
FIXTURE = FAKE_CLAUDE.parent / "fixtures" / "claude-print-json-2.1.328.json"
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
    tmp_path: Path, scenario: dict[str, Any], *, via_path: bool = False
) -> dict[str, str]:
    """Write `scenario` under `tmp_path` and return the environment additions that make
    gitgauge run the fake: GITGAUGE_CLAUDE_BIN (or, with `via_path`, a PATH whose first entry
    holds a `claude` link to the fake), FAKE_CLAUDE_SCENARIO and FAKE_CLAUDE_RECORD."""
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


def envelope_fixture() -> dict[str, Any]:
    """The real claude 2.1.328 result object the fake starts from."""
    value: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return value


# -- the fake itself -----------------------------------------------------------------------------


def _load_scenario(argv: list[str], prompt: str) -> dict[str, Any]:
    name = os.environ.get("FAKE_CLAUDE_SCENARIO")
    scenario: dict[str, Any] = json.loads(Path(name).read_text(encoding="utf-8")) if name else {}
    model = argv[argv.index("--model") + 1] if "--model" in argv[:-1] else None
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
    if "raw_stdout" in scenario:
        sys.stdout.write(scenario["raw_stdout"])
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
