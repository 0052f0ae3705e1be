"""The rows of per-test verdicts: parsing a 50,000-test JUnit report (7a, 7b), suite runs per
candidate with reports and without (7c), and the checkout cost per candidate of one worktree
switched from the fix to its parent against two worktrees (7d)."""

from __future__ import annotations

import shutil
import tempfile
import time
import tracemalloc
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from common import GITGAUGE, Bench, BenchError, Row, Verification, git, measure, mib, ms, say
from repos import TEST_COMMAND

from gitgauge.core.junit import parse_reports

# The bench repository's suite, wrapped so that it also writes a one-test JUnit report to
# $GITGAUGE_JUNIT_XML: mining then judges per test (no third run of the parent's suite).
REPORTING_COMMAND = (
    f"{TEST_COMMAND}; status=$?; if [ $status = 0 ]; then r=; else r='<failure/>'; fi; "
    'printf \'<testsuite><testcase classname=\\"bench\\" name=\\"suite\\">%s</testcase>'
    '</testsuite>\' \\"$r\\" > \\"$GITGAUGE_JUNIT_XML\\"; exit $status'
)


def write_report(path: Path, tests: int) -> None:
    """A pytest-like report: one suite per 100 tests, 1% failures with a traceback, output."""
    with path.open("w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>')
        for number in range(tests):
            if number % 100 == 0:
                out.write("</testsuite>" if number else "")
                out.write('<testsuite name="pytest" tests="100" errors="0" failures="1">')
            body = (
                '<failure message="assert 1 == 2">Traceback ... ' + "x" * 400 + "</failure>"
                if number % 100 == 7
                else "<system-out>" + "captured output " * 8 + "</system-out>"
            )
            out.write(
                f'<testcase classname="tests.test_mod{number // 100}" '
                f'name="test_case[{number}-param]" time="0.001">{body}</testcase>'
            )
        out.write("</testsuite></testsuites>\n")


def _parse_whole_tree(path: Path) -> int:
    """The baseline: the whole document as a tree, then every test case read."""
    tree = ElementTree.parse(path)
    return sum(1 for _ in tree.iter("testcase"))


def _timed(function: object, path: Path, repeats: int) -> tuple[float, int]:
    """Best wall time of `repeats` calls, and the peak Python memory of one (tracemalloc)."""
    assert callable(function)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function(path)
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    function(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def parsing(bench: Bench) -> None:
    tests = bench.sizes.report_tests
    say(f"rows 7a/7b: parse a {tests:,}-test JUnit XML report")
    path = bench.root / "report.xml"
    write_report(path, tests)
    report = parse_reports([path])
    if len(report.outcomes) != tests:
        raise BenchError(f"parsed {len(report.outcomes)} of {tests} tests")
    ours, our_peak = _timed(lambda p: parse_reports([p]), path, max(3, bench.sizes.repeats))
    tree, tree_peak = _timed(_parse_whole_tree, path, max(3, bench.sizes.repeats))
    size = path.stat().st_size / 2**20
    bench.rows.append(
        Row(
            "7a",
            f"parse a {tests:,}-test JUnit report ({size:.0f} MiB)",
            f"{ours:.2f} s",
            f"ElementTree.parse, whole tree: {tree:.2f} s",
            f"{ours / tree:.2f}x",
            "< 1 s",
            "yes" if ours < 1.0 else "no",
        )
    )
    bench.rows.append(
        Row(
            "7b",
            "peak Python memory of that parse (tracemalloc)",
            mib(our_peak // 1024),
            f"whole tree: {mib(tree_peak // 1024)}",
            f"{our_peak / tree_peak:.2f}x",
            "bounded by tests",
        )
    )


def suite_runs(bench: Bench, verified: Verification) -> None:
    """Mine the verification repository with a suite that reports per test; count the runs."""
    repo = verified.repo
    candidates = bench.sizes.candidates
    counted: dict[int, int] = {}
    for reruns in (0, 1):
        say(f"row 7c: mine with per-test reports, mine.reruns: {reruns}")
        shutil.rmtree(repo / ".gitgauge", ignore_errors=True)
        config = repo / "gitgauge.yaml"
        saved = config.read_text(encoding="utf-8")
        config.write_text(
            f'testCommand: "{REPORTING_COMMAND}"\nmine:\n  reruns: {reruns}\n'
            # $BENCH_TEST_LOG lies outside the checkout, which a sandboxed test cannot write.
            "run:\n  sandbox: none\nenv:\n  BENCH_TEST_LOG: null\n",
            encoding="utf-8",
        )
        try:
            log, env = bench.test_log(f"pertest-{reruns}")
            result = measure([*GITGAUGE, "mine", "--last", "1000000"], cwd=repo, env=env)
        finally:
            config.write_text(saved, encoding="utf-8")
        tasks = list((repo / ".gitgauge" / "tasks").glob("*.yaml"))
        if len(tasks) != candidates or "F2P 1 / P2P 0" not in result.stdout:
            raise BenchError(
                f"per-test mine verified {len(tasks)} of {candidates}:\n{result.stdout[-2000:]}"
            )
        counted[reruns] = len(log.read_text().splitlines())
    shutil.rmtree(repo / ".gitgauge", ignore_errors=True)
    with_reports = counted[0] / candidates
    bench.rows.append(
        Row(
            "7c",
            "suite runs / candidate with per-test reports",
            f"{with_reports:.1f} ({counted[1] / candidates:.1f} with mine.reruns: 1)",
            "exit codes: 3.0 (row 2)",
            f"{with_reports / 3:.2f}x",
            "2 (+ reruns)",
            "yes" if counted[0] == 2 * candidates else "no",
        )
    )


def checkout_cost(bench: Bench, large: Verification) -> None:
    """The git work of one candidate: before, two worktrees (fix, parent); now, one worktree at
    the fix, cleaned and switched to the parent in place (the commands verify.py runs)."""
    repo = large.repo
    count = bench.sizes.large_candidates
    say(f"row 7d: checkout cost per candidate, {bench.sizes.large_tree_files:,}-file tree")
    fixes = git("log", "--format=%H", "--grep=^fix:", "HEAD", cwd=repo).split()[:count]
    holder = Path(tempfile.mkdtemp(prefix="switch-wt-", dir=bench.root))
    two = one = 0.0
    for n, fix in enumerate(fixes):
        parent = git("rev-parse", f"{fix}^", cwd=repo).strip()
        started = time.perf_counter()
        for m, commit in enumerate((fix, parent)):
            path = holder / f"two{n}-{m}"
            git("worktree", "add", "--detach", "--quiet", str(path), commit, cwd=repo)
            git("worktree", "remove", "--force", str(path), cwd=repo)
        two += time.perf_counter() - started
        path = holder / f"one{n}"
        started = time.perf_counter()
        git("worktree", "add", "--detach", "--quiet", str(path), fix, cwd=repo)
        git("clean", "-ffdxq", cwd=path)
        git("checkout", "--force", "--quiet", "--detach", parent, cwd=path)
        git("worktree", "remove", "--force", str(path), cwd=repo)
        one += time.perf_counter() - started
    shutil.rmtree(holder)
    two, one = two / len(fixes), one / len(fixes)
    bench.rows.append(
        Row(
            "7d",
            f"checkout cost / candidate, {bench.sizes.large_tree_files:,}-file tree",
            f"1 worktree + clean + checkout: {ms(one)}",
            f"2 worktrees: {ms(two)}",
            f"{one / two:.2f}x",
            "< 1x",
            "yes" if one < two else "no",
        )
    )
