"""What a rejection says about a run: the most telling line of its output, and a timeout's limit
with its unit. A suite's last line is often a decoration (a coverage table's `----|----`, a row of
`=====`) that says nothing; an error, a failing assertion or the runner's summary does.
"""

from __future__ import annotations

import re

from gitgauge.core.process import CommandResult

MAX_LINE = 200
"""A telling line is cut to this many characters (a detail is one line of `mine`'s output)."""

# Lines made only of rules, borders and box drawing.
_DECORATION = re.compile(r"[\s\-=_|+*#~.:;,<>^`'\"/\\\u2500-\u259f]*")
# An exception or error with its message: `E   ImportError: ...`, `TypeError: x is not ...`.
_ERROR = re.compile(r"\b\w*(Error|Exception|Failure)\b:|\berror(\[\w+\])?:|\bpanic:", re.I)
# A failing test or assertion, as runners print them.
_FAILURE = re.compile(
    r"^(E\s|FAILED\b|FAIL\b|ERROR\b|not ok\b|[✗✖×]\s)|\bassert|\bexpected\b|\bfail(ed|ing|ure)?\b",
    re.I,
)
# The runner's count of what ran: `3 passed in 0.1s`, `12 passing (5ms)`, `# pass 4`, `Tests: 2`.
_SUMMARY = re.compile(
    r"\b\d+ (passed|passing|failed|failing|errors?|tests?|skipped|pending)\b"
    r"|^# (tests|pass|fail)\b|^Tests?:",
    re.I,
)


def telling_line(result: CommandResult) -> str | None:
    """The line of `result`'s output that best says how it went, or None without output.
    A failed run: its last error, else its last failure line; a passing one: its summary."""
    lines = [
        line.strip()
        for line in result.output_tail(8000).splitlines()
        if line.strip() != "--- stderr ---" and not _DECORATION.fullmatch(line)
    ]
    if not lines:
        return None
    summaries = [line for line in lines if _SUMMARY.search(line)]
    if not result.ok:
        # `1 failed, 2 passed` says less than the failure it counts.
        for pattern in (_ERROR, _FAILURE):
            found = [line for line in lines if pattern.search(line) and line not in summaries]
            if found:
                return _cut(found[-1])
    return _cut(summaries[-1] if summaries else lines[-1])


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..."


def with_telling_line(what: str, result: CommandResult) -> str:
    """`what`, then the telling line of `result` when there is one."""
    line = telling_line(result)
    return f"{what}: {line}" if line else what
