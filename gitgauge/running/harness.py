"""A config's harness in every workspace: its `files` overlaid after setupCommand (and taken out of
what the agent left before scoring: `Checkout.reset_paths` in `pair.py`), its `configDir` copied
afresh per pair, its `env` resolved.

Everything a config names is checked before any work starts (`prepare`); every problem is a
one-line `ConfigError` naming the config file and the key.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core import fingerprint
from gitgauge.core.environment import interpolate
from gitgauge.core.errors import ConfigError, GitGaugeError
from gitgauge.core.fingerprint import CREDENTIALS_FILE, HarnessSources, overlaid_paths
from gitgauge.core.paths import is_protected, is_test_file
from gitgauge.core.schema import AgentConfig
from gitgauge.running.scoring.protect import ensure_inside


@dataclass(frozen=True)
class Harness:
    """A config's checked harness: what to lay, which config dir to copy, the agent's env."""

    source: str
    """The config file, for messages."""
    sources: HarnessSources
    env: dict[str, str]
    """`env` with `${NAME}` references resolved (never written anywhere)."""

    @property
    def overlays(self) -> list[str]:
        """The workspace paths the harness replaces or removes."""
        return sorted(self.sources.files)


def prepare(config: AgentConfig, *, source: str, environ: Mapping[str, str]) -> Harness:
    """Check and resolve `config`'s files, configDir and env; raise `ConfigError` on the first
    problem, before any workspace exists."""
    folder = Path(source).parent
    files: dict[str, Path | None] = {}
    for written, local in config.files.items():
        destination = _destination(written, source)
        if destination in files:
            raise ConfigError(f"{source}: files: {written!r} is listed twice")
        if local is None:
            if is_protected(destination) or is_test_file(f"{destination}/x"):
                raise ConfigError(_protected(source, written, destination))
            files[destination] = None
            continue
        path = (folder / local).absolute()
        if not path.exists():
            raise ConfigError(
                f"{source}: files: {written}: source {local!r} not found ({path}; paths are "
                "relative to the config file's folder)"
            )
        for target in overlaid_paths(destination, path):
            if is_protected(target):
                raise ConfigError(_protected(source, written, target))
        files[destination] = path
    for destination in files:
        for other in files:
            if other != destination and PurePosixPath(other).is_relative_to(destination):
                raise ConfigError(
                    f"{source}: files: {other!r} lies inside {destination!r}; list one of them"
                )
    config_dir: Path | None = None
    if config.configDir is not None:
        config_dir = (folder / config.configDir).absolute()
        if not config_dir.is_dir():
            raise ConfigError(
                f"{source}: configDir: {config.configDir!r} is not a directory ({config_dir}; "
                "paths are relative to the config file's folder)"
            )
    env = {
        name: interpolate(value, key=f"env: {name}", source=source, environ=environ)
        for name, value in config.env.items()
    }
    return Harness(source=source, sources=HarnessSources(files, config_dir), env=env)


def check_links(harness: Harness, link: Sequence[str]) -> None:
    """Refuse a `files` path that is, holds or lies inside a `worktree.link` directory: laying it
    would write into (or unlink) your real directory."""
    for destination in harness.overlays:
        for name in link:
            linked = PurePosixPath(name)
            path = PurePosixPath(destination)
            if path.is_relative_to(linked) or linked.is_relative_to(path):
                raise ConfigError(
                    f"{harness.source}: files: {destination!r} overlaps worktree.link {name!r} "
                    "of gitgauge.yaml (a link to your real directory); choose another path"
                )


def _destination(written: str, source: str) -> str:
    path = PurePosixPath(written)
    where = f"{source}: files: {written!r}"
    if not written.strip() or not path.parts or written.strip() in {".", "./"}:
        raise ConfigError(f"{where}: name a file or folder inside the workspace")
    if path.is_absolute() or re.match(r"^[A-Za-z]:", written) or "\\" in written:
        raise ConfigError(f"{where}: must be a path relative to the workspace root, like CLAUDE.md")
    if ".." in path.parts:
        raise ConfigError(f"{where}: escapes the workspace (..); write a path inside it")
    if ".git" in path.parts:
        raise ConfigError(f"{where}: is inside .git; gitgauge never writes git's own files")
    return str(path)


def _protected(source: str, written: str, path: str) -> str:
    return (
        f"{source}: files: {written!r}: {path} is a protected test or test-infrastructure path; "
        "a harness may not change what scores the agent"
    )


def record(run_dir: Path, config: AgentConfig, harness: Harness) -> str:
    """Write the config's fingerprint and snapshot under the run; return the fingerprint."""
    recorded, snapshot = fingerprint.build(config, harness.sources)
    fingerprint.save(run_dir, recorded, snapshot)
    return recorded.fingerprint


def overlay(harness: Harness, workspace: Path) -> None:
    """Lay the config's files into a fresh workspace (sources copied as content, never linked)."""
    for destination, local in sorted(harness.sources.files.items()):
        ensure_inside(workspace, [destination])
        target = workspace / destination
        try:
            _remove(target)
            if local is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if local.is_dir():
                shutil.copytree(local, target, symlinks=False)
            else:
                shutil.copyfile(local, target)
        except OSError as error:
            raise GitGaugeError(
                f"{harness.source}: files: could not lay {destination} into the workspace: "
                f"{error.strerror or error}"
            ) from None


@contextmanager
def overlaid(harness: Harness, workspace: Path, *, keep: Path) -> Iterator[None]:
    """The config's files laid into a workspace that is no checkout of gitgauge's (a fixture's
    repository, whose state is graded as the agent left it) while the agent runs, then taken
    out: whatever stood at those paths before (moved to `keep` meanwhile) is put back."""
    kept: list[tuple[Path, Path]] = []
    for index, destination in enumerate(harness.overlays):
        ensure_inside(workspace, [destination])
        target = workspace / destination
        if target.exists() or target.is_symlink():
            saved = keep / str(index)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.move(str(target), saved)
            kept.append((target, saved))
    try:
        overlay(harness, workspace)
        yield
    finally:
        for destination in harness.overlays:
            _remove(workspace / destination)
        for target, saved in kept:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(saved), target)


def _remove(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)


@contextmanager
def agent_config_dir(harness: Harness, *, environ: Mapping[str, str]) -> Iterator[Path | None]:
    """A fresh copy of the config's `configDir` for one pair (None without one), removed after.

    When the copy holds no `.credentials.json`, the user's claude.ai login is copied into it
    (from `$CLAUDE_CONFIG_DIR` or `~/.claude`), so a subscription login keeps working; an API
    key in the environment works as always.
    """
    original = harness.sources.config_dir
    if original is None:
        yield None
        return
    holder = Path(tempfile.mkdtemp(prefix="gitgauge-claude-config-"))
    try:
        copy = holder / "config"
        try:
            shutil.copytree(original, copy, symlinks=False)
        except OSError as error:
            raise GitGaugeError(
                f"{harness.source}: configDir: could not copy {original}: {error}"
            ) from None
        login = _login_file(environ)
        if not (copy / CREDENTIALS_FILE).exists() and login is not None:
            shutil.copyfile(login, copy / CREDENTIALS_FILE)
            os.chmod(copy / CREDENTIALS_FILE, 0o600)
        yield copy
    finally:
        shutil.rmtree(holder, ignore_errors=True)


def _login_file(environ: Mapping[str, str]) -> Path | None:
    own = environ.get("CLAUDE_CONFIG_DIR")
    folder = Path(own) if own else Path(environ.get("HOME") or Path.home()) / ".claude"
    path = folder / CREDENTIALS_FILE
    return path if path.is_file() else None
