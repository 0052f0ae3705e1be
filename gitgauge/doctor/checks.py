"""The checks before any command runs: git's version, the environment the suite will not see,
the `worktree.link` directories and the sandbox mining's test runs get."""

from __future__ import annotations

from collections.abc import Mapping

from gitgauge.core import links
from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.environment import is_secret_name
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.git.mergetree import MIN_GIT_VERSION, git_version
from gitgauge.core.sandbox import Sandbox, probe
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import UserCommands
from gitgauge.doctor.findings import Found
from gitgauge.mining.sandbox import mining_sandbox


def git_version_found(repo: Repository, found: Found) -> None:
    """git's version, and whether it is too old for `mine --merges`."""
    version = git_version(repo.root)
    numbers = version.split()[2].split(".")[:2] if len(version.split()) > 2 else []
    too_old = all(n.isdigit() for n in numbers) and tuple(map(int, numbers)) < MIN_GIT_VERSION
    found(
        "warn" if too_old else "ok",
        version + (" (mine --merges needs 2.38 or later)" if too_old else ""),
    )


def environment(config: RepoConfig, env: Mapping[str, str], found: Found) -> bool:
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


def linked(repo: Repository, config: RepoConfig, found: Found) -> bool:
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


def sandbox(
    repo: Repository, config: RepoConfig, env: Mapping[str, str], found: Found
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
        made = mining_sandbox(repo, config, warn=lambda message: None)
    except GitGaugeError as error:
        found("FAIL", str(error))
        return None, False
    if made is None:  # auto, and the trial call failed after all
        found("warn", "no sandbox: bubblewrap's trial call failed; mine goes on unsandboxed")
        return None, True
    exposed = sorted({str(path) for path in (*made.exposed_dirs, *made.exposed_files)})
    shown = ", ".join(exposed[:4]) + (f" and {len(exposed) - 4} more" if len(exposed) > 4 else "")
    network = "shared" if made.network else "cut (run.sandbox_network: false)"
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
    return made, True
