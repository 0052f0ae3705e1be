"""A loopback fake of the Anthropic Messages API, for the real SDK and its HTTP stack.

It serves `POST /v1/messages` (helpers/fakes/loopback.py). Each test sets what it answers
(`answer`, `fail`, `hang`, `empty`, `malformed`) and reads what was sent in `requests` (JSON body
and headers of every attempt, retries included). Point the SDK at it with
`ANTHROPIC_BASE_URL=fake.base_url`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from typing import Any, Literal

from helpers.fakes.loopback import Answer, LoopbackServer

Mode = Literal["answer", "status", "hang", "empty", "malformed"]


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The decoded JSON body (None when it was not JSON)."""

    @property
    def text(self) -> str:
        """Every string the request carried (system prompt and messages), joined: for asserts."""
        if not isinstance(self.body, dict):
            return ""
        parts: list[str] = []
        system = self.body.get("system")
        if isinstance(system, str):
            parts.append(system)
        elif isinstance(system, list):
            parts.extend(block.get("text", "") for block in system if isinstance(block, dict))
        for message in self.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
        return "\n".join(parts)


class FakeAnthropic(LoopbackServer):
    """What the fake answers is set per test; it records every request it receives."""

    requests: list[RecordedRequest]

    def __init__(self) -> None:
        super().__init__()
        self.mode: Mode = "answer"
        self.answer_text: str | Callable[[RecordedRequest], str] = "The rewritten prompt."
        self.status = 500
        self.hang_seconds = 30.0
        self.input_tokens = 1200
        self.output_tokens = 80
        self.stop_reason = "end_turn"
        # Set on stop so handlers sleeping in `hang` mode return at once and the server can close.
        self._released = threading.Event()

    @property
    def base_url(self) -> str:
        return self.address

    # -- configuration -------------------------------------------------------------------

    def answer(
        self, text: str | Callable[[RecordedRequest], str], *, input_tokens: int = 1200
    ) -> None:
        self.mode, self.answer_text, self.input_tokens = "answer", text, input_tokens
        self.stop_reason = "end_turn"

    def cut_off(self, text: str = "The answer goes on and on and") -> None:
        """Answer as a model that hit the request's `max_tokens`."""
        self.answer(text)
        self.stop_reason = "max_tokens"

    def fail(self, status: int) -> None:
        self.mode, self.status = "status", status

    def hang(self, seconds: float = 30.0) -> None:
        self.mode, self.hang_seconds = "hang", seconds

    def empty(self) -> None:
        self.mode = "empty"

    def malformed(self) -> None:
        self.mode = "malformed"

    def stop(self) -> None:
        self._released.set()
        super().stop()

    # -- the server ----------------------------------------------------------------------

    def respond(self, method: str, path: str, headers: Message, body: bytes) -> Answer:
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = None
        request = RecordedRequest(
            path=path, headers={k.lower(): v for k, v in headers.items()}, body=decoded
        )
        self.record(request)
        if path.rstrip("/").split("?")[0] != "/v1/messages":
            return 404, {"content-type": "application/json"}, b"{}"
        return self._response(request)

    def _response(self, request: RecordedRequest) -> Answer:
        json_type = {"content-type": "application/json"}
        if self.mode == "status":
            kind = "rate_limit_error" if self.status == 429 else "api_error"
            error = {"type": "error", "error": {"type": kind, "message": "fake failure"}}
            # A short retry-after keeps the SDK's retries quick in tests.
            headers = {**json_type, "retry-after-ms": "10"}
            return self.status, headers, json.dumps(error).encode()
        if self.mode == "hang":
            self._released.wait(self.hang_seconds)
            return 200, json_type, json.dumps(self._message([])).encode()
        if self.mode == "malformed":
            return 200, json_type, b'{"id": "msg_fake", "content": [ {"type": "text", "te'
        if self.mode == "empty":
            return 200, json_type, json.dumps(self._message([])).encode()
        text = self.answer_text(request) if callable(self.answer_text) else self.answer_text
        blocks = [{"type": "text", "text": text}]
        return 200, json_type, json.dumps(self._message(blocks, request)).encode()

    def _message(
        self, content: list[dict[str, Any]], request: RecordedRequest | None = None
    ) -> dict[str, Any]:
        model = request.body.get("model") if request and isinstance(request.body, dict) else None
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model or "claude-fake",
            "content": content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
        }


def serve() -> FakeAnthropic:
    """A fake for `with serve() as fake:` (started there, stopped after)."""
    return FakeAnthropic()
