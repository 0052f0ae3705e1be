"""A trial of the user's commands at one commit, exactly as mining runs them (`gitgauge doctor`):
gitgauge's own checkout of the commit, `worktree.link` linked in, `setupCommand`, then
`testCommand` in the sandbox mining uses, with its per-test report; and, for a Python suite,
which files the tests imported, so doctor can say whether they import the project from the
checkout or from the user's worktree.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import SetupRun, SuiteRun
from gitgauge.core.worktree import Warn

# One runner of the commands for mining and this trial: the trial must see what mining sees.
from gitgauge.mining.verify import _Commands

IMPORTED = re.compile(r"^# (?:code object from '?(/.+?\.py)'?|\S+\.pyc matches (/.+?\.py))$")
"""How `PYTHONVERBOSE=1` names a module's source file as it is imported."""


@dataclass(frozen=True)
class ImportedFiles:
    """The Python source files a suite imported, by where they lie."""

    checkout: list[str] = field(default_factory=list)
    """Paths relative to the checkout: the commit's own files."""
    worktree: list[str] = field(default_factory=list)
    """Paths relative to the user's repository: their working files, not the commit's."""


@dataclass(frozen=True)
class Trial:
    commit: str
    setup: SetupRun | None
    """None without a setupCommand."""
    suite: SuiteRun | None
    """None when setup failed."""
    imported: ImportedFiles | None
    """None when the suite did not run or is not Python (nothing was imported)."""
    checkout: Path
    """Where it ran (gone by now)."""


def trial_run(
    repo: Repository,
    config: RepoConfig,
    commit: str,
    *,
    sandbox: Sandbox | None,
    warn: Warn,
    imports: bool = True,
) -> Trial:
    """Set up and run the suite at `commit` as `mine` would; with `imports`, run it once more
    with `PYTHONVERBOSE=1` (pytest only collects then) to see what it imported."""
    with CheckoutPool(owner_repository=repo.root) as pool, pool.slot(0) as checkout:
        commands = _Commands(config, {"GITGAUGE_JOB": "0"}, warn, source_root=repo.root)
        commands.place(repo, checkout, sandbox)
        commands.reset(commit)
        env = commands._env(checkout.path)
        setup = commands.commands.setup(checkout.path, env=env)
        if setup is not None and not setup.ok:
            return Trial(commit, setup, None, None, checkout.path)
        suite = commands.test(checkout.path)
        imported = None
        if imports and not (suite.result.failed_to_start or suite.result.timed_out):
            imported = _imported_files(commands, checkout.path, repo, config)
        return Trial(commit, setup, suite, imported, checkout.path)


def _imported_files(
    commands: _Commands, worktree: Path, repo: Repository, config: RepoConfig
) -> ImportedFiles | None:
    env = commands._env(worktree)
    env["PYTHONVERBOSE"] = "1"
    # pytest imports the tests, and so the project, while collecting: no need to run them;
    # --capture=no, or it swallows what the interpreter says while importing.
    earlier = env.get("PYTEST_ADDOPTS", "").strip()
    env["PYTEST_ADDOPTS"] = f"{earlier} --collect-only -q --capture=no".strip()
    logs = Path(tempfile.mkdtemp(prefix="gitgauge-doctor-"))
    try:
        commands.commands.suite(
            worktree, env=env, mounts=commands.mounts, log_dir=logs, name="imports", report=False
        )
        text = "\n".join(
            (logs / name).read_text(encoding="utf-8", errors="replace")
            for name in ("imports.stderr", "imports.stdout")
            if (logs / name).is_file()
        )
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    root = repo.root.resolve()
    linked = [(root / name).resolve() for name in config.worktree.link]
    here = worktree.resolve()
    checkout: list[str] = []
    users: list[str] = []
    for line in text.splitlines():
        found = IMPORTED.match(line)
        if not found:
            continue
        path = Path(found.group(1) or found.group(2))
        if path.is_relative_to(here):
            checkout.append(path.relative_to(here).as_posix())
        elif path.is_relative_to(root) and not any(path.is_relative_to(d) for d in linked):
            users.append(path.relative_to(root).as_posix())
    if not checkout and not users:
        return None
    return ImportedFiles(list(dict.fromkeys(checkout)), list(dict.fromkeys(users)))
