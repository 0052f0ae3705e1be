"""What an agent did, from its transcript: the events it printed, one JSON object per line.

Two shapes are read, told apart line by line by their `type`:

- the claude CLI's `--output-format stream-json --verbose` (claude 2.1): `system` (init),
  `assistant` (a model message: `message.id`, `message.content` blocks of `text`, `thinking` and
  `tool_use` with `id`, `name`, `input`), `user` (the `tool_result` blocks answering them, with
  `tool_use_id`, `content`, `is_error`, and the event's `timestamp`), and the final `result`
  (`num_turns`, `total_cost_usd`, `usage`, `is_error`, `result`, `permission_denials`);
- codex's `exec --json` events (see `running/adapters/codex_events.py`): `item.completed` with an
  `agent_message`, `command_execution` (`command`, `aggregated_output`, `exit_code`),
  `file_change` (`changes[].path`), `mcp_tool_call` or `web_search`, and `turn.*` events.

A `script` agent may write either shape to `$GITGAUGE_TRANSCRIPT` (a script that runs claude can
simply tee its stream-json there). Anything else on a line (a warning, a hook's output, a type
neither CLI prints) is skipped: a transcript is the agent's words, read as data, never trusted to
be well-formed. `read` keeps every step (texts cut to `TEXT_LIMIT`) for the HTML report;
`behaviour` counts what the team acts on: turns, tool calls by tool, shell commands, test runs,
files read and edited, the time to the first edit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from gitgauge.core.records import AgentBehaviour

TRANSCRIPT_FILE = "transcript.jsonl"
"""A pair's transcript in its log folder."""
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
"""How much of a transcript gitgauge reads (a script's is copied at most this far): past it, the
agent's later steps are not counted."""
TEXT_LIMIT = 2000
"""Characters of a message or a tool's result a step keeps (the whole is in the file)."""

READ_TOOLS = frozenset({"Read", "NotebookRead"})
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "shell"})
"""claude's Bash tool; `shell` is what a codex `command_execution` is counted as."""

DENIED = re.compile(
    r"requires approval|haven't granted|permission to use|permission denied by|was blocked", re.I
)
"""How claude words a tool call it refused to run (besides `permission_denials`)."""

TEST_RUNNERS = re.compile(
    r"""(?x)(?:^|[\s;&|(/'"`])(?:
      py\.test | pytest(?:-3)? | python[\d.]*\s+-m\s+(?:pytest|unittest|nose2?|tox|nox)
    | tox | nox | hatch\s+(?:run\s+)?test | uv\s+run\s+(?:python\s+-m\s+)?pytest
    | (?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test | npx\s+(?:jest|vitest|mocha|playwright\s+test)
    | jest | vitest | mocha | node\s+--test | deno\s+test | bun\s+test
    | go\s+test | cargo\s+(?:test|nextest) | (?:\./)?(?:mvn|mvnw)\s+(?:\S+\s+)*?(?:test|verify)
    | (?:\./)?(?:gradle|gradlew)\s+(?:\S+\s+)*?(?:test|check) | make\s+(?:test|check)
    | ctest | rspec | bundle\s+exec\s+(?:rspec|rake\s+test) | phpunit | dotnet\s+test
    | mix\s+test | swift\s+test | zig\s+build\s+test
    )(?=$|[\s;&|)'"`])"""
)
"""Commands that run a test suite, whatever the project's testCommand is."""


@dataclass
class ToolCall:
    """One tool the agent called, with what came back."""

    tool: str
    command: str | None = None
    """A shell tool's command line."""
    paths: tuple[str, ...] = ()
    """The files a read or edit tool names."""
    result: str | None = None
    is_error: bool = False
    denied: bool = False
    """The harness refused to run it (claude's permissions)."""
    finished_at: str | None = None
    """When its result came back (claude's `timestamp`), ISO 8601."""


@dataclass(frozen=True)
class Step:
    """One step of the transcript as the HTML report lists it."""

    kind: Literal["message", "tool", "result", "error", "system"]
    title: str
    """`Read textkit/slug.py`, `Bash: pytest -q`, `assistant`, `result`."""
    text: str = ""
    """The message, or the tool's input in full (cut to `TEXT_LIMIT`)."""
    output: str | None = None
    """A tool's result (cut to `TEXT_LIMIT`)."""
    is_error: bool = False


@dataclass
class Transcript:
    """A transcript read: its steps and tool calls, in order."""

    shape: Literal["claude", "codex"] | None = None
    steps: list[Step] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    turns: int = 0
    result: dict[str, Any] | None = None
    """claude's final `result` event (cost, tokens, turns), when there was one."""
    truncated: bool = False
    """The file was longer than `MAX_TRANSCRIPT_BYTES`; what follows was not read."""


def read(path: Path) -> Transcript | None:
    """The transcript in `path`; None when there is no such file or it holds no event."""
    try:
        handle = path.open("rb")
    except OSError:
        return None
    with handle:
        data = handle.read(MAX_TRANSCRIPT_BYTES + 1)
    transcript = parse(data[:MAX_TRANSCRIPT_BYTES].decode("utf-8", "replace").splitlines())
    if transcript is not None and len(data) > MAX_TRANSCRIPT_BYTES:
        transcript.truncated = True
    return transcript


def parse(lines: Iterable[str]) -> Transcript | None:
    """The events of `lines`; None when no line is an event of either shape."""
    reader = _Reader()
    for event in _events(lines):
        reader.take(event)
    return reader.transcript if reader.transcript.shape is not None else None


def json_lines(text: str) -> Iterator[str]:
    """The lines of `text` that are JSON objects (a CLI's stdout, noise left out)."""
    for line in text.splitlines():
        if _event(line) is not None:
            yield line


def behaviour(
    transcript: Transcript, *, test_command: str | None, started_at: datetime | None
) -> AgentBehaviour:
    """What the agent did: counted from `transcript`'s tool calls; the suite counts as run when a
    shell command holds `test_command` (whitespace aside) or a known test runner."""
    by_tool: dict[str, int] = {}
    for call in transcript.calls:
        by_tool[call.tool] = by_tool.get(call.tool, 0) + 1
    ran = [call for call in transcript.calls if call.tool in SHELL_TOOLS and not call.denied]
    edits = [
        call
        for call in transcript.calls
        if (call.tool in EDIT_TOOLS or call.tool == "file_change")
        and not call.denied
        and not call.is_error
    ]
    reads = [call for call in transcript.calls if call.tool in READ_TOOLS and not call.denied]
    read_paths = {path for call in reads for path in call.paths}
    edited_paths = {path for call in edits for path in call.paths}
    first_edit: float | None = None
    stamped = [call.finished_at for call in edits if call.finished_at]
    if stamped and started_at is not None:
        moment = _moment(stamped[0])
        if moment is not None:
            first_edit = max(0.0, round((moment - started_at).total_seconds(), 3))
    return AgentBehaviour(
        source=transcript.shape or "claude",
        turns=transcript.turns,
        toolCalls=dict(sorted(by_tool.items())),
        shellCommands=len(ran),
        testRuns=sum(1 for call in ran if runs_tests(call.command or "", test_command)),
        # codex reads files through shell commands: no read count to give.
        filesRead=len(read_paths) if transcript.shape == "claude" else None,
        filesEdited=len(edited_paths),
        deniedToolCalls=sum(1 for call in transcript.calls if call.denied),
        firstEditSeconds=first_edit,
    )


def runs_tests(command: str, test_command: str | None) -> bool:
    """Whether a shell command runs the suite: it holds the task's `testCommand` (whitespace
    aside) or a known test runner (pytest, npm test, go test, cargo test, ...)."""
    flat = " ".join(command.split())
    if test_command and " ".join(test_command.split()) in flat:
        return True
    return TEST_RUNNERS.search(flat) is not None


# -- reading --


class _Reader:
    def __init__(self) -> None:
        self.transcript = Transcript()
        self.pending: dict[str, ToolCall] = {}
        self.messages: set[str] = set()

    def take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("system", "assistant", "user", "result"):
            self._claude(kind, event)
        elif isinstance(kind, str) and kind.split(".")[0] in ("thread", "turn", "item", "error"):
            self._codex(kind, event)

    # claude's stream-json

    def _claude(self, kind: str, event: dict[str, Any]) -> None:
        t = self.transcript
        t.shape = t.shape or "claude"
        message = _mapping(event.get("message"))
        if kind == "system":
            model = event.get("model")
            if event.get("subtype") == "init" and isinstance(model, str):
                t.steps.append(Step("system", "session", f"model {model}"))
            return
        if kind == "result":
            t.result = event
            denied = event.get("permission_denials")
            for denial in denied if isinstance(denied, list) else []:
                identifier = denial.get("tool_use_id") if isinstance(denial, dict) else None
                if isinstance(identifier, str) and identifier in self.pending:
                    self.pending[identifier].denied = True
            if not t.turns and isinstance(event.get("num_turns"), int):
                t.turns = event["num_turns"]
            text = _text(event.get("result"))
            t.steps.append(
                Step("result", "result", _cut(text), is_error=event.get("is_error") is True)
            )
            return
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if isinstance(content, str):
            blocks = [{"type": "text", "text": content}]
        if kind == "assistant":
            identifier = message.get("id")
            key = identifier if isinstance(identifier, str) else f"#{len(self.messages)}"
            if key not in self.messages:
                self.messages.add(key)
                t.turns += 1
            for block in blocks:
                self._assistant_block(block)
            return
        stamp = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
        for block in blocks:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call = self.pending.get(str(block.get("tool_use_id")))
            if call is None:
                continue
            call.result = _text(block.get("content"))
            call.is_error = block.get("is_error") is True
            call.denied = call.denied or (call.is_error and bool(DENIED.search(call.result)))
            call.finished_at = stamp
            t.steps.append(
                Step(
                    "tool",
                    _title(call),
                    _cut(call.command or ", ".join(call.paths)),
                    _cut(call.result),
                    is_error=call.is_error,
                )
            )

    def _assistant_block(self, block: Any) -> None:
        if not isinstance(block, dict):
            return
        t = self.transcript
        if block.get("type") == "text" and _text(block.get("text")).strip():
            t.steps.append(Step("message", "assistant", _cut(_text(block.get("text")))))
        elif block.get("type") == "tool_use":
            tool = str(block.get("name") or "tool")
            arguments = _mapping(block.get("input"))
            command = arguments.get("command")
            paths = [arguments.get(key) for key in ("file_path", "notebook_path", "path")]
            call = ToolCall(
                tool=tool,
                command=command if isinstance(command, str) else None,
                paths=tuple(path for path in paths if isinstance(path, str))[:1],
            )
            t.calls.append(call)
            self.pending[str(block.get("id"))] = call

    # codex's exec --json

    def _codex(self, kind: str, event: dict[str, Any]) -> None:
        t = self.transcript
        t.shape = t.shape or "codex"
        if kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            t.steps.append(Step("error", "turn failed", _cut(_text(message)), is_error=True))
            return
        item = event.get("item")
        if kind != "item.completed" or not isinstance(item, dict):
            return
        category = item.get("type")
        if category == "agent_message":
            t.turns += 1
            t.steps.append(Step("message", "assistant", _cut(_text(item.get("text")))))
            return
        if category == "command_execution":
            command = _text(item.get("command"))
            call = ToolCall("shell", command=command, result=_text(item.get("aggregated_output")))
            call.is_error = item.get("exit_code") not in (0, None)
        elif category == "file_change":
            listed = item.get("changes")
            changes: list[Any] = listed if isinstance(listed, list) else []
            paths = tuple(str(change.get("path")) for change in changes if isinstance(change, dict))
            call = ToolCall("file_change", paths=paths, is_error=item.get("status") == "failed")
        elif category == "mcp_tool_call":
            call = ToolCall(f"mcp:{item.get('server')}/{item.get('tool')}")
        elif category == "web_search":
            call = ToolCall("web_search", command=_text(item.get("query")))
        else:
            return
        t.turns += 1
        t.calls.append(call)
        t.steps.append(
            Step(
                "tool",
                _title(call),
                _cut(call.command or ", ".join(call.paths)),
                _cut(call.result) if call.result is not None else None,
                is_error=call.is_error,
            )
        )


def _events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        event = _event(line)
        if event is not None:
            yield event


def _event(line: str) -> dict[str, Any] | None:
    value = json_object(line)
    return value if value is not None and isinstance(value.get("type"), str) else None


def json_object(line: str) -> dict[str, Any] | None:
    """A line of an agent's JSON-lines output as the JSON object it holds; None for any other
    line (a warning the CLI printed, an array, a malformed object)."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    """A content value as text: a string, or the texts of a list of blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = (_text(b.get("text")) if isinstance(b, dict) else _text(b) for b in value)
        return "\n".join(parts)
    return ""


def _cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}\n[... {len(text) - TEXT_LIMIT:,} more characters in the file]"


def _title(call: ToolCall) -> str:
    if call.command is not None:
        first = call.command.strip().splitlines()[0] if call.command.strip() else ""
        return f"{call.tool}: {first[:120]}"
    if call.paths:
        return f"{call.tool} {', '.join(call.paths)[:160]}"
    return call.tool


def _moment(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
