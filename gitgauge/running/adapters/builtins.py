"""The built-in adapters, registered on import (`base.ADAPTERS` imports this on first use)."""

from gitgauge.running.adapters import baselines, claude_code, codex, script

__all__ = ["baselines", "claude_code", "codex", "script"]
