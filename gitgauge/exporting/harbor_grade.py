"""The grader of an exported Harbor task that has per-test lists: `tests/grading/grade.py` in its
folder, run by `tests/test.sh` inside Harbor's container, where gitgauge is not installed.

It imports only the standard library and gitgauge's own report readers, `core/junit.py` and
`core/tap.py`, which the export copies beside it (`tests/grading/gitgauge/core/`, byte for byte):
the tests are named exactly as `gitgauge mine` named them, so the names of `tests.json` (the
task's FAIL_TO_PASS and PASS_TO_PASS, as mined) are looked up as they are. The report is read as
`core.suite.run_suite` reads it: the JUnit XML at the report path test.sh gave the suite
(`$GITGAUGE_JUNIT_XML`, pytest's `--junitxml`) and the files `tests.junit` matches in the
working directory; without any, the TAP the suite printed on stdout.

    python3 grade.py clean LISTS WORKDIR             delete the reports `tests.junit` matches
    python3 grade.py judge LISTS WORKDIR REPORT_DIR  exit 0: the reference solution's verdict

`judge` exits 0 when every FAIL_TO_PASS test passed and every PASS_TO_PASS test passed, as
gitgauge's "resolved and not regressed" and SWE-bench's resolved: a test missing from the report
(or skipped) has not passed, and a run without a usable report passes nothing. Tests in neither
list (failing at the fix too, flaky, not run at the parent) do not count.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from gitgauge.core.junit import ReportError, TestReport, parse_reports
from gitgauge.core.tap import looks_like_tap, parse_tap

REPORT_FILE = "report.xml"
"""The JUnit XML file in REPORT_DIR that test.sh pointed the suite at."""
STDOUT_FILE = "stdout"
"""What the suite printed on stdout, in REPORT_DIR (read for TAP without JUnit XML)."""
SHOWN = 20
"""How many failing names the verdict prints per list."""
_OPERANDS = {"clean": 2, "judge": 3}


def worktree_reports(lists: dict[str, object], workdir: Path) -> list[Path]:
    """The report files `tests.junit` (a glob relative to the working directory) matches."""
    pattern = lists.get("junit")
    if not isinstance(pattern, str) or not pattern:
        return []
    return sorted(path for path in workdir.glob(pattern) if path.is_file())


def read_report(lists: dict[str, object], workdir: Path, report_dir: Path) -> TestReport | str:
    """The run's per-test outcomes, or why there are none."""
    report_path = report_dir / REPORT_FILE
    files = ([report_path] if report_path.is_file() else []) + worktree_reports(lists, workdir)
    if files:
        try:
            report = parse_reports(files)
        except ReportError as error:
            return f"unreadable JUnit XML report: {error}"
        return report if report.outcomes else "the JUnit XML report lists no tests"
    try:
        text = (report_dir / STDOUT_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if looks_like_tap(text):
        report = parse_tap(text)
        if report.outcomes:
            return report
    return "testCommand wrote no JUnit XML report and printed no TAP"


def not_passed(names: Sequence[str], report: TestReport) -> list[str]:
    """`name (outcome)` of each test in `names` that did not pass."""
    return [
        f"{name} ({report.outcomes.get(name, 'missing from the report')})"
        for name in names
        if not report.passed(name)
    ]


def judge(lists: dict[str, object], workdir: Path, report_dir: Path) -> bool:
    """Print the verdict; True when every FAIL_TO_PASS and PASS_TO_PASS test passed."""
    report = read_report(lists, workdir, report_dir)
    if isinstance(report, str):
        print(f"gitgauge grading: reward 0: {report}")
        return False
    fail_to_pass = [str(name) for name in _names(lists, "failToPass")]
    pass_to_pass = [str(name) for name in _names(lists, "passToPass")]
    failed = not_passed(fail_to_pass, report)
    broken = not_passed(pass_to_pass, report)
    print(
        f"gitgauge grading: FAIL_TO_PASS {len(fail_to_pass) - len(failed)} of "
        f"{len(fail_to_pass)} pass, PASS_TO_PASS {len(pass_to_pass) - len(broken)} of "
        f"{len(pass_to_pass)} pass ({len(report.outcomes)} tests in the report)"
    )
    for title, names in (("FAIL_TO_PASS not passing", failed), ("PASS_TO_PASS broken", broken)):
        for name in names[:SHOWN]:
            print(f"  {title}: {name}")
        if len(names) > SHOWN:
            print(f"  {title}: {len(names) - SHOWN} more")
    return not failed and not broken


def _names(lists: dict[str, object], key: str) -> list[object]:
    names = lists.get(key)
    if not isinstance(names, list):
        raise SystemExit(f"grade.py: {key} is not a list of test names")
    return names


def main(argv: Sequence[str]) -> int:
    if not argv or _OPERANDS.get(argv[0]) != len(argv) - 1:
        print(__doc__, file=sys.stderr)
        return 2
    lists = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    workdir = Path(argv[2])
    if argv[0] == "clean":
        for path in worktree_reports(lists, workdir):
            path.unlink()
        return 0
    return 0 if judge(lists, workdir, Path(argv[3])) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
