"""A loopback fake of the Anthropic Messages API with a scripted "model", for the REAL claude CLI.

On the loopback server of helpers/fakes/loopback.py, it answers
`POST /v1/messages` streaming (server-sent events: `message_start`, `content_block_start`,
`content_block_delta`, `content_block_stop`, `message_delta` with usage, `message_stop`) or as one
JSON object, whichever the request asks for, and answers any other path minimally (`{}` for GET,
404 for other POSTs). Every request is recorded in `requests` (path, headers, JSON body).

The "model" is a list of `Rule`s. A request of the CLI's agent loop (one that offers the `Write`
tool) is matched against the rules in order: the first whose `needle` occurs in the request's
text (system prompt, tool descriptions and messages, flattened) plays its script, step by step,
counted by the `tool_result`s already in the conversation: `Read` the file (the CLI refuses to
write a file it has not read), then `Write` it with the rule's content, then (when the rule has a
`bash` command: a harness that tells the agent to run the tests) run that command through the
`Bash` tool, then end the turn with a short text. A `CommandRule` instead runs its command with
the `Bash` tool, then ends the turn. A request no rule matches, and every auxiliary request (a
title, a quota check, a small model's summary: no `Write` tool offered), gets a plain end-turn
text that touches nothing, unless one of `replies` (a needle and an answer) matches it: a judge's
request, say (a `Reply` answers any request it matches, agent loop or not). An `Act` runs a list
of shell commands with `Bash`, one per step, then ends the turn with its answer.

Usage in every answer is fixed (`INPUT_TOKENS`, `OUTPUT_TOKENS`, ...) so tests can assert the
tokens gitgauge records. Point the CLI at it with `ANTHROPIC_BASE_URL=fake.base_url`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import Message
from typing import Any

from helpers.fakes.loopback import Answer, LoopbackServer

INPUT_TOKENS = 1000
OUTPUT_TOKENS = 50
CACHE_CREATION_INPUT_TOKENS = 0
CACHE_READ_INPUT_TOKENS = 0
PLAIN_ANSWER = "I looked at the code and changed nothing."
DONE_ANSWER = "Fixed it."

_WORKING_DIRECTORY = re.compile(r"(?:Primary working|Working) directory: (\S+)")


@dataclass(frozen=True)
class Rule:
    """When a request of the agent loop contains `needle`: write `content` to `path` (relative
    to the CLI's working directory), run `bash` (when given) with the Bash tool, then end the
    turn."""

    needle: str
    path: str
    content: str
    bash: str | None = None


@dataclass(frozen=True)
class CommandRule:
    """When a request of the agent loop contains `needle`: run `command` with the `Bash` tool
    (in the CLI's working directory; the CLI must be allowed Bash), then end the turn."""

    needle: str
    command: str


@dataclass(frozen=True)
class Reply:
    """When any request (the agent loop's or not) contains `needle`: answer `text` at once and
    end the turn (a judge's score, a text-mode answer that becomes the CLI's `result`); `text`
    may be a function of the request (a judge that reads what it was shown)."""

    needle: str
    text: str | Callable[[RecordedRequest], str]

    def answer(self, request: RecordedRequest) -> str:
        return self.text if isinstance(self.text, str) else self.text(request)


@dataclass(frozen=True)
class Act:
    """When a request of the agent loop contains `needle`: run each of `commands` with the
    `Bash` tool, one per step (`{cwd}` is the CLI's working directory), then end the turn
    saying `answer`."""

    needle: str
    commands: tuple[str, ...]
    answer: str = "Done."


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The decoded JSON body (None when it was not JSON or there was none)."""

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0].rstrip("/") == "/v1/messages"

    @property
    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if not isinstance(tools, list):
            return []
        return [str(tool.get("name")) for tool in tools if isinstance(tool, dict)]

    @property
    def is_agent_loop(self) -> bool:
        """A request of the CLI's main loop: one that offers the file-writing tool."""
        return self.is_messages and "Write" in self.tool_names

    @property
    def text(self) -> str:
        """Every string the request carried, joined: system prompt, tool names and
        descriptions, message texts and tool results."""
        if not isinstance(self.body, dict):
            return ""
        parts: list[str] = []
        _collect(self.body.get("system"), parts)
        for tool in self.body.get("tools") or []:
            if isinstance(tool, dict):
                parts.append(str(tool.get("name", "")))
                parts.append(str(tool.get("description", "")))
                parts.append(json.dumps(tool.get("input_schema", {})))
        for message in self.body.get("messages") or []:
            if isinstance(message, dict):
                _collect(message.get("content"), parts)
        return "\n".join(parts)

    @property
    def tool_results(self) -> int:
        """How many `tool_result` blocks the conversation holds so far."""
        count = 0
        for message in (self.body or {}).get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                count += sum(
                    1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
                )
        return count

    @property
    def working_directory(self) -> str | None:
        found = _WORKING_DIRECTORY.search(self.text)
        return found.group(1) if found else None


def _collect(value: Any, parts: list[str]) -> None:
    """The strings of a content value (a string, or a list of blocks, nested in tool results)."""
    if isinstance(value, str):
        parts.append(value)
    elif isinstance(value, list):
        for block in value:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                _collect(block.get("content"), parts)
            elif isinstance(block, str):
                parts.append(block)


class FakeMessagesApi(LoopbackServer):
    """The scripted model (`rules`, set per test) and the log of every request."""

    methods = ("GET", "HEAD", "CONNECT", "POST")
    requests: list[RecordedRequest]

    def __init__(self) -> None:
        super().__init__()
        self.rules: list[Rule | CommandRule] = []
        self.replies: list[Reply] = []
        """For any request whose text holds a reply's needle (a judge's, a text-mode answer):
        the first such reply answers it at once."""
        self.acts: list[Act] = []
        self._ids = 0

    @property
    def base_url(self) -> str:
        return self.address

    def agent_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.is_agent_loop]

    def escapes(self) -> list[str]:
        """Requests meant for another host, caught because the tests make this server the
        agent's HTTP(S) proxy: CONNECTs and absolute-URL requests."""
        with self._lock:
            return [
                f"{r.method} {r.path}"
                for r in self.requests
                if r.method == "CONNECT" or not r.path.startswith("/")
            ]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- the model -----------------------------------------------------------------------

    def _next_id(self) -> str:
        with self._lock:
            self._ids += 1
            return f"{self._ids:06d}"

    def content_for(self, request: RecordedRequest) -> tuple[list[dict[str, Any]], str]:
        """The answer's content blocks and stop reason."""
        text = request.text
        reply = next((reply for reply in self.replies if reply.needle in text), None)
        if reply is not None and request.is_messages:
            return [{"type": "text", "text": reply.answer(request)}], "end_turn"
        if not request.is_agent_loop:
            return [{"type": "text", "text": PLAIN_ANSWER}], "end_turn"
        act = next((act for act in self.acts if act.needle in text), None)
        if act is not None and request.working_directory is not None:
            step = request.tool_results
            if step >= len(act.commands):
                return [{"type": "text", "text": act.answer}], "end_turn"
            command = act.commands[step].replace("{cwd}", request.working_directory)
            call = {"name": "Bash", "input": {"command": command, "description": "run git"}}
            return [{"type": "tool_use", "id": f"toolu_fake{self._next_id()}", **call}], "tool_use"
        rule = next((rule for rule in self.rules if rule.needle in text), None)
        if isinstance(rule, CommandRule):
            if request.tool_results:
                return [{"type": "text", "text": DONE_ANSWER}], "end_turn"
            bash_input = {"command": rule.command, "description": "Run the command"}
            call = {"type": "tool_use", "id": f"toolu_fake{self._next_id()}", "name": "Bash"}
            return [{**call, "input": bash_input}], "tool_use"
        cwd = request.working_directory
        if rule is None or cwd is None:
            return [{"type": "text", "text": PLAIN_ANSWER}], "end_turn"
        target = f"{cwd.rstrip('/')}/{rule.path}"
        step = request.tool_results
        tool_id = f"toolu_fake{self._next_id()}"
        if step == 0:
            call = {"name": "Read", "input": {"file_path": target}}
        elif step == 1:
            call = {"name": "Write", "input": {"file_path": target, "content": rule.content}}
        elif step == 2 and rule.bash is not None:
            call = {"name": "Bash", "input": {"command": rule.bash, "description": "Run tests"}}
        else:
            return [{"type": "text", "text": DONE_ANSWER}], "end_turn"
        return [{"type": "tool_use", "id": tool_id, **call}], "tool_use"

    def _message(self, request: RecordedRequest) -> dict[str, Any]:
        content, stop = self.content_for(request)
        model = request.body.get("model") if isinstance(request.body, dict) else None
        return {
            "id": f"msg_fake{self._next_id()}",
            "type": "message",
            "role": "assistant",
            "model": model or "claude-fake",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": _usage(),
        }

    def _events(self, message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**_usage(), "output_tokens": 1}
        yield "message_start", {"type": "message_start", "message": start}
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                empty: dict[str, Any] = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                empty = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": empty,
                },
            )
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": OUTPUT_TOKENS},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    # -- the server ----------------------------------------------------------------------

    def respond(self, method: str, path: str, headers: Message, body: bytes) -> Answer:
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = None
        lowered = {k.lower(): v for k, v in headers.items()}
        request = RecordedRequest(method=method, path=path, headers=lowered, body=decoded)
        self.record(request)
        if method == "GET":
            return _answer(200, "application/json", b"{}")
        if method == "HEAD":
            return _answer(200, "application/json", b"")
        if method == "CONNECT":
            # A client that treats this server as its HTTPS proxy tried to reach the outside.
            return _answer(403, "text/plain", b"the tests allow no network")
        if request.path.split("?")[0].rstrip("/") == "/v1/messages/count_tokens":
            return _answer(200, "application/json", b'{"input_tokens": %d}' % INPUT_TOKENS)
        if not request.is_messages or not isinstance(request.body, dict):
            error = {"type": "error", "error": {"type": "not_found_error", "message": "no"}}
            return _answer(404, "application/json", json.dumps(error).encode())
        message = self._message(request)
        if not request.body.get("stream"):
            return _answer(200, "application/json", json.dumps(message).encode())
        stream = "".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in self._events(message)
        )
        return _answer(200, "text/event-stream", stream.encode())


def _answer(status: int, content_type: str, payload: bytes) -> Answer:
    return status, {"content-type": content_type, "request-id": "req_fake"}, payload


def _usage() -> dict[str, int]:
    return {
        "input_tokens": INPUT_TOKENS,
        "output_tokens": OUTPUT_TOKENS,
        "cache_creation_input_tokens": CACHE_CREATION_INPUT_TOKENS,
        "cache_read_input_tokens": CACHE_READ_INPUT_TOKENS,
    }


def serve() -> FakeMessagesApi:
    """A fake for `with serve() as fake:` (started there, stopped after)."""
    return FakeMessagesApi()
