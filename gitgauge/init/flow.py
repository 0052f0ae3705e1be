"""`gitgauge init`, the use case: detect, show every choice with its source, run the command once
at HEAD for the timeouts, then write (a new file), propose (a diff against an existing one) or
apply; `--env` first makes the suite's environment. A project it cannot read gets the commented
template and one line saying what was looked for. Nothing existing is overwritten except by
`--write` (or `--env`, whose point is that the config uses the new environment), atomically."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from gitgauge.core.config import CONFIG_FILE, parse_config_text
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import atomic_write_text
from gitgauge.init import template
from gitgauge.init.detect import detect, settings_of
from gitgauge.init.environment import make_js_environment, make_python_environment
from gitgauge.init.files import ProjectFiles
from gitgauge.init.measure import measure, measured_line, suite_timeout_ms, timeout_reason
from gitgauge.init.python import ENV_DIR
from gitgauge.init.records import Detected, Settings, Unreadable
from gitgauge.init.render import propose, render_new, unified

Say = Callable[[str], None]
NEXT = "next: `gitgauge doctor` checks the setup, then `gitgauge mine`"


@dataclass(frozen=True)
class InitRequest:
    detect: bool = False
    """Show what detection gives (a diff), write nothing."""
    write: bool = False
    """Apply what detection gives to an existing gitgauge.yaml."""
    env: bool = False
    """Make the suite's environment first; the config then uses it."""


@dataclass(frozen=True)
class InitDone:
    created: tuple[Path, ...] = ()
    kept: tuple[Path, ...] = ()
    updated: tuple[Path, ...] = ()
    proposed: str | None = None
    """The diff shown and not written (`--detect`); None when nothing was proposed."""


def run_init(cwd: Path, request: InitRequest, *, env: Mapping[str, str], say: Say) -> InitDone:
    repo = Repository(cwd)
    root = repo.root
    path = root / CONFIG_FILE
    exists = path.exists() or path.is_symlink()
    dry = request.detect and not request.write
    if exists and not (request.detect or request.write or request.env):
        laid = template.init(root)
        _said_files(laid.created, laid.kept, say)
        say(f"{CONFIG_FILE} is kept: `gitgauge init --detect` shows what detection would change")
        return InitDone(tuple(laid.created), tuple(laid.kept))
    existing = path.read_text(encoding="utf-8") if exists else None
    if existing is not None:  # a broken file is its own error, named as every command names it
        parse_config_text(existing, RepoConfig, source=str(path))
    laid = template.init(root, only=("gitignore",)) if not dry else template.InitOutcome([], [])
    files = ProjectFiles.of(repo)
    found = detect(files, env=env)
    if request.env:
        found = _environment(files, found, env=env, say=say)
    if isinstance(found, Unreadable):
        return _unreadable(root, found, existing is not None, dry=dry, say=say, laid=laid)
    say(f"detected a {'Python' if found.ecosystem == 'python' else 'JavaScript'} project:")
    for choice in found.choices:
        say(f"  {choice.line()}")
    for line in (*found.also, *(f"note: {note}" for note in found.notes)):
        say(f"  {line}")
    settings = _measured(repo, existing, settings_of(found), say=say)
    text = propose(existing, settings) if existing is not None else render_new(settings)
    return _write(path, existing, text, request, say=say, laid=laid)


def _environment(
    files: ProjectFiles, found: Detected | Unreadable, *, env: Mapping[str, str], say: Say
) -> Detected | Unreadable:
    if isinstance(found, Unreadable):
        raise GitGaugeError(
            f"init --env: {found.looked_for}; there is nothing to make an environment for"
        )
    if found.ecosystem == "python":
        made = make_python_environment(files, env=env, say=say)
    else:
        made = make_js_environment(files, found.package_manager or "npm", env=env, say=say)
    say(f"environment: {made.path} ({made.tool})")
    for line in made.lines:
        say(f"  {line}")
    environment = ENV_DIR if found.ecosystem == "python" else None
    return detect(files, env=env, environment=environment)


def _measured(repo: Repository, existing: str | None, settings: Settings, *, say: Say) -> Settings:
    """The settings with `timeouts.test` from a run at HEAD (the file as it would be written)."""
    proposal = propose(existing, settings) if existing is not None else render_new(settings)
    config = parse_config_text(proposal, RepoConfig, source=CONFIG_FILE)
    say("running testCommand once at HEAD, as `gitgauge mine` will...")
    warnings: list[str] = []
    measured = measure(repo, config, warn=warnings.append)
    if isinstance(measured, str):
        say(f"  not measured: {measured}; timeouts keep their defaults")
        return settings
    say(f"  at HEAD ({measured.commit[:8]}): {measured_line(measured)}")
    if measured.problem:
        say(f"  warning: testCommand {measured.problem} (`gitgauge doctor` says more)")
    if not measured.finished:
        return settings
    milliseconds = suite_timeout_ms(measured.seconds)
    reason = timeout_reason(measured, milliseconds)
    say(f"  timeouts.test: {milliseconds}  ({reason})")
    comments = {**settings.comments, "timeouts": f"timeouts.test: {reason}"}
    return replace(settings, timeout_test_ms=milliseconds, comments=comments)


def _unreadable(
    root: Path, found: Unreadable, exists: bool, *, dry: bool, say: Say, laid: template.InitOutcome
) -> InitDone:
    say(f"init: {found.looked_for}")
    if exists or dry:
        say(f"nothing to propose: {CONFIG_FILE} {'is kept as it is' if exists else 'not written'}")
        return InitDone(tuple(laid.created), tuple(laid.kept))
    written = template.init(root, only=("gitgauge.yaml",))
    created = (*written.created, *laid.created)
    _said_files(list(created), [*written.kept, *laid.kept], say)
    say(f"next: set testCommand in {CONFIG_FILE} (every key is there, commented out)")
    return InitDone(created, tuple(laid.kept))


def _write(
    path: Path,
    existing: str | None,
    text: str,
    request: InitRequest,
    *,
    say: Say,
    laid: template.InitOutcome,
) -> InitDone:
    change = unified(existing, text, name=CONFIG_FILE)
    dry = request.detect and not request.write
    if existing is None and not dry:
        atomic_write_text(path, text)
        _said_files([path, *laid.created], laid.kept, say)
        say(NEXT)
        return InitDone((path, *laid.created), tuple(laid.kept))
    if not change:
        say(f"{CONFIG_FILE} already holds what detection found: nothing to change")
        return InitDone(tuple(laid.created), (path, *laid.kept))
    say(change.rstrip("\n"))
    if dry:
        how = (
            "`gitgauge init` writes it"
            if existing is None
            else "`gitgauge init --write` applies it"
        )
        say(f"nothing written (--detect): {how}")
        return InitDone(tuple(laid.created), tuple(laid.kept), proposed=change)
    atomic_write_text(path, text)
    say(f"updated {path}")
    say(NEXT)
    return InitDone(tuple(laid.created), tuple(laid.kept), updated=(path,))


def _said_files(created: list[Path], kept: list[Path], say: Say) -> None:
    for path in created:
        say(f"created {path}")
    for path in kept:
        say(f"kept existing {path}")
