"""`adapter: claude-code`: the claude CLI in print mode; its stream of events is the pair's
transcript, and the final `result` event gives cost and tokens.

The argv is `claude -p --output-format stream-json --verbose --permission-mode acceptEdits
[--model M] [args...]` (`--verbose` is what makes print mode stream every message); the prompt
goes to stdin so it never shows in `ps`. `GITGAUGE_CLAUDE_BIN` overrides the binary.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from gitgauge.core.claude import (
    INSTALL_HINT,
    ClaudeResult,
    describe_cause,
    failure_cause,
    find_claude_binary,
    login_problem,
    parse_result,
    retrying_unanswered,
)
from gitgauge.core.errors import AdapterError
from gitgauge.core.process import CommandResult
from gitgauge.core.records import ErrorCause, ErrorKind
from gitgauge.core.sandbox import CLAUDE_HOME_WRITABLE, Exposure
from gitgauge.core.usage import AgentUsage
from gitgauge.running.adapters.base import (
    Adapter,
    AdapterContext,
    AdapterOutcome,
    check_runs,
    failure_message,
    non_event_tail,
    not_found,
    register,
    run_event_cli,
    timed_out_reason,
)

BASE_ARGS = (
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
)

STDOUT_LIMIT = 8 * 1024 * 1024
"""How much of claude's stdout is parsed for its result (the last event; the whole stream is in
the logs and the transcript)."""


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

    def preflight(self, env: Mapping[str, str], *, config_dir: Path | None = None) -> None:
        try:
            binary = find_claude_binary(env)
            check_runs(binary, env, name="claude", install_hint=INSTALL_HINT)
        except AdapterError as error:
            raise AdapterError(f"{self.source}: adapter claude-code: {error}") from None
        problem = login_problem(env, config_dir=config_dir)
        if problem is not None:
            raise AdapterError(f"{self.source}: claude: {problem}")

    def sandbox_exposure(self, env: Mapping[str, str]) -> Exposure:
        binary = Path(find_claude_binary(env))
        return Exposure(executables=[binary], home_writable=CLAUDE_HOME_WRITABLE)

    def run(self, context: AdapterContext) -> AdapterOutcome:
        env = dict(context.env)
        if context.config_dir is not None:
            env["CLAUDE_CONFIG_DIR"] = str(context.config_dir)
        ran = run_event_cli(
            context,
            name="claude",
            find_binary=find_claude_binary,
            argv=partial(claude_argv, model=self.config.model, args=self.config.args),
            env=env,
            stdout_limit=STDOUT_LIMIT,
            parse=parse_result,
        )
        if isinstance(ran, AdapterOutcome):
            return ran
        completed, parsed = ran.completed, ran.parsed
        failure = self._failure(context, completed, parsed, ran.problem)
        # Copied even for errors: a failed run that reported its cost still spent that money.
        # A CLI that stopped before any request (not logged in) prints a cost of 0 it never
        # measured: that is no cost at all, `-` in the report.
        usage = AgentUsage()
        if parsed is not None and not (parsed.is_error and parsed.usage.used_nothing):
            usage = parsed.usage
        return AdapterOutcome(
            error_kind=failure.kind,
            error_message=failure.message,
            error_cause=failure.cause,
            seconds=completed.seconds,
            usage=usage,
            final_message=parsed.result if parsed else None,
        )

    def _failure(
        self,
        context: AdapterContext,
        completed: CommandResult,
        parsed: ClaudeResult | None,
        parse_problem: str,
    ) -> _Failure:
        """What went wrong in a finished claude run (nothing: `_Failure()`), the reason first."""
        if completed.timed_out:
            reason = timed_out_reason(context)
            retrying = retrying_unanswered(completed.stdout_tail) if parsed is None else None
            if retrying is not None:
                # Every request unanswered until the timeout: the API cannot be reached.
                sentence = describe_cause("unreachable", said=retrying)
                return _Failure("adapter-timeout", f"claude: {sentence} ({reason})", "unreachable")
            return _Failure("adapter-timeout", failure_message(completed, reason, events=True))
        if completed.exit_code == 0 and not (parsed is not None and parsed.is_error):
            if parsed is not None:
                return _Failure()
            reason = f"unreadable --output-format stream-json result: {parse_problem}"
            return _Failure("adapter-output", failure_message(completed, reason, events=True))
        kind: ErrorKind = "adapter-exit" if completed.exit_code != 0 else "adapter-output"
        if parsed is None and not_found(completed):
            # The launcher's interpreter (node) missing where it runs: exit 127, no result.
            said = non_event_tail(completed, 200).strip()
            found: tuple[ErrorCause, str] | None = (
                "command-not-found",
                describe_cause("command-not-found", said=said),
            )
        else:
            found = failure_cause(
                parsed,
                stdout=completed.stdout_tail,
                stderr=completed.stderr_tail,
                model=self.config.model,
            )
        cause, sentence = found if found is not None else (None, _said(parsed))
        # The reason first, in claude's words when it gave any; the codes after it. The
        # output's end only when claude's own words did not say what happened (all of it is in
        # the logs): a stream of JSON events helps no one on a status line.
        details = [f"claude exited {completed.exit_code}"] if completed.exit_code != 0 else []
        if parsed is not None and parsed.is_error:
            details.append(f"is_error: true, {parsed.describe_error(with_result=False)}")
        if sentence:
            return _Failure(kind, f"claude: {sentence} ({'; '.join(details)})", cause)
        reason = "; ".join(details) or "claude failed"
        return _Failure(kind, failure_message(completed, reason, events=True), cause)


@dataclass(frozen=True)
class _Failure:
    """A claude run's error, for its `AdapterOutcome` (all None: it did not fail)."""

    kind: ErrorKind | None = None
    message: str | None = None
    cause: ErrorCause | None = None


def _said(parsed: ClaudeResult | None) -> str:
    """The CLI's own words for a failed run: the start of its `is_error` result's text."""
    if parsed is None or not parsed.is_error or not parsed.result:
        return ""
    words = " ".join(parsed.result.split())
    return words if len(words) <= 200 else words[:197] + "..."
