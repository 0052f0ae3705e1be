"""What the trial of `setupCommand` and `testCommand` at HEAD says (`mining.trial`, run as mine
runs them): whether the suite started, how many tests ran and passed, whether the per-test report
arrived and how many tests it named, a crash of the runner itself, a command that fails after
its tests all passed, what each candidate will cost mine, and where the tests import the
project from."""

from __future__ import annotations

import json
import shlex

from gitgauge.core.git import Repository
from gitgauge.core.junit import TestReport
from gitgauge.core.paths import is_test_file
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import EMPTY_REPORT, NO_REPORT_HINT, SUITE_CRASHED
from gitgauge.core.text import plural
from gitgauge.doctor.findings import Found
from gitgauge.mining.telling import telling_line
from gitgauge.mining.trial import Trial

NOT_FOUND = "ModuleNotFoundError: No module named "
NPM_TEST = (["npm", "test"], ["npm", "t"], ["npm", "run", "test"], ["npm", "run-script", "test"])
"""The commands that make npm run package.json's `pretest` and `posttest` around `test`."""
AFTER_TESTS = (
    "something after the tests fails (npm's posttest? a linter?): make testCommand run only "
    "the tests"
)


def trial_findings(
    repo: Repository, config: RepoConfig, trial: Trial, sandbox: Sandbox | None, found: Found
) -> None:
    where = f"at HEAD ({trial.commit[:8]}), in a checkout of gitgauge's own" + (
        ", in the sandbox" if sandbox is not None else ""
    )
    if trial.setup is not None and not trial.setup.ok:
        found(
            "FAIL",
            f"setupCommand {where}: {trial.setup.how}",
            [telling_line(trial.setup.result) or "(no output)"],
        )
        return
    if trial.setup is not None:
        found("ok", f"setupCommand ran {where} ({trial.setup.result.seconds:.1f} s)")
    suite = trial.suite
    assert suite is not None
    result = suite.result
    if result.failed_to_start:
        found(
            "FAIL",
            f"testCommand did not start {where}: exit {result.exit_code}",
            [
                telling_line(result) or result.start_error or "(no output)",
                "testCommand runs through the shell from the checkout's root: is the program "
                "installed, and on PATH (or named by a path that exists in every checkout)?",
            ],
        )
        return
    if result.timed_out:
        found(
            "FAIL",
            f"testCommand timed out {where} after {config.timeouts.test / 1000:g} s "
            f"(timeouts.test: {config.timeouts.test} ms)",
        )
        return
    hints = _import_hints(repo, trial)
    if suite.report is not None:
        _per_test(repo, config, trial, suite.report, where, hints, found)
    elif not _whole_suite(config, trial, where, hints, found):
        return
    _imports(trial, found)


def runs_per_candidate(config: RepoConfig, *, per_test: bool) -> int:
    """How many times mine runs the suite for a candidate it verifies (`mining/verify.py`): the
    decisive run at the fix and its `mine.reruns` repeats, the same at the parent with the
    fix's tests laid over it, and, without per-test reports, the parent's own suite once more
    (`baseSuitePasses`). A candidate rejected at the fix stops sooner."""
    runs = 2 * (1 + config.mine.reruns)
    return runs if per_test else runs + 1


def cost_line(config: RepoConfig, seconds: float, *, per_test: bool) -> str:
    """`each run took 27.1 s; mine runs the suite up to 4 times per candidate (...)`."""
    runs = runs_per_candidate(config, per_test=per_test)
    reruns = config.mine.reruns
    how = f"{1 + reruns} at the fix and {1 + reruns} at its parent, mine.reruns: {reruns}" + (
        "" if per_test else "; once more for the parent's own suite without per-test reports"
    )
    setup = ", plus setupCommand twice" if config.setupCommand else ""
    return (
        f"this run took {seconds:.1f} s; mine runs the suite up to {runs} times per candidate "
        f"({how}){setup}: about {_duration(seconds * runs)} per candidate"
    )


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _per_test(
    repo: Repository,
    config: RepoConfig,
    trial: Trial,
    report: TestReport,
    where: str,
    hints: list[str],
    found: Found,
) -> None:
    """The trial's findings when per-test reports arrived: how many tests ran and passed, a
    command that fails although its tests pass, the report itself."""
    assert trial.suite is not None
    result = trial.suite.result
    outcomes = list(report.outcomes.values())
    ran = len(outcomes)
    passed = outcomes.count("passed")
    skipped = outcomes.count("skipped")
    failing = ran - passed - skipped
    text = (
        f"testCommand {where}: {plural(ran, 'test')} ran, {passed} passed"
        + (f", {skipped} skipped" if skipped else "")
        + f" ({result.seconds:.1f} s, exit {result.exit_code})"
    )
    cost = cost_line(config, result.seconds, per_test=True)
    if passed == 0:
        found("FAIL", text, [*hints, "mining needs tests that pass at each fix"])
    elif failing:
        found(
            "warn",
            text,
            [f"{failing} do not pass at HEAD: per-test verdicts mine around them", *hints, cost],
        )
    elif not result.ok:
        # Mining works (verdicts are per test), but every run pays for what else the command
        # does, and a commit where that part fails before the tests gives no verdict at all.
        found("warn", text, [AFTER_TESTS, *_npm_scripts(repo, config, trial), *hints, cost])
    else:
        found("ok", text, [cost])
    source = "JUnit XML" if trial.suite.source == "junit" else "TAP on stdout"
    found(
        "ok",
        f"per-test reports arrive ({source}, naming {plural(ran, 'test')}): fixes are judged "
        "test by test",
    )


def _npm_scripts(repo: Repository, config: RepoConfig, trial: Trial) -> list[str]:
    """What `npm test` runs besides the test script (package.json's `pretest`, `posttest`), and
    the command that runs the test script alone; nothing for another command."""
    try:
        words = shlex.split(config.testCommand)
    except ValueError:
        return []
    if "--ignore-scripts" in words or not any(words[: len(form)] == form for form in NPM_TEST):
        return []
    blob = repo.read_blob(trial.commit, "package.json")
    try:
        scripts = json.loads(blob.data.decode("utf-8")).get("scripts") if blob else None
    except (ValueError, AttributeError):
        scripts = None
    if not isinstance(scripts, dict):
        return []
    around = [
        f"{name} ({scripts[name]!r})"
        for name in ("pretest", "posttest")
        if isinstance(scripts.get(name), str)
    ]
    if not around:
        return []
    return [
        f"`npm test` also runs package.json's {' and '.join(around)}: "
        f"`testCommand: npm test --ignore-scripts` runs the test script "
        f"({scripts.get('test')!r}) alone"
    ]


def _whole_suite(
    config: RepoConfig, trial: Trial, where: str, hints: list[str], found: Found
) -> bool:
    """The trial's findings without per-test reports (the whole suite's exit code); False when
    the suite ran no test at all (nothing more to say of it)."""
    assert trial.suite is not None
    suite = trial.suite
    result = suite.result
    problem = suite.problem or "no per-test report"
    if problem == EMPTY_REPORT or result.exit_code == 5:
        found(
            "FAIL",
            f"testCommand ran no test {where} (exit {result.exit_code}: {problem})",
            [
                *hints,
                "check where the runner looks for tests (a path, a pattern, a config "
                "file the checkout lacks)",
            ],
        )
        return False
    if problem == SUITE_CRASHED:
        # The runner stopped before any test: what it printed says why, not the report option.
        found(
            "FAIL",
            f"testCommand crashed before running any test {where} (exit {result.exit_code})",
            [
                telling_line(result) or "(no output)",
                *hints,
                "fix what it says (a conftest or test module that does not import, a usage "
                "error, the runner not installed); the per-test report needs no option",
            ],
        )
        return False
    cost = cost_line(config, result.seconds, per_test=False)
    if result.ok:
        found("ok", f"testCommand passes {where} ({result.seconds:.1f} s, exit 0)", [cost])
    else:
        found(
            "FAIL",
            f"testCommand fails {where}: exit {result.exit_code}",
            [
                telling_line(result) or "(no output)",
                *hints,
                "without per-test reports the whole suite must pass at each fix",
            ],
        )
    found("warn", f"no per-test reports ({problem}): {NO_REPORT_HINT}")
    return True


def _import_hints(repo: Repository, trial: Trial) -> list[str]:
    """What to do when the suite could not import a module the repository holds."""
    assert trial.suite is not None
    output = trial.suite.result.output_tail(16_000)
    for line in output.splitlines():
        at = line.find(NOT_FOUND)
        if at < 0:
            continue
        module = line[at + len(NOT_FOUND) :].strip().strip("'\"").split(".")[0]
        for layout in ("src", "lib", "python"):
            if (repo.root / layout / module).is_dir() or (
                repo.root / layout / f"{module}.py"
            ).is_file():
                return [
                    f"the tests cannot import {module!r}, which is in {layout}/: a checkout holds "
                    f"only the commit's files, so set `PYTHONPATH={layout}` in testCommand "
                    f"(`PYTHONPATH={layout} python -m pytest -q`), or install the checkout in "
                    "setupCommand"
                ]
        return [
            f"the tests cannot import {module!r}: install it for the interpreter testCommand "
            "runs, or name that interpreter (`.venv/bin/python -m pytest`) and link its "
            "directory with worktree.link"
        ]
    return []


def _imports(trial: Trial, found: Found) -> None:
    imported = trial.imported
    if imported is None:
        found("info", "no Python source was imported from your project: not a Python suite?")
        return
    own_checkout = [path for path in imported.checkout if not is_test_file(path)]
    own_worktree = [path for path in imported.worktree if not is_test_file(path)]
    if own_worktree:
        found(
            "FAIL",
            f"the tests import your worktree's files, not the checkout's: "
            f"{', '.join(own_worktree[:3])}",
            [
                "every fix would be tested against today's code: an editable install or an "
                "absolute PYTHONPATH leads there. Use a relative path (`PYTHONPATH=src`), or "
                "install the checkout itself in setupCommand",
            ],
        )
        return
    shown = own_checkout[:3] or imported.checkout[:3]
    found("ok", f"the tests import the project from the checkout ({', '.join(shown)})")
