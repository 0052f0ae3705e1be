"""JUnit XML parsing and the report plumbing of one suite run, on real files and processes:
the shapes runners write, and every bad report ending in a fallback, never a wrong verdict."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitgauge.core.junit import ReportError, TestReport, parse_reports
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import (
    EMPTY_TAP,
    NO_REPORT,
    SUITE_CRASHED,
    report_env,
    run_suite,
    stop_early_warning,
)
from gitgauge.mining import pertest

NESTED = """<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuites name="outer">
    <testsuite name="pytest" tests="5">
      <testcase classname="tests.test_a" name="test_ok"><system-out>noise</system-out></testcase>
      <testcase classname="tests.test_a" name="test_bad"><failure>trace</failure></testcase>
      <testcase classname="tests.test_a" name="test_err"><error message="boom"/></testcase>
      <testcase classname="tests.test_a" name="test_skip"><skipped/></testcase>
      <testcase classname="tests.test_a" name="test_param[1-a b]"/>
    </testsuite>
  </testsuites>
</testsuites>
"""


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def test_outcomes_from_nested_suites_and_several_files(tmp_path: Path) -> None:
    first = write(tmp_path / "a.xml", NESTED)
    second = write(
        tmp_path / "b.xml",
        '<testsuite><testcase name="standalone"/>'
        '<testcase classname="pkg.Case" name="t&#233;st &lt;odd&gt;"/></testsuite>',
    )
    report = parse_reports([first, second])
    assert report.outcomes == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a::test_err": "error",
        "tests.test_a::test_skip": "skipped",
        "tests.test_a::test_param[1-a b]": "passed",
        "standalone": "passed",
        "pkg.Case::tést <odd>": "passed",
    }
    assert report.files == 2 and not report.duplicates


def test_duplicate_names_keep_the_worst_outcome_and_are_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path / "dup.xml",
        '<testsuite><testcase name="t"/><testcase name="t"><failure/></testcase>'
        '<testcase name="t"/></testsuite>',
    )
    report = parse_reports([path])
    assert report.outcomes == {"t": "failed"}
    assert report.duplicates == {"t"}
    # The same name in two files (two runners, or one report written twice) is a duplicate too.
    again = write(tmp_path / "again.xml", '<testsuite><testcase name="u"/></testsuite>')
    twice = parse_reports([again, again])
    assert twice.outcomes == {"u": "passed"} and twice.duplicates == {"u"}


def test_a_name_with_newlines_stays_one_line(tmp_path: Path) -> None:
    path = write(tmp_path / "nl.xml", '<testsuite><testcase name="a&#10;b&#13;c"/></testsuite>')
    assert list(parse_reports([path]).outcomes) == ["a\\nb\\rc"]


def test_bytes_that_are_not_utf8_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = write(
        tmp_path / "latin.xml",
        b'<testsuite><testcase name="ok"><failure/></testcase><testcase name="caf\xe9"/>'
        b"</testsuite>",
    )
    report = parse_reports([path])
    assert report.outcomes == {"ok": "failed", "caf\ufffd": "passed"}
    assert not report.duplicates  # the second reading starts afresh


@pytest.mark.parametrize(
    "text",
    [
        "<testsuite><testcase name='a'/>",  # truncated: the runner was killed mid-write
        "not xml at all",
        "",
        "<testsuite><testcase name='a'></testsuite>",
    ],
)
def test_malformed_or_truncated_reports_are_errors(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "bad.xml", text)
    with pytest.raises(ReportError, match=r"bad\.xml: not valid JUnit XML"):
        parse_reports([path])


def test_a_report_with_100000_tests_parses(tmp_path: Path) -> None:
    path = tmp_path / "big.xml"
    with path.open("w", encoding="utf-8") as out:
        out.write("<testsuites><testsuite>")
        for number in range(100_000):
            failure = "<failure>x</failure>" if number % 1000 == 0 else ""
            out.write(f'<testcase classname="m" name="t{number}">{failure}</testcase>')
        out.write("</testsuite></testsuites>")
    report = parse_reports([path])
    assert len(report.outcomes) == 100_000
    assert sum(1 for outcome in report.outcomes.values() if outcome == "failed") == 100


# -- one suite run: where the report goes, and what is never read --


def config(command: str, **extra: object) -> RepoConfig:
    return RepoConfig.model_validate(
        {"testCommand": command, "timeouts": {"test": 20_000}, **extra}
    )


def env_with(script: str) -> dict[str, str]:
    return dict(os.environ, SCRIPT=script)


def test_the_report_path_reaches_pytest_and_other_runners(tmp_path: Path) -> None:
    env = report_env({"PYTEST_ADDOPTS": "-p no:cacheprovider"}, tmp_path / "r.xml")
    assert env["PYTEST_ADDOPTS"] == (
        f"-p no:cacheprovider --junitxml={tmp_path / 'r.xml'} --continue-on-collection-errors"
    )
    assert env["GITGAUGE_JUNIT_XML"] == str(tmp_path / "r.xml")


def test_a_report_written_through_the_variable_is_read(tmp_path: Path) -> None:
    xml = '<testsuite><testcase name="a"/><testcase name="b"><failure/></testcase></testsuite>'
    script = (
        f"import os, sys; open(os.environ['GITGAUGE_JUNIT_XML'], 'w').write({xml!r}); sys.exit(1)"
    )
    run = run_suite(config(f'"{sys.executable}" -c "$SCRIPT"'), tmp_path, env=env_with(script))
    assert run.result.exit_code == 1
    assert run.report is not None and run.report.outcomes == {"a": "passed", "b": "failed"}


def test_no_report_or_an_empty_one_falls_back(tmp_path: Path) -> None:
    none = run_suite(config("true"), tmp_path, env=dict(os.environ))
    assert none.report is None and none.problem == "testCommand wrote no JUnit XML report"
    script = "import os; open(os.environ['GITGAUGE_JUNIT_XML'], 'w').write('<testsuites/>')"
    empty = run_suite(config(f'"{sys.executable}" -c "$SCRIPT"'), tmp_path, env=env_with(script))
    assert empty.report is None and empty.problem == "the JUnit XML report lists no tests"


def test_a_pytest_that_stops_before_any_test_is_said_to_crash(tmp_path: Path) -> None:
    """A conftest that does not import: pytest exits 4 and writes no report. That is a crash,
    not a runner without a report option; an exit 4 that is not pytest's is not called one."""
    (tmp_path / "conftest.py").write_text("import gitgauge_no_such_module\n", encoding="utf-8")
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
    command = f'"{sys.executable}" -m pytest -q -p no:cacheprovider'
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    crashed = run_suite(config(command), tmp_path, env=env)
    assert crashed.result.exit_code == 4, crashed.result.output_tail()
    assert crashed.report is None and crashed.problem == SUITE_CRASHED
    # The interpreter without pytest: the same, whatever the exit code.
    missing = run_suite(
        config("echo '/usr/bin/python3: No module named pytest' >&2; exit 1"), tmp_path, env=env
    )
    assert missing.problem == SUITE_CRASHED
    other = run_suite(config("echo 'make: *** [test] Error 4'; exit 4"), tmp_path, env=env)
    assert other.report is None and other.problem == NO_REPORT


def test_tap_that_lists_no_test_says_tap(tmp_path: Path) -> None:
    run = run_suite(config("printf 'TAP version 13\\n1..0\\n'; exit 1"), tmp_path, env={})
    assert run.report is None and run.problem == EMPTY_TAP
    assert EMPTY_TAP == "the TAP testCommand printed lists no tests"  # no word of JUnit


def test_a_stale_report_in_the_worktree_is_never_read(tmp_path: Path) -> None:
    reports = tmp_path / "target" / "reports"
    reports.mkdir(parents=True)
    stale = write(reports / "TEST-old.xml", '<testsuite><testcase name="old"/></testsuite>')
    settings = config("exit 1", tests={"junit": "target/reports/*.xml"})
    run = run_suite(settings, tmp_path, env=dict(os.environ))
    assert not stale.exists()
    assert run.report is None and run.problem == "testCommand wrote no JUnit XML report"
    fresh = "mkdir -p target/reports && echo '<testsuite><testcase name=\"new\"/></testsuite>' > "
    run = run_suite(
        config(fresh + "target/reports/TEST-new.xml", tests={"junit": "target/reports/*.xml"}),
        tmp_path,
        env=dict(os.environ),
    )
    assert run.report is not None and list(run.report.outcomes) == ["new"]


def test_a_suite_that_writes_its_report_then_hangs_times_out(tmp_path: Path) -> None:
    xml = '<testsuite><testcase name="a"/></testsuite>'
    script = (
        f"import os, time; open(os.environ['GITGAUGE_JUNIT_XML'], 'w').write({xml!r}); "
        "time.sleep(60)"
    )
    settings = RepoConfig.model_validate(
        {"testCommand": f'"{sys.executable}" -c "$SCRIPT"', "timeouts": {"test": 1000}}
    )
    run = run_suite(settings, tmp_path, env=env_with(script))
    assert run.result.timed_out
    assert run.report is None  # the timeout wins: the suite did not finish


@pytest.mark.parametrize(
    ("command", "warned"),
    [
        ("pytest -q", False),
        ("pytest -x", True),
        ("python -m pytest -q --maxfail=2", True),
        ("pytest -vx", True),
        ("pytest -rxs", False),
        ("pytest --exitfirst tests", True),
        ("npm test -x", False),
    ],
)
def test_stopping_at_the_first_failure_is_warned_about(command: str, warned: bool) -> None:
    assert (stop_early_warning(command) is not None) is warned


def report_of(outcomes: dict[str, str]) -> TestReport:
    report = TestReport()
    for name, outcome in outcomes.items():
        report.add(name, outcome)  # type: ignore[arg-type]
    return report


def owning(*names: str) -> pertest.Owners:
    """Owners whose fix's own tests are `names` (written in its one test file)."""
    text = "\n".join(names)
    return pertest.Owners(["t.js"], tree=list, read=lambda path: text)


def test_fail_to_pass_pass_to_pass_flaky_and_broken_on_both_sides() -> None:
    fix = {"new": "passed", "old": "passed", "env": "failed", "flip": "passed"}
    parent = {"old": "passed", "env": "failed", "flip": "passed"}  # "new" did not import
    split = pertest.split(
        [report_of(fix), report_of({**fix, "flip": "failed"})],
        [report_of(parent), report_of(parent)],
        owners=owning("new"),
    )
    assert split.fail_to_pass == ["new"]
    assert split.pass_to_pass == ["old"]
    assert split.failing_both == ["env"]
    assert split.flaky == ["flip"]
    assert split.no_test_passed_at_parent is False


def test_a_parent_where_no_test_passes_is_flagged() -> None:
    split = pertest.split(
        [report_of({"a": "passed", "b": "passed"})], [report_of({"a": "error"})], owners=owning("b")
    )
    assert split.fail_to_pass == ["a", "b"]
    assert split.no_test_passed_at_parent is True


def owners(test_files: list[str], tree: list[str], **locations: str) -> pertest.Owners:
    texts = {"test/words.test.js": "test('counts words', () => {});\n"}
    return pertest.Owners(
        test_files, tree=lambda: tree, read=texts.get, locations=dict(locations.items())
    )


def test_pytest_names_belong_to_the_module_their_classname_is() -> None:
    tree = ["tests/test_sign.py", "tests/test_calc.py", "tests/__init__.py"]
    sign = owners(["tests/test_sign.py", "src/calc.py"], tree)
    assert sign.owned("tests.test_sign::test_sign")
    assert sign.owned("tests.test_sign.TestSign::test_zero[0-0]")
    assert sign.owned("tests.test_sign")  # pytest's collection error of the module
    assert not sign.owned("tests.test_calc::test_sign")
    assert not sign.owned("tests.test_calc.TestAdd::test_add")
    # pytest run from a subdirectory names modules from there.
    nested = owners(["python/tests/test_sign.py"], ["python/tests/test_sign.py"])
    assert nested.owned("tests.test_sign::test_sign")
    java = ["src/test/java/com/acme/FooTest.java", "src/test/java/com/acme/BarTest.java"]
    assert owners(java[:1], java).owned("com.acme.FooTest::testFoo")
    assert not owners(java[:1], java).owned("com.acme.BarTest::testFoo")


def test_a_file_attribute_or_a_path_classname_names_the_file() -> None:
    words = owners(["test/words.test.js"], [])
    assert words.owned("Words::splits") is False  # not written in the file, no file named
    located = owners(["test/words.test.js"], [], **{"Words::splits": "/wt/x/test/words.test.js"})
    assert located.owned("Words::splits")
    elsewhere = owners(["test/words.test.js"], [], **{"Words::splits": "test/other.test.js"})
    assert not elsewhere.owned("Words::splits")
    assert words.owned("test/words.test.js::splits")  # vitest: the classname is the file
    assert not words.owned("test/other.test.js::counts words")


def test_names_without_a_file_belong_where_they_are_written() -> None:
    words = owners(["test/words.test.js"], ["test/test.js"])
    assert words.owned("test::counts words")  # node's runner: classname `test`, no file
    assert not words.owned("test::ignores spaces")
    assert words.owned("counts words")  # a TAP name
    assert not words.owned("test/other.js > counts words")  # a TAP name under its file
