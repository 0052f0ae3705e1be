"""The demo's offline "agent": it only knows what the workspace's CLAUDE.md tells it.

`gitgauge demo` runs it as a `script` agent twice, without and with a CLAUDE.md overlaid by the
config's `files:` key, to show what gitgauge measures: the same agent with a different harness.
Each CLAUDE.md recipe reads

    - **topic**: in `path` replace `old` with `new`

and is applied when the topic appears in the task prompt (`GITGAUGE_PROMPT`) and `old` is in the
file; `\\n` in `old` or `new` stands for a line break. Without CLAUDE.md it changes nothing.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

RECIPE = re.compile(
    r"^- \*\*(?P<topic>[^*]+)\*\*: in `(?P<path>[^`]+)` "
    r"replace `(?P<old>[^`]+)` with `(?P<new>[^`]+)`"
)


def main() -> int:
    prompt = os.environ.get("GITGAUGE_PROMPT", "").lower()
    notes = Path("CLAUDE.md")
    if not notes.is_file():
        print("no CLAUDE.md: this agent has no idea where to look, so it changes nothing")
        return 0
    applied = 0
    for line in notes.read_text(encoding="utf-8").splitlines():
        match = RECIPE.match(line)
        if match is None or match["topic"].lower() not in prompt:
            continue
        target = Path(match["path"])
        old, new = (match[key].replace("\\n", "\n") for key in ("old", "new"))
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        if old in text:
            target.write_text(text.replace(old, new, 1), encoding="utf-8")
            print(f"CLAUDE.md recipe for {match['topic']!r}: edited {target}")
            applied += 1
    if not applied:
        print("CLAUDE.md has no recipe for this task")
    return 0


if __name__ == "__main__":
    sys.exit(main())
