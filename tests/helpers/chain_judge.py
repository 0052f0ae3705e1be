"""The fake chain judge the chain tests answer with, and how they read the two series a judge
request shows (each inside its nonce-tagged `<untrusted-series-a-...>` block)."""

from __future__ import annotations

import re

from helpers.fakes.anthropic_api import RecordedRequest

BLOCK = re.compile(
    r"<untrusted-series-([ab])-([0-9a-f]{32})>\n(.*?)\n</untrusted-series-\1-\2>", re.S
)


def series_blocks(request: RecordedRequest) -> tuple[str, str]:
    found = {name: text for name, _, text in BLOCK.findall(request.text)}
    return found["a"], found["b"]


def series_blocks_text(text: str) -> tuple[str, str]:
    found = {name: shown for name, _, shown in BLOCK.findall(text)}
    return found["a"], found["b"]


def fewer_commits_win(request: RecordedRequest) -> str:
    """The fake judge: the same text is a tie; otherwise the series with fewer commits wins."""
    a, b = series_blocks(request)
    if a == b:
        return "The two series are the same.\nVERDICT: TIE"
    count_a, count_b = a.count("--- commit "), b.count("--- commit ")
    if count_a == count_b:
        return "Neither is better.\nVERDICT: TIE"
    return "Fewer, larger steps read better.\nVERDICT: " + ("A" if count_a < count_b else "B")
