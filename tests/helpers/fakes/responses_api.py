"""A loopback fake of the OpenAI Responses API, for the real Codex CLI.

`codex exec` POSTs `/v1/responses` (JSON, `"stream": true`) once per model request and reads a
server-sent event stream back: `response.created`, one `response.output_item.done` per output
item (a `function_call` to run a command, or an assistant `message`), then `response.completed`
with the usage. The scripted model answers by how many tool results the request already carries:
step 0 is the first request of a turn, step 1 the request after the first command ran, and so
on. A step is `{"exec": "<shell command>"}` (codex's `exec_command` tool: how it edits files),
`{"message": "<text>"}` (the final answer), or `{"status": 400}` (an HTTP error codex does not
retry).

`codex_home(...)` writes the `config.toml` that points codex at the fake and switches off what
would reach the network (analytics, OpenTelemetry metrics, update checks, plugin syncs with
github.com and chatgpt.com, found with `strace -f -e trace=connect,sendto` on codex-cli
0.171.0; test_adapter_codex.py checks under strace that codex then opens loopback sockets only).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

from helpers.fakes.loopback import Answer, LoopbackServer

USAGE = {
    "input_tokens": 1000,
    "input_tokens_details": {"cached_tokens": 400},
    "output_tokens": 200,
    "output_tokens_details": {"reasoning_tokens": 50},
    "total_tokens": 1200,
}
"""What every response reports; codex sums them over the requests of a turn."""
API_KEY_ENV = "GITGAUGE_TEST_OPENAI_KEY"
API_KEY = "sk-gitgauge-test"


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    def tool_outputs(self) -> list[dict[str, Any]]:
        items = self.body.get("input") or []
        return [item for item in items if item.get("type") == "function_call_output"]

    def user_texts(self) -> list[str]:
        """The user messages: codex's AGENTS.md and environment context, then the prompt."""
        return self._texts("user")

    def developer_texts(self) -> list[str]:
        """codex's instructions (its sandbox mode and approval policy among them)."""
        return self._texts("developer")

    def _texts(self, role: str) -> list[str]:
        texts: list[str] = []
        for item in self.body.get("input") or []:
            if item.get("type") == "message" and item.get("role") == role:
                texts += [part.get("text", "") for part in item.get("content") or []]
        return texts


@dataclass
class FakeResponsesAPI(LoopbackServer):
    """The scripted model; a dataclass whose server is made with it (`with fake:` serves)."""

    steps: list[dict[str, Any]]
    usage: dict[str, Any] = field(default_factory=lambda: dict(USAGE))
    by_prompt: Sequence[tuple[str | tuple[str, ...], list[dict[str, Any]]]] = field(
        default_factory=list
    )
    """Other steps for requests whose user messages contain a text (or every text of a tuple):
    the first match wins, else `steps`."""
    extra_events: list[dict[str, Any]] = field(default_factory=list)
    """Sent before `response.completed` (unknown event types, say)."""
    requests: list[Request] = field(default_factory=list)

    protocol_version = "HTTP/1.0"
    methods = ("GET", "POST")

    def __post_init__(self) -> None:
        requests = self.requests
        super().__init__()
        self.requests = requests

    @property
    def base_url(self) -> str:
        return f"{self.address}/v1"

    def respond(self, method: str, path: str, headers: Message, body: bytes) -> Answer:
        if method == "GET":
            self.record(Request(path, dict(headers), {}))
            return 404, {}, b""
        request = Request(path, dict(headers), json.loads(body or b"{}"))
        self.record(request)
        status, payload = self._answer(request)
        kind = "text/event-stream" if status == 200 else "application/json"
        return status, {"content-type": kind}, payload

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("/responses")]

    def _answer(self, request: Request) -> tuple[int, bytes]:
        if not request.path.endswith("/responses"):
            return 404, b"{}"
        index = len(request.tool_outputs())
        prompt = "\n".join(request.user_texts())
        steps = next((s for needles, s in self.by_prompt if _all_in(needles, prompt)), self.steps)
        step = steps[min(index, len(steps) - 1)]
        if "status" in step:
            error = {"error": {"message": "scripted failure", "type": "invalid_request_error"}}
            return int(step["status"]), json.dumps(error).encode()
        response_id = f"resp_{len(self.requests)}"
        if "exec" in step:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{index}",
                "call_id": f"call_{index}",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": step["exec"]}),
            }
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{index}",
                "content": [{"type": "output_text", "text": step["message"]}],
            }
        events = [
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "item": item},
            *self.extra_events,
            {"type": "response.completed", "response": {"id": response_id, "usage": self.usage}},
        ]
        stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return 200, stream.encode()


def _all_in(needles: str | tuple[str, ...], text: str) -> bool:
    return all(needle in text for needle in ((needles,) if isinstance(needles, str) else needles))


def codex_home(home: Path, base_url: str, *, model: str = "gpt-fake") -> Path:
    """Write `$HOME/.codex/config.toml` pointing codex at `base_url`, with nothing else online."""
    directory = home / ".codex"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text(
        f"""model = "{model}"
model_provider = "gitgauge-fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[otel]
exporter = "none"
metrics_exporter = "none"
trace_exporter = "none"

[features]
plugins = false
remote_plugin = false
apps = false

[model_providers.gitgauge-fake]
name = "gitgauge fake Responses API"
base_url = "{base_url}"
env_key = "{API_KEY_ENV}"
wire_api = "responses"
""",
        encoding="utf-8",
    )
    return directory


def codex_env(tmp_path: Path) -> dict[str, str]:
    """The variables a codex run needs besides the config: the key, and a TMPDIR away from HOME
    (codex refuses to set up its sandbox helper when its home is inside the temp directory)."""
    temp = tmp_path / "codex-tmp"
    temp.mkdir(exist_ok=True)
    return {API_KEY_ENV: API_KEY, "TMPDIR": str(temp)}
