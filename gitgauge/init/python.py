"""What a Python project's files say about running its tests: the runner (pytest, or unittest run
through pytest), the layout (`src/` or flat), the interpreter (an activated virtualenv, one inside
the repository, the one `init --env` made, or the python on PATH) and whether it must be linked
into every checkout (the sandbox hides the repository, and with it a `.venv` inside it)."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core import process
from gitgauge.init.files import SKIPPED_DIRS, ProjectFiles, table, toml_document
from gitgauge.init.records import Choice, Detected

ENV_DIR = ".gitgauge/env"
"""Where `gitgauge init --env` makes the suite's environment: git-ignored (`.gitgauge/.gitignore`)
and linked into every checkout like a `.venv`."""
IN_REPO_VENVS = (".venv", "venv")
IMPORTS = re.compile(r"(?m)^\s*(?:import|from)\s+(pytest|unittest)\b")
SCANNED_TEST_MODULES = 200
PROBE_SECONDS = 60
FINDS_PYTEST = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"
"""Whether an interpreter has pytest, without importing it (a second, not a tenth)."""


@dataclass(frozen=True)
class Interpreter:
    command: str
    """As testCommand names it: `.venv/bin/python`, an absolute path, or `python`."""
    link: str | None
    """The environment's directory inside the repository (for `worktree.link`), if any."""
    source: str


def is_test_module(path: PurePosixPath) -> bool:
    """pytest's default `python_files`: `test_*.py` and `*_test.py`, outside environments."""
    if any(part in SKIPPED_DIRS for part in path.parts[:-1]):
        return False
    name = path.name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def detect_python(
    files: ProjectFiles, *, env: Mapping[str, str], environment: str | None = None
) -> Detected | None:
    """The project's pytest command and how each part was chosen; None when no test of a
    Python project is found. `environment`: the directory `init --env` just made (it wins)."""
    runner = _runner(files)
    if runner is None:
        return None
    runner_source, pythonpath = runner
    layout_source, needs_src = _layout(files, pythonpath)
    interpreter = _interpreter(files.root, env, environment)
    command = f"{'PYTHONPATH=src ' if needs_src else ''}{interpreter.command} -m pytest -q"
    choices = [
        Choice(
            "testCommand", command, "; ".join((runner_source, layout_source, interpreter.source))
        )
    ]
    link = (interpreter.link,) if interpreter.link else ()
    if interpreter.link:
        choices.append(
            Choice(
                "worktree.link",
                f"[{interpreter.link}]",
                f"{interpreter.link} is inside the repository, which the sandbox hides: "
                "linked into every checkout",
            )
        )
    choices.append(
        Choice(
            "per-test reports",
            "JUnit XML, nothing to add",
            "pytest: gitgauge adds --junitxml to PYTEST_ADDOPTS (docs/guide/per-test-verdicts.md)",
        )
    )
    notes = _pytest_missing(files.root, interpreter, env)
    return Detected("python", command, link, tuple(choices), notes)


def _runner(files: ProjectFiles) -> tuple[str, tuple[str, ...]] | None:
    """(why pytest runs the suite, pytest's `pythonpath` setting) or None without tests."""
    configured = _pytest_config(files)
    if configured is not None:
        return configured
    conftest = next(files.matching(lambda path: path.name == "conftest.py"), None)
    if conftest is not None:
        return f"pytest ({conftest})", ()
    modules = list(files.matching(is_test_module))
    if not modules:
        return None
    imported: dict[str, str] = {}
    for module in modules[:SCANNED_TEST_MODULES]:
        for name in IMPORTS.findall(files.text(module) or ""):
            imported.setdefault(name, module)
    if "pytest" in imported:
        return f"pytest ({imported['pytest']} imports pytest)", ()
    if "unittest" in imported:
        return f"unittest ({imported['unittest']} imports unittest), run through pytest", ()
    return f"pytest (test files such as {modules[0]}: pytest's default names)", ()


def _pytest_config(files: ProjectFiles) -> tuple[str, tuple[str, ...]] | None:
    """pytest's own configuration file, in the order pytest looks for it."""
    for name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"):
        if files.has(name):
            return f"pytest ({name})", _pythonpath_ini(files.text(name) or "", "pytest")
    document = (
        toml_document(files.text("pyproject.toml") or "") if files.has("pyproject.toml") else None
    )
    pytest = table(document, "tool", "pytest")
    if pytest:
        options = table(pytest, "ini_options")
        where = "[tool.pytest.ini_options]" if "ini_options" in pytest else "[tool.pytest]"
        value = (options if "ini_options" in pytest else pytest).get("pythonpath", ())
        paths = (value,) if isinstance(value, str) else tuple(str(item) for item in value)
        return f"pyproject.toml {where}", tuple(" ".join(paths).split())
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        text = files.text(name) if files.has(name) else None
        if text is not None and _has_section(text, section):
            return f"{name} [{section}]", _pythonpath_ini(text, section)
    return None


def _has_section(text: str, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return parser.has_section(section)


def _pythonpath_ini(text: str, section: str) -> tuple[str, ...]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return ()
    return tuple(parser.get(section, "pythonpath", fallback="").split())


def _layout(files: ProjectFiles, pythonpath: tuple[str, ...]) -> tuple[str, bool]:
    """(the layout and where it shows, whether testCommand needs `PYTHONPATH=src`)."""
    packages = sorted(
        {
            PurePosixPath(path).parts[1]
            for path in files.paths
            if path.startswith("src/") and path.endswith(".py")
        }
    )
    if packages:
        shown = packages[0] if packages[0].endswith(".py") else f"{packages[0]}/"
        if any(entry.strip("./") == "src" for entry in pythonpath):
            return f"src/ layout (src/{shown}), on sys.path through pytest's pythonpath", False
        return f"src/ layout (src/{shown}): PYTHONPATH=src imports the checkout's code", True
    tops = sorted(
        {
            PurePosixPath(path).parts[0]
            for path in files.paths
            if path.count("/") == 1 and path.endswith("/__init__.py")
        }
        - {"tests", "test"}
    )
    shown = f" ({tops[0]}/ at the root)" if tops else ""
    return f"flat layout{shown}: python -m pytest imports the checkout's code", False


def _interpreter(root: Path, env: Mapping[str, str], environment: str | None) -> Interpreter:
    if environment is not None:
        return _inside(root, root / environment, f"{environment}, made by `gitgauge init --env`")
    active = env.get("VIRTUAL_ENV", "")
    if active and (Path(active) / "bin" / "python").exists():
        venv = Path(active)
        if venv.resolve().is_relative_to(root.resolve()):
            return _inside(root, venv, "the activated virtualenv ($VIRTUAL_ENV)")
        return Interpreter(
            shlex.quote(str(venv / "bin" / "python")),
            None,
            f"the activated virtualenv ($VIRTUAL_ENV={venv})",
        )
    for name in IN_REPO_VENVS:
        if (root / name / "bin" / "python").exists():
            return _inside(root, root / name, f"{name} in the repository")
    if (root / ENV_DIR / "bin" / "python").exists():
        return _inside(root, root / ENV_DIR, f"{ENV_DIR}, made by `gitgauge init --env`")
    path = env.get("PATH", "")
    name = "python" if shutil.which("python", path=path) else "python3"
    found = shutil.which(name, path=path) or "not found"
    return Interpreter(
        name, None, f"no virtualenv ($VIRTUAL_ENV, .venv, venv): the {name} on PATH, {found}"
    )


def _inside(root: Path, venv: Path, source: str) -> Interpreter:
    try:  # as the repository names it (a `.venv` may be a link to elsewhere)
        relative = venv.absolute().relative_to(root).as_posix()
    except ValueError:
        relative = venv.resolve().relative_to(root.resolve()).as_posix()
    return Interpreter(shlex.quote(f"{relative}/bin/python"), relative, source)


def _pytest_missing(
    root: Path, interpreter: Interpreter, env: Mapping[str, str]
) -> tuple[str, ...]:
    """A note when the interpreter cannot import pytest (the suite could not run at all)."""
    argv = [*shlex.split(interpreter.command), "-c", FINDS_PYTEST]
    if not argv[0].startswith("/") and "/" in argv[0]:
        argv[0] = str(root / argv[0])
    result = process.run(argv, cwd=root, env=dict(env), timeout_seconds=PROBE_SECONDS)
    if result.ok:
        return ()
    return (
        f"{interpreter.command} cannot import pytest: install the project's test dependencies "
        "there, or run `gitgauge init --env` for an environment of their own",
    )
