"""What defines a harness configuration, recorded per run so runs can be resumed and compared.

`.gitgauge/runs/<run>/harness/<config>/harness.json` holds a `HarnessRecord`: the config's
settings (adapter, model, args, command, prompt template), a digest per `env` name (of the value
as written in the YAML, never the value), and a digest per overlaid file and per file of the
config directory. Beside it, `files/` and `configDir/` keep a text snapshot of those files
(size-capped, never a credentials file), so `gitgauge compare` can count changed lines later.
Reporting reads these records too, so they live in core.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr

from gitgauge.core.schema import AgentConfig
from gitgauge.core.store import atomic_write_bytes, atomic_write_json, config_dir_name

HARNESS_SCHEMA_VERSION = 1
HARNESS_FILE = "harness.json"
CREDENTIALS_FILE = ".credentials.json"
"""The claude CLI's login file in a config directory: never fingerprinted or snapshotted."""
SNAPSHOT_FILE_LIMIT = 256 * 1024
"""Largest file kept in a snapshot (bigger ones are fingerprinted only)."""
SNAPSHOT_TOTAL_LIMIT = 8 * 1024 * 1024
"""Most bytes one config's snapshot keeps."""
REDACTED = "***"
"""What the manifest shows instead of an `env` value."""


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    sha256: StrictStr
    """Digest of the file's content."""
    size: StrictInt
    snapshot: bool = False
    """Whether a text copy is kept in the snapshot folder."""


class HarnessRecord(BaseModel):
    """`harness/<config>/harness.json`: everything that defines one config of a run."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = HARNESS_SCHEMA_VERSION
    config: StrictStr
    """Agent config name."""
    fingerprint: StrictStr
    """Digest of all the fields below: equal fingerprints, equal harnesses."""
    settings: dict[str, Any]
    """adapter, model, args, command and prompt as the YAML gives them."""
    env: dict[str, str]
    """Variable name -> digest of the value as written in the YAML (never the value itself)."""
    files: dict[str, FileEntry | None]
    """Workspace path of every overlaid file (a directory source listed file by file) -> its
    content; None for a path the config removes."""
    configDir: dict[str, FileEntry] | None = None
    """Path inside the config directory -> its content; None: no configDir."""


@dataclass(frozen=True)
class HarnessSources:
    """A config's local inputs, resolved against the config file's folder."""

    files: dict[str, Path | None]
    """Workspace path -> absolute source (None: remove it from the workspace)."""
    config_dir: Path | None


def source_files(source: Path) -> Iterator[tuple[str, Path]]:
    """`(relative path, file)` for a file source ("") or every file under a directory source,
    symlinks followed (sources are copied as content), in a stable order."""
    if not source.is_dir():
        yield "", source
        return
    for folder, dirs, names in os.walk(source, followlinks=True):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            yield path.relative_to(source).as_posix(), path


def overlaid_paths(destination: str, source: Path) -> list[str]:
    """Every workspace path that laying `source` at `destination` writes."""
    return [
        str(PurePosixPath(destination, relative)) if relative else destination
        for relative, _ in source_files(source)
    ]


def build(config: AgentConfig, sources: HarnessSources) -> tuple[HarnessRecord, dict[str, bytes]]:
    """The record of `config` and the snapshot's contents (snapshot path -> bytes)."""
    snapshot: dict[str, bytes] = {}
    budget = [SNAPSHOT_TOTAL_LIMIT]

    def entry(path: Path, snapshot_path: str) -> FileEntry:
        data = path.read_bytes()
        keep = _is_text(data) and len(data) <= min(SNAPSHOT_FILE_LIMIT, budget[0])
        if keep:
            snapshot[snapshot_path] = data
            budget[0] -= len(data)
        return FileEntry(sha256=hashlib.sha256(data).hexdigest(), size=len(data), snapshot=keep)

    files: dict[str, FileEntry | None] = {}
    for destination, source in sorted(sources.files.items()):
        if source is None:
            files[destination] = None
            continue
        for relative, path in source_files(source):
            target = str(PurePosixPath(destination, relative)) if relative else destination
            files[target] = entry(path, f"files/{target}")
    config_dir: dict[str, FileEntry] | None = None
    if sources.config_dir is not None:
        config_dir = {}
        for relative, path in source_files(sources.config_dir):
            if PurePosixPath(relative).name != CREDENTIALS_FILE:
                config_dir[relative] = entry(path, f"configDir/{relative}")
    settings = {
        "adapter": config.adapter,
        "model": config.model,
        "args": list(config.args),
        "command": config.command,
        "prompt": config.prompt,
    }
    env = {
        name: hashlib.sha256(f"{name}\0{value}".encode()).hexdigest()[:16]
        for name, value in sorted(config.env.items())
    }
    defining = {
        "settings": settings,
        "env": env,
        "files": {k: v.sha256 if v else None for k, v in files.items()},
        "configDir": None if config_dir is None else {k: v.sha256 for k, v in config_dir.items()},
    }
    digest = hashlib.sha256(json.dumps(defining, sort_keys=True).encode()).hexdigest()
    record = HarnessRecord(
        config=config.name,
        fingerprint=digest,
        settings=settings,
        env=env,
        files=files,
        configDir=config_dir,
    )
    return record, snapshot


def redacted(config: AgentConfig) -> AgentConfig:
    """`config` as a manifest stores it: `env` names kept, values replaced."""
    if not config.env:
        return config
    return config.model_copy(update={"env": dict.fromkeys(config.env, REDACTED)})


def harness_dir(run_dir: Path, config_name: str) -> Path:
    return run_dir / "harness" / config_dir_name(config_name)


def save(run_dir: Path, record: HarnessRecord, snapshot: Mapping[str, bytes]) -> None:
    folder = harness_dir(run_dir, record.config)
    for relative, data in snapshot.items():
        atomic_write_bytes(folder / relative, data)
    atomic_write_json(folder / HARNESS_FILE, record.model_dump(mode="json"))


@dataclass(frozen=True)
class StoredHarness:
    record: HarnessRecord
    folder: Path

    def text(self, snapshot_path: str) -> str | None:
        """A snapshot file's text, or None when it was not kept."""
        try:
            return (self.folder / snapshot_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def load(run_dir: Path, config_name: str) -> StoredHarness | None:
    """The stored harness of a config, or None (older runs, an unreadable file)."""
    folder = harness_dir(run_dir, config_name)
    try:
        raw = json.loads((folder / HARNESS_FILE).read_text(encoding="utf-8"))
        found = raw.get("schemaVersion") if isinstance(raw, dict) else None
        if isinstance(found, int) and found > HARNESS_SCHEMA_VERSION:
            return None
        return StoredHarness(HarnessRecord.model_validate(raw), folder)
    except (OSError, ValueError):
        return None


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
