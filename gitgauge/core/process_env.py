"""The environment of gitgauge's child processes (`core/process.py` starts them): the parent's
without git's redirections, and the agent CLIs found on its PATH."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from gitgauge.core.errors import AdapterError

# Git reads these from the environment before its own discovery: inherited from a parent that
# runs inside git (a hook, `git rebase -x`), they would point a worktree's git at another repo.
_GIT_ENV_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_REPLACE_REF_BASE",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
)


def find_executable(
    env: Mapping[str, str], *, program: str, override: str, install_hint: str
) -> str:
    """An agent CLI: `$override` when set (a bare name is looked up on PATH like a command,
    anything with a slash is a path), else `program` on env's PATH. Raises `AdapterError` saying
    how to fix it when there is none or it cannot be executed."""
    chosen = env.get(override, "")
    path = env.get("PATH", os.defpath)
    if chosen:
        found = shutil.which(chosen, path=path) if os.sep not in chosen else None
        candidate = Path(found) if found else Path(chosen).absolute()
        if not candidate.exists():
            raise AdapterError(
                f"{override}={chosen}: no such file; point {override} at the {program} "
                f"executable, or unset it to use `{program}` from PATH"
            )
        if not candidate.is_file() or not os.access(candidate, os.X_OK):
            raise AdapterError(
                f"{override}={chosen}: not an executable file; make it executable "
                f"(chmod +x) or point {override} at the {program} executable"
            )
        return str(candidate)
    found = shutil.which(program, path=path)
    if found is None:
        raise AdapterError(
            f"the {program} CLI was not found on PATH: install it ({install_hint}) "
            f"or set {override} to its path"
        )
    return found


def clean_env(*, cwd: Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent environment without git redirections, with PWD set to `cwd`."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_VARIABLES}
    env.pop("OLDPWD", None)
    if cwd is not None:
        env["PWD"] = str(cwd)
    else:
        env.pop("PWD", None)
    if extra:
        env.update(extra)
    return env
