"""`gitgauge init --env`: an environment for the suite from what the project declares, outside the
user's working tree. Python: a virtualenv in `.gitgauge/env` (git-ignored, linked into every
checkout), made with uv when it is on PATH, else `python -m venv` and pip, from an interpreter
that meets `requires-python`; the project's dependencies and test requirements installed, never
the project itself. JavaScript: the package manager's clean install (`npm ci`) of `node_modules`,
which every checkout links."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitGaugeError
from gitgauge.init.declared import Declared, declared, satisfies
from gitgauge.init.files import ProjectFiles
from gitgauge.init.python import ENV_DIR
from gitgauge.mining.telling import telling_line

INSTALL_SECONDS = 1800
PROBE_SECONDS = 30
CANDIDATES = ("python3", "python", *(f"python3.{minor}" for minor in range(20, 7, -1)))
"""Interpreters tried for `requires-python`, in order: the usual names first, then the newest."""
VERSION = "import sys; print(*sys.version_info[:3])"
INSTALLS = {
    "npm": ["npm", "ci"],
    "yarn": ["yarn", "install", "--frozen-lockfile"],
    "pnpm": ["pnpm", "install", "--frozen-lockfile"],
    "bun": ["bun", "install", "--frozen-lockfile"],
}


class EnvironmentFailed(GitGaugeError):
    """`init --env` could not make the suite's environment."""


@dataclass(frozen=True)
class MadeEnvironment:
    path: str
    """Relative to the repository: `.gitgauge/env`, `node_modules`."""
    tool: str
    """uv, pip, or the package manager."""
    lines: tuple[str, ...]
    """What was chosen and done, each with where it came from."""


def make_python_environment(
    files: ProjectFiles, *, env: Mapping[str, str], say: Callable[[str], None]
) -> MadeEnvironment:
    root = files.root
    wanted = declared(files)
    target = root / ENV_DIR
    uv = shutil.which("uv", path=env.get("PATH", ""))
    tool = "uv" if uv else "pip"
    lines: list[str] = []
    python = target / "bin" / "python"
    if python.exists():
        lines.append(f"{ENV_DIR}: kept (it exists); installing into it")
    else:
        base, why = _base_interpreter(wanted, env, root)
        lines.append(f"interpreter: {base}  ({why})")
        say(f"creating {ENV_DIR} with {tool} ({base})...")
        argv = (
            [uv, "venv", "--python", base, str(target)] if uv else [base, "-m", "venv", str(target)]
        )
        _run(argv, root, env, f"creating {ENV_DIR}")
    shown = ", ".join(
        f"{'-r ' if r.is_file else ''}{r.text} ({r.source})" for r in wanted.requirements
    )
    lines.append(f"installed: {shown}")
    say(f"installing {len(wanted.requirements)} requirement(s) into {ENV_DIR} with {tool}...")
    args = wanted.install_args()
    if uv:
        argv = [uv, "pip", "install", "--python", str(python), *args]
    else:
        argv = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *args]
    _run(argv, root, env, f"installing into {ENV_DIR}")
    return MadeEnvironment(ENV_DIR, tool, tuple(lines))


def _base_interpreter(wanted: Declared, env: Mapping[str, str], root: Path) -> tuple[str, str]:
    """(the first interpreter on PATH that meets `requires-python`, why it was chosen)."""
    path = env.get("PATH", "")
    seen: set[str] = set()
    tried: list[str] = []
    for name in CANDIDATES:
        found = shutil.which(name, path=path)
        if found is None or found in seen:
            continue
        seen.add(found)
        result = process.run(
            [found, "-c", VERSION], cwd=root, env=dict(env), timeout_seconds=PROBE_SECONDS
        )
        parts = result.stdout_tail.split() if result.ok else []
        if len(parts) != 3 or not all(part.isdigit() for part in parts):
            continue
        version = tuple(int(part) for part in parts)
        shown = ".".join(parts)
        if wanted.requires_python is None:
            return (
                found,
                f"the {name} on PATH, Python {shown}; the project names no requires-python",
            )
        if satisfies(version, wanted.requires_python):
            return found, (
                f"Python {shown} meets requires-python {wanted.requires_python} "
                f"({wanted.requires_source})"
            )
        tried.append(f"{name} {shown}")
    raise EnvironmentFailed(
        f"requires-python {wanted.requires_python} ({wanted.requires_source}): no python on PATH "
        f"meets it (found: {', '.join(tried) or 'none'}); install one (uv python install, pyenv, "
        "your package manager) and run `gitgauge init --env` again"
    )


def make_js_environment(
    files: ProjectFiles, manager: str, *, env: Mapping[str, str], say: Callable[[str], None]
) -> MadeEnvironment:
    root = files.root
    if (root / "node_modules").exists():
        return MadeEnvironment(
            "node_modules",
            manager,
            ("node_modules: kept (it exists; delete it for a clean install)",),
        )
    argv = list(INSTALLS[manager])
    if manager == "npm" and not any(
        files.has(n) for n in ("package-lock.json", "npm-shrinkwrap.json")
    ):
        argv = ["npm", "install"]  # `npm ci` needs a lock file
    binary = shutil.which(argv[0], path=env.get("PATH", ""))
    if binary is None:
        raise EnvironmentFailed(
            f"{argv[0]} is not on PATH: install it (the lock file asks for {manager}), then run "
            "`gitgauge init --env` again"
        )
    say(f"running `{' '.join(argv)}` in {root}...")
    _run([binary, *argv[1:]], root, env, f"`{' '.join(argv)}`")
    return MadeEnvironment(
        "node_modules", manager, (f"installed node_modules: `{' '.join(argv)}`",)
    )


def _run(argv: list[str], root: Path, env: Mapping[str, str], what: str) -> None:
    result = process.run(argv, cwd=root, env=dict(env), timeout_seconds=INSTALL_SECONDS)
    if result.ok:
        return
    why = "timed out" if result.timed_out else f"exit {result.exit_code}"
    said = telling_line(result) or result.start_error or "(no output)"
    raise EnvironmentFailed(
        f"{what} failed ({why}): {said}; fix the requirement it names (or make the environment "
        "yourself, then `gitgauge init --detect`)"
    )
