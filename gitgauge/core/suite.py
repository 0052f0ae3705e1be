"""The one runner of the user's commands, `setupCommand` and `testCommand`, wherever they run:
at mine time, for a pair, for the base suite, for merge scoring, on a Ray node, in the sandbox
or not (`UserCommands`). It owns the timeout (and how a timeout is said), the process group, the
sandbox's mounts for a test run and the JUnit report, and what a missing report means.
`tests/test_layering.py` fails when anything else starts them.

Per test: every run points the suite at a fresh report file outside the worktree.

Every run points the suite at a fresh report file outside the worktree: `PYTEST_ADDOPTS` gets
`--junitxml=<file> --continue-on-collection-errors` appended (so an unchanged `pytest -q` reports
per test, and a module that does not import hides no other) and
`GITGAUGE_JUNIT_XML` holds the same path for runners that take one. Reports a suite writes inside
the worktree (`tests.junit`, a glob) are deleted before the run, so a stale one is never read.
Without a JUnit report, the TAP a suite prints on stdout is read instead (`core.tap`: tape,
node-tap, node's runner). No usable report, or a run that timed out or was interrupted: the run
has no report, and the caller uses the exit code. A pytest run that crashed before running any
test (a conftest that does not import, a usage error, pytest missing) says so
(`SUITE_CRASHED`), so its warning points at the crash and not at the report option.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from gitgauge.core import process
from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.environment import SuiteEnvironment, for_suite, interpolate
from gitgauge.core.junit import ReportError, TestReport, parse_reports
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.tap import looks_like_tap, parse_tap

REPORT_ENV = "GITGAUGE_JUNIT_XML"
NO_REPORT_HINT = (
    "verdicts fall back to the exit code; see docs/guide/per-test-verdicts.md for the "
    "report option of your test runner"
)
EMPTY_REPORT = "the JUnit XML report lists no tests"
EMPTY_TAP = "the TAP testCommand printed lists no tests"
NO_REPORT = "testCommand wrote no JUnit XML report"
SUITE_CRASHED = "the suite crashed before running tests"
"""A run with no report whose output (or pytest's exit code 2, 3 or 4) says pytest stopped
before any test: what it printed says why, not the report option."""
_CRASH_EXITS = (2, 3, 4)
"""pytest's interrupted, internal error and usage error (a conftest that does not import)."""
_CRASH_LINES = re.compile(
    r"ImportError while loading conftest|ImportError while importing test module|"
    r"ERROR collecting|^INTERNALERROR>|^ERROR: usage:|pytest: error:|No module named pytest",
    re.M,
)
"""What pytest prints when it stops before running tests (or when it is not there at all)."""
_STOP_EARLY_FLAGS = ("-x", "--exitfirst", "--maxfail", "--sw", "--stepwise")


@dataclass(frozen=True)
class SuiteRun:
    result: process.CommandResult
    report: TestReport | None
    """Per-test outcomes; None when the run gave no usable report (or timed out)."""
    problem: str | None = None
    """Why a finished run has no usable report."""
    source: Literal["junit", "tap"] | None = None
    """Where `report` came from: JUnit XML files, or the TAP the suite printed on stdout."""


def time_limit(milliseconds: int, key: str) -> str:
    """`0.3 s (timeouts.test: 300 ms)`: the limit in seconds, and as written, with its unit."""
    return f"{milliseconds / 1000:g} s ({key}: {milliseconds} ms)"


@dataclass(frozen=True)
class SetupRun:
    result: process.CommandResult
    limit_ms: int

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def how(self) -> str:
        """`exit 3`, or `timed out after 600 s (timeouts.setup: 600000 ms)`."""
        if self.result.timed_out:
            return f"timed out after {time_limit(self.limit_ms, 'timeouts.setup')}"
        return f"exit {self.result.exit_code}"

    @property
    def failure(self) -> str:
        """One line for a result: how it failed, and the end of what it said."""
        tail = self.result.output_tail(300).strip()
        return f"setupCommand {self.how}" + (f": {tail}" if tail else "")


class UserCommands:
    """`setupCommand` and `testCommand` of `config`, test runs in `sandbox` (setup is the
    user's own command on their own code, before any agent: it runs outside).

    A test run's environment is `core.environment`'s allowlist of the one it is given, plus the
    project's `env` (gitgauge.yaml) and `agent_env` (an agent config's `env`, at grading): the
    suite runs the agent's code, which may print whatever it sees. `setupCommand` gets the whole
    environment given, plus the project's `env`: it is the user's own command at `base`."""

    def __init__(
        self,
        config: RepoConfig,
        *,
        sandbox: Sandbox | None = None,
        agent_env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox
        self.agent_env = dict(agent_env or {})
        source = os.environ if environ is None else environ
        self.project_env = {
            name: source[name]
            if value is None
            else interpolate(value, key=f"env: {name}", source=CONFIG_FILE, environ=source)
            for name, value in config.env.items()
            if value is not None or name in source
        }

    def unsandboxed(self) -> UserCommands:
        return UserCommands(self.config, agent_env=self.agent_env)

    def for_agent(self, agent_env: Mapping[str, str]) -> UserCommands:
        """These commands for the pairs of one agent config, whose `env` the suite gets too."""
        return UserCommands(self.config, sandbox=self.sandbox, agent_env=agent_env)

    def suite_environment(self, env: Mapping[str, str]) -> SuiteEnvironment:
        """What a test run gets of `env`; the project's `env` wins over an agent config's, so
        every config's work is graded with the same variables."""
        return for_suite(env, named={**self.agent_env, **self.project_env})

    def setup(
        self, workdir: Path, *, env: Mapping[str, str], log_dir: Path | None = None
    ) -> SetupRun | None:
        """Run setupCommand in `workdir` (its output in `log_dir`); None without one."""
        if not self.config.setupCommand:
            return None
        result = process.run(
            self.config.setupCommand,
            cwd=workdir,
            timeout_seconds=self.config.timeouts.setup / 1000,
            env={**env, **self.project_env},
            stdout_path=log_dir / "setup.stdout" if log_dir else None,
            stderr_path=log_dir / "setup.stderr" if log_dir else None,
        )
        return SetupRun(result, self.config.timeouts.setup)

    def suite(
        self,
        workdir: Path,
        *,
        env: Mapping[str, str],
        mounts: Mounts | None = None,
        log_dir: Path | None = None,
        name: str = "test",
        report: bool = True,
    ) -> SuiteRun:
        """Run testCommand in `workdir`, in the sandbox with `mounts` (default: the workdir
        alone), its output in `log_dir` as `<name>.stdout`/`.stderr`. `report`: read per-test
        outcomes (kept in `log_dir` as `<name>-report.xml`); without, the exit code alone."""
        stdout = log_dir / f"{name}.stdout" if log_dir else None
        stderr = log_dir / f"{name}.stderr" if log_dir else None
        env = self.suite_environment(env).env
        holder = Path(tempfile.mkdtemp(prefix="gitgauge-junit-"))
        try:
            wrapper: list[str] = []
            if self.sandbox is not None:
                mounts = mounts or Mounts(workspace=workdir)
                # The sandbox hides gitgauge's temporary directory and the repository (with the
                # run's logs): the report goes to a directory of its own, mounted writable.
                wrapper = self.sandbox.argv(
                    replace(mounts, writable=(*mounts.writable, holder)), agent=False
                )
            if not report:
                return SuiteRun(
                    process.run(
                        self.config.testCommand,
                        cwd=workdir,
                        timeout_seconds=self.config.timeouts.test / 1000,
                        env=env,
                        stdout_path=stdout,
                        stderr_path=stderr,
                        wrapper=wrapper,
                    ),
                    None,
                )
            run = run_suite(
                self.config,
                workdir,
                env=env,
                report_path=holder / "report.xml",
                stdout_path=stdout,
                stderr_path=stderr,
                wrapper=wrapper,
            )
            if log_dir is not None and (holder / "report.xml").is_file():
                shutil.copyfile(holder / "report.xml", log_dir / f"{name}-report.xml")
            return run
        finally:
            shutil.rmtree(holder, ignore_errors=True)


def run_suite(
    config: RepoConfig,
    worktree: Path,
    *,
    env: Mapping[str, str],
    report_path: Path | None = None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    wrapper: Sequence[str] = (),
) -> SuiteRun:
    """Run `testCommand` in `worktree` and read its JUnit report, else the TAP it printed.
    `report_path` (outside the worktree) keeps the report, e.g. in a run's logs; by default it
    goes to a temporary file, as stdout does without `stdout_path`."""
    holder: Path | None = None
    if report_path is None or stdout_path is None:
        holder = Path(tempfile.mkdtemp(prefix="gitgauge-junit-"))
        report_path = report_path or holder / "report.xml"
        stdout_path = stdout_path or holder / "stdout.txt"
    try:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.unlink(missing_ok=True)
        _delete_worktree_reports(config, worktree)
        result = process.run(
            config.testCommand,
            cwd=worktree,
            timeout_seconds=config.timeouts.test / 1000,
            env=report_env(env, report_path),
            stdout_path=stdout_path,
            stderr_path=stderr_path,
            wrapper=wrapper,
        )
        if result.timed_out or result.failed_to_start or process.is_cancelled():
            # Killed by our own Ctrl-C (in a worker thread): its missing report is no news.
            return SuiteRun(result, None)
        files = ([report_path] if report_path.is_file() else []) + _worktree_reports(
            config, worktree
        )
        if not files:
            return _from_tap(result, stdout_path, config.testCommand)
        try:
            report = parse_reports(files)
        except ReportError as error:
            return SuiteRun(result, None, f"unreadable JUnit XML report: {error}")
        if not report.outcomes:
            return SuiteRun(result, None, EMPTY_REPORT)
        return SuiteRun(result, report, source="junit")
    finally:
        if holder is not None:
            shutil.rmtree(holder, ignore_errors=True)


def _from_tap(result: process.CommandResult, stdout_path: Path, command: str) -> SuiteRun:
    """No JUnit XML: the tests of the TAP on stdout (tape, node-tap, node's runner), if any;
    else why there is no report (a crash of pytest's is said as one)."""
    try:
        text = stdout_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if looks_like_tap(text):
        report = parse_tap(text)
        if report.outcomes:
            return SuiteRun(result, report, source="tap")
        return SuiteRun(result, None, EMPTY_TAP)
    if crashed(result, command):
        return SuiteRun(result, None, SUITE_CRASHED)
    return SuiteRun(result, None, NO_REPORT)


def crashed(result: process.CommandResult, command: str) -> bool:
    """Whether a failed run that reported no test stopped before running any: pytest's crash
    lines in its output, or its exit code 2, 3 or 4 from a command that runs pytest."""
    if result.ok or result.exit_code is None:
        return False
    if _CRASH_LINES.search(result.output_tail(16_000)):
        return True
    return result.exit_code in _CRASH_EXITS and _runs_pytest(command)


def _runs_pytest(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any("pytest" in word or word == "py.test" for word in words)


def fallback_warning(problem: str) -> str:
    """The warning of a pair whose verdict falls back to its exit code: why, and what to do
    (the report option of the runner; for a crash, what the run printed)."""
    if problem == SUITE_CRASHED:
        return (
            f"{problem}: verdicts fall back to the exit code; the pair's test.stdout and "
            "test.stderr say why"
        )
    return f"{problem}: {NO_REPORT_HINT}"


def report_env(env: Mapping[str, str], report_path: Path) -> dict[str, str]:
    """`env` pointing pytest and `$GITGAUGE_JUNIT_XML` runners at `report_path`. pytest also
    runs the modules that import after one that does not (`--continue-on-collection-errors`):
    a new test module importing a name its parent lacks must not hide the parent's other tests."""
    out = dict(env)
    addopts = f"--junitxml={shlex.quote(str(report_path))} --continue-on-collection-errors"
    earlier = out.get("PYTEST_ADDOPTS", "").strip()
    out["PYTEST_ADDOPTS"] = f"{earlier} {addopts}" if earlier else addopts
    out[REPORT_ENV] = str(report_path)
    return out


def stop_early_warning(test_command: str) -> str | None:
    """A warning when a pytest command stops at the first failures: per-test verdicts need the
    whole suite (an unrelated failure would hide the tests after it)."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    if not _runs_pytest(test_command):
        return None
    for word in words:
        flag = word.split("=", 1)[0]
        if flag in _STOP_EARLY_FLAGS or _short_flags_have_x(flag):
            return (
                f"testCommand {test_command!r} stops early ({word}): per-test verdicts need the "
                "whole suite; drop it from testCommand in gitgauge.yaml"
            )
    return None


def _short_flags_have_x(word: str) -> bool:
    """`-x` among combined short flags (`-vx`), but not inside an option's value (`-rxs`)."""
    if not word.startswith("-") or word.startswith("--"):
        return False
    for letter in word[1:]:
        if letter == "x":
            return True
        if not letter.isalpha() or letter in "rkmpocW":  # these take a value
            return False
    return False


def _worktree_reports(config: RepoConfig, worktree: Path) -> list[Path]:
    pattern = config.tests.junit
    if not pattern:
        return []
    return sorted(path for path in worktree.glob(pattern) if path.is_file())


def _delete_worktree_reports(config: RepoConfig, worktree: Path) -> None:
    for path in _worktree_reports(config, worktree):
        path.unlink(missing_ok=True)
