"""What gitgauge's shared messages say: the heartbeat off a terminal counts how long its item has
run, counts agree with their nouns, mine's closing advice names the timeout a candidate outran,
and the options that may stand without a value (`run --resume`, `report --html`) get theirs."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from gitgauge.cli.common import StatusLine, elapsed, optional_values
from gitgauge.core.text import plural
from gitgauge.mining.advice import closing_advice, few_tasks_advice
from gitgauge.mining.mine import MineSummary

BEAT = re.compile(r"^(\[\d/\d\] verifying \w+) \(still at it, (\d+) s\)$")


def beats(out: str) -> list[tuple[str, int]]:
    return [
        (match.group(1), int(match.group(2)))
        for match in map(BEAT.match, out.splitlines())
        if match is not None
    ]


def test_the_heartbeat_says_how_long_the_item_has_run_not_the_beat(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Off a terminal (pytest's captured stdout is not one) a status line comes every beat while
    nothing else is printed; it counts from the item's start, and a new item starts again."""
    status = StatusLine()
    assert not status.tty
    status.beat_seconds = 0.3
    status.show("[1/2] verifying aaaa")
    time.sleep(2.4)
    status.clear()
    status.show("[2/2] verifying bbbb")
    time.sleep(0.8)
    status.clear()
    found = beats(capsys.readouterr().out)
    first = [seconds for text, seconds in found if text == "[1/2] verifying aaaa"]
    second = [seconds for text, seconds in found if text == "[2/2] verifying bbbb"]
    assert len(first) >= 3, found  # about one a beat
    assert first == sorted(first) and first[-1] >= 2, found  # not the 0.3 s since the last line
    assert second and all(seconds == 0 for seconds in second), found


def test_elapsed_time_reads_at_a_glance() -> None:
    assert [elapsed(s) for s in (0.4, 7.9, 65, 3599, 7380)] == [
        "0 s",
        "7 s",
        "1 min 05 s",
        "59 min 59 s",
        "2 h 03 min",
    ]


def test_counts_agree_with_their_nouns() -> None:
    assert plural(1, "candidate") == "1 candidate"
    assert plural(0, "candidate") == "0 candidates"
    assert plural(2, "task") == "2 tasks"
    assert plural(1, "fix", "fixes") == "1 fix"
    assert plural(3, "fix", "fixes") == "3 fixes"


def test_one_rejected_candidate_is_one_candidate_and_its_timeout_is_named() -> None:
    summary = MineSummary(scanned=4, candidates=1, rejected=Counter({"timed out": 1}))
    why, try_next = few_tasks_advice(summary, last=100, test_timeout_ms=300)
    assert why == "no tasks: 1 candidate was rejected (1 timed out)."
    assert (
        "a longer timeouts.test in gitgauge.yaml (now 300 ms = 0.3 s; 1 candidate timed out at "
        "the fix)"
    ) in try_next


def test_a_timeout_is_named_even_when_the_tasks_are_many() -> None:
    """Twelve tasks are not few: no advice, but the candidates that outran `timeouts.test` are
    said, with the key and its value."""
    summary = MineSummary(scanned=40, already_mined=12, rejected=Counter({"timed out": 2}))
    assert closing_advice(summary, last=100, test_timeout_ms=300_000) == [
        "2 candidates timed out at the fix: raise timeouts.test in gitgauge.yaml "
        "(now 300000 ms = 300 s) if the suite needs longer."
    ]
    quiet = MineSummary(scanned=40, already_mined=12, rejected=Counter({"flaky": 2}))
    assert closing_advice(quiet, last=100, test_timeout_ms=300_000) == []


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        (["report", "--html"], ["report", "--html", ""]),
        (["report", "--html", "--all"], ["report", "--html", "", "--all"]),
        (["report", "--html", "out.html"], ["report", "--html", "out.html"]),
        (["run", "--resume"], ["run", "--resume", "latest"]),
        (["run", "--resume", "-j", "2"], ["run", "--resume", "latest", "-j", "2"]),
        (["run", "--resume", "20240101T0930"], ["run", "--resume", "20240101T0930"]),
        (["run", "-c", "x.yaml", "--", "--resume"], ["run", "-c", "x.yaml", "--", "--resume"]),
    ],
)
def test_options_that_may_stand_alone_get_their_value(given: list[str], parsed: list[str]) -> None:
    assert optional_values(given) == parsed
