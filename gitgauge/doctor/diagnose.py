"""Every check of `gitgauge doctor`, in the order a first `mine` meets them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gitgauge.core.config import CONFIG_FILE, load_repo_config
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.schema import RepoConfig
from gitgauge.doctor import checks
from gitgauge.doctor.agents import agents
from gitgauge.doctor.findings import Diagnosis, Finding, Found, Scope, Status
from gitgauge.doctor.interpreter import check_interpreters
from gitgauge.doctor.probe import probe_configs
from gitgauge.doctor.testrun import trial_findings
from gitgauge.mining.trial import trial_run


def diagnose(
    cwd: Path,
    *,
    env: Mapping[str, str],
    on_finding: Callable[[Finding], None] = lambda finding: None,
    agent_configs: Sequence[Path] = (),
    probe: bool = False,
) -> Diagnosis:
    """Every check, in the order a first `mine` meets them; `on_finding` sees each as it comes
    (the test run takes as long as the suite). `agent_configs`: checked as `run` checks them,
    and with `probe`, each agent called once."""
    diagnosis = Diagnosis()

    def reporter(scope: Scope) -> Found:
        def found(status: Status, text: str, hints: list[str] | None = None) -> None:
            finding = Finding(status, text, hints or [], scope)
            diagnosis.findings.append(finding)
            on_finding(finding)

        return found

    found = reporter("mine")
    try:
        repo = Repository(cwd)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return diagnosis
    config = _mine_checks(repo, env, found)
    agents(env, found)
    if agent_configs:
        if config is None:
            found(
                "info",
                f"agent configs are checked with the default settings: {CONFIG_FILE} does not load",
            )
        probe_configs(
            repo,
            config or RepoConfig(testCommand="true"),
            list(agent_configs),
            call=probe,
            found=reporter("agent"),
        )
    return diagnosis


def _mine_checks(repo: Repository, env: Mapping[str, str], found: Found) -> RepoConfig | None:
    """What `mine` needs, up to the trial of the suite at HEAD; the config, when it loads."""
    checks.git_version_found(repo, found)
    head = repo.head_sha()
    if head is None:
        found("FAIL", f"{repo.root} has no commits yet: there is no history to mine")
        return None
    try:
        config = load_repo_config(repo.root)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return None
    found("ok", f"{CONFIG_FILE} loads: testCommand {config.testCommand!r}")
    if not checks.environment(config, env, found) or not checks.linked(repo, config, found):
        return config
    sandbox, sandbox_ok = checks.sandbox(repo, config, env, found)
    if not sandbox_ok:
        return config
    check_interpreters(repo, config, head, sandbox, found)
    trial = trial_run(repo, config, head, sandbox=sandbox, warn=lambda message: None)
    trial_findings(repo, config, trial, sandbox, found)
    return config
