"""The agent CLIs: each binary and its login (a file or a key), looked for without running them:
nothing here talks to an API (`doctor --probe` does, in `doctor/probe.py`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from gitgauge.core.claude import find_claude_binary
from gitgauge.core.errors import GitGaugeError
from gitgauge.doctor.findings import Found
from gitgauge.running.adapters.codex import find_codex_binary


def agents(env: Mapping[str, str], found: Found) -> None:
    """Each agent CLI: its binary and its login (a file or a key), never a call to its API.
    Not needed to mine: absent ones are warnings."""
    home = Path(env.get("HOME", "~")).expanduser()
    try:
        claude = find_claude_binary(env)
    except GitGaugeError:
        found(
            "warn",
            "claude-code: no `claude` on PATH (GITGAUGE_CLAUDE_BIN names another)",
            [
                "needed only to run configs with adapter: claude-code "
                "(npm install -g @anthropic-ai/claude-code)"
            ],
        )
    else:
        config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        keys = [
            k
            for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
            if env.get(k)
        ]
        credentials = config_dir / ".credentials.json"
        if keys:
            found("ok", f"claude-code: {claude}, key in {keys[0]}")
        elif credentials.is_file():
            found("ok", f"claude-code: {claude}, logged in ({credentials})")
        elif sys.platform == "darwin":
            found(
                "info",
                f"claude-code: {claude}; a login may be in the keychain, which "
                "gitgauge cannot hand to per-pair config copies: set ANTHROPIC_API_KEY",
            )
        else:
            found(
                "warn",
                f"claude-code: {claude}, not logged in (no ANTHROPIC_API_KEY, no {credentials})",
                ["run `claude` once and log in, or set ANTHROPIC_API_KEY"],
            )
    try:
        codex = find_codex_binary(env)
    except GitGaugeError:
        found("info", "codex: no `codex` on PATH (needed only for adapter: codex)")
        return
    codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
    keys = [k for k in ("OPENAI_API_KEY", "CODEX_API_KEY") if env.get(k)]
    if keys:
        found("ok", f"codex: {codex}, key in {keys[0]}")
    elif (codex_home / "auth.json").is_file():
        found("ok", f"codex: {codex}, logged in ({codex_home / 'auth.json'})")
    else:
        found(
            "warn",
            f"codex: {codex}, not logged in (no OPENAI_API_KEY, no {codex_home / 'auth.json'})",
            ["run `codex login`, or set OPENAI_API_KEY"],
        )
