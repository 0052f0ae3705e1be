"""The detected testCommand run once at HEAD, exactly as `mine` runs it (gitgauge's own checkout,
`worktree.link`, the sandbox: `mining.trial`, the door `gitgauge doctor` uses too), and
`timeouts.test` from how long it took."""

from __future__ import annotations

import math

from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.schema import RepoConfig
from gitgauge.core.text import plural
from gitgauge.core.worktree import Warn
from gitgauge.init.records import Measured
from gitgauge.mining.sandbox import mining_sandbox
from gitgauge.mining.telling import telling_line
from gitgauge.mining.trial import trial_run

TIMEOUT_FACTOR = 10
"""A suite's run may take this many times the measured one (a loaded machine, `mine -j`)."""
MIN_TEST_TIMEOUT_MS = 60_000
MAX_TIMEOUT_MS = 86_400_000
"""The schema's limit: a day."""
ROUNDING_MS = 10_000


def suite_timeout_ms(seconds: float) -> int:
    """`timeouts.test` for a suite that took `seconds` at HEAD: ten times that, rounded up to
    10 s, at least a minute and at most a day."""
    scaled = math.ceil(seconds * TIMEOUT_FACTOR * 1000 / ROUNDING_MS) * ROUNDING_MS
    return min(MAX_TIMEOUT_MS, max(MIN_TEST_TIMEOUT_MS, scaled))


def timeout_reason(measured: Measured, milliseconds: int) -> str:
    floor = " (at least 60 s)" if milliseconds == MIN_TEST_TIMEOUT_MS else ""
    return (
        f"{TIMEOUT_FACTOR} x the {measured.seconds:.1f} s run at HEAD ({measured.commit[:8]}), "
        f"rounded up{floor}; milliseconds"
    )


def measure(repo: Repository, config: RepoConfig, *, warn: Warn) -> Measured | str:
    """The suite's run at HEAD, or why it could not be run (no commit, the sandbox refused)."""
    head = repo.head_sha()
    if head is None:
        return "no commit yet: nothing to run at HEAD (commit, then `gitgauge init --detect`)"
    try:
        sandbox = mining_sandbox(repo, config, warn=warn)
    except GitGaugeError as error:
        return f"the sandbox refuses this setup: {error}"
    trial = trial_run(repo, config, head, sandbox=sandbox, warn=warn, imports=False)
    if trial.setup is not None and not trial.setup.ok:
        result = trial.setup.result
        return f"setupCommand fails at HEAD: {trial.setup.how}: {telling_line(result) or ''}"
    assert trial.suite is not None
    suite = trial.suite
    result = suite.result
    tests = passed = None
    if suite.report is not None:
        tests = len(suite.report.outcomes)
        passed = sum(1 for outcome in suite.report.outcomes.values() if outcome == "passed")
    problem = None
    if result.failed_to_start:
        problem = f"did not start (exit {result.exit_code}): {telling_line(result) or ''}".strip()
    elif result.timed_out:
        problem = f"timed out after {config.timeouts.test} ms (timeouts.test in {CONFIG_FILE})"
    elif passed == 0 or (tests is None and not result.ok):
        said = telling_line(result) or "(no output)"
        problem = f"exit {result.exit_code}, no test passed: {said}"
    source = {"junit": "JUnit XML", "tap": "TAP on stdout"}.get(suite.source or "")
    finished = not (result.failed_to_start or result.timed_out)
    return Measured(
        head, result.seconds, result.exit_code, tests, passed, source, finished, problem
    )


def measured_line(measured: Measured) -> str:
    """`12 tests ran, 12 passed (JUnit XML), exit 0, 1.3 s`."""
    if measured.tests is None:
        counted = "no per-test report"
    else:
        counted = (
            f"{plural(measured.tests, 'test')} ran, {measured.passed} passed ({measured.report})"
        )
    return f"{counted}, exit {measured.exit_code}, {measured.seconds:.1f} s"
