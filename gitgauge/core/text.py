"""Text from outside (an agent, a test run, a commit, a task file) made safe for a terminal, and
counts written with their nouns in agreement (`plural`).

An agent's stderr, a test's output or a commit subject can hold escape sequences: OSC 52 writes
the clipboard, others set the window title, clear the screen or move the cursor over earlier
lines. Everything gitgauge prints goes through `visible`, on a terminal or not (a log read later
with `cat` is a terminal too); files keep the raw bytes.
"""

from __future__ import annotations

import re

_KEPT = "\n\t"
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline), DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional controls ("Trojan Source")
    "\ufeff\ufff9-\ufffb]"
)


def visible(text: str) -> str:
    """`text` with every control character but newline and tab written out (`\\x1b`,
    `\\u009b`, `\\u202e`), so none reaches a terminal as a command."""
    return _INVISIBLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    # C1 and the rest as `\u0085`: inside a JSON string (an export piped to a file) that is
    # the same character again, where `\x85` would not be JSON.
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 candidate`, `2 candidates`, `0 tasks`: a count and its noun in agreement. `many` is the
    plural when it is not `word` + s (`1 fix`, `2 fixes`)."""
    return f"{count} {word if count == 1 else many or word + 's'}"
