"""The demo's offline "agent": it only knows what the workspace's CLAUDE.md tells it.

`gitgauge demo` runs it as a `script` agent twice, without and with a CLAUDE.md overlaid by the
config's `files:` key, to show what gitgauge measures: the same agent with a different harness.
Each CLAUDE.md recipe reads

    - **topic**: in `path` replace `old` with `new`

and is applied when the topic appears in the task prompt (`GITGAUGE_PROMPT`) and `old` is in the
file; `\\n` in `old` or `new` stands for a line break. A line `Run the tests with `command``
makes it run the suite after its edit. Without CLAUDE.md it reads every source file looking for
the bug, and changes nothing.

It writes what it did to `$GITGAUGE_TRANSCRIPT` in the shape of the claude CLI's stream-json
(an `assistant` event per step, a `user` event with each tool's result, a final `result`), so the
report and `compare` show its behaviour as they show a real agent's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess  # noqa: TID251 - an agent, not gitgauge: it runs the tests as agents do
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

RECIPE = re.compile(
    r"^- \*\*(?P<topic>[^*]+)\*\*: in `(?P<path>[^`]+)` "
    r"replace `(?P<old>[^`]+)` with `(?P<new>[^`]+)`"
)
TESTS = re.compile(r"Run the tests with `(?P<command>[^`]+)`")


class Transcript:
    """The agent's steps as claude stream-json events, appended to $GITGAUGE_TRANSCRIPT."""

    def __init__(self) -> None:
        name = os.environ.get("GITGAUGE_TRANSCRIPT")
        self.path = Path(name) if name else None
        self.turns = 0
        self.event({"type": "system", "subtype": "init", "cwd": os.getcwd(), "model": "demo"})

    def event(self, event: dict[str, Any]) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(event) + "\n")

    def _assistant(self, block: dict[str, Any]) -> None:
        self.turns += 1
        message = {"id": f"msg_demo{self.turns:03d}", "role": "assistant", "content": [block]}
        self.event({"type": "assistant", "message": message})

    def tool(
        self, name: str, arguments: dict[str, Any], result: str, *, failed: bool = False
    ) -> None:
        tool_id = f"toolu_demo{self.turns + 1:03d}"
        self._assistant({"type": "tool_use", "id": tool_id, "name": name, "input": arguments})
        answer = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if failed:
            answer["is_error"] = True
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        self.event(
            {"type": "user", "message": {"role": "user", "content": [answer]}, "timestamp": stamp}
        )

    def say(self, text: str) -> None:
        print(text)
        self._assistant({"type": "text", "text": text})

    def finish(self, text: str) -> None:
        self.event(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": self.turns,
                "result": text,
            }
        )


def read(transcript: Transcript, path: Path) -> str:
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    transcript.tool("Read", {"file_path": str(path.absolute())}, text)
    return text


def main() -> int:
    prompt = os.environ.get("GITGAUGE_PROMPT", "").lower()
    transcript = Transcript()
    notes = Path("CLAUDE.md")
    if not notes.is_file():
        # No map of the code: read every source file in search of the bug, then give up.
        sources = sorted(path for path in Path().glob("*/*.py") if "test" not in path.name)
        transcript.tool("Glob", {"pattern": "*/*.py"}, "\n".join(map(str, sources)))
        for path in sources:
            read(transcript, path)
        said = "no CLAUDE.md: this agent has no idea where to look, so it changes nothing"
        transcript.say(said)
        transcript.finish(said)
        return 0
    applied = 0
    text_of_notes = read(transcript, notes)
    for line in text_of_notes.splitlines():
        match = RECIPE.match(line)
        if match is None or match["topic"].lower() not in prompt:
            continue
        target = Path(match["path"])
        old, new = (match[key].replace("\\n", "\n") for key in ("old", "new"))
        text = read(transcript, target)
        if old in text:
            target.write_text(text.replace(old, new, 1), encoding="utf-8")
            transcript.tool(
                "Edit",
                {"file_path": str(target.absolute()), "old_string": old, "new_string": new},
                f"The file {target} has been updated.",
            )
            transcript.say(f"CLAUDE.md recipe for {match['topic']!r}: edited {target}")
            applied += 1
    tests = TESTS.search(text_of_notes)
    if applied and tests is not None:
        command = tests["command"]
        argv = shlex.split(command)
        if argv and argv[0] == "python":
            argv[0] = sys.executable  # the interpreter running the demo has pytest
        # No cache folder in the workspace: it would be part of the agent's diff.
        ran = subprocess.run(
            [*argv, "-p", "no:cacheprovider"], capture_output=True, text=True, check=False
        )
        transcript.tool(
            "Bash",
            {"command": f"{command} -p no:cacheprovider"},
            (ran.stdout + ran.stderr)[-2000:],
            failed=ran.returncode != 0,
        )
    said = (
        f"applied {applied} CLAUDE.md recipe(s)"
        if applied
        else "CLAUDE.md has no recipe for this task"
    )
    transcript.say(said)
    transcript.finish(said)
    return 0


if __name__ == "__main__":
    sys.exit(main())
