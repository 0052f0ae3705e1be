"""`adapter: script`: any agent or harness, as a shell command; the prompt is in its env
(`GITGAUGE_PROMPT`, `GITGAUGE_TASK_ID`, and `CLAUDE_CONFIG_DIR` when the config has a configDir)."""

from __future__ import annotations

from collections.abc import Mapping

from gitgauge.core import process
from gitgauge.core.sandbox import Exposure, command_paths
from gitgauge.running.adapters.base import Adapter, AdapterContext, AdapterOutcome, register


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
        env["GITGAUGE_PROMPT"] = context.agent_prompt
        if context.config_dir is not None:
            env["CLAUDE_CONFIG_DIR"] = str(context.config_dir)
        env["GITGAUGE_TASK_ID"] = context.task.id
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
                error_message=f"killed after {context.timeout_seconds:g}s (timeouts.adapter)",
                seconds=result.seconds,
            )
        if not result.ok:
            return AdapterOutcome(
                error_kind="adapter-exit",
                error_message=f"command exited {result.exit_code}: {result.output_tail(300)}",
                seconds=result.seconds,
            )
        return AdapterOutcome(seconds=result.seconds)
