"""What an agent's run used, as its CLI reported it: one record the adapters fill (claude's
result, codex's events, a transcript's own result event) and `running/pair.py` copies into the
result's `costUsd` ... `reasoningOutputTokens`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentUsage:
    """Cost, tokens and turns of one agent run; None: not reported."""

    cost_usd: float | None = None
    """What the CLI reported (claude's `total_cost_usd`), or the tokens priced by the config."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    num_turns: int | None = None
    reasoning_output_tokens: int | None = None

    @property
    def used_nothing(self) -> bool:
        """No token was counted: a CLI that stopped before any request to the model (not logged
        in) and printed a cost of 0 it never measured."""
        counts = (
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        )
        return not any(counts)

    def result_fields(self) -> dict[str, float | int | None]:
        """The result's fields it fills, by their names on disk."""
        return {
            "costUsd": self.cost_usd,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheCreationInputTokens": self.cache_creation_input_tokens,
            "cacheReadInputTokens": self.cache_read_input_tokens,
            "numTurns": self.num_turns,
            "reasoningOutputTokens": self.reasoning_output_tokens,
        }
