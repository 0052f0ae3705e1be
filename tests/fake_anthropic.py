"""A loopback fake of the Anthropic Messages API, for the real SDK and its HTTP stack.

An `http.server` on 127.0.0.1 (port 0: the OS picks a free one) serving `POST /v1/messages` from a
thread of the test process. Each test sets what it answers (`answer`, `fail`, `hang`, `empty`,
`malformed`) and reads what was sent in `requests` (JSON body and headers of every attempt,
retries included). Point the SDK at it with `ANTHROPIC_BASE_URL=fake.base_url`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

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


class FakeAnthropic:
    """What the fake answers is set per test; it records every request it receives."""

    def __init__(self) -> None:
        self.mode: Mode = "answer"
        self.answer_text: str | Callable[[RecordedRequest], str] = "The rewritten prompt."
        self.status = 500
        self.hang_seconds = 30.0
        self.input_tokens = 1200
        self.output_tokens = 80
        self.requests: list[RecordedRequest] = []
        self.stop_reason = "end_turn"
        self._lock = threading.Lock()
        # Set on stop so handlers sleeping in `hang` mode return at once and the server can close.
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

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

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    # -- the server ----------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _response(self, request: RecordedRequest) -> tuple[int, dict[str, str], bytes]:
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

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                request = RecordedRequest(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                fake._record(request)
                if self.path.rstrip("/").split("?")[0] != "/v1/messages":
                    status, headers, payload = 404, {"content-type": "application/json"}, b"{}"
                else:
                    status, headers, payload = fake._response(request)
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing left to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler


@contextmanager
def serve() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
