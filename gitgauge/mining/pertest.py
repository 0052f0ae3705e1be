"""FAIL_TO_PASS and PASS_TO_PASS from the per-test reports of a candidate's decisive runs.

FAIL_TO_PASS: tests that pass at the fix and do not pass at the parent with the fix's test files
laid over it: they fail, error or are skipped there, or they are missing there and belong to one
of the fix's test files (a new test is expected to be missing at the parent). A missing test that
belongs to no test file of the fix did *not run* at the parent (a module that did not import,
`-x`, a crash): it is in neither list, only counted. PASS_TO_PASS: tests that pass in both. A
test whose outcome changes between two runs of one commit is flaky and kept out of both. Tests
that fail on both sides are listed and ignored.

A test is also the fix's own when its parameter names a file the fix added or changed among its
test files (`tests/test_data.py::test_invalid[carriage-return]` runs the fix's new
`tests/data/invalid/carriage-return.toml`; the rules are in `mining.parameters`), whatever the
rules below say of its test file.

Which test file a test belongs to (`Owners`), by the first rule that applies:

1. The report names its file (a `file` attribute: mocha's xunit reporter), or its classname is a
   file path (vitest): the test belongs to that file.
2. Its classname (or, without one, its name: pytest's collection errors), or the longest dotted
   prefix of it, names a test file of the fix's tree, read as a path without its extension
   (`tests.test_x.TestY` -> `tests/test_x.py`, `com.acme.FooTest` ->
   `src/test/java/com/acme/FooTest.java`; a prefix matches the end of the path): it belongs to
   that file. Exact for pytest, whose classnames are the module's path.
3. Otherwise (node's runner, whose classname is always `test`; describe titles; TAP names): it
   belongs to a file of the fix when its own name (without a `[parameter]` suffix) is written in
   that file at the fix, as test titles are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from gitgauge.core.junit import TestReport
from gitgauge.mining.parameters import NamedFiles

SHOWN = 3
"""How many test names a one-line detail shows."""

# A classname that can be a dotted module or class path (pytest, unittest, JUnit).
_DOTTED = re.compile(r"[\w$-]+(\.[\w$-]+)*")
# node's test runner names every test's class `test`: a placeholder, not a file.
_NOT_A_CLASS = frozenset({"test"})
_SUBTEST = " > "
"""How TAP names join a subtest to its parents (`file.js > group > test`)."""


@dataclass(frozen=True)
class Split:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    failing_both: list[str]
    """Stable failures at the fix that ran and did not pass at the parent."""
    flaky: list[str]
    failing_at_fix: list[str]
    """Stable failures (failed or errored) at the fix."""
    broken_by_fix: list[str]
    """Stable failures at the fix that passed at the parent, or are the fix's own tests."""
    not_run_at_parent: list[str]
    """Tests passing at the fix, missing at the parent and not of the fix's test files."""
    no_test_passed_at_parent: bool
    outside_fix: bool = False
    """FAIL_TO_PASS holds none of the fix's own tests: no test of its test files, none whose
    parameter names a file it added or changed."""
    parent_unreported: str | None = None
    """Why the parent has no report (its runs are judged from the fix's tests alone)."""


@dataclass
class Owners:
    """Tells the tests of the fix's own test files from the others (rules in the module doc)."""

    test_files: Sequence[str]
    """The fix's test files."""
    tree: Callable[[], Iterable[str]]
    """The test files of the fix's tree (asked for only when a classname needs it)."""
    read: Callable[[str], str | None]
    """The text of one of the fix's test files at the fix (None: not a text file there)."""
    locations: Mapping[str, str] = field(default_factory=dict)
    """Test name -> the file its report names."""
    changed: Sequence[str] = ()
    """The fix's test files it added or changed (not deleted): what a test's parameter may name."""

    def owned(self, name: str) -> bool:
        classname, _, title = name.rpartition("::")
        segments = title.split(_SUBTEST)
        if any(self._named_files.named_by(own) for own in {title, segments[-1]}):
            return True
        location = self.locations.get(name)
        if location is None:
            # A nested TAP name starts with its file when the runner runs files as subtests.
            paths = [classname, *segments[:1]] if len(segments) > 1 else [classname]
            location = next((part for part in paths if _is_file(part)), None)
        if location is not None:
            return self._is_fix_file(location)
        if classname not in _NOT_A_CLASS:
            dotted = classname or title
            files = self._dotted_files(dotted) if _DOTTED.fullmatch(dotted) else None
            if files is not None:
                return bool(files & set(self.test_files))
        return self._written_in_fix_files(segments[-1])

    @cached_property
    def _named_files(self) -> NamedFiles:
        return NamedFiles(self.changed)

    def _is_fix_file(self, location: str) -> bool:
        path = location.replace("\\", "/").removeprefix("./")
        return any(
            path == own or path.endswith("/" + own) or own.endswith("/" + path)
            for own in self.test_files
        )

    @cached_property
    def _by_dotted_suffix(self) -> dict[str, set[str]]:
        """`a.b.c` of every test file `x/a/b/c.py`, and each of its dotted endings."""
        index: dict[str, set[str]] = {}
        for path in self.tree():
            parts = PurePosixPath(path).with_suffix("").parts
            for start in range(len(parts)):
                index.setdefault(".".join(parts[start:]), set()).add(path)
        return index

    def _dotted_files(self, dotted: str) -> set[str] | None:
        """The test files the longest dotted prefix of `dotted` names, or None."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            files = self._by_dotted_suffix.get(".".join(parts[:end]))
            if files:
                return files
        return None

    @cached_property
    def _texts(self) -> list[str]:
        return [text for path in self.test_files if (text := self.read(path)) is not None]

    def _written_in_fix_files(self, title: str) -> bool:
        words = {title.strip(), title.split("[", 1)[0].strip()} - {""}
        return any(word in text for word in words for text in self._texts)


def _is_file(text: str) -> bool:
    """A path to a file: a `/` and an extension (`test/a.test.js`, not `github.com/x/pkg`)."""
    return "/" in text.replace("\\", "/") and bool(PurePosixPath(text.replace("\\", "/")).suffix)


def flaky_tests(reports: Sequence[TestReport]) -> set[str]:
    """Tests that passed in some runs of one commit and not in others."""
    if len(reports) < 2:
        return set()
    names = set().union(*(report.outcomes for report in reports))
    return {name for name in names if len({report.passed(name) for report in reports}) > 1}


def _stable_at_fix(at_fix: Sequence[TestReport], flaky: set[str]) -> tuple[list[str], list[str]]:
    """The fix's stable passes and stable failures (failed or errored)."""
    fix = at_fix[0]
    passing = [name for name in fix.outcomes if fix.passed(name) and name not in flaky]
    failing = sorted(
        name
        for name, outcome in fix.outcomes.items()
        if outcome in ("failed", "error") and name not in flaky
    )
    return passing, failing


def split(
    at_fix: Sequence[TestReport], at_parent: Sequence[TestReport], *, owners: Owners
) -> Split:
    flaky = flaky_tests(at_fix) | flaky_tests(at_parent)
    parent = at_parent[0]
    passing_at_fix, failing_at_fix = _stable_at_fix(at_fix, flaky)
    fail_to_pass: list[str] = []
    pass_to_pass: list[str] = []
    not_run: list[str] = []
    for name in passing_at_fix:
        if parent.passed(name):
            pass_to_pass.append(name)
        elif name in parent.outcomes or owners.owned(name):
            fail_to_pass.append(name)
        else:
            not_run.append(name)
    failing_both = [
        name for name in failing_at_fix if name in parent.outcomes and not parent.passed(name)
    ]
    broken = [
        name
        for name in failing_at_fix
        if parent.passed(name) or (name not in parent.outcomes and owners.owned(name))
    ]
    no_pass = not any(report.passed(name) for report in at_parent for name in report.outcomes)
    return Split(
        fail_to_pass=sorted(fail_to_pass),
        pass_to_pass=sorted(pass_to_pass),
        failing_both=failing_both,
        flaky=sorted(flaky),
        failing_at_fix=failing_at_fix,
        broken_by_fix=broken,
        not_run_at_parent=sorted(not_run),
        no_test_passed_at_parent=no_pass,
        outside_fix=bool(fail_to_pass) and not any(owners.owned(n) for n in fail_to_pass),
    )


def split_without_parent_report(at_fix: Sequence[TestReport], *, owners: Owners, why: str) -> Split:
    """The parent's runs wrote no report (a conftest that does not import, a crash): what is
    known is that the fix's own tests did not pass there, and nothing about the others."""
    flaky = flaky_tests(at_fix)
    passing_at_fix, failing_at_fix = _stable_at_fix(at_fix, flaky)
    own = sorted(name for name in passing_at_fix if owners.owned(name))
    return Split(
        fail_to_pass=own,
        pass_to_pass=[],
        failing_both=[],
        flaky=sorted(flaky),
        failing_at_fix=failing_at_fix,
        broken_by_fix=[name for name in failing_at_fix if owners.owned(name)],
        not_run_at_parent=sorted(name for name in passing_at_fix if name not in own),
        no_test_passed_at_parent=False,
        parent_unreported=why,
    )


def names(tests: Sequence[str]) -> str:
    """A few names for a one-line message."""
    shown = ", ".join(tests[:SHOWN])
    more = len(tests) - SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def counts(result: Split) -> str:
    """`F2P 2 / P2P 40`, plus what a reviewer should know."""
    text = f"F2P {len(result.fail_to_pass)} / P2P {len(result.pass_to_pass)}"
    if result.parent_unreported:
        text += (
            f", {result.parent_unreported}: FAIL_TO_PASS is the fix's own tests, "
            "nothing is PASS_TO_PASS"
        )
    for tests, what in (
        (result.not_run_at_parent, "not run at the parent"),
        (result.failing_both, "failing on both sides"),
        (result.flaky, "flaky"),
    ):
        if tests:
            text += f", {len(tests)} {what}"
    if result.no_test_passed_at_parent:
        text += ", no test passed at the parent: review it"
    if result.outside_fix:
        text += ", the failing tests live in files the fix did not change: review it"
    return text
