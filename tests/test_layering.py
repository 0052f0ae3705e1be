"""The package's layering, machine-checked: mining -> running -> reporting over core.

- `core/` imports nothing above it;
- a stage (`mining/`, `running/`, `reporting/`) imports `core/` and itself, never another stage:
  what two stages share lives in `core/`;
- only the top (`cli/`, `demo.py`, `init.py`) joins the stages;
- one door per external system: `subprocess` only in `core/process.py`, `typer` only in `cli/`,
  `anthropic` only in `mining/rewrite_backends.py`, `ray` only in the Ray executor.

Imports inside functions count too (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gitgauge"
STAGES = ("core", "mining", "running", "reporting")

# external module -> the package-relative paths (files, or folders ending in "/") that may use it
DOORS = {
    "subprocess": ("core/process.py",),
    "typer": ("cli/",),
    "anthropic": ("mining/rewrite_backends.py",),
    "ray": ("running/executors/ray.py", "running/ray_executor.py"),
}


def imports_of(path: Path, package: Path) -> list[tuple[int, str]]:
    """Every module `path` imports, absolute, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = path.relative_to(package.parent).with_suffix("").parts
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
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] == "demo_sample":  # the demo's sample project, not gitgauge
            continue
        layer = layer_of(relative)
        for line, module in imports_of(path, package):
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


def test_the_package_keeps_its_layers_and_doors() -> None:
    assert violations(PACKAGE) == []


def test_the_check_catches_a_bad_import(tmp_path: Path) -> None:
    """The checker itself fails on deliberate bad imports (an upward import from core, a stage
    reaching into another, a lazy one, a relative one, a door opened elsewhere)."""
    copy = tmp_path / "gitgauge"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "demo_sample"))
    (copy / "core" / "bad_up.py").write_text("from gitgauge.running import run\n")
    (copy / "mining" / "bad_across.py").write_text(
        "def later():\n    from gitgauge.running.scoring import grade\n"
    )
    (copy / "reporting" / "bad_relative.py").write_text("from ..mining import mine\n")
    (copy / "running" / "bad_door.py").write_text("import subprocess\n")
    (copy / "reporting" / "fine.py").write_text("from gitgauge.core import store\n")
    found = violations(copy)
    assert len(found) == 4, found
    for name in ("bad_up", "bad_across", "bad_relative", "bad_door"):
        assert any(name in line for line in found), (name, found)
