"""`gitgauge init`: lay down gitgauge.yaml and .gitgauge/.gitignore, never overwriting a file."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.store import STATE_DIR, atomic_write_text

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


def init(repo_root: Path) -> InitOutcome:
    created: list[Path] = []
    kept: list[Path] = []
    for template, relative in TEMPLATE_FILES.items():
        target = repo_root / relative
        if target.exists() or target.is_symlink():
            kept.append(target)
            continue
        atomic_write_text(target, template_text(template))
        created.append(target)
    return InitOutcome(created=created, kept=kept)
