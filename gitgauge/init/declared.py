"""What a Python project declares its test suite needs, for `gitgauge init --env`: the Python
version (`requires-python`), its dependencies, its test and dev extras and dependency groups
(PEP 735), `requirements*.txt` files, tox's and nox's deps; each with the file it came from.
The project itself is never installed: every checkout tests its own code (`PYTHONPATH=src`, or
the checkout's root on `sys.path`), not a copy installed from today's tree."""

from __future__ import annotations

import ast
import configparser
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from gitgauge.init.files import ProjectFiles, table, toml_document

TEST_SETS = ("test", "tests", "testing", "dev")
"""The extras and dependency groups whose requirements the suite needs."""
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
CLAUSE = re.compile(r"^(~=|===|==|!=|<=|>=|<|>)\s*(\d+(?:\.\d+)*)(\.\*)?$")


@dataclass(frozen=True)
class Requirement:
    text: str
    """A requirement (`pytest>=8`), or for `-r`, the requirements file's path."""
    source: str
    is_file: bool = False


@dataclass(frozen=True)
class Declared:
    requires_python: str | None
    requires_source: str | None
    requirements: tuple[Requirement, ...]

    def install_args(self) -> list[str]:
        args: list[str] = []
        for requirement in self.requirements:
            args += ["-r", requirement.text] if requirement.is_file else [requirement.text]
        return args


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(text: str) -> str | None:
    found = NAME.match(text)
    return normalized(found.group(1)) if found else None


def declared(files: ProjectFiles) -> Declared:
    """Everything the project declares for its tests, pytest added when nothing names it."""
    document = (
        toml_document(files.text("pyproject.toml") or "") if files.has("pyproject.toml") else None
    )
    project = table(document, "project")
    found: list[Requirement] = []
    requires, requires_source = None, None
    if isinstance(project.get("requires-python"), str):
        requires, requires_source = project["requires-python"], "pyproject.toml [project]"
    found += _pyproject(project, document)
    setup_requires, setup_found = _setup_cfg(files)
    found += setup_found
    if requires is None and setup_requires is not None:
        requires, requires_source = setup_requires, "setup.cfg [options] python_requires"
    found += _requirement_files(files)
    found += _tox(files, project)
    found += _nox(files)
    unique: dict[tuple[str, bool], Requirement] = {}
    for requirement in found:
        unique.setdefault((requirement.text, requirement.is_file), requirement)
    kept = list(unique.values())
    names = {requirement_name(r.text) for r in kept if not r.is_file}
    if "pytest" not in names:
        kept.append(Requirement("pytest", "gitgauge runs the suite with pytest"))
    return Declared(requires, requires_source, tuple(kept))


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _pyproject(project: dict[str, Any], document: dict[str, Any] | None) -> list[Requirement]:
    name = normalized(str(project.get("name", "")))
    extras = table(project, "optional-dependencies")
    found = [
        Requirement(text, "pyproject.toml [project] dependencies")
        for text in _strings(project.get("dependencies"))
    ]
    for extra in TEST_SETS:
        if extra in extras:
            source = f"pyproject.toml [project.optional-dependencies] {extra}"
            found += [Requirement(t, source) for t in _expand(extras, extra, name, set())]
    groups = table(document, "dependency-groups")
    for group in TEST_SETS:
        if group in groups:
            source = f"pyproject.toml [dependency-groups] {group}"
            found += [Requirement(t, source) for t in _group(groups, group, set())]
    return found


def _expand(extras: dict[str, Any], extra: str, project: str, seen: set[str]) -> list[str]:
    """An extra's requirements, a reference to the project's own extras (`name[test]`) expanded
    instead of installing the project."""
    if extra in seen:
        return []
    seen.add(extra)
    result: list[str] = []
    for text in _strings(extras.get(extra)):
        found = NAME.match(text)
        if found and project and normalized(found.group(1)) == project:
            for inner in (found.group(2) or "").split(","):
                if inner.strip():
                    result += _expand(extras, inner.strip(), project, seen)
            continue
        result.append(text)
    return result


def _group(groups: dict[str, Any], group: str, seen: set[str]) -> list[str]:
    """A PEP 735 group's requirements, `{include-group = "..."}` resolved."""
    if group in seen or not isinstance(groups.get(group), list):
        return []
    seen.add(group)
    result: list[str] = []
    for item in groups[group]:
        if isinstance(item, str):
            result.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            result += _group(groups, item["include-group"], seen)
    return result


def _ini(files: ProjectFiles, name: str) -> configparser.ConfigParser | None:
    text = files.text(name) if files.has(name) else None
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _lines(value: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in value.splitlines() if line.strip()]


def _setup_cfg(files: ProjectFiles) -> tuple[str | None, list[Requirement]]:
    parser = _ini(files, "setup.cfg")
    if parser is None:
        return None, []
    found = [
        Requirement(line, "setup.cfg [options] install_requires")
        for line in _lines(parser.get("options", "install_requires", fallback=""))
    ]
    for extra in TEST_SETS:
        value = parser.get("options.extras_require", extra, fallback="")
        source = f"setup.cfg [options.extras_require] {extra}"
        found += [Requirement(line, source) for line in _lines(value)]
    requires = parser.get("options", "python_requires", fallback=None)
    return requires, found


def _requirement_files(files: ProjectFiles) -> list[Requirement]:
    """`requirements*.txt`, `*-requirements.txt` and `requirements/*.txt` (not documentation's)."""

    def wanted(path: PurePosixPath) -> bool:
        if path.suffix != ".txt" or "doc" in path.name:
            return False
        if len(path.parts) == 1:
            return "requirements" in path.name
        return len(path.parts) == 2 and path.parts[0] == "requirements"

    return [Requirement(path, path, is_file=True) for path in sorted(files.matching(wanted))]


def _tox(files: ProjectFiles, project: dict[str, Any]) -> list[Requirement]:
    parser = _ini(files, "tox.ini")
    if parser is None or not parser.has_section("testenv"):
        return []
    found: list[Requirement] = []
    for line in _lines(parser.get("testenv", "deps", fallback="")):
        if line.startswith("-r"):
            path = line[2:].strip().replace("{toxinidir}/", "")
            if "{" not in path:
                found.append(Requirement(path, "tox.ini [testenv] deps", is_file=True))
        elif "{" not in line and not line.startswith(("-", ".")):
            found.append(Requirement(line, "tox.ini [testenv] deps"))
    extras = table(project, "optional-dependencies")
    name = normalized(str(project.get("name", "")))
    for extra in _lines(parser.get("testenv", "extras", fallback="").replace(",", "\n")):
        source = f"tox.ini [testenv] extras {extra}"
        found += [Requirement(t, source) for t in _expand(extras, extra, name, set())]
    return found


def _nox(files: ProjectFiles) -> list[Requirement]:
    """The string arguments of `session.install(...)` calls in noxfile.py."""
    text = files.text("noxfile.py") if files.has("noxfile.py") else None
    if text is None:
        return []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found: list[Requirement] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "install"
        ):
            continue
        values = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        for index, value in enumerate(values):
            if index and values[index - 1] == "-r":
                found.append(Requirement(value, "noxfile.py session.install", is_file=True))
            elif not value.startswith(("-", ".")):
                found.append(Requirement(value, "noxfile.py session.install"))
    return found


def satisfies(version: tuple[int, ...], specifier: str) -> bool:
    """Whether a Python version meets a `requires-python` specifier (`>=3.9,<4`); a clause
    gitgauge cannot read is taken as met (pip and uv check it again)."""
    for clause in (part.strip() for part in specifier.split(",")):
        found = CLAUSE.match(clause)
        if not found:
            continue
        operator, text, star = found.groups()
        target = tuple(int(part) for part in text.split("."))
        if not _meets(version, operator, target, prefix=bool(star)):
            return False
    return True


def _meets(
    version: tuple[int, ...], operator: str, target: tuple[int, ...], *, prefix: bool
) -> bool:
    if operator == "~=":
        upper = (*target[:-2], target[-2] + 1) if len(target) > 1 else (target[0] + 1,)
        return _meets(version, ">=", target, prefix=False) and _pad(version) < _pad(upper)
    if prefix or operator in ("==", "!=", "==="):
        width = len(target)
        equal = _pad(version)[:width] == _pad(target)[:width]
        return equal if operator != "!=" else not equal
    left, right = _pad(version), _pad(target)
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[
        operator
    ]


def _pad(version: tuple[int, ...]) -> tuple[int, ...]:
    return (*version, 0, 0, 0)[: max(3, len(version))]
