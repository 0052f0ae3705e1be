"""What an agent may add: a file its patch adds is graded only when it is ordinary project code.

A list of names an agent may not add is always one name short (a root `pytest.py`, a module
named like one pytest imports at start-up, a test file that patches the code while pytest
collects it). So the question is asked the other way round: is this the agent's code, in a place
where the agent's code belongs? A new file is dropped before grading when it is

- **a test**: a test file by the rules `mine` uses (`core.paths`, `tests.patterns`), one of the
  task's own test files, or any file under a directory the suite collects tests from (one whose
  own files at `base` are all tests and test set-up);
- **configuration** of a tool the suite runs: a name a runner reads (`core.paths.TEST_INFRA`), a
  hidden file or a file in a hidden directory (`.npmrc`, `.cargo/`), a configuration format
  (`*.ini`, `*.cfg`, `*.toml`, `*.conf`, `*.properties`, `*.config.*`), or any file at the
  repository root that is not source code (where every tool looks for its own: `Rakefile`,
  `phpunit.xml`, `justfile`);
- **a dependency**: anything under a directory where a runtime looks for installed packages
  (`node_modules/`, `site-packages/`, `vendor/`);
- **a link out**: a symlink whose target is absolute or leaves the repository;
- **a stand-in**: a module or package at an import root under a name the grading interpreter
  imports from elsewhere (the standard library, site-packages, the test runner): asked of that
  interpreter (`core.importable`), not read from a list.

Why each went is kept (`dropped` in the result). Nothing else is judged: a new source module or
helper package is kept and graded with the rest of the agent's work.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from gitgauge.core.paths import infra_name, is_test_file

SOURCE_SUFFIXES = frozenset(
    {
        ".py", ".pyi", ".pyx", ".pxd", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts",
        ".tsx", ".vue", ".svelte", ".go", ".rs", ".rb", ".java", ".kt", ".kts", ".scala",
        ".groovy", ".clj", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".m",
        ".mm", ".cs", ".fs", ".vb", ".swift", ".php", ".ex", ".exs", ".erl", ".hrl", ".hs",
        ".ml", ".mli", ".lua", ".pl", ".pm", ".r", ".jl", ".dart", ".zig", ".nim", ".sh",
        ".bash", ".sql",
    }
)  # fmt: skip
"""Suffixes of source code: at the repository root, a new file without one is configuration."""
CONFIG_SUFFIXES = frozenset({".ini", ".cfg", ".toml", ".conf", ".properties"})
"""Formats tools read their configuration from, wherever the file is."""
DEPENDENCY_DIRS = {
    "node_modules": "node resolves packages from it",
    "bower_components": "bower installs packages into it",
    "site-packages": "Python imports installed packages from it",
    "dist-packages": "Python imports installed packages from it",
    "__pypackages__": "Python (PEP 582) imports installed packages from it",
    "vendor": "Go, PHP and Ruby load vendored dependencies from it",
}
"""Directories a runtime loads installed packages from: nothing the agent adds there is its own
code."""
MODULE_SUFFIXES = (".py", ".so", ".pyd")
"""Files Python imports as a module (bytecode never crosses: `core.git.checkout`)."""
PACKAGE_MARKER = "__init__.py"
SYMLINK_MODE = "120000"


@dataclass(frozen=True)
class Added:
    """A path the agent's tree has and the tree it started from has not."""

    path: str
    mode: str
    link_target: str | None = None
    """A symlink's target (its blob's text); None for anything else."""


def dropped_by_rule(
    added: Iterable[Added],
    *,
    start_files: Collection[str],
    test_files: Collection[str] = (),
    patterns: Sequence[str] = (),
) -> dict[str, str]:
    """path -> why, for each added file that is not ordinary project code by the rules that need
    no interpreter (all but stand-ins: `module_names`). `start_files` are the files of the tree
    the agent started from (to find the directories the suite collects tests from)."""
    collected = test_directories(start_files, patterns=patterns, test_files=test_files)
    dropped: dict[str, str] = {}
    for item in added:
        why = _why(item, collected=collected, test_files=test_files, patterns=patterns)
        if why is not None:
            dropped[item.path] = why
    return dropped


def _why(
    item: Added,
    *,
    collected: Collection[str],
    test_files: Collection[str],
    patterns: Sequence[str],
) -> str | None:
    path = PurePosixPath(item.path)
    parts = path.parts
    infra = infra_name(item.path)
    if infra is not None:
        return f"configuration of {infra.runner}: {infra.why}"
    if item.path in test_files or is_test_file(item.path, patterns=patterns):
        return "a test file: the suite's tests are the project's, laid over at grading"
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        if folder in collected:
            return f"under {folder}/, where the suite collects tests"
    if item.mode == SYMLINK_MODE and _leads_out(item.path, item.link_target or "/"):
        return f"a symlink that leads out of the repository ({item.link_target})"
    for part in parts:
        if part in DEPENDENCY_DIRS:
            return f"under {part}/: {DEPENDENCY_DIRS[part]}"
    hidden = next((part for part in parts if part.startswith(".")), None)
    if hidden is not None:
        what = "a hidden file" if hidden == parts[-1] else f"in {hidden}/"
        return f"{what}: tools read their configuration from hidden files and folders"
    name = parts[-1].lower()
    suffix = path.suffix.lower()
    if (
        suffix in CONFIG_SUFFIXES
        or ".config." in name
        or ".conf." in name
        or name.endswith(".config")
    ):
        return f"a configuration file ({suffix or name}): tools find theirs by such names"
    if len(parts) == 1 and suffix not in SOURCE_SUFFIXES:
        return "not source code, at the repository root, where every tool looks for its config"
    return None


def _leads_out(path: str, target: str) -> bool:
    if target.startswith("/"):
        return True
    depth = len(PurePosixPath(path).parts) - 1
    for part in PurePosixPath(target).parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            return True
    return False


def test_directories(
    files: Collection[str], *, patterns: Sequence[str] = (), test_files: Collection[str] = ()
) -> set[str]:
    """Directories (below the root) the suite collects tests from: those whose own files are
    all tests or test set-up (package markers, runner configuration, data) and at least one a
    test. A directory of source with a test beside it (`calc/test_calc.py`, Go's `_test.go`) is
    not one: its new files are the agent's code, and tests there are found by name."""
    verdicts: dict[str, bool] = {}
    for path in [*files, *test_files]:
        parent = str(PurePosixPath(path).parent)
        if parent == ".":
            continue
        name = PurePosixPath(path).name
        if path in test_files or is_test_file(path, patterns=patterns):
            verdicts.setdefault(parent, True)
        elif (
            name != PACKAGE_MARKER
            and infra_name(path) is None
            and PurePosixPath(name).suffix.lower() in SOURCE_SUFFIXES
        ):
            verdicts[parent] = False
    return {folder for folder, only_tests in verdicts.items() if only_tests}


def module_names(
    kept: Iterable[str], *, start_files: Collection[str], tree_files: Collection[str]
) -> dict[str, list[str]]:
    """Top-level module name -> the added paths that bring it, for names the agent's additions
    introduce at a possible import root. An import root is the repository root or any directory
    that is not a regular package in the agent's tree (no `__init__.py`: `src/`, `lib/`);
    below a package, a new module is that package's submodule and stands in for nothing. A
    name counts only when what it names (a file, or a folder holding Python) is new."""
    packages = {
        str(PurePosixPath(path).parent)
        for path in tree_files
        if PurePosixPath(path).name == PACKAGE_MARKER
    }
    existing = set(start_files)
    existing_dirs = {
        "/".join(PurePosixPath(path).parts[:depth])
        for path in start_files
        for depth in range(1, len(PurePosixPath(path).parts))
    }
    names: dict[str, list[str]] = {}
    for path in kept:
        parts = PurePosixPath(path).parts
        if not parts[-1].endswith(MODULE_SUFFIXES):
            continue
        for depth in range(len(parts)):
            root = "/".join(parts[:depth])
            if depth and root in packages:
                continue
            prefix = "/".join(parts[: depth + 1])
            last = depth == len(parts) - 1
            if (prefix in existing) if last else (prefix in existing_dirs):
                continue
            name = parts[depth].split(".", 1)[0] if last else parts[depth]
            if name.isidentifier():
                names.setdefault(name, []).append(path)
    return names


def shadow_reasons(
    names: Mapping[str, Sequence[str]], shadowed: Mapping[str, str]
) -> dict[str, str]:
    """path -> why, for the added paths whose top-level name an interpreter imports from
    elsewhere (`shadowed`: name -> where)."""
    dropped: dict[str, str] = {}
    for name, paths in names.items():
        where = shadowed.get(name)
        if where is None:
            continue
        for path in paths:
            dropped.setdefault(
                path, f"stands in for the module `{name}`, which the suite imports from {where}"
            )
    return dropped
