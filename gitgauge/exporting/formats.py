"""The export formats (`gitgauge export --format NAME`): one small interface and a registry, as
for every extension point (`core.registry`). A format says whether it writes to `--out` only
and whether it takes `--image`; `export` writes the tasks and says what it did."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.registry import Registry
from gitgauge.core.worktree import Warn


@dataclass(frozen=True)
class Exported:
    said: str | None
    """The line `export` prints when done (None: nothing)."""
    stdout: str | None = None
    """What goes to standard output instead of a file (without `--out`)."""


@dataclass(frozen=True)
class ExportOptions:
    """What `gitgauge export` asks of every format, its flags gathered once."""

    out: Path | None
    """`--out`: the file or folder to write (None: standard output)."""
    image: str | None
    """`--image`: the base image, for a format that `takes_image`."""
    force: bool
    """`--force`: replace `out` when it exists."""
    warn: Warn
    """Where a task that cannot be exported is reported."""


class ExportFormat(ABC):
    name: ClassVar[str]
    needs_out: ClassVar[bool] = False
    """It writes a folder: `--out` is required."""
    takes_image: ClassVar[bool] = False
    """It builds a container image: `--image` names its base."""

    @abstractmethod
    def export(self, tasks: Sequence[Task], repo: Repository, options: ExportOptions) -> Exported:
        """Write `tasks` (the exportable ones) of `repo` as `options` say."""


FORMATS: Registry[ExportFormat] = Registry(
    "export format", builtins="gitgauge.exporting.builtins", error=UsageError
)
"""Every export format, by name."""


def register(cls: type[ExportFormat]) -> type[ExportFormat]:
    FORMATS.add(cls.name, cls())
    return cls


def check_flags(name: str, *, out: Path | None, image: str | None) -> ExportFormat:
    """The format called `name`, once `--out` and `--image` suit it (else a `UsageError`)."""
    chosen = FORMATS.get(name)
    if chosen.needs_out and out is None:
        raise UsageError(f"--format {name} needs --out DIR (the folder to write)")
    if image is not None and not chosen.takes_image:
        takers = " or ".join(f"--format {f.name}" for f in FORMATS if f.takes_image)
        raise UsageError(f"--image applies to {takers} only")
    return chosen
