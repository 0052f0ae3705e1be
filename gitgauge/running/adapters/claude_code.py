"""`adapter: claude-code`: the claude CLI in print mode, its JSON result parsed for cost and tokens.

The argv is `claude -p --output-format json --permission-mode acceptEdits [--model M] [args...]`;
the prompt goes to stdin so it never shows in `ps`. `GITGAUGE_CLAUDE_BIN` overrides the binary.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gitgauge.core.claude import ClaudeResult, find_claude_binary, parse_result
from gitgauge.core.errors import AdapterError
from gitgauge.core.records import ErrorKind
from gitgauge.core.sandbox import CLAUDE_HOME_WRITABLE, Exposure
from gitgauge.running.adapters.base import (
    Adapter,
    AdapterContext,
    AdapterOutcome,
    failure_message,
    register,
    run_cli,
    timed_out_reason,
)

BASE_ARGS = ("-p", "--output-format", "json", "--permission-mode", "acceptEdits")

STDOUT_LIMIT = 8 * 1024 * 1024
"""How much of claude's stdout is parsed; the envelope is one object of a few kilobytes."""


def claude_argv(binary: str, *, model: str | None, args: list[str]) -> list[str]:
    """The command line of one agent run; the prompt is not part of it (it goes to stdin)."""
    argv = [binary, *BASE_ARGS]
    if model:
        argv += ["--model", model]
    return argv + list(args)


@register
class ClaudeCodeAdapter(Adapter):
    name = "claude-code"
    reads_config_dir = True

    def check(self) -> None:
        try:
            find_claude_binary(os.environ)
        except AdapterError as error:
            raise AdapterError(f"{self.source}: adapter claude-code: {error}") from None

    def sandbox_exposure(self, env: Mapping[str, str]) -> Exposure:
        binary = Path(find_claude_binary(env))
        return Exposure(executables=[binary], home_writable=CLAUDE_HOME_WRITABLE)

    def run(self, context: AdapterContext) -> AdapterOutcome:
        try:
            binary = find_claude_binary(context.env)
        except AdapterError as error:
            # `check()` passed before the run started; the binary went away since.
            return AdapterOutcome(error_kind="adapter-exit", error_message=str(error))
        argv = claude_argv(binary, model=self.config.model, args=self.config.args)
        env = dict(context.env)
        if context.config_dir is not None:
            env["CLAUDE_CONFIG_DIR"] = str(context.config_dir)
        completed = run_cli(context, argv, name="claude", env=env, stdout_limit=STDOUT_LIMIT)
        if isinstance(completed, AdapterOutcome):
            return completed
        parsed: ClaudeResult | None = None
        parse_problem = ""
        try:
            parsed = parse_result(completed.stdout_tail)
        except ValueError as error:
            parse_problem = str(error)

        kind: ErrorKind | None = None
        reason = ""
        if completed.timed_out:
            kind = "adapter-timeout"
            reason = timed_out_reason(context)
        elif completed.exit_code != 0:
            kind = "adapter-exit"
            reason = f"claude exited {completed.exit_code}"
            if parsed is not None and parsed.is_error:
                reason += f" ({parsed.describe_error()})"
        elif parsed is None:
            kind = "adapter-output"
            reason = f"unreadable --output-format json result: {parse_problem}"
        elif parsed.is_error:
            kind = "adapter-output"
            reason = f"claude reported is_error: true ({parsed.describe_error()})"

        message = failure_message(completed, reason if kind is not None else None)
        # Copied even for errors: a failed run that reported its cost still spent that money.
        return AdapterOutcome(
            error_kind=kind,
            error_message=message,
            seconds=completed.seconds,
            cost_usd=parsed.total_cost_usd if parsed else None,
            input_tokens=parsed.input_tokens if parsed else None,
            output_tokens=parsed.output_tokens if parsed else None,
            cache_creation_input_tokens=parsed.cache_creation_input_tokens if parsed else None,
            cache_read_input_tokens=parsed.cache_read_input_tokens if parsed else None,
            num_turns=parsed.num_turns if parsed else None,
            final_message=parsed.result if parsed else None,
        )
