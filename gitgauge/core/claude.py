"""The one door to the claude CLI's binary and its JSON envelope.

`find_claude_binary` finds the executable (`GITGAUGE_CLAUDE_BIN`, else `claude` on PATH) and
says how to fix it when there is none; `parse_result` reads the result object (the whole output
of `--output-format json`, the last event of `stream-json`) into a `ClaudeResult`;
`failure_cause` names an error no retry fixes (not logged in, a bad model, refused credentials,
no quota, an unreachable API) with its fix, and `classify_failure` does so from a failed run's
output alone (for `doctor --probe`); `login_problem` says, without any request to the API, why
the CLI has no credentials to use. Used by the claude-code adapter (running) and by the claude
CLI rewrite backend (mining); how each builds its argv stays with it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitgauge.core import process
from gitgauge.core.causes import said_status
from gitgauge.core.records import MAX_COST_USD, MAX_COUNT, ErrorCause
from gitgauge.core.transcript import json_object
from gitgauge.core.usage import AgentUsage

BINARY_ENV = "GITGAUGE_CLAUDE_BIN"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code"


@dataclass(frozen=True)
class ClaudeResult:
    """The fields gitgauge reads from claude's `--output-format json` result object."""

    is_error: bool
    subtype: str | None
    result: str | None
    """The agent's final message (the rewritten prompt, for `mine --rewrite-prompts`)."""
    api_error_status: int | str | None
    usage: AgentUsage
    """`total_cost_usd`, `usage`'s tokens and `num_turns`."""

    def describe_error(self, *, with_result: bool = True) -> str:
        """`subtype`, `api_error_status` and `result` of an `is_error` result, for a message."""
        parts = [f"subtype={self.subtype!r}"]
        if self.api_error_status is not None:
            parts.append(f"api_error_status={self.api_error_status!r}")
        if self.result and with_result:
            parts.append(f"result={_clip(self.result, 200)!r}")
        return ", ".join(parts)


def find_claude_binary(env: Mapping[str, str]) -> str:
    """The claude executable: `GITGAUGE_CLAUDE_BIN` when set, else `claude` on env's PATH."""
    return process.find_executable(
        env, program="claude", override=BINARY_ENV, install_hint=INSTALL_HINT
    )


def parse_result(stdout: str) -> ClaudeResult:
    """The last JSON object with `"type": "result"` in `stdout`.

    Other lines may come before it (warnings, hooks' output). Missing numbers are None; a field
    of the wrong type raises `ValueError` naming it, as does output with no result object.
    """
    return result_from_event(_find_envelope(stdout))


def result_from_event(envelope: Mapping[str, Any]) -> ClaudeResult:
    """A `"type": "result"` object (the last event of stream-json, or a transcript's); a field of
    the wrong type raises `ValueError` naming it."""
    usage = envelope.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise ValueError(f"usage: expected an object, got {_show(usage)}")
    is_error = envelope.get("is_error", False)
    if not isinstance(is_error, bool):
        raise ValueError(f"is_error: expected true or false, got {_show(is_error)}")
    status = envelope.get("api_error_status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, (int, str))):
        raise ValueError(f"api_error_status: expected a number or text, got {_show(status)}")
    return ClaudeResult(
        is_error=is_error,
        subtype=_text(envelope, "subtype"),
        result=_text(envelope, "result"),
        api_error_status=status,
        usage=AgentUsage(
            cost_usd=_number(envelope, "total_cost_usd"),
            input_tokens=_count(usage, "input_tokens", prefix="usage."),
            output_tokens=_count(usage, "output_tokens", prefix="usage."),
            cache_creation_input_tokens=_count(
                usage, "cache_creation_input_tokens", prefix="usage."
            ),
            cache_read_input_tokens=_count(usage, "cache_read_input_tokens", prefix="usage."),
            num_turns=_count(envelope, "num_turns"),
        ),
    )


def _find_envelope(stdout: str) -> dict[str, Any]:
    text = stdout.strip()
    if not text:
        raise ValueError("stdout is empty")
    decoder = json.JSONDecoder()
    # Try each line that opens an object, last first: the result is printed last, and raw_decode
    # from a line start also reads an object spread over several lines.
    starts: list[int] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("{"):
            starts.append(offset + len(line) - len(stripped))
        offset += len(line)
    # Report what was wrong with the last candidate: the one claude printed as its result.
    problem: str | None = None
    for start in reversed(starts):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError as error:
            problem = problem or f"invalid JSON ({error})"
            continue
        if isinstance(value, dict) and value.get("type") == "result":
            return value
        problem = problem or 'the last JSON object has no "type": "result"'
    raise ValueError(
        f'no JSON object with "type": "result" on stdout: {problem or "no JSON object at all"}'
    )


def _number(record: Mapping[str, Any], key: str) -> float | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key}: expected a number, got {_show(value)}")
    # JSON from the agent's process may say NaN or 1e300: a result must never average that in.
    if not math.isfinite(value) or not 0 <= value <= MAX_COST_USD:
        raise ValueError(f"{key}: expected dollars from 0 to {MAX_COST_USD:,.0f}, got {value}")
    return float(value)


def _count(record: Mapping[str, Any], key: str, *, prefix: str = "") -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{prefix}{key}: expected a whole number, got {_show(value)}")
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{prefix}{key}: expected 0 to {MAX_COUNT:,}, got {value}")
    return value


def _text(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected text, got {_show(value)}")
    return value


def _show(value: object) -> str:
    return _clip(json.dumps(value), 60)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- errors no retry fixes, and credentials --

LOGIN_FIX = "run `claude /login`, or set ANTHROPIC_API_KEY"
UNREACHABLE = (
    r"can'?t reach the api|cannot reach the api|unable to connect to (?:the )?api"
    r"|connection error|connection refused|\bENOTFOUND\b|\bECONNREFUSED\b|\bEAI_AGAIN\b"
    r"|\bEHOSTUNREACH\b|\bENETUNREACH\b|getaddrinfo|ConnectionRefused|FailedToOpenSocket"
)
"""What claude says when no request reached the API (no DNS, nothing listening, no route), once
its own retries are spent: `API Error: Unable to connect to API (ConnectionRefused)` (2.1.197),
`Can't reach the API server (ENOTFOUND)`. A reset or a timed-out request is not in it: those
happen on a reachable server too."""


_CAUSES: tuple[tuple[ErrorCause, re.Pattern[str]], ...] = (
    ("not-logged-in", re.compile(r"not logged in|please run /login|no api key", re.I)),
    (
        "bad-model",
        re.compile(
            r"issue with the selected model|model.{0,40}(?:not found|does not exist|not exist)"
            r"|not_found_error|invalid model",
            re.I,
        ),
    ),
    (
        "auth",
        re.compile(
            r"invalid api key|authentication_error|authentication_failed|oauth token (?:has )?"
            r"(?:expired|revoked)|invalid bearer token|permission_error|" + said_status("40[13]"),
            re.I,
        ),
    ),
    (
        "quota",
        re.compile(
            r"credit balance is too low|usage limit|rate_limit_error|rate limit|quota"
            r"|billing|" + said_status("402|429"),
            re.I,
        ),
    ),
    ("unreachable", re.compile(UNREACHABLE, re.I)),
)
_STATUS_CAUSES: dict[int, ErrorCause] = {401: "auth", 403: "auth", 404: "bad-model", 402: "quota"}


def failure_cause(
    parsed: ClaudeResult | None, *, stdout: str = "", stderr: str = "", model: str | None = None
) -> tuple[ErrorCause, str] | None:
    """The cause of a failed run that no retry fixes, with the sentence that says it and its fix
    (`Not logged in: run `claude /login`, or set ANTHROPIC_API_KEY`); None for any other failure.

    Read from the result's `api_error_status` and text, and from the `error` an assistant event of
    `stream-json` carries (`authentication_failed`)."""
    texts = [parsed.result or "", parsed.subtype or ""] if parsed is not None else []
    texts += _assistant_errors(stdout)
    texts += [stderr[-2000:]] if stderr.strip() else []
    status = parsed.api_error_status if parsed is not None else None
    cause: ErrorCause | None = None
    for candidate, pattern in _CAUSES:
        if any(pattern.search(text) for text in texts):
            cause = candidate
            break
    if cause is None and isinstance(status, int):
        cause = _STATUS_CAUSES.get(status) or ("quota" if status == 429 else None)
    if cause is None:
        return None
    said = next((text for text in texts if text.strip()), "")
    return cause, describe_cause(cause, model=model, said=said)


def classify_failure(
    stdout: str, stderr: str = "", *, model: str | None = None
) -> tuple[ErrorCause, str] | None:
    """`failure_cause` of a claude run that printed `stdout` (`--output-format json` or
    `stream-json`) and `stderr`: its cause and the sentence with the fix, or None when its
    result says it succeeded or no cause is recognised (the caller saw it fail). A run stopped
    before it printed a result is read too: still retrying an API it cannot reach
    (`retrying_unanswered`)."""
    try:
        parsed: ClaudeResult | None = parse_result(stdout)
    except ValueError:
        parsed = None
    if parsed is not None and not parsed.is_error:
        return None
    found = failure_cause(parsed, stdout=stdout, stderr=stderr, model=model)
    if found is None and parsed is None:
        retrying = retrying_unanswered(stdout)
        if retrying is not None:
            found = "unreachable", describe_cause("unreachable", said=retrying)
    return found


def retrying_unanswered(stdout: str) -> str | None:
    """What a claude run stopped before its result (a timeout) says when every request it made
    got no answer at all: its stream-json holds `api_retry` events, none with an HTTP status
    (`error_status`), and no assistant message. None otherwise (the API answered, or said why
    not with a status)."""
    retries = 0
    for line in stdout.splitlines():
        event = json_object(line)
        if event is None:
            continue
        if event.get("type") == "assistant":
            return None
        if event.get("type") == "system" and event.get("subtype") == "api_retry":
            if event.get("error_status") is not None:
                return None
            retries += 1
    if retries < RETRIES_UNANSWERED:
        return None
    return f"claude retried {retries} requests that got no answer (api_retry, no HTTP status)"


RETRIES_UNANSWERED = 2
"""Retries with no answer that say the API cannot be reached (claude's delays double from half
a second: the second comes about 2 s in, well before any request could time out)."""


def describe_cause(cause: ErrorCause, *, model: str | None = None, said: str = "") -> str:
    """The reason first, then the fix."""
    if cause == "not-logged-in":
        return f"Not logged in: {LOGIN_FIX}"
    quoted = f" ({_clip(' '.join(said.split()), 160)})" if said else ""
    if cause == "unreachable":
        return (
            f"the API cannot be reached{quoted}: check the network, the proxy variables "
            "(HTTPS_PROXY) and ANTHROPIC_BASE_URL, and `run.sandbox_network` when the sandbox "
            "runs the agent"
        )
    if cause == "command-not-found":
        return (
            f"not found or not executable where it runs{quoted}: check GITGAUGE_CLAUDE_BIN, "
            f"PATH and the node its launcher runs (inside the sandbox too), or reinstall it "
            f"({INSTALL_HINT})"
        )
    if cause == "auth":
        return f"credentials refused{quoted}: check ANTHROPIC_API_KEY, or run `claude /login` again"
    if cause == "bad-model":
        name = f" {model!r}" if model else ""
        return f"model{name} not available{quoted}: check `model:` in the agent config"
    return (
        f"out of quota{quoted}: the account is out of credit or over a usage or rate limit; "
        "wait, or raise the limit"
    )


def _assistant_errors(stdout: str) -> list[str]:
    """The `error` of stream-json's assistant events (`authentication_failed`) and their text."""
    found: list[str] = []
    for line in stdout.splitlines():
        if '"error"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "assistant":
            continue
        if isinstance(event.get("error"), str):
            found.append(event["error"])
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    found.append(block["text"])
    return found


CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
PROVIDER_VARIABLES = (
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
)
"""Bedrock, Vertex and Foundry take their credentials from the cloud's own chain."""


def login_problem(env: Mapping[str, str], *, config_dir: Path | None = None) -> str | None:
    """Why the claude CLI has no credentials in `env`, or None when it has some. Reads files
    only (no request: an API call would cost money and could hang a run's start).

    Credentials are present when one of `CREDENTIAL_VARIABLES` is set, a cloud provider is
    switched on (`PROVIDER_VARIABLES`), a claude.ai login (`.credentials.json`) is in the claude
    config directory (`CLAUDE_CONFIG_DIR`, else `~/.claude`) or in the config's own `configDir`,
    `~/.claude.json` holds a `primaryApiKey`, or the settings name an `apiKeyHelper` or set a key
    in their `env`. On macOS the login lives in the Keychain, which gitgauge does not read: there
    only the run itself can tell (and `run` stops a config whose first pairs are not logged in)."""
    if any(env.get(name) for name in CREDENTIAL_VARIABLES + PROVIDER_VARIABLES):
        return None
    if sys.platform == "darwin":
        return None
    home = Path(env.get("HOME") or Path.home())
    own = env.get("CLAUDE_CONFIG_DIR")
    folders = [Path(own) if own else home / ".claude"]
    if config_dir is not None:
        folders.append(config_dir)
    for folder in folders:
        if (folder / ".credentials.json").is_file():
            return None
        settings = _json_file(folder / "settings.json")
        if settings.get("apiKeyHelper") or _sets_a_key(settings.get("env")):
            return None
    state = _json_file(Path(own) / ".claude.json" if own else home / ".claude.json")
    if state.get("primaryApiKey"):
        return None
    return f"Not logged in: {LOGIN_FIX}"


def _sets_a_key(env: object) -> bool:
    return isinstance(env, dict) and any(env.get(name) for name in CREDENTIAL_VARIABLES)


def _json_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
