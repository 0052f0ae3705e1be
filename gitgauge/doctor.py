"""`gitgauge doctor`: would `gitgauge mine` work here, and if not, why, in plain lines.

Each check runs what mining runs, the way mining runs it: the config through its loader, the
linked directories through `core.links`, the sandbox through mining's policy
(`mining.mine.mining_sandbox`), and `testCommand` at HEAD in a checkout of gitgauge's own, in
that sandbox (`mining.trial`). The agent CLIs are looked for (binary, login file or key) without
running them: nothing here talks to an API.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitgauge.core import links
from gitgauge.core.claude import find_claude_binary
from gitgauge.core.config import CONFIG_FILE, load_repo_config
from gitgauge.core.environment import is_secret_name
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.git.mergetree import MIN_GIT_VERSION, git_version
from gitgauge.core.junit import TestReport
from gitgauge.core.paths import is_test_file
from gitgauge.core.sandbox import Sandbox, probe
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import EMPTY_REPORT, NO_REPORT_HINT, SuiteRun, UserCommands
from gitgauge.mining.mine import mining_sandbox
from gitgauge.mining.telling import telling_line
from gitgauge.mining.trial import Trial, trial_run
from gitgauge.running.adapters.codex import find_codex_binary

Status = Literal["ok", "warn", "FAIL", "info"]
NOT_FOUND = "ModuleNotFoundError: No module named "


@dataclass(frozen=True)
class Finding:
    status: Status
    text: str
    hints: list[str] = field(default_factory=list)
    """Lines saying what to do, printed under the finding."""

    def lines(self) -> Iterator[str]:
        yield f"{self.status:<5} {self.text}"
        for hint in self.hints:
            yield f"      {hint}"


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)

    @property
    def mine_would_work(self) -> bool:
        return not any(finding.status == "FAIL" for finding in self.findings)


def diagnose(
    cwd: Path,
    *,
    env: Mapping[str, str],
    on_finding: Callable[[Finding], None] = lambda finding: None,
) -> Diagnosis:
    """Every check, in the order a first `mine` meets them; `on_finding` sees each as it comes
    (the test run takes as long as the suite)."""
    diagnosis = Diagnosis()

    def found(status: Status, text: str, hints: list[str] | None = None) -> None:
        finding = Finding(status, text, hints or [])
        diagnosis.findings.append(finding)
        on_finding(finding)

    try:
        repo = Repository(cwd)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return diagnosis
    version = git_version(repo.root)
    numbers = version.split()[2].split(".")[:2] if len(version.split()) > 2 else []
    too_old = all(n.isdigit() for n in numbers) and tuple(map(int, numbers)) < MIN_GIT_VERSION
    found(
        "warn" if too_old else "ok",
        version + (" (mine --merges needs 2.38 or later)" if too_old else ""),
    )
    head = repo.head_sha()
    if head is None:
        found("FAIL", f"{repo.root} has no commits yet: there is no history to mine")
        return diagnosis
    try:
        config = load_repo_config(repo.root)
    except GitGaugeError as error:
        found("FAIL", str(error))
        _agents(env, found)
        return diagnosis
    found("ok", f"{CONFIG_FILE} loads: testCommand {config.testCommand!r}")
    if not _environment(config, env, found):
        _agents(env, found)
        return diagnosis
    if not _links(repo, config, found):
        _agents(env, found)
        return diagnosis
    sandboxed, sandbox_ok = _sandbox(repo, config, env, found)
    if sandbox_ok:
        trial = trial_run(repo, config, head, sandbox=sandboxed, warn=lambda message: None)
        _trial(repo, config, trial, sandboxed, found)
    _agents(env, found)
    return diagnosis


def _environment(config: RepoConfig, env: Mapping[str, str], found: Callable[..., None]) -> bool:
    """Which of this environment's variables the suite will not see (at mine time and at
    grading alike), named so that a suite that needs one can be given it."""
    try:
        commands = UserCommands(config, environ=env)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return False
    withheld = commands.suite_environment(env).withheld
    if not withheld:
        found("ok", "environment: the suite sees every variable set here")
        return True
    secret = [name for name in withheld if is_secret_name(name)]
    # All of them: the one a failing suite needs may be any (names only, never values).
    shown = ", ".join(withheld)
    found(
        "info",
        f"environment: the suite does not see {len(withheld)} variable"
        f"{'' if len(withheld) == 1 else 's'} set here: {shown}"
        + (f" ({len(secret)} of them look secret)" if secret else ""),
        [
            f"a suite that needs one: add it to `env:` in {CONFIG_FILE} "
            '(`env: {NAME: "${NAME}"}`); docs/guide/running.md says what is passed'
        ],
    )
    return True


def _links(repo: Repository, config: RepoConfig, found: Callable[..., None]) -> bool:
    if not config.worktree.link:
        found("ok", "worktree.link: none (each checkout has only the commit's files)")
        return True
    redirected: list[str] = []
    try:
        links.announce(
            repo.root, config.worktree.link, tracked=repo.is_tracked, warn=redirected.append
        )
    except GitGaugeError as error:
        found("FAIL", str(error))
        return False
    missing = [name for name in config.worktree.link if not (repo.root / name).is_dir()]
    present = [name for name in config.worktree.link if name not in missing]
    if present:
        found("ok", f"worktree.link: {', '.join(present)} linked read-only into every checkout")
    for name in missing:
        found("warn", f"worktree.link: {name} is not a directory of your checkout: not linked")
    for line in redirected:
        found("info", line.removeprefix("worktree.link: "))
    return True


def _sandbox(
    repo: Repository, config: RepoConfig, env: Mapping[str, str], found: Callable[..., None]
) -> tuple[Sandbox | None, bool]:
    """(the sandbox mining's test runs get, whether mining can go on)."""
    mode = config.run.sandbox
    if mode == "none":
        found("info", "run.sandbox: none: tests and agents run unsandboxed, as your user")
        return None, True
    binary, reason = probe(env, network=config.run.sandbox_network)
    if binary is None:
        if mode == "bwrap":
            found("FAIL", f"run.sandbox: bwrap, and the sandbox cannot run: {reason}")
            return None, False
        found(
            "warn",
            f"no sandbox: {reason}",
            [
                "mine and run go on unsandboxed (run.sandbox: auto): agents can then read your "
                "repository and write anywhere you can"
            ],
        )
        return None, True
    try:
        sandbox = mining_sandbox(repo, config, warn=lambda message: None)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return None, False
    if sandbox is None:  # auto, and the trial call failed after all
        found("warn", "no sandbox: bubblewrap's trial call failed; mine goes on unsandboxed")
        return None, True
    exposed = sorted({str(path) for path in (*sandbox.exposed_dirs, *sandbox.exposed_files)})
    shown = ", ".join(exposed[:4]) + (f" and {len(exposed) - 4} more" if len(exposed) > 4 else "")
    network = "shared" if sandbox.network else "cut (run.sandbox_network: false)"
    found(
        "ok",
        f"sandbox: bubblewrap works ({binary}); mine's test runs and agents run in it",
        [
            f"hidden: your repository ({repo.root}) and its git directory",
            "read-only: the system directories, PATH and interpreters"
            + (f" ({shown})" if shown else ""),
            *(
                [f"read-only: worktree.link ({', '.join(config.worktree.link)})"]
                if config.worktree.link
                else []
            ),
            "$HOME: its entries read-only, new files thrown away; /tmp: private and empty",
            f"network: {network}",
        ],
    )
    return sandbox, True


def _trial(
    repo: Repository,
    config: RepoConfig,
    trial: Trial,
    sandbox: Sandbox | None,
    found: Callable[..., None],
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
        _per_test(suite, suite.report, where, hints, found)
    elif not _whole_suite(suite, where, hints, found):
        return
    _imports(trial, found)


def _per_test(
    suite: SuiteRun, report: TestReport, where: str, hints: list[str], found: Callable[..., None]
) -> None:
    """The trial's findings when per-test reports arrived: how many tests ran and passed."""
    result = suite.result
    ran = len(report.outcomes)
    passed = sum(1 for outcome in report.outcomes.values() if outcome == "passed")
    failing = ran - passed
    text = (
        f"testCommand {where}: {ran} tests ran, {passed} passed "
        f"({result.seconds:.1f} s, exit {result.exit_code})"
    )
    if passed == 0:
        found("FAIL", text, [*hints, "mining needs tests that pass at each fix"])
    elif failing:
        found(
            "warn",
            text,
            [f"{failing} do not pass at HEAD: per-test verdicts mine around them", *hints],
        )
    else:
        found("ok", text)
    source = "JUnit XML" if suite.source == "junit" else "TAP on stdout"
    found("ok", f"per-test reports arrive ({source}): fixes are judged test by test")


def _whole_suite(suite: SuiteRun, where: str, hints: list[str], found: Callable[..., None]) -> bool:
    """The trial's findings without per-test reports (the whole suite's exit code); False when
    the suite ran no test at all (nothing more to say of it)."""
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
    if result.ok:
        found("ok", f"testCommand passes {where} ({result.seconds:.1f} s, exit 0)")
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
    hints: list[str] = []
    for line in output.splitlines():
        at = line.find(NOT_FOUND)
        if at < 0:
            continue
        module = line[at + len(NOT_FOUND) :].strip().strip("'\"").split(".")[0]
        for layout in ("src", "lib", "python"):
            if (repo.root / layout / module).is_dir() or (
                repo.root / layout / f"{module}.py"
            ).is_file():
                hints.append(
                    f"the tests cannot import {module!r}, which is in {layout}/: a checkout holds "
                    f"only the commit's files, so set `PYTHONPATH={layout}` in testCommand "
                    f"(`PYTHONPATH={layout} python -m pytest -q`), or install the checkout in "
                    "setupCommand"
                )
                return hints
        hints.append(
            f"the tests cannot import {module!r}: install it for the interpreter testCommand "
            "runs, or name that interpreter (`.venv/bin/python -m pytest`) and link its "
            "directory with worktree.link"
        )
        return hints
    return hints


def _imports(trial: Trial, found: Callable[..., None]) -> None:
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


def _agents(env: Mapping[str, str], found: Callable[..., None]) -> None:
    """Each agent CLI: its binary and its login (a file or a key), never a call to its API.
    Not needed to mine: absent ones are warnings."""
    home = Path(env.get("HOME", "~")).expanduser()
    try:
        claude = find_claude_binary(env)
    except GitGaugeError:
        found(
            "warn",
            "claude-code: no `claude` on PATH (GITGAUGE_CLAUDE_BIN names another)",
            [
                "needed only to run configs with adapter: claude-code "
                "(npm install -g @anthropic-ai/claude-code)"
            ],
        )
    else:
        config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        keys = [
            k
            for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
            if env.get(k)
        ]
        credentials = config_dir / ".credentials.json"
        if keys:
            found("ok", f"claude-code: {claude}, key in {keys[0]}")
        elif credentials.is_file():
            found("ok", f"claude-code: {claude}, logged in ({credentials})")
        elif sys.platform == "darwin":
            found(
                "info",
                f"claude-code: {claude}; a login may be in the keychain, which "
                "gitgauge cannot hand to per-pair config copies: set ANTHROPIC_API_KEY",
            )
        else:
            found(
                "warn",
                f"claude-code: {claude}, not logged in (no ANTHROPIC_API_KEY, no {credentials})",
                ["run `claude` once and log in, or set ANTHROPIC_API_KEY"],
            )
    try:
        codex = find_codex_binary(env)
    except GitGaugeError:
        found("info", "codex: no `codex` on PATH (needed only for adapter: codex)")
        return
    codex_home = Path(env.get("CODEX_HOME") or home / ".codex")
    keys = [k for k in ("OPENAI_API_KEY", "CODEX_API_KEY") if env.get(k)]
    if keys:
        found("ok", f"codex: {codex}, key in {keys[0]}")
    elif (codex_home / "auth.json").is_file():
        found("ok", f"codex: {codex}, logged in ({codex_home / 'auth.json'})")
    else:
        found(
            "warn",
            f"codex: {codex}, not logged in (no OPENAI_API_KEY, no {codex_home / 'auth.json'})",
            ["run `codex login`, or set OPENAI_API_KEY"],
        )
