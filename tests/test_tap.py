"""TAP read as per-test outcomes: the shapes tape, node-tap, node's test runner and mocha's tap
reporter print (outputs of the real programs, trimmed), named by test and never by assertion
number; output that is not TAP is never read as TAP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import run_suite
from gitgauge.core.tap import looks_like_tap, parse_tap

TAPE = """\
TAP version 13
# counts words
ok 1 should be strictly equal
ok 2 should be strictly equal
# ignores extra spaces
not ok 3 two words
  ---
    operator: equal
    expected: 3
    actual:   2
  ...
# skipped
# SKIP later
# todo
not ok 4 not yet # TODO

1..4
# tests 4
# pass  2
# fail  1
"""
NODE_TAP_14 = """\
TAP version 14
# Subtest: test/words.js
    # Subtest: counts words
        ok 1 - should be equal
        ok 2 - should be equal
        1..2
    ok 1 - counts words # time=2ms
    # Subtest: ignores extra spaces
        not ok 1 - should be equal
          ---
          found: 3
          wanted: 2
          ...
        1..1
    not ok 2 - ignores extra spaces # time=1ms
    1..2
not ok 1 - test/words.js # time=300ms
1..1
"""
NODE_RUNNER = """\
TAP version 13
# Subtest: count
    # Subtest: counts words
    ok 1 - counts words
      ---
      duration_ms: 1.27
      ...
    # Subtest: fails
    not ok 2 - fails
      ---
      location: '/w/test/desc.test.js:2:57'
      error: 'no'
      ...
    # Subtest: skipped
    ok 3 - skipped # SKIP
    1..3
not ok 1 - count
  ---
  type: 'suite'
  ...
# Subtest: top level
ok 2 - top level
1..2
# tests 4
"""
MOCHA_TAP = """\
ok 1 count counts words
not ok 2 count ignores extra spaces
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
# tests 2
# pass 1
# fail 1
1..2
"""


@pytest.mark.parametrize(
    ("tap", "outcomes"),
    [
        pytest.param(
            TAPE,
            {
                "counts words": "passed",
                "ignores extra spaces": "failed",
                "skipped": "passed",
                "later": "skipped",
                "todo": "skipped",
            },
            id="tape-tests-are-named-by-their-comment",
        ),
        pytest.param(
            NODE_TAP_14,
            {
                "test/words.js > counts words": "passed",
                "test/words.js > ignores extra spaces": "failed",
            },
            id="node-tap-subtests-are-tests-and-their-points-assertions",
        ),
        pytest.param(
            NODE_RUNNER,
            {
                "count > counts words": "passed",
                "count > fails": "failed",
                "count > skipped": "skipped",
                "top level": "passed",
            },
            id="node-runner-suites-name-their-tests",
        ),
        pytest.param(
            MOCHA_TAP,
            {"count counts words": "passed", "count ignores extra spaces": "failed"},
            id="mocha-tap-points-are-tests",
        ),
        pytest.param(
            "TAP version 13\n# a\nok 1 fine\nBail out! database gone\n# b\nok 2 fine\n",
            {"a": "passed"},
            id="bail-out-ends-the-stream",
        ),
    ],
)
def test_each_programs_tap_is_read_as_outcomes_by_test(tap: str, outcomes: dict[str, str]) -> None:
    assert parse_tap(tap).outcomes == outcomes


def test_output_that_is_not_tap_is_not_read_as_tap() -> None:
    pytest_output = "..F\nFAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed, 2 passed\n"
    go_output = "ok  \tgithub.com/acme/pkg\t0.012s\n"
    assert not looks_like_tap(pytest_output)
    assert not looks_like_tap(go_output)
    assert looks_like_tap(TAPE) and looks_like_tap(MOCHA_TAP)


def test_a_suite_printing_tap_and_no_junit_gets_a_tap_report(tmp_path: Path) -> None:
    script = tmp_path / "suite.py"
    script.write_text(f"print({TAPE!r})\nraise SystemExit(1)\n", encoding="utf-8")
    config = RepoConfig.model_validate({"testCommand": f'"{sys.executable}" {script}'})
    run = run_suite(config, tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert run.source == "tap" and run.report is not None
    assert run.report.outcomes["ignores extra spaces"] == "failed"
    junit = '<testsuite><testcase name="from junit"/></testsuite>'
    script.write_text(
        f"import os\nopen(os.environ['GITGAUGE_JUNIT_XML'], 'w').write({junit!r})\n"
        f"print({TAPE!r})\n",
        encoding="utf-8",
    )
    run = run_suite(config, tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert run.source == "junit" and run.report is not None  # a JUnit report wins
    assert list(run.report.outcomes) == ["from junit"]
