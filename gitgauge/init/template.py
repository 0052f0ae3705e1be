"""The files `gitgauge init` lays down from `.gitgauge-template/` (the commented gitgauge.yaml of a
project it cannot read, and .gitgauge/.gitignore), and `gitgauge examples`, never overwriting a
file."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.store import STATE_DIR, atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:  # importlib.abc's name on Python 3.10, where gitgauge still runs
    from importlib.abc import Traversable

# Template file (in .gitgauge-template/, shipped as gitgauge.template) -> where init writes it.
TEMPLATE_FILES = {
    "gitgauge.yaml": Path(CONFIG_FILE),
    "gitignore": Path(STATE_DIR) / ".gitignore",
}


@dataclass(frozen=True)
class InitOutcome:
    created: list[Path]
    kept: list[Path]


def template_text(name: str) -> str:
    return resources.files("gitgauge.template").joinpath(name).read_text(encoding="utf-8")


def init(repo_root: Path, *, only: tuple[str, ...] | None = None) -> InitOutcome:
    """The template files (`only` those of `TEMPLATE_FILES` named) at `repo_root`, each only
    where there is none yet."""
    created: list[Path] = []
    kept: list[Path] = []
    for template, relative in TEMPLATE_FILES.items():
        if only is not None and template not in only:
            continue
        target = repo_root / relative
        if target.exists() or target.is_symlink():
            kept.append(target)
            continue
        atomic_write_text(target, template_text(template))
        created.append(target)
    return InitOutcome(created=created, kept=kept)


EXAMPLES_DIR = "gitgauge-examples"
"""Where `gitgauge examples` writes without a DIR (not `examples/`: many projects have one)."""


def write_examples(target: Path) -> InitOutcome:
    """The shipped sample agent configs (and the harness example's files) under `target`, never
    overwriting a file."""
    created: list[Path] = []
    kept: list[Path] = []

    def copy(source: Traversable, destination: Path) -> None:
        for entry in sorted(source.iterdir(), key=lambda item: item.name):
            if entry.name in ("__init__.py", "__pycache__"):
                continue
            if entry.is_dir():
                copy(entry, destination / entry.name)
                continue
            path = destination / entry.name
            if path.exists() or path.is_symlink():
                kept.append(path)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, entry.read_bytes())
            created.append(path)

    copy(resources.files("gitgauge.examples"), target)
    return InitOutcome(created=created, kept=kept)
