"""Reading `codex exec --json`: one JSON event per line on stdout.

The events gitgauge reads (codex-cli 0.171.0, the version the tests run):

- `{"type": "turn.completed", "usage": {"input_tokens", "cached_input_tokens",
  "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"}}`: the thread's tokens
  so far (every model request, summed by codex: a running total, openai/codex#17539), so the
  last such event holds the run's total. `reasoning_output_tokens` came in 2026 (#19308);
  older versions leave it out (None).
- `{"type": "turn.failed", "error": {"message": ...}}`: the turn ended in an error.
- `{"type": "item.completed", "item": {"type": ...}}`: one finished step. Commands, file
  changes, tool calls and messages count as turns (codex reports no turn count of its own).
- `{"type": "error", "message": ...}`: a transient notice ("Reconnecting... waiting for network
  (Connection failed: error sending request)", printed while codex waits, with no end, for an
  API it cannot reach); the last one is kept.

Every other event (`thread.started`, `turn.started`, `item.started`, and types added by later
versions) is skipped; a line that is not JSON is skipped too (codex may print warnings), but a
usage number of the wrong type is an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from gitgauge.core.records import MAX_COUNT
from gitgauge.core.transcript import json_object
from gitgauge.core.usage import AgentUsage

STEP_ITEM_TYPES = frozenset(
    {"agent_message", "command_execution", "file_change", "mcp_tool_call", "web_search"}
)
"""`item.completed` types counted as turns (not reasoning, plans or error notices)."""


@dataclass(frozen=True)
class CodexRun:
    """What one `codex exec --json` run reported."""

    completed_turns: int
    """`turn.completed` events: a run that finished normally has at least one."""
    failure: str | None
    """The message of the last `turn.failed` event, if any."""
    input_tokens: int | None
    """Input tokens, cached ones included (OpenAI's convention); None when no usage came."""
    cached_input_tokens: int | None
    cache_write_input_tokens: int | None
    output_tokens: int | None
    """Output tokens, reasoning ones included."""
    reasoning_output_tokens: int | None
    steps: int
    """Completed commands, file changes, tool calls and messages."""
    last_message: str | None
    """The agent's final message."""
    last_error: str | None = None
    """The message of the last transient `error` event, if any."""

    def usage(self, cost_usd: float | None) -> AgentUsage:
        """Its tokens in the result's terms (cache writes, cache reads), priced at `cost_usd`;
        its steps are turns only when a turn completed."""
        return AgentUsage(
            cost_usd=cost_usd,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_creation_input_tokens=self.cache_write_input_tokens,
            cache_read_input_tokens=self.cached_input_tokens,
            num_turns=self.steps if self.completed_turns else None,
            reasoning_output_tokens=self.reasoning_output_tokens,
        )


_USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)


def parse_events(stdout: str) -> CodexRun:
    """The usage of the last `turn.completed` event in `stdout`; unknown events are skipped.

    Raises `ValueError` naming the field when a usage number has the wrong type.
    """
    totals: dict[str, int | None] = dict.fromkeys(_USAGE_KEYS)
    completed = 0
    steps = 0
    failure: str | None = None
    last_message: str | None = None
    last_error: str | None = None
    for line in stdout.splitlines():
        event = json_object(line)
        if event is None:
            continue
        kind = event.get("type")
        if kind == "turn.completed":
            completed += 1
            usage = event.get("usage") or {}
            if not isinstance(usage, dict):
                raise ValueError(f"turn.completed usage: expected an object, got {_show(usage)}")
            for key in _USAGE_KEYS:
                value = usage.get(key)
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    raise ValueError(f"usage.{key}: expected a whole number, got {_show(value)}")
                if value is not None and not 0 <= value <= MAX_COUNT:
                    raise ValueError(f"usage.{key}: expected 0 to {MAX_COUNT:,}, got {value}")
                totals[key] = value
        elif kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            failure = str(message) if message else "turn.failed without a message"
        elif kind == "error" and isinstance(event.get("message"), str):
            last_error = event["message"]
        elif kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") in STEP_ITEM_TYPES:
                steps += 1
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    last_message = item["text"]
    return CodexRun(
        completed_turns=completed,
        failure=failure,
        input_tokens=totals["input_tokens"],
        cached_input_tokens=totals["cached_input_tokens"],
        cache_write_input_tokens=totals["cache_write_input_tokens"],
        output_tokens=totals["output_tokens"],
        reasoning_output_tokens=totals["reasoning_output_tokens"],
        steps=steps,
        last_message=last_message,
        last_error=last_error,
    )


def _show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
