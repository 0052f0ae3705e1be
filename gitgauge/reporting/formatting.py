"""How every report writes its numbers and tables of records: a rate with its interval in
percent, an average with its interval (left out where it has no width at the precision shown),
a wall time, a cost bound in few characters, and records as csv.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any

from gitgauge.reporting.intervals import Interval


def format_rate(interval: Interval) -> str:
    """`60% [23, 88]`: the rate and its interval in percent."""
    if interval.estimate is None:
        return "-"
    return f"{percent(interval.estimate)} [{interval.low * 100:.0f}, {interval.high * 100:.0f}]"


def percent(rate: float) -> str:
    """`60%`."""
    return f"{rate * 100:.0f}%"


def with_interval(
    value: float | None, interval: Interval | None, point: str, bound: Callable[[float], str]
) -> str:
    """`$0.3000 [0.18, 0.42]`, `200.0s [22.4, 548.0]`: the average, then its interval; no
    interval when it has no width at the precision shown (`0.0s`, not `0.0s [0.0, 0.0]`: a
    column that did not vary)."""
    if value is None:
        return "-"
    text = point.format(value)
    if interval is not None and bound(interval.low) != bound(interval.high):
        text += f" [{bound(interval.low)}, {bound(interval.high)}]"
    return text


def format_duration(seconds: float) -> str:
    """`12.3s`, `2m04s`, `1h02m`: a wall time a person reads at a glance."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def compact(value: float) -> str:
    """A cost bound in few characters: two significant digits, at most four decimals
    (0.18, 0.0081, 2.5, 12), whole dollars from 100."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    text = f"{value:.2g}"
    if "e" in text or len(text.split(".")[-1]) > 4:
        text = f"{value:.4f}"
    return text


def csv_text(fields: Sequence[str], records: Sequence[dict[str, Any]]) -> str:
    """`records` under the header `fields`, a missing value as an empty field."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: "" if value is None else value for key, value in record.items()})
    return buffer.getvalue().rstrip("\n")
