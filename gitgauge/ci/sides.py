"""The two configs a check compares, built from one agent config: the same adapter, model, args,
env and prompt; each side's harness files laid in from its own ref (`files:` entries of files
written from git under `.gitgauge/ci/<side>/`, or `null` where that ref has none).

The config's own `files` and `configDir` stay as written, their paths made absolute (the side's
config lives elsewhere); a `files` entry on a harness path would hide the change and is refused.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from gitgauge.ci.refs import HarnessChange, HarnessPath, write_side
from gitgauge.core.errors import ConfigError
from gitgauge.core.git import Repository
from gitgauge.core.schema import AgentConfig

SIDES = ("base", "head")


@dataclass(frozen=True)
class Side:
    side: str
    """`base` or `head`."""
    name: str
    """The config's name on this side (`<name>-base`, `<name>-head`)."""
    path: Path
    """The side's config file."""
    commit: str


def build_sides(
    repo: Repository,
    config: AgentConfig,
    source: Path,
    change: HarnessChange,
    paths: Sequence[HarnessPath],
    folder: Path,
) -> tuple[Side, Side]:
    """Both sides' config files written under `folder` (made afresh)."""
    refuse_overlap(config, paths, source)
    if folder.exists():
        shutil.rmtree(folder)
    made: list[Side] = []
    for side, commit in zip(SIDES, (change.base, change.head), strict=True):
        overlay = _side_files(repo, paths, (change.base, change.head), commit, folder / side)
        fields = _fields(config, source.resolve().parent, overlay)
        name = f"{config.name}-{side}"
        fields["name"] = name
        path = folder / side / "agent.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(fields, sort_keys=False), encoding="utf-8")
        made.append(Side(side, name, path, commit))
    return made[0], made[1]


def _side_files(
    repo: Repository,
    paths: Sequence[HarnessPath],
    commits: Sequence[str],
    commit: str,
    folder: Path,
) -> dict[str, str | None]:
    """Workspace path -> this side's copy (None: this ref has none, the other does)."""
    overlay: dict[str, str | None] = {}
    for path in paths:
        dest = folder / "files" / path.path
        if write_side(repo, commit, path, dest):
            overlay[path.path] = str(dest)
        elif any(
            write_side(repo, other, path, folder / "probe" / path.path)
            for other in commits
            if other != commit
        ):
            overlay[path.path] = None
    probe = folder / "probe"
    if probe.exists():
        shutil.rmtree(probe)
    return overlay


def _fields(config: AgentConfig, home: Path, overlay: dict[str, str | None]) -> dict[str, object]:
    fields = config.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    fields.pop("harnessFiles", None)
    files = {
        key: (None if value is None else str((home / value).resolve()))
        for key, value in config.files.items()
    }
    fields["files"] = {**files, **overlay}
    if config.configDir is not None:
        fields["configDir"] = str((home / config.configDir).resolve())
    return fields


def refuse_overlap(config: AgentConfig, paths: Sequence[HarnessPath], source: Path) -> None:
    """A `files` entry on (or over, or under) a harness path would hide the change: refused."""
    for key in config.files:
        key_path = key.strip("/")
        for path in paths:
            if (
                key_path == path.path
                or key_path.startswith(path.path + "/")
                or path.path.startswith(key_path + "/")
            ):
                raise ConfigError(
                    f"{source}: files: {key!r} overlays the harness path {path.path!r} that "
                    "`gitgauge ci` takes from each ref; drop it from files (or from harnessFiles)"
                )
