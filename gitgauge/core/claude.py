"""The one door to the claude CLI's binary and its JSON envelope.

`find_claude_binary` finds the executable (`GITGAUGE_CLAUDE_BIN`, else `claude` on PATH) and
says how to fix it when there is none; `parse_result` reads the `--output-format json` result
object into a `ClaudeResult`. Used by the claude-code adapter (running) and by the claude CLI
rewrite backend (mining); how each builds its argv stays with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gitgauge.core import process
from gitgauge.core.records import MAX_COST_USD, MAX_COUNT

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
    total_cost_usd: float | None
    input_tokens: int | None
    output_tokens: int | None
    cache_creation_input_tokens: int | None
    cache_read_input_tokens: int | None
    num_turns: int | None

    def describe_error(self) -> str:
        """`subtype`, `api_error_status` and `result` of an `is_error` result, for a message."""
        parts = [f"subtype={self.subtype!r}"]
        if self.api_error_status is not None:
            parts.append(f"api_error_status={self.api_error_status!r}")
        if self.result:
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
    envelope = _find_envelope(stdout)
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
        total_cost_usd=_number(envelope, "total_cost_usd"),
        input_tokens=_count(usage, "input_tokens", prefix="usage."),
        output_tokens=_count(usage, "output_tokens", prefix="usage."),
        cache_creation_input_tokens=_count(usage, "cache_creation_input_tokens", prefix="usage."),
        cache_read_input_tokens=_count(usage, "cache_read_input_tokens", prefix="usage."),
        num_turns=_count(envelope, "num_turns"),
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
