"""The sandbox policy: what an agent (and the scoring test commands) can see, as a `bwrap` argv.

One module owns the policy (the README's "What an agent sees" table is this file in prose), so
that every mount an agent gets is read in one place; where a program's installation, the
programs a command names and the PATH directories are on this machine is `sandbox_paths.py`'s:

- the workspace read-write at its own path; its git metadata as gitgauge recorded it, never as
  the workspace's `.git` file says (the agent's own git directory read-write, the history copy's
  object stores read-only; for a test run, gitgauge's git directory for the checkout read-only);
- the system read-only (`/usr`, `/etc`, `/bin`, `/lib`, `/opt`, ...), the directories on PATH,
  and the installation of every program a config or `testCommand` names, wherever it lives (a
  virtualenv's base interpreter too: its `bin/python` only leads there);
- a private `/tmp` (so no other workspace or history copy of gitgauge), a private `/proc` (own PID
  namespace) and a minimal `/dev`;
- `$HOME` as a throwaway writable view: its entries read-only, new files allowed in it and in
  `~/.cache`, `~/.config`, `~/.local/{share,state}`, `~/.npm`, `~/.yarn` (gone with the
  command), except the entries the agent must write for real (`~/.claude`, `~/.claude.json` for
  the claude CLI, `~/.codex` for codex; `run.sandbox_home_writable` adds more) and an agent's own
  state directory that lives elsewhere (a `CODEX_HOME` outside `$HOME`), read-write;
- the user's repository (with `.gitgauge/`) and its git directory not present at all, hidden
  after every other mount so nothing exposed brings them back, except the `worktree.link`
  directories, read-only;
- the network shared, unless `run.sandbox_network: false`.

Processes inside get no capabilities (`--cap-drop ALL`: run as root, bwrap would otherwise keep
them, and a root agent could unmount what hides the repository) and die with gitgauge
(`--die-with-parent`; the PID namespace ends with its first process).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitgauge.core import process
from gitgauge.core.sandbox_paths import PSEUDO_FILE_SYSTEMS as PSEUDO_FILE_SYSTEMS
from gitgauge.core.sandbox_paths import SandboxError as SandboxError
from gitgauge.core.sandbox_paths import (
    agent_home_missing,
    create_home_entries,
    refuse_writable_repository,
    repository_parts,
    under,
    venv_bases,
)
from gitgauge.core.sandbox_paths import command_paths as command_paths
from gitgauge.core.sandbox_paths import git_common_dir as git_common_dir
from gitgauge.core.sandbox_paths import installation as installation
from gitgauge.core.sandbox_paths import path_dirs as path_dirs

SandboxMode = Literal["auto", "bwrap", "none"]
BWRAP_ENV = "GITGAUGE_BWRAP"
"""Overrides the `bwrap` binary (a path, or a name looked up on PATH)."""
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SYSTEM_DIRS_OPTIONAL = ("/nix", "/snap")
CLAUDE_HOME_WRITABLE = (".claude/", ".claude.json")
"""What the claude CLI writes in $HOME: its settings, sessions and its state file."""
CODEX_HOME_WRITABLE = (".codex/",)
"""What codex writes in $HOME (without CODEX_HOME): its sessions, logs and helper binaries."""
USERNS_SYSCTLS = (
    "kernel.unprivileged_userns_clone",
    "user.max_user_namespaces",
    "kernel.apparmor_restrict_unprivileged_userns",
)
INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"


def find_bwrap(env: Mapping[str, str]) -> str | None:
    name = env.get(BWRAP_ENV) or "bwrap"
    return shutil.which(name, path=env.get("PATH", os.defpath))


def probe(env: Mapping[str, str], *, network: bool) -> tuple[str | None, str]:
    """(the bwrap binary, "") when a trial sandbox works here, else (None, the reason)."""
    if not sys.platform.startswith("linux"):
        return None, f"bubblewrap needs Linux namespaces (this is {sys.platform})"
    binary = find_bwrap(env)
    if binary is None:
        return None, f"bubblewrap is not installed (no `bwrap` on PATH): {INSTALL_HINT}"
    trial = [binary, "--ro-bind", "/", "/", *_namespace_flags(network=network), "true"]
    result = process.run(trial, cwd=Path("/"), timeout_seconds=30)
    if result.ok:
        return binary, ""
    said = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
    said = said.splitlines()[-1] if said else ""
    return None, (
        f"`bwrap` cannot create a sandbox here ({said}): user namespaces may be disabled; "
        f"check `sysctl {' '.join(USERNS_SYSCTLS)}`"
    )


def _namespace_flags(*, network: bool) -> list[str]:
    flags = ["--die-with-parent", "--unshare-pid", "--cap-drop", "ALL"]
    flags += ["--proc", "/proc", "--dev", "/dev"]
    if not network:
        flags.append("--unshare-net")
    return flags


HOME_VIEWS = (".cache", ".config", ".local", ".local/share", ".local/state", ".npm", ".yarn")
"""$HOME directories whose new entries a sandboxed command may create (and lose with the
command): tools write caches, state and logs there. $HOME itself is one too."""


@dataclass(frozen=True)
class Mounts:
    """One sandboxed command's own paths, from gitgauge's records of the pair: never read from
    the workspace (a `.git` file or an `objects/info/alternates` there is the agent's)."""

    workspace: Path
    """Read-write, at its own path; the command's working directory."""
    read_only: tuple[Path, ...] = ()
    """gitgauge's git directory for the workspace, the object stores it reads."""
    writable: tuple[Path, ...] = ()
    """The agent's own git directory, its copy of a `configDir`, a report directory."""


@dataclass(frozen=True)
class Sandbox:
    """The run-wide part of the policy; `argv(...)` adds one command's mounts and gives the
    prefix."""

    bwrap: str
    network: bool
    home: Path | None
    hidden: tuple[Path, ...]
    """Present nowhere inside: the user's repository (with `.gitgauge/`) and its git
    directory. Hidden again after every other mount, so no exposed directory that holds them
    brings them back."""
    temp_root: Path
    """Where gitgauge makes its checkouts and history copies (hidden, but for this command's)."""
    exposed_dirs: tuple[Path, ...] = ()
    """Installations (PATH entries, agent binaries, interpreters), read-only."""
    exposed_files: tuple[Path, ...] = ()
    """Single files a command names (a script run as `sh /path/agent.sh`), read-only."""
    links: tuple[Path, ...] = ()
    """`worktree.link` directories of the repository, read-only at their own paths."""
    home_writable: tuple[str, ...] = field(default_factory=tuple)
    """Entries of $HOME mounted read-write for agents (relative; a trailing / is a directory)."""
    agent_writable: tuple[Path, ...] = ()
    """Directories outside $HOME mounted read-write for agents (a `CODEX_HOME` elsewhere)."""

    def argv(self, mounts: Mounts, *, agent: bool) -> list[str]:
        """The `bwrap ...` prefix for a command of a pair (the agent's, when `agent`, or a test
        run's) with its `mounts`: the system, a private /tmp, the $HOME view, the installations
        and named files (and an agent's writable places), then the repository hidden, then its
        links and this command's own paths."""
        binds = _Binds([self.bwrap, *_namespace_flags(network=self.network)])
        _system(binds)
        binds.args.extend(["--tmpfs", "/tmp"])
        agent_entries = self._agent_home_entries() if agent else {}
        if self.home is not None and self.home.is_dir() and self.home != Path("/"):
            binds.args.extend(self._home_view(agent_entries))
            binds.visible.append(self.home)
        self._installations(binds)
        for file in self.exposed_files:
            binds.ro(file)
        if agent:
            for path in self.agent_writable:
                binds.rw(path)
        # The repository and its git directory go, whatever above showed them...
        for path in self.hidden:
            if under(path, [*binds.visible, Path("/tmp")]):
                binds.args.extend(["--tmpfs", str(path)])
        # ...except its linked dependency directories, read-only, and this command's own paths,
        # which gitgauge chose (its stores may lie in the hidden git directory: mining reads
        # the repository's own objects).
        for link in self.links:
            binds.args.extend(_link_binds(link))
        return [*binds.args, *_own_binds(mounts, self.hidden)]

    def _installations(self, binds: _Binds) -> None:
        """The exposed installations read-only, shortest first (what an earlier one shows is
        not bound again), and gitgauge's temporary directory emptied but for those inside it."""
        exposed = sorted(set(self.exposed_dirs), key=lambda p: len(p.parts))
        inside_temp = [p for p in exposed if under(p, [self.temp_root]) and p != self.temp_root]
        for path in exposed:
            if path not in inside_temp and not under(path, binds.visible):
                binds.ro(path)
        # Other commands' checkouts and history copies go; an installation inside the
        # temporary directory (a binary under $TMPDIR) comes back.
        if self.temp_root != Path("/tmp") and under(self.temp_root, binds.visible):
            binds.args.extend(["--tmpfs", str(self.temp_root)])
        for path in inside_temp:
            binds.ro(path)

    def _agent_home_entries(self) -> dict[Path, str]:
        """$HOME entries the agent writes for real (its login, settings, sessions), by path."""
        if self.home is None:
            return {}
        return {
            self.home / entry.rstrip("/"): entry
            for entry in self.home_writable
            if (self.home / entry.rstrip("/")).exists()
        }

    def _home_view(self, agent_entries: dict[Path, str]) -> list[str]:
        """$HOME as a throwaway writable directory holding the real one's entries read-only:
        a tool that creates files there (a coverage tool's `~/.node-spawn-wrap-*`, a cache
        under `~/.cache`) succeeds, and what it wrote vanishes with the command. The agent's
        own entries are the real ones, read-write."""
        assert self.home is not None
        args: list[str] = []

        def view(directory: Path) -> None:
            args.extend(["--tmpfs", str(directory)])
            try:
                children = sorted(os.scandir(directory), key=lambda entry: entry.name)
            except OSError:
                return
            for child in children:
                path = Path(child.path)
                relative = path.relative_to(self.home).as_posix() if self.home else child.name
                if path in agent_entries:
                    args.extend(["--bind", str(path), str(path)])
                elif child.is_symlink():
                    args.extend(["--symlink", os.readlink(path), str(path)])
                elif child.is_dir() and (
                    relative in HOME_VIEWS
                    or any(under(entry, [path]) for entry in agent_entries)  # ~/.config/x
                ):
                    view(path)
                elif child.is_dir() or child.is_file():
                    args.extend(["--ro-bind", str(path), str(path)])

        view(self.home)
        return args


@dataclass
class _Binds:
    """A `bwrap` argv being built, and the paths it shows so far (what the repository must be
    hidden from, what needs no second bind)."""

    args: list[str]
    visible: list[Path] = field(default_factory=list)

    def ro(self, path: Path) -> None:
        self.args.extend(["--ro-bind", str(path), str(path)])
        self.visible.append(path)

    def rw(self, path: Path) -> None:
        self.args.extend(["--bind", str(path), str(path)])
        self.visible.append(path)


def _system(binds: _Binds) -> None:
    """The system directories read-only (a merged-/usr link kept a link), and where
    /etc/resolv.conf leads."""
    for name in (*SYSTEM_DIRS, *SYSTEM_DIRS_OPTIONAL):
        path = Path(name)
        if path.is_symlink():  # /bin -> usr/bin on merged-/usr systems: keep it a link
            binds.args.extend(["--symlink", os.readlink(path), name])
            binds.visible.append(path)
        elif path.is_dir():
            binds.ro(path)
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink() and not under(resolv.resolve(), binds.visible):
        binds.ro(resolv.resolve().parent)  # /run/systemd/resolve: DNS must keep working


def _link_binds(link: Path) -> list[str]:
    """A `worktree.link` directory read-only at its own path (a `node_modules` with a writable
    view for what tools write in it)."""
    real = link.resolve()
    if real.name == "node_modules" and (real / ".cache").is_dir():
        # Its entries read-only, its `.cache` (babel, nyc, eslint write there) a throwaway
        # writable view: the real directory stays as it is.
        return ["--ro-bind", str(real), str(link), *_view(real / ".cache", dest=link / ".cache")]
    if real.name == "node_modules" and real.is_dir():
        return _view(real, dest=link)  # `.cache` can then be made in it
    return ["--ro-bind", str(link), str(link)]


def _own_binds(mounts: Mounts, hidden: Sequence[Path]) -> list[str]:
    """The command's own paths (read-only ones, then writable ones and its workspace, never one
    that holds the repository) and its working directory, ending the `bwrap` options."""
    args: list[str] = []
    for path in mounts.read_only:
        args.extend(["--ro-bind", str(path), str(path)])
    for path in (*mounts.writable, mounts.workspace):
        if any(under(place, [path]) for place in hidden):
            raise SandboxError(f"internal: {path} would show your repository to a command")
        args.extend(["--bind", str(path), str(path)])
    args.extend(["--chdir", str(mounts.workspace), "--"])
    return args


def default_temp_root() -> Path:
    return Path(tempfile.gettempdir()).resolve()


@dataclass(frozen=True)
class Exposure:
    """What one agent config needs to run (besides the system and PATH)."""

    executables: Sequence[Path] = ()
    files: Sequence[Path] = ()
    home_writable: Sequence[str] = ()
    writable: Sequence[Path] = ()
    """Directories outside $HOME the agent writes (its state directory, when set elsewhere)."""


def prepare(
    mode: SandboxMode,
    *,
    network: bool,
    repo_root: Path | None,
    link: Sequence[str],
    exposures: Sequence[tuple[str, Exposure]],
    test_command: str,
    home_writable: Sequence[str],
    env: Mapping[str, str],
    warn: Callable[[str], None],
    temp_root: Path | None = None,
    who: str = "agents",
) -> Sandbox | None:
    """The run's sandbox, or None when it runs without one; raises `SandboxError` before any
    work starts when `bwrap` is asked for and cannot work, or the policy cannot be honoured.

    `exposures`: (the config file, what its agent needs) for every config of the run.
    `repo_root`: the user's repository, hidden; None on a machine without it (a Ray node, where
    the temporary directory, with every history copy and workspace, is all there is to hide).
    `temp_root`: where gitgauge's workspaces and history copies live (default: `TMPDIR`).
    `who`: what runs in it, for the warning when `auto` finds no sandbox.
    """
    if mode == "none":
        return None
    binary = _working_bwrap(mode, env, network=network, warn=warn, who=who)
    if binary is None:
        return None
    temp_root = temp_root or default_temp_root()
    hidden: list[Path] = []
    links: list[Path] = []
    if repo_root is not None:
        hidden, links = repository_parts(repo_root, link, temp_root)
    needs = _Needs(hidden=hidden, writable=list(home_writable))
    dirs = path_dirs(env)
    dirs += venv_bases(env, links, hidden, needs.repo)
    test_executables, _ = command_paths(test_command)
    needs.named = [("testCommand in gitgauge.yaml", exe) for exe in test_executables]
    for source, exposure in exposures:
        needs.add(source, exposure)
    dirs += needs.installations()
    home_text = env.get("HOME")
    home = Path(home_text).resolve() if home_text else None
    if home is not None:
        needs.home_entries(home)
    for directory in needs.agent_writable:
        directory.mkdir(parents=True, exist_ok=True)  # a bind mount needs something to mount
    return Sandbox(
        bwrap=binary,
        network=network,
        home=home,
        hidden=tuple(hidden),
        temp_root=temp_root,
        exposed_dirs=tuple(d for d in dict.fromkeys(dirs) if not under(d, hidden)),
        exposed_files=tuple(dict.fromkeys(needs.files)),
        links=tuple(links),
        home_writable=tuple(needs.writable),
        agent_writable=tuple(dict.fromkeys(needs.agent_writable)),
    )


def _working_bwrap(
    mode: SandboxMode,
    env: Mapping[str, str],
    *,
    network: bool,
    warn: Callable[[str], None],
    who: str,
) -> str | None:
    """The `bwrap` binary when a trial sandbox works here; else a `SandboxError` for `bwrap`,
    or None and a warning saying why for `auto`."""
    binary, reason = probe(env, network=network)
    if binary is not None:
        return binary
    if mode == "bwrap":
        raise SandboxError(f"run.sandbox is bwrap, but {reason} (or set run.sandbox: none)")
    warn(
        f"{who} run without a sandbox: {reason}; they can read and write whatever you can "
        "(set run.sandbox: none to silence this)"
    )
    return None


@dataclass
class _Needs:
    """What the run's commands need besides the system and PATH, gathered from its configs and
    `testCommand`, each with where it was asked for; refusing what the hidden repository holds."""

    hidden: list[Path]
    writable: list[str]
    """$HOME entries agents write for real."""
    named: list[tuple[str, Path]] = field(default_factory=list)
    """(where it was named, a program): their installations are exposed."""
    files: list[Path] = field(default_factory=list)
    writable_from: list[tuple[str, str]] = field(default_factory=list)
    agent_writable: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.writable_from = [
            ("run.sandbox_home_writable in gitgauge.yaml", entry) for entry in self.writable
        ]

    @property
    def repo(self) -> Path | None:
        return self.hidden[0] if self.hidden else None

    def add(self, source: str, exposure: Exposure) -> None:
        """What one config's agent needs (`source`: the config file)."""
        self.named += [(source, exe) for exe in exposure.executables]
        for file in exposure.files:
            if under(file.resolve(), self.hidden):
                raise SandboxError(
                    f"{source}: the command's file {file} lives inside your repository "
                    f"{self.repo}: the sandbox hides the repository, so the agent could not read "
                    "it; move it outside the repository, or set run.sandbox: none"
                )
            self.files.append(file)
        self.writable += [entry for entry in exposure.home_writable if entry not in self.writable]
        self.writable_from += [(source, entry) for entry in exposure.home_writable]
        for directory in exposure.writable:
            refuse_writable_repository(source, directory, self.hidden, self.repo)
            self.agent_writable.append(directory.resolve())

    def installations(self) -> list[Path]:
        """The installation of every named program, none inside the hidden repository."""
        dirs: list[Path] = []
        for source, executable in self.named:
            if under(executable.resolve(), self.hidden) or under(
                executable.absolute(), self.hidden
            ):
                raise SandboxError(
                    f"{source}: the program {executable} lives inside your repository "
                    f"{self.repo}: the sandbox hides the repository, so it cannot run there; "
                    "install it elsewhere, or set run.sandbox: none"
                )
            dirs += installation(executable)
        return dirs

    def home_entries(self, home: Path) -> None:
        """The writable $HOME entries: none that holds or lies in the repository, and each
        created when missing (a bind mount needs something to mount)."""
        for source, entry in self.writable_from:
            refuse_writable_repository(source, home / entry.rstrip("/"), self.hidden, self.repo)
        if agent_home_missing(home, self.writable):
            create_home_entries(home, self.writable)


def _view(directory: Path, *, dest: Path) -> list[str]:
    """A throwaway writable directory at `dest` holding `directory`'s entries read-only (an
    empty one when `directory` does not exist)."""
    args = ["--tmpfs", str(dest)]
    try:
        children = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return args
    for child in children:
        target = dest / child.name
        if child.is_symlink():
            args.extend(["--symlink", os.readlink(child.path), str(target)])
        elif child.is_dir() or child.is_file():
            args.extend(["--ro-bind", child.path, str(target)])
    return args
