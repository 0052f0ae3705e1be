"""Plain files written by hand, outside any repository."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_files(folder: Path, files: Mapping[str, str]) -> Path:
    """`folder` (made if missing) holding `files` (path relative to it -> text); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
