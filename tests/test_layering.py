"""The package's layering, machine-checked: mining -> running -> reporting (and exporting) over
core, the task kinds (`kinds/`) above them with the CLI.

- `core/` imports nothing above it;
- a stage (`mining/`, `running/`, `reporting/`) imports `core/` and itself, never another stage:
  what two stages share lives in `core/`;
- only the top (`cli/`, `demo.py`, `init/`) joins the stages;
- one door per external system: `subprocess` only in `core/process.py`, `typer` only in `cli/`,
  `anthropic` only in `mining/rewrite_backends.py`, `ray` only in the Ray executor, GitPython
  and the git CLI only in `core/git/`, the user's setupCommand and testCommand only in
  `core/suite.py` (`UserCommands`).

Imports inside functions count too (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.files import write_files

from gitgauge.core import kinds

PACKAGE = Path(__file__).resolve().parent.parent / "gitgauge"
STAGES = ("core", "mining", "running", "reporting", "exporting")

# external module -> the package-relative paths (files, or folders ending in "/") that may use it
DOORS = {
    "subprocess": ("core/process.py",),
    "git": ("core/git/",),  # GitPython
    "typer": ("cli/",),
    "anthropic": ("mining/rewrite_backends.py",),
    "ray": ("running/executors/ray.py", "running/executors/ray_mine.py"),
}


def modules(package: Path, *skipped: str) -> Iterator[tuple[Path, ast.Module]]:
    """Each module of `package` (its path relative to `package`) with its syntax tree, in path
    order: not the demo's sample project (not gitgauge), nor those under the folders `skipped`
    at the top."""
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] not in ("demo_sample", *skipped):
            yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imports_of(tree: ast.Module, here: tuple[str, ...]) -> list[tuple[int, str]]:
    """Every module the module `here` (its dotted name's parts) imports, absolute, with its
    line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = here[: len(here) - node.level]
                module = ".".join((*base, node.module) if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # `from gitgauge import mining` names a module too
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def layer_of(relative: Path) -> str:
    first = relative.parts[0]
    return first if first in STAGES else "top"


def violations(package: Path) -> list[str]:
    """One line per offending import statement."""
    found: dict[tuple[str, int], str] = {}
    for relative, tree in modules(package):
        layer = layer_of(relative)
        for line, module in imports_of(tree, (package.name, *relative.with_suffix("").parts)):
            where = f"gitgauge/{relative.as_posix()}:{line} imports {module}"
            parts = module.split(".")
            if parts[0] == "gitgauge" and len(parts) > 1:
                target = parts[1] if parts[1] in STAGES else "top"
                if parts[1] == "__version__":  # the package's own version string
                    continue
                if layer == "top":
                    continue
                if target != "core" and target != layer:
                    found.setdefault(
                        (str(relative), line), f"{where}: {layer}/ may import only core/ and itself"
                    )
            elif parts[0] in DOORS:
                allowed = DOORS[parts[0]]
                posix = relative.as_posix()
                if not any(
                    posix == a or (a.endswith("/") and posix.startswith(a)) for a in allowed
                ):
                    found.setdefault(
                        (str(relative), line),
                        f"{where}: {parts[0]} belongs in {', '.join(allowed)} only",
                    )
    return list(found.values())


def package_with(tmp_path: Path, files: dict[str, str]) -> Path:
    """A copy of the package in `tmp_path` (but the demo's sample project) with `files` (path in
    the package -> source) added."""
    copy = tmp_path / "gitgauge"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "demo_sample"))
    return write_files(copy, files)


def test_the_check_catches_a_bad_import(tmp_path: Path) -> None:
    """The checker itself fails on deliberate bad imports (an upward import from core, a stage
    reaching into another, a lazy one, a relative one, a door opened elsewhere)."""
    copy = package_with(
        tmp_path,
        {
            "core/bad_up.py": "from gitgauge.running import run\n",
            "mining/bad_across.py": "def later():\n    from gitgauge.kinds.fix import grade\n",
            "reporting/bad_relative.py": "from ..mining import mine\n",
            "running/bad_door.py": "import subprocess\n",
            "reporting/fine.py": "from gitgauge.core import store\n",
        },
    )
    found = violations(copy)
    assert len(found) == 4, found
    for name in ("bad_up", "bad_across", "bad_relative", "bad_door"):
        assert any(name in line for line in found), (name, found)


KIND_NAMES = tuple(kinds.names())
"""Every registered kind (`fix`, `merge`, `rebase`, `commits`, `fixture`)."""


def kind_branches(package: Path) -> list[str]:
    """Comparisons of a kind (`task.kind`, `row.kind`, `kind`) with a kind's name outside
    `gitgauge/kinds/`: every such decision belongs to the kind's own module."""
    found: list[str] = []
    for relative, tree in modules(package, "kinds"):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            names = [
                side.attr if isinstance(side, ast.Attribute) else getattr(side, "id", "")
                for side in sides
            ]
            constants = [
                value
                for side in sides
                for value in (
                    [side.value]
                    if isinstance(side, ast.Constant)
                    else [e.value for e in getattr(side, "elts", []) if isinstance(e, ast.Constant)]
                )
            ]
            if any(name == "kind" or name.endswith("_kind") for name in names) and any(
                value in KIND_NAMES for value in constants
            ):
                found.append(f"gitgauge/{relative.as_posix()}:{node.lineno}")
    return found


def test_the_kind_check_catches_a_branch(tmp_path: Path) -> None:
    copy = package_with(
        tmp_path,
        {
            "running/bad_kind.py": "def f(task):\n    return task.kind == 'merge'\n",
            "reporting/bad_kinds.py": "def g(row_kind):\n    return row_kind in ('fix', 'merge')\n",
            "kinds/fine.py": "def h(task):\n    return task.kind == 'fix'\n",
        },
    )
    assert sorted(kind_branches(copy)) == [
        "gitgauge/reporting/bad_kinds.py:2",
        "gitgauge/running/bad_kind.py:2",
    ]


def doors_opened_elsewhere(package: Path) -> list[str]:
    """Lines that run git (an argv starting with "git") outside `core/git/`, or pass the user's
    testCommand or setupCommand to anything outside `core/suite.py`."""
    found: list[str] = []
    for module, tree in modules(package):
        relative = module.as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.List) and node.elts and not relative.startswith("core/git/"):
                first = node.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    found.append(f"gitgauge/{relative}:{node.lineno}: runs git")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "git"
                and not relative.startswith("core/git/")
            ):
                found.append(f"gitgauge/{relative}:{node.lineno}: passes raw git through")
            if isinstance(node, ast.Call) and relative != "core/suite.py":
                for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                    if isinstance(argument, ast.Attribute) and argument.attr in (
                        "testCommand",
                        "setupCommand",
                    ):
                        if isinstance(node.func, ast.Attribute) and node.func.attr in (
                            "run",
                            "stream",
                        ):
                            found.append(f"gitgauge/{relative}:{node.lineno}: starts it")
    return found


@pytest.mark.parametrize(
    "check",
    [
        pytest.param(violations, id="it-keeps-its-layers-and-doors"),
        pytest.param(kind_branches, id="no-module-but-a-kinds-own-branches-on-a-kind-name"),
        pytest.param(doors_opened_elsewhere, id="git-and-the-users-commands-have-one-door-each"),
    ],
)
def test_the_package_passes_the_check(check: Callable[[Path], list[str]]) -> None:
    assert check(PACKAGE) == []


def test_the_door_check_catches_git_and_a_test_command(tmp_path: Path) -> None:
    copy = package_with(
        tmp_path,
        {
            "running/bad_git.py": (
                "from gitgauge.core import process\n"
                "def f(root):\n    return process.run(['git', 'status'], cwd=root)\n"
            ),
            "mining/bad_suite.py": (
                "from gitgauge.core import process\n"
                "def g(config, root):\n    return process.run(config.testCommand, cwd=root)\n"
            ),
            "reporting/bad_gitpython.py": "import git\n",
            "exporting/bad_raw.py": (
                "def h(repo):\n    return repo.git('remote', 'get-url', 'origin')\n"
            ),
        },
    )
    found = doors_opened_elsewhere(copy) + violations(copy)
    for name in ("bad_git.py:3", "bad_suite.py:3", "bad_gitpython.py:1", "bad_raw.py:2"):
        assert any(name in line for line in found), (name, found)


def test_every_door_names_a_module_that_exists() -> None:
    for module, allowed in DOORS.items():
        for place in allowed:
            assert (PACKAGE / place).exists(), f"{module}'s door {place} does not exist"


def test_a_test_module_imports_what_it_shares_from_helpers_never_from_another_test_module() -> None:
    """What two test modules share (a cluster fixture, a fake judge) lives in `tests/helpers/`:
    importing a test module runs its module-level set-up and collects its tests twice."""
    tests = Path(__file__).resolve().parent
    found = []
    for path in sorted(tests.glob("test_*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split()
            if len(words) >= 2 and words[0] in ("from", "import"):
                if words[1].startswith(("test_", "conftest")):
                    found.append(f"{path.name}:{number}: {line.strip()}")
    assert found == []
