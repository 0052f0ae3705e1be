"""The rewrite backends: how a request reaches a model and what comes back.

Two backends: the Anthropic Python SDK when `ANTHROPIC_API_KEY` is set (it honours
`ANTHROPIC_BASE_URL`), else the claude CLI in print mode (found and its JSON envelope read by
`gitgauge.core.claude`). Also the `--rewrite-model` aliases and the timeout and retry overrides
from the environment. Anything short of an answer raises `RewriteFailed` with a reason.
This is the only module that imports `anthropic`.
"""

from __future__ import annotations

import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gitgauge.core import process
from gitgauge.core.claude import find_claude_binary, parse_result
from gitgauge.core.errors import AdapterError, ConfigError, GitGaugeError
from gitgauge.core.prompt_request import RewriteRequest

if TYPE_CHECKING:
    import anthropic

MODEL_ALIASES: dict[str, str] = {
    "haiku": "claude-haiku-5-5",
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
}
"""`--rewrite-model` aliases; any other value is passed through as a model id."""
DEFAULT_MODEL = "haiku"

MAX_ANSWER_TOKENS = 1024
"""The answer is a task prompt of a few paragraphs; anything longer is cut off and rejected."""

TIMEOUT_ENV = "GITGAUGE_REWRITE_TIMEOUT"
MAX_RETRIES_ENV = "GITGAUGE_REWRITE_MAX_RETRIES"
SDK_TIMEOUT_SECONDS = 60.0
"""One Messages API request (each retry gets as long again)."""
CLI_TIMEOUT_SECONDS = 180.0
"""One claude CLI run: it starts a Node process and retries the API on its own."""
SDK_MAX_RETRIES = 2
"""The SDK's own default: 429, 5xx, connection errors and timeouts are retried with backoff."""
CLI_STDOUT_LIMIT = 8 * 1024 * 1024

Backend = Literal["anthropic-sdk", "claude-cli"]


class RewriteUnavailable(GitGaugeError):
    """Neither the Anthropic API (no key) nor the claude CLI can be used for rewriting."""


def resolve_model(name: str) -> str:
    """The model id for an alias (haiku, sonnet, opus); any other name is already an id."""
    return MODEL_ALIASES.get(name.strip().lower(), name.strip())


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    truncated: bool = False
    """The answer stopped at `MAX_ANSWER_TOKENS`."""


class RewriteFailed(Exception):
    """One rewrite did not produce a usable prompt; the original is kept."""

    def __init__(self, reason: str, usage: Usage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage = usage or Usage()


class ModelBackend(ABC):
    kind: Backend

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    @abstractmethod
    def describe(self) -> str:
        """How requests are sent, for the user."""

    @abstractmethod
    def complete(self, request: RewriteRequest) -> Completion:
        """Ask the model; raise `RewriteFailed` with a reason for anything short of an answer."""


class SdkBackend(ModelBackend):
    """The Anthropic Messages API through the official SDK (key and base URL from the env)."""

    kind: Backend = "anthropic-sdk"

    def __init__(self, model_id: str, *, timeout_seconds: float, max_retries: int) -> None:
        super().__init__(model_id)
        # Imported here: the SDK takes most of a second to import, and only rewriting needs it.
        import anthropic

        self._anthropic = anthropic
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self._client: anthropic.Anthropic = anthropic.Anthropic(
            timeout=timeout_seconds, max_retries=max_retries
        )

    def describe(self) -> str:
        return f"the Anthropic API at {self._client.base_url}"

    def complete(self, request: RewriteRequest) -> Completion:
        errors = self._anthropic
        retries = f"after {self.max_retries} retr{'y' if self.max_retries == 1 else 'ies'}"
        try:
            message = self._client.messages.create(
                model=self.model_id,
                max_tokens=MAX_ANSWER_TOKENS,
                system=request.system,
                messages=[{"role": "user", "content": request.user}],
            )
        except errors.APITimeoutError:
            raise RewriteFailed(
                f"no answer from the Anthropic API within {self.timeout_seconds:g} s ({retries})"
            ) from None
        except errors.APIConnectionError as error:
            cause = f": {error.__cause__}" if error.__cause__ else ""
            raise RewriteFailed(
                f"cannot reach the Anthropic API at {self._client.base_url} ({retries}){cause}"
            ) from None
        except errors.APIStatusError as error:
            raise RewriteFailed(
                f"the Anthropic API answered HTTP {error.status_code} ({retries}): "
                f"{_clip(str(error.message), 200)}"
            ) from None
        except (errors.AnthropicError, ValueError) as error:
            # ValueError: a body that is not JSON, or JSON that is not a message.
            detail = _clip(str(error), 200)
            raise RewriteFailed(f"malformed answer from the Anthropic API: {detail}") from None
        usage = Usage(
            input_tokens=_sum_known(
                message.usage.input_tokens,
                message.usage.cache_creation_input_tokens,
                message.usage.cache_read_input_tokens,
            ),
            output_tokens=message.usage.output_tokens,
        )
        text = "".join(
            block.text for block in message.content if isinstance(block, errors.types.TextBlock)
        )
        return Completion(text, usage, truncated=message.stop_reason == "max_tokens")


class CliBackend(ModelBackend):
    """`claude -p --output-format json --model <id>`, the request on stdin, the answer in
    the JSON `result`."""

    kind: Backend = "claude-cli"

    def __init__(self, model_id: str, *, binary: str, timeout_seconds: float) -> None:
        super().__init__(model_id)
        self.binary = binary
        self.timeout_seconds = timeout_seconds

    def describe(self) -> str:
        return f"the claude CLI ({self.binary})"

    def argv(self) -> list[str]:
        # No tools and no MCP servers: the model only reads and answers, so instructions hidden
        # in the repository content have nothing to act with.
        return [
            self.binary,
            "-p",
            "--output-format",
            "json",
            "--model",
            self.model_id,
            "--tools",
            "",
            "--strict-mcp-config",
        ]

    def complete(self, request: RewriteRequest) -> Completion:
        # An empty directory: claude reads CLAUDE.md and settings from its working directory, and
        # the repository's must not steer the rewrite.
        with tempfile.TemporaryDirectory(prefix="gitgauge-rewrite-") as empty:
            result = process.run(
                self.argv(),
                cwd=Path(empty),
                timeout_seconds=self.timeout_seconds,
                env=process.clean_env(cwd=Path(empty)),
                stdin_text=request.combined,
                tail_bytes=CLI_STDOUT_LIMIT,
            )
        if result.start_error is not None:
            raise RewriteFailed(f"claude could not start: {result.start_error}")
        if result.timed_out:
            raise RewriteFailed(f"claude did not answer within {self.timeout_seconds:g} s")
        try:
            parsed = parse_result(result.stdout_tail)
        except ValueError as error:
            if result.exit_code != 0:
                raise RewriteFailed(
                    f"claude exited {result.exit_code}: {_last_line(result.stderr_tail)}"
                ) from None
            raise RewriteFailed(f"unreadable claude output: {error}") from None
        used = parsed.usage
        usage = Usage(
            input_tokens=_sum_known(
                used.input_tokens, used.cache_creation_input_tokens, used.cache_read_input_tokens
            ),
            output_tokens=used.output_tokens,
            cost_usd=used.cost_usd,
        )
        if parsed.is_error:
            raise RewriteFailed(f"claude reported an error ({parsed.describe_error()})", usage)
        if result.exit_code != 0:
            raise RewriteFailed(f"claude exited {result.exit_code}", usage)
        return Completion(parsed.result or "", usage)


def choose_backend(model: str, *, env: Mapping[str, str]) -> ModelBackend:
    """The SDK with `ANTHROPIC_API_KEY`, else the claude CLI; `RewriteUnavailable` if neither."""
    model_id = resolve_model(model)
    if not model_id:
        raise ConfigError("--rewrite-model must name a model (haiku, sonnet, opus or a model id)")
    timeout = _env_seconds(env)
    if env.get("ANTHROPIC_API_KEY"):
        return SdkBackend(
            model_id,
            timeout_seconds=timeout or SDK_TIMEOUT_SECONDS,
            max_retries=_env_retries(env),
        )
    try:
        binary = find_claude_binary(env)
    except AdapterError as error:
        raise RewriteUnavailable(
            "prompt rewriting needs the Anthropic API or the claude CLI, and neither is "
            f"available: ANTHROPIC_API_KEY is not set, and {error}"
        ) from None
    return CliBackend(model_id, binary=binary, timeout_seconds=timeout or CLI_TIMEOUT_SECONDS)


def _env_seconds(env: Mapping[str, str]) -> float | None:
    raw = env.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(f"{TIMEOUT_ENV}={raw!r}: expected a positive number of seconds")
    return value


def _env_retries(env: Mapping[str, str]) -> int:
    raw = env.get(MAX_RETRIES_ENV, "").strip()
    if not raw:
        return SDK_MAX_RETRIES
    if not raw.isdigit():
        raise ConfigError(f"{MAX_RETRIES_ENV}={raw!r}: expected a whole number >= 0")
    return int(raw)


def _sum_known(*counts: int | None) -> int | None:
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _clip(lines[-1], 300) if lines else "no output on stderr"
