"""Per-test outcomes from TAP (the Test Anything Protocol) a suite prints on stdout: tape, node-tap,
node's test runner (its default reporter when stdout is not a terminal, node 20-22), mocha's
`tap` reporter. Used when a run writes no JUnit XML report, so those suites get per-test
verdicts with no configuration.

Tests are named by their names, never by assertion numbers (which shift whenever a test is
added):

- Subtests (TAP 14, node-tap, node's runner): a test point with a `# Subtest: name` header or
  with indented child points is a test; the innermost ones are reported, named with their
  parents' names (`count > ignores extra spaces`). Leaf points without a header are a test's
  assertions (node-tap): its own point says how it went.
- tape (flat TAP 13): each `# name` comment before the plan starts a test; its assertions follow.
  It fails when one of them fails (`not ok`), is skipped for tape's `# SKIP name`.
- Otherwise each point is a test named by its description (mocha's tap reporter, whose only
  comments are its counts after the points).

`# SKIP` is skipped, a `# TODO` failure is skipped (a known failure), `Bail out!` ends the stream:
the tests after it are missing, like those of a crashed run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gitgauge.core.junit import Outcome, TestReport

_VERSION = re.compile(r"TAP version \d+")
_PLAN = re.compile(r"1\.\.\d+")
_POINT = re.compile(r"(not )?ok\b(?: +\d+)?(?: +-)? *(.*)")
_DIRECTIVE = re.compile(r"(.*?)\s+#\s*(SKIP|TODO)\b.*", re.I)
_SUBTEST = "# Subtest:"
_JOIN = " > "


@dataclass
class _Point:
    name: str
    outcome: Outcome
    headed: bool
    children: list[_Point] = field(default_factory=list)


def looks_like_tap(text: str) -> bool:
    """A `TAP version` line, or a plan and a test point."""
    lines = [line.strip() for line in text.splitlines()]
    if any(_VERSION.fullmatch(line) for line in lines):
        return True
    has_plan = any(_PLAN.fullmatch(line) for line in lines)
    return has_plan and any(_POINT.fullmatch(line) for line in lines)


def parse_tap(text: str) -> TestReport:
    """The tests of a TAP stream (empty when there are none)."""
    lines = _until_bail_out(_without_yaml(text.splitlines()))
    nested = any(line.lstrip().startswith(_SUBTEST) for line in lines) or any(
        line != line.lstrip() and _POINT.fullmatch(line.strip()) for line in lines
    )
    report = TestReport()
    if nested:
        for point in _tree(lines):
            _emit(point, [], report)
    elif _comment_first(lines):
        _tape(lines, report)
    else:
        for line in lines:
            found = _point(line.strip(), headed=False)
            if found is not None:
                report.add(found.name, found.outcome)
    return report


def _without_yaml(lines: list[str]) -> list[str]:
    """Drop YAML diagnostic blocks (`---` ... `...`, indented under their point)."""
    kept: list[str] = []
    block_indent: int | None = None
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        text = line.strip()
        if block_indent is not None:
            if text == "..." and indent == block_indent:
                block_indent = None
            continue
        if text == "---":
            block_indent = indent
            continue
        kept.append(line)
    return kept


def _until_bail_out(lines: list[str]) -> list[str]:
    for index, line in enumerate(lines):
        if line.strip().startswith("Bail out!"):
            return lines[:index]
    return lines


def _point(text: str, *, headed: bool, name: str | None = None) -> _Point | None:
    match = _POINT.fullmatch(text)
    if match is None:
        return None
    failed, description = bool(match.group(1)), match.group(2).strip()
    outcome: Outcome = "failed" if failed else "passed"
    directive = _DIRECTIVE.fullmatch(description)
    if directive is not None:
        description = directive.group(1).strip()
        if directive.group(2).upper() == "SKIP" or failed:
            outcome = "skipped"
    return _Point(name or description, outcome, headed)


def _tree(lines: list[str]) -> list[_Point]:
    """Points by indentation: a point's children are the points indented under it before it."""
    pending: dict[int, list[_Point]] = {}
    headers: dict[int, str] = {}
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        text = line.strip()
        if text.startswith(_SUBTEST):
            headers[indent] = text[len(_SUBTEST) :].strip()
            continue
        header = headers.pop(indent, None)
        point = _point(text, headed=header is not None, name=header)
        if point is None:
            if header is not None:
                headers[indent] = header
            continue
        for deeper in sorted(level for level in pending if level > indent):
            point.children.extend(pending.pop(deeper))
        pending.setdefault(indent, []).append(point)
    return [point for level in sorted(pending) for point in pending[level]]


def _is_test(point: _Point) -> bool:
    return point.headed or bool(point.children)


def _emit(point: _Point, parents: list[str], report: TestReport) -> None:
    if not _is_test(point):
        return
    chain = [*parents, point.name]
    inner = [child for child in point.children if _is_test(child)]
    if not inner:
        report.add(_JOIN.join(chain), point.outcome)
    for child in inner:
        _emit(child, chain, report)


def _is_comment(line: str) -> bool:
    return line.startswith("#") and not line.startswith(_SUBTEST)


def _comment_first(lines: list[str]) -> bool:
    """tape names a test in a comment before its first assertion; mocha's tap reporter prints
    comments only after its points (its counts)."""
    for line in lines:
        if _POINT.fullmatch(line.strip()):
            return False
        if _is_comment(line) and not _VERSION.fullmatch(line[1:].strip()):
            return True
    return False


def _before_plan(lines: list[str]) -> list[str]:
    """tape prints its plan at the end, then its counts as comments (`# tests 4`)."""
    for index, line in enumerate(lines):
        if _PLAN.fullmatch(line.strip()):
            points_after = any(_POINT.fullmatch(rest.strip()) for rest in lines[index:])
            return lines if points_after else lines[:index]
    return lines


def _tape(lines: list[str], report: TestReport) -> None:
    current: str | None = None
    outcomes: list[Outcome] = []
    skipped_by_name = False

    def close() -> None:
        if current is None:
            return
        outcome: Outcome = "passed"
        if skipped_by_name or (outcomes and all(o == "skipped" for o in outcomes)):
            outcome = "skipped"
        if "failed" in outcomes:
            outcome = "failed"
        report.add(current, outcome)

    for line in _before_plan(lines):
        if line != line.lstrip():
            continue  # diagnostics under an assertion
        if _is_comment(line):
            close()
            current, outcomes, skipped_by_name = line[1:].strip(), [], False
            skip = re.fullmatch(r"SKIP\s+(.*)", current)
            if skip is not None:
                current, skipped_by_name = skip.group(1).strip(), True
            continue
        point = _point(line.strip(), headed=False)
        if point is not None:
            outcomes.append(point.outcome)
    close()
