"""The folders a project's pytest configuration names as where its tests are (`testpaths`), as
test-file patterns: mining (which files of a fix are its tests), protection and the additions
rule (what an agent may not edit or add) then agree on them as on `tests.patterns`.

pytest reads the first configuration file it finds in the rootdir, in its own order: `pytest.toml`
or `pytest.ini` (also hidden, and even when empty), else a `pyproject.toml` with a
`[tool.pytest.ini_options]` (or pytest 9's `[tool.pytest]`) table, a `tox.ini` with a `[pytest]`
section, a `setup.cfg` with a `[tool:pytest]` one. gitgauge reads the same files at the root of
the user's checkout (`testpaths_patterns`), once per command: a folder the built-in rules
(`core.paths`) already call tests adds nothing, any other adds `<folder>/*`.
"""

from __future__ import annotations

import configparser
import shlex
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from gitgauge.core.config_text import config_text, toml_document
from gitgauge.core.paths import is_test_file

PYTEST_CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
"""The files pytest takes its configuration from, in the order it looks for them."""


def pytest_testpaths(read: Callable[[str], str | None]) -> tuple[str, ...]:
    """The `testpaths` of the first of `PYTEST_CONFIG_FILES` that pytest takes as its
    configuration; `read(name)` gives a file's text at the root, None when there is none."""
    for name in PYTEST_CONFIG_FILES:
        text = read(name)
        if text is None:
            continue
        found = _testpaths_in(name, text)
        if found is not None:
            return found
    return ()


def testpaths_patterns(root: Path) -> tuple[str, ...]:
    """`tests.patterns` entries for the folders the pytest configuration at `root` names in its
    `testpaths` that the built-in rules do not already call tests: `<folder>/*` each."""
    patterns: list[str] = []
    for path in pytest_testpaths(lambda name: config_text(root / name)):
        folder = _folder(path)
        if folder is None or is_test_file(f"{folder}/_"):
            continue
        pattern = f"{folder}/*"
        if pattern not in patterns:
            patterns.append(pattern)
    return tuple(patterns)


def _folder(path: str) -> str | None:
    """A `testpaths` entry as a folder relative to the root; None for the root itself, a path
    outside it or an environment variable (pytest expands those; gitgauge cannot know them)."""
    text = path.strip().replace("\\", "/")
    if not text or "$" in text or text.startswith(("/", "~")):
        return None
    parts = [part for part in PurePosixPath(text).parts if part != "."]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _testpaths_in(name: str, text: str) -> tuple[str, ...] | None:
    """The file's testpaths (empty when it sets none), or None when pytest would pass over it
    (a `pyproject.toml`, `tox.ini` or `setup.cfg` without pytest's table)."""
    if name.endswith(".toml"):
        table = _toml_table(name, text)
        if table is None:
            return None
        return _as_paths(table.get("testpaths"))
    section = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}.get(name, "pytest")
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return () if name.endswith("pytest.ini") else None
    if not parser.has_section(section):
        # pytest.ini is pytest's configuration even without a [pytest] section.
        return () if name.endswith("pytest.ini") else None
    return _as_paths(parser.get(section, "testpaths", fallback=None))


def _toml_table(name: str, text: str) -> dict[str, Any] | None:
    """pytest's table of a TOML file: `[pytest]` of a `pytest.toml` (taken even when empty),
    `[tool.pytest.ini_options]` or `[tool.pytest]` of a `pyproject.toml` (None without)."""
    document = toml_document(text)
    if document is None:
        return None
    if name != "pyproject.toml":
        table = document.get("pytest", {})
        return table if isinstance(table, dict) else {}
    tool = document.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest, dict):
        return None
    options = pytest.get("ini_options")
    return options if isinstance(options, dict) else pytest


def _as_paths(value: object) -> tuple[str, ...]:
    """An ini value (whitespace-separated, shell-quoted) or a TOML string or list of strings."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return tuple(value.split())
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()
