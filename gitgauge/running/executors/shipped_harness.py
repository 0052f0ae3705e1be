"""A config's harness as it travels to a Ray node: the content of its `files` sources and its
`configDir` read once on the driver (never a `.credentials.json`), checked against what the run
recorded, and written out again in the pair's folder on the node, where the same `harness`
code lays it into the workspace as on the driver.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core.fingerprint import CREDENTIALS_FILE, HarnessRecord, HarnessSources
from gitgauge.running.harness import Harness


@dataclass(frozen=True)
class ShippedSource:
    """One local source of a harness, by value: a file, or a folder's files and folders."""

    is_dir: bool
    files: dict[str, tuple[bytes, int]]
    """Relative path ("" for a file source) -> (content, permission bits)."""
    dirs: tuple[str, ...] = ()
    """A folder source's sub-folders (empty ones too, as a copy of the folder has them)."""


@dataclass(frozen=True)
class ShippedHarness:
    """A config's `files` sources and `configDir` as they were read on the driver: a node has
    none of the driver's paths. A config directory's credentials file stays behind (the node's
    own claude login is used, as `harness.agent_config_dir` does when a copy has none); the
    `env` values are not here (they travel in memory with the config, and are never written)."""

    files: dict[str, ShippedSource | None]
    """Workspace path -> its source (None: the config removes the path)."""
    config_dir: ShippedSource | None

    def digests(self) -> tuple[dict[str, str | None], dict[str, str] | None]:
        """sha256 per overlaid workspace path and per configDir file, keyed as the run's
        `HarnessRecord` keys them."""
        files: dict[str, str | None] = {}
        for destination, source in self.files.items():
            if source is None:
                files[destination] = None
                continue
            for relative, (data, _) in source.files.items():
                target = str(PurePosixPath(destination, relative)) if relative else destination
                files[target] = hashlib.sha256(data).hexdigest()
        if self.config_dir is None:
            return files, None
        config = {
            relative: hashlib.sha256(data).hexdigest()
            for relative, (data, _) in self.config_dir.files.items()
        }
        return files, config


def ship_harness(harness: Harness) -> ShippedHarness:
    """Read the harness's sources (symlinks followed: they are copied as content locally too)."""
    files = {
        destination: None if local is None else _read_source(local, skip_credentials=False)
        for destination, local in harness.sources.files.items()
    }
    folder = harness.sources.config_dir
    config_dir = None if folder is None else _read_source(folder, skip_credentials=True)
    return ShippedHarness(files=files, config_dir=config_dir)


def harness_changes(shipped: ShippedHarness, record: HarnessRecord) -> list[str]:
    """What of the shipped sources differs from what the run recorded (empty: nothing)."""
    files, config_dir = shipped.digests()
    recorded_files = {k: v.sha256 if v else None for k, v in record.files.items()}
    changed = sorted(
        path
        for path in set(files) | set(recorded_files)
        if files.get(path, "") != recorded_files.get(path, "")
    )
    found = [f"files: {path}" for path in changed]
    recorded_dir = (
        None if record.configDir is None else {k: v.sha256 for k, v in record.configDir.items()}
    )
    if config_dir != recorded_dir:
        found.append("configDir")
    return found


def _read_source(path: Path, *, skip_credentials: bool) -> ShippedSource:
    if not path.is_dir():
        return ShippedSource(is_dir=False, files={"": _read_file(path)})
    files: dict[str, tuple[bytes, int]] = {}
    dirs: list[str] = []
    for folder, subdirs, names in os.walk(path, followlinks=True):
        subdirs.sort()
        here = Path(folder)
        if here != path:
            dirs.append(here.relative_to(path).as_posix())
        for name in sorted(names):
            if skip_credentials and name == CREDENTIALS_FILE:
                continue
            files[(here / name).relative_to(path).as_posix()] = _read_file(here / name)
    return ShippedSource(is_dir=True, files=files, dirs=tuple(dirs))


def _read_file(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mode & 0o777


def materialize_harness(shipped: ShippedHarness, harness: Harness, folder: Path) -> Harness:
    """`harness` with its sources laid out under `folder` (the pair's node directory), from
    what was shipped: overlays and configDir then work as on the driver."""
    files: dict[str, Path | None] = {}
    for index, (destination, source) in enumerate(sorted(shipped.files.items())):
        files[destination] = None if source is None else _write_source(source, folder / str(index))
    config_dir = None
    if shipped.config_dir is not None:
        config_dir = _write_source(shipped.config_dir, folder / "configDir")
    return dataclasses.replace(harness, sources=HarnessSources(files, config_dir))


def _write_source(source: ShippedSource, target: Path) -> Path:
    if not source.is_dir:
        data, mode = source.files[""]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(mode)
        return target
    target.mkdir(parents=True)
    for relative in source.dirs:
        (target / relative).mkdir(parents=True, exist_ok=True)
    for relative, (data, mode) in source.files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
    return target
