"""FAIL_TO_PASS and PASS_TO_PASS from the per-test reports of a candidate's decisive runs.

FAIL_TO_PASS: tests that pass at the fix and do not pass at the parent with the fix's test files
laid over it (failed, errored, skipped, or absent because their file did not import there).
PASS_TO_PASS: tests that pass in both. A test whose outcome changes between two runs of one
commit is flaky and kept out of both. Tests that fail on both sides are listed and ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from gitgauge.core.junit import TestReport

SHOWN = 3
"""How many test names a one-line detail shows."""


@dataclass(frozen=True)
class Split:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    failing_both: list[str]
    flaky: list[str]
    failing_at_fix: list[str]
    """Stable failures (failed or errored) at the fix."""
    no_test_passed_at_parent: bool


def flaky_tests(reports: Sequence[TestReport]) -> set[str]:
    """Tests that passed in some runs of one commit and not in others."""
    if len(reports) < 2:
        return set()
    names = set().union(*(report.outcomes for report in reports))
    return {name for name in names if len({report.passed(name) for report in reports}) > 1}


def split(at_fix: Sequence[TestReport], at_parent: Sequence[TestReport]) -> Split:
    flaky = flaky_tests(at_fix) | flaky_tests(at_parent)
    fix, parent = at_fix[0], at_parent[0]
    passing_at_fix = [name for name in fix.outcomes if fix.passed(name) and name not in flaky]
    fail_to_pass = sorted(name for name in passing_at_fix if not parent.passed(name))
    pass_to_pass = sorted(name for name in passing_at_fix if parent.passed(name))
    failing_at_fix = sorted(
        name
        for name, outcome in fix.outcomes.items()
        if outcome in ("failed", "error") and name not in flaky
    )
    failing_both = [name for name in failing_at_fix if not parent.passed(name)]
    no_pass = not any(report.passed(name) for report in at_parent for name in report.outcomes)
    return Split(
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        failing_both=failing_both,
        flaky=sorted(flaky),
        failing_at_fix=failing_at_fix,
        no_test_passed_at_parent=no_pass,
    )


def of_files(tests: Sequence[str], test_files: Sequence[str]) -> list[str]:
    """The tests whose name mentions one of `test_files` (by file stem, as runners name tests:
    `tests.test_retry::test_x` for `tests/test_retry.py`). A heuristic, used only to tell a
    candidate whose own new tests are flaky from one that merely runs beside a flaky test."""
    stems = {PurePosixPath(path).stem for path in test_files}
    stems = {stem for stem in stems if len(stem) > 4}
    return [name for name in tests if any(stem in name for stem in stems)]


def names(tests: Sequence[str]) -> str:
    """A few names for a one-line message."""
    shown = ", ".join(tests[:SHOWN])
    more = len(tests) - SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def counts(result: Split) -> str:
    """`F2P 2 / P2P 40`, plus what a reviewer should know."""
    text = f"F2P {len(result.fail_to_pass)} / P2P {len(result.pass_to_pass)}"
    if result.failing_both:
        text += f", {len(result.failing_both)} failing on both sides"
    if result.flaky:
        text += f", {len(result.flaky)} flaky"
    if result.no_test_passed_at_parent:
        text += ", no test passed at the parent: review it"
    return text
