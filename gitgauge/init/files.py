"""The project's files as `init` reads them: the paths a checkout of HEAD holds (what every test run
sees), and their text from the working tree; TOML and JSON read without raising."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gitgauge.core.config_text import config_text
from gitgauge.core.config_text import toml_document as toml_document
from gitgauge.core.git import Repository

SKIPPED_DIRS = frozenset(
    {".git", ".gitgauge", ".venv", "venv", "node_modules", ".tox", ".nox", "build", "dist"}
)
"""Folders a walk of a repository without commits passes over (environments, builds)."""
WALK_LIMIT = 20_000


@dataclass(frozen=True)
class ProjectFiles:
    root: Path
    paths: tuple[str, ...]
    """Every file of HEAD (of the working tree, skipping environments, without a commit)."""
    _set: frozenset[str] = field(init=False, repr=False, compare=False)

    @classmethod
    def of(cls, repo: Repository) -> ProjectFiles:
        head = repo.head_sha()
        if head is not None:
            return cls(repo.root, tuple(repo.paths_at(head)))
        return cls(repo.root, tuple(_walk(repo.root)))

    def has(self, path: str) -> bool:
        return path in self._set

    def __post_init__(self) -> None:
        object.__setattr__(self, "_set", frozenset(self.paths))

    def text(self, path: str) -> str | None:
        """The file's text in the working tree; None when it is missing, too large or unreadable."""
        return config_text(self.root / path)

    def matching(self, accept: Callable[[PurePosixPath], bool]) -> Iterator[str]:
        for path in self.paths:
            if accept(PurePosixPath(path)):
                yield path


def _walk(root: Path) -> Iterator[str]:
    count = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        for name in sorted(names):
            count += 1
            if count > WALK_LIMIT:
                return
            yield (Path(folder) / name).relative_to(root).as_posix()


def json_document(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(a JSON object, None), or (None, why it is not one: the parser's words and line)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON (line {error.lineno}: {error.msg})"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, None


def table(document: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    """The nested table `keys` names (`table(doc, "tool", "pytest")`); empty when any is missing."""
    current: Any = document or {}
    for key in keys:
        current = current.get(key) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else {}
