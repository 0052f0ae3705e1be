"""Per-test outcomes from JUnit XML reports, shared by mining (verification) and running (scoring).

A streaming parser (`xml.etree.ElementTree.iterparse`): each `<testcase>` is read and dropped as
soon as it ends, so memory stays bounded by the number of tests, not by their captured output.
Handles nested `<testsuites>`, several files, `failure` / `error` / `skipped`, and duplicate names
(the worst outcome wins; the names are reported). A test is named `classname::name` (just `name`
without a class), control characters escaped so that a name is always one line. A `file`
attribute, where the runner writes one (mocha's xunit reporter, pytest's xunit1 family), is kept:
mining uses it to tell the fix's own tests from the others.
"""

from __future__ import annotations

import codecs
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

Outcome = Literal["passed", "skipped", "failed", "error"]

# Worst wins when one name appears twice (a rerun plugin, a runner that repeats names).
_RANK: dict[Outcome, int] = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_OUTCOME_OF_TAG: dict[str, Outcome] = {"failure": "failed", "error": "error", "skipped": "skipped"}
_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\0"})


class ReportError(Exception):
    """A report that cannot be used (missing, malformed, truncated): fall back to exit codes."""


@dataclass
class TestReport:
    """What one test run reported, file by file merged into one map."""

    __test__ = False  # not a pytest test class

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    duplicates: set[str] = field(default_factory=set)
    """Names reported more than once (their worst outcome is kept)."""
    locations: dict[str, str] = field(default_factory=dict)
    """Test name -> the file its report names (the `file` attribute), where it names one."""
    files: int = 0

    def passed(self, name: str) -> bool:
        return self.outcomes.get(name) == "passed"

    def add(self, name: str, outcome: Outcome) -> None:
        earlier = self.outcomes.get(name)
        if earlier is not None:
            self.duplicates.add(name)
            if _RANK[earlier] >= _RANK[outcome]:
                return
        self.outcomes[name] = outcome


def test_name(classname: str | None, name: str | None) -> str:
    """`classname::name`, one line whatever the runner put in it."""
    base = (name or "").translate(_ESCAPES)
    owner = (classname or "").translate(_ESCAPES)
    return f"{owner}::{base}" if owner else base


def parse_reports(paths: Iterable[Path]) -> TestReport:
    """Parse every file into one report; raise `ReportError` if any file is unusable."""
    report = TestReport()
    for path in paths:
        parse_into(path, report)
    return report


def parse_into(path: Path, report: TestReport) -> None:
    """Add one file's tests to `report`; nothing of the file when it is unusable."""
    found = TestReport()
    try:
        with path.open("rb") as handle:
            _parse_stream(handle, found)
    except ElementTree.ParseError as error:
        # A name or an output with bytes that are not UTF-8 makes the XML invalid; read it
        # again with those bytes replaced, rather than losing the whole report.
        if "invalid token" not in str(error) and "encoding" not in str(error):
            raise ReportError(f"{path.name}: not valid JUnit XML ({error})") from None
        found = TestReport()
        try:
            with path.open("rb") as handle:
                _parse_stream(_Utf8Repaired(handle), found)
        except ElementTree.ParseError as second:
            raise ReportError(f"{path.name}: not valid JUnit XML ({second})") from None
    except OSError as error:
        raise ReportError(f"{path.name}: cannot read ({error.strerror or error})") from None
    report.duplicates |= found.duplicates
    for name, outcome in found.outcomes.items():
        report.add(name, outcome)
    report.locations.update(found.locations)
    report.files += 1


def _parse_stream(source: IO[bytes] | _Utf8Repaired, report: TestReport) -> None:
    for _, element in ElementTree.iterparse(source, events=("end",)):
        tag = element.tag
        if tag == "testsuite":
            # Its test cases are counted: drop their (cleared) shells too.
            element.clear()
            continue
        if tag != "testcase":
            continue
        outcome: Outcome = "passed"
        for child in element:
            kind = _OUTCOME_OF_TAG.get(child.tag)
            if kind is not None and _RANK[kind] > _RANK[outcome]:
                outcome = kind
        name = test_name(element.get("classname"), element.get("name"))
        report.add(name, outcome)
        location = element.get("file")
        if location:
            report.locations[name] = location
        # Drop the test case's children (captured output, tracebacks) now.
        element.clear()


class _Utf8Repaired:
    """A byte stream with invalid UTF-8 sequences replaced (U+FFFD), for iterparse."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def read(self, size: int = -1) -> bytes:
        chunk = self._handle.read(size)
        return self._decoder.decode(chunk, final=not chunk).encode("utf-8")
