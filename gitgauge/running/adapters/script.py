"""`adapter: script`: any agent or harness, as a shell command; the prompt is in its env
(`GITGAUGE_PROMPT`, cut past `PROMPT_ENV_LIMIT`, and whole in the file `GITGAUGE_PROMPT_FILE`),
with `GITGAUGE_TASK_ID`, `CLAUDE_CONFIG_DIR` when the config has a configDir, and
`GITGAUGE_TRANSCRIPT`: a file the command may write its transcript to, in claude's stream-json
shape or codex's --json events (`core/transcript.py`); the pair keeps it in its logs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.sandbox import Exposure, command_paths
from gitgauge.running.adapters.base import (
    Adapter,
    AdapterContext,
    AdapterOutcome,
    not_found,
    prompt_file,
    register,
    start_failure,
    timed_out_reason,
)

PROMPT_ENV_LIMIT = 120_000
"""Bytes of the prompt that `GITGAUGE_PROMPT` holds: the kernel refuses to start a program with
one environment string over 128 KiB (MAX_ARG_STRLEN), and the note on a cut needs room too."""
CUT_NOTE = (
    "\n\n[gitgauge: the prompt is cut here, after {kept} of its {size} bytes (an environment "
    "variable holds at most 128 KiB); read all of it from the file named in GITGAUGE_PROMPT_FILE]"
)


@register
class ScriptAdapter(Adapter):
    name = "script"
    needs_command = True
    reads_config_dir = True  # the command may call claude

    def sandbox_exposure(self, env: Mapping[str, str]) -> Exposure:
        executables, files = command_paths(self.config.command)
        return Exposure(executables=executables, files=files)

    def run(self, context: AdapterContext) -> AdapterOutcome:
        assert self.config.command is not None
        env = dict(context.env)
        env["GITGAUGE_PROMPT"] = self._variable(context)
        if context.config_dir is not None:
            env["CLAUDE_CONFIG_DIR"] = str(context.config_dir)
        env["GITGAUGE_TASK_ID"] = context.task.id
        if context.transcript_file is not None:
            env["GITGAUGE_TRANSCRIPT"] = str(context.transcript_file)
        with _prompt_file(context) as path:
            env["GITGAUGE_PROMPT_FILE"] = str(path)
            result = process.run(
                self.config.command,
                cwd=context.workspace,
                timeout_seconds=context.timeout_seconds,
                env=env,
                stdout_path=context.log_dir / "agent.stdout",
                stderr_path=context.log_dir / "agent.stderr",
                wrapper=context.sandbox,
            )
        if result.timed_out:
            return AdapterOutcome(
                error_kind="adapter-timeout",
                error_message=timed_out_reason(context),
                seconds=result.seconds,
            )
        failed = start_failure(result, name="command")
        if failed is not None:
            return failed
        if not_found(result):
            said = " ".join(result.output_tail(200).split())
            return AdapterOutcome(
                error_kind="adapter-exit",
                error_message=(
                    f"command not found or not executable (exit {result.exit_code}: {said}): "
                    f"check `command:` in {self.source}; it runs through /bin/sh in the "
                    "workspace, inside the sandbox when there is one"
                ),
                error_cause="command-not-found",
                seconds=result.seconds,
            )
        if not result.ok:
            return AdapterOutcome(
                error_kind="adapter-exit",
                error_message=f"command exited {result.exit_code}: {result.output_tail(300)}",
                seconds=result.seconds,
            )
        return AdapterOutcome(seconds=result.seconds, final_message=result.stdout_tail)

    def _variable(self, context: AdapterContext) -> str:
        """The prompt for `GITGAUGE_PROMPT`: whole when it fits, else cut on a character
        boundary with a note that sends the agent to the file (and a warning for the user)."""
        prompt = context.agent_prompt
        data = prompt.encode("utf-8", "surrogatepass")
        if len(data) <= PROMPT_ENV_LIMIT:
            return prompt
        kept = data[:PROMPT_ENV_LIMIT].decode("utf-8", "ignore")
        context.warn(
            f"{self.source}: prompts over {PROMPT_ENV_LIMIT} bytes are cut in GITGAUGE_PROMPT "
            "(an environment variable holds at most 128 KiB), with a note at the end; "
            "GITGAUGE_PROMPT_FILE names a file with the whole prompt"
        )
        return kept + CUT_NOTE.format(kept=len(kept.encode("utf-8")), size=len(data))


@contextmanager
def _prompt_file(context: AdapterContext) -> Iterator[Path]:
    """The pair's prompt file, or one of the adapter's own for a caller that made none."""
    if context.prompt_file is not None:
        yield context.prompt_file
        return
    with prompt_file(context.agent_prompt, repository=context.repo.root) as path:
        yield path
