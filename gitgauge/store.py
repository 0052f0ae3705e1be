"""The `.gitgauge/` layout, atomic writes and schema-version checks.

Every write goes to a temporary file in the same directory and is `os.replace`d into place, so a
crash or a full disk leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gitgauge.errors import GitGaugeError, TaskError
from gitgauge.records import TASK_SCHEMA_VERSION, Task

STATE_DIR = ".gitgauge"


class StorageError(GitGaugeError):
    """A file under `.gitgauge/` could not be written."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError):
            raise StorageError(f"could not write {path}: {error.strerror or error}") from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (prompts, bodies) as `|` blocks, so task files are easy to review."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def dump_yaml(value: Any) -> str:
    return yaml.dump(value, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False, width=100)


class Store:
    """`.gitgauge/` of one repository."""

    def __init__(self, repo_root: Path) -> None:
        self.root = repo_root / STATE_DIR
        self.tasks_dir = self.root / "tasks"
        self.runs_dir = self.root / "runs"

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.yaml"

    def save_task(self, task: Task) -> Path:
        path = self.task_path(task.id)
        atomic_write_text(path, dump_yaml(task.model_dump(mode="json")))
        return path

    def load_task_file(self, path: Path) -> Task:
        """One task file; raise `TaskError` naming the file when it cannot be used."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            raise TaskError(f"{path}: cannot read task file ({_short(error)})") from None
        if not isinstance(raw, dict):
            raise TaskError(f"{path}: not a task file (expected a mapping)")
        version = raw.get("schemaVersion")
        if isinstance(version, int) and version > TASK_SCHEMA_VERSION:
            raise TaskError(
                f"{path}: schemaVersion {version} is newer than this gitgauge understands "
                f"({TASK_SCHEMA_VERSION}); upgrade gitgauge"
            )
        try:
            return Task.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise TaskError(f"{path}: {key}: {first['msg']}") from None

    def load_tasks(self, *, warn: Callable[[str], None]) -> list[Task]:
        """Every usable task, sorted by id; unusable files are skipped with a warning."""
        tasks: list[Task] = []
        if not self.tasks_dir.is_dir():
            return tasks
        for path in sorted(self.tasks_dir.glob("*.yaml")):
            try:
                tasks.append(self.load_task_file(path))
            except TaskError as error:
                warn(f"skipping {error}")
        return sorted(tasks, key=lambda task: task.id)

    def mined_fix_shas(self, *, warn: Callable[[str], None]) -> set[str]:
        return {task.fix for task in self.load_tasks(warn=warn)}


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:200]
