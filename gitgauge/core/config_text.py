"""A project's own configuration files (pytest's, `pyproject.toml`, `package.json`) as gitgauge
reads them from a checkout: their text and their TOML, never raising. `core.testpaths` (the
folders pytest's `testpaths` names) and `init` (what the project declares) read them alike.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

MAX_CONFIG_BYTES = 1 << 20
"""A file larger than this is not read (no project's configuration is)."""


def config_text(path: Path) -> str | None:
    """The file's text; None when it is missing, not a file, too large or unreadable."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def toml_document(text: str) -> dict[str, Any] | None:
    """A TOML file's tables; None when it does not parse, or when there is no TOML reader (the
    standard library's, or on Python 3.10 `tomli` where it is installed: pytest's own dependency
    there)."""
    for module in ("tomllib", "tomli"):
        try:
            loads = importlib.import_module(module).loads
        except ImportError:
            continue
        try:
            return cast(dict[str, Any], loads(text))
        except ValueError:  # TOMLDecodeError
            return None
    return None
