"""The sandbox policy: what an agent (and the scoring test commands) can see, as a `bwrap` argv.

One module owns the policy (the README's "What an agent sees" table is this file in prose); it
stays whole past 400 lines so that every mount an agent gets is read in one place:

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
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitgauge.core import process
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.importable import shebang_words

SandboxMode = Literal["auto", "bwrap", "none"]
BWRAP_ENV = "GITGAUGE_BWRAP"
"""Overrides the `bwrap` binary (a path, or a name looked up on PATH)."""
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SYSTEM_DIRS_OPTIONAL = ("/nix", "/snap")
PSEUDO_FILE_SYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
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


class SandboxError(GitGaugeError):
    """The sandbox was asked for and cannot work, or the policy cannot be honoured."""


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
        run's) with its `mounts`."""
        args = [self.bwrap, *_namespace_flags(network=self.network)]
        visible: list[Path] = []

        def ro(path: Path) -> None:
            args.extend(["--ro-bind", str(path), str(path)])
            visible.append(path)

        for name in (*SYSTEM_DIRS, *SYSTEM_DIRS_OPTIONAL):
            path = Path(name)
            if path.is_symlink():  # /bin -> usr/bin on merged-/usr systems: keep it a link
                args.extend(["--symlink", os.readlink(path), name])
                visible.append(path)
            elif path.is_dir():
                ro(path)
        resolv = Path("/etc/resolv.conf")
        if resolv.is_symlink() and not _under(resolv.resolve(), visible):
            ro(resolv.resolve().parent)  # /run/systemd/resolve: DNS must keep working
        args.extend(["--tmpfs", "/tmp"])
        agent_entries = self._agent_home_entries() if agent else {}
        if self.home is not None and self.home.is_dir() and self.home != Path("/"):
            args.extend(self._home_view(agent_entries))
            visible.append(self.home)
        exposed = sorted(set(self.exposed_dirs), key=lambda p: len(p.parts))
        inside_temp = [p for p in exposed if _under(p, [self.temp_root]) and p != self.temp_root]
        for path in exposed:
            if path not in inside_temp and not _under(path, visible):
                ro(path)
        # Other commands' checkouts and history copies go; an installation inside the
        # temporary directory (a binary under $TMPDIR) comes back.
        if self.temp_root != Path("/tmp") and _under(self.temp_root, visible):
            args.extend(["--tmpfs", str(self.temp_root)])
        for path in inside_temp:
            ro(path)
        for file in self.exposed_files:
            args.extend(["--ro-bind", str(file), str(file)])
            visible.append(file)
        if agent:
            for path in self.agent_writable:
                args.extend(["--bind", str(path), str(path)])
                visible.append(path)
        # The repository and its git directory go, whatever above showed them...
        for path in self.hidden:
            if _under(path, [*visible, Path("/tmp")]):
                args.extend(["--tmpfs", str(path)])
        # ...except its linked dependency directories, read-only, and this command's own paths,
        # which gitgauge chose (its stores may lie in the hidden git directory: mining reads
        # the repository's own objects).
        for link in self.links:
            real = link.resolve()
            if real.name == "node_modules" and (real / ".cache").is_dir():
                # Its entries read-only, its `.cache` (babel, nyc, eslint write there) a
                # throwaway writable view: the real directory stays as it is.
                args.extend(["--ro-bind", str(real), str(link)])
                args.extend(_view(real / ".cache", dest=link / ".cache"))
            elif real.name == "node_modules" and real.is_dir():
                args.extend(_view(real, dest=link))  # `.cache` can then be made in it
            else:
                args.extend(["--ro-bind", str(link), str(link)])
        for path in mounts.read_only:
            args.extend(["--ro-bind", str(path), str(path)])
        for path in (*mounts.writable, mounts.workspace):
            if any(_under(place, [path]) for place in self.hidden):
                raise SandboxError(f"internal: {path} would show your repository to a command")
            args.extend(["--bind", str(path), str(path)])
        args.extend(["--chdir", str(mounts.workspace), "--"])
        return args

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
                    or any(_under(entry, [path]) for entry in agent_entries)  # ~/.config/x
                ):
                    view(path)
                elif child.is_dir() or child.is_file():
                    args.extend(["--ro-bind", str(path), str(path)])

        view(self.home)
        return args


def _gitdir(worktree: Path) -> Path | None:
    """Where the `.git` file of the user's own checkout points (a linked worktree)."""
    marker = worktree / ".git"
    if not marker.is_file():
        return None
    text = marker.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        return None
    return (worktree / text.removeprefix("gitdir:").strip()).resolve()


def git_common_dir(repo_root: Path) -> Path:
    """The repository's git directory (the main one, when `repo_root` is a linked worktree)."""
    admin = _gitdir(repo_root)
    if admin is None:
        return (repo_root / ".git").resolve()
    common_file = admin / "commondir"
    if common_file.exists():
        return (admin / common_file.read_text(encoding="utf-8").strip()).resolve()
    return admin


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def installation(executable: Path) -> list[Path]:
    """The directories a program needs to run: its own (resolved and not), its prefix when it
    lives in a `bin/` (a virtualenv, an npm prefix), and the same for its `#!` interpreter;
    for a virtualenv's program, its base interpreter's installation too (`venv_base`)."""
    found: list[Path] = []
    interpreter = _shebang(executable)
    programs = [executable.absolute(), executable.resolve()]
    if interpreter is not None and interpreter != executable:
        programs += [interpreter, interpreter.resolve()]
    for path in programs:
        found += _with_prefix(path.parent)
        if (path.parent.parent / "pyvenv.cfg").is_file():
            found += venv_base(path.parent.parent)
    return [p for p in dict.fromkeys(found) if p != Path("/")]


def _with_prefix(directory: Path) -> list[Path]:
    """`directory`, and its prefix when it is a `bin/` (a virtualenv, an npm prefix)."""
    if directory.name == "bin" and directory.parent != Path("/"):
        return [directory, directory.parent]
    return [directory]


def venv_base(venv: Path) -> list[Path]:
    """The installation of a virtualenv's base interpreter: pyvenv.cfg's `home` (where the
    interpreter is, often only named there: `/srv/pythons/3.11/bin`) and what its interpreters
    and the venv's `bin/python` links lead to, each with its prefix (the standard library).
    Without it every `python` of the venv is `not found` inside the sandbox."""
    home: Path | None = None
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for line in lines:  # the format `site.py` reads: `key = value`
        key, equals, value = line.partition("=")
        if equals and key.strip().lower() == "home" and value.strip().startswith("/"):
            home = Path(value.strip())
    found: list[Path] = []
    pythons = sorted((venv / "bin").glob("python*"))
    if home is not None:
        found += _with_prefix(home) + _with_prefix(home.resolve())
        pythons += sorted(home.glob("python*"))
    for python in pythons:
        real = python.resolve()
        if real.is_file():
            found += _with_prefix(real.parent)
    own = (venv.absolute(), venv.resolve())  # a `--copies` venv's python is its own
    return [p for p in dict.fromkeys(found) if p != Path("/") and not _under(p, own)]


def _shebang(executable: Path) -> Path | None:
    words = shebang_words(executable)
    if not words or not words[0].startswith("/") or Path(words[0]).name == "env":
        return None
    return Path(words[0])


def command_paths(command: str | None) -> tuple[list[Path], list[Path]]:
    """(executables, other files) named by absolute path in a shell command: a testCommand like
    `/venv/bin/python -m pytest` or a script adapter's `sh /home/me/agent.sh`."""
    if not command:
        return [], []
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    executables: list[Path] = []
    files: list[Path] = []
    for word in words:
        if not word.startswith("/") or _under(Path(word), PSEUDO_FILE_SYSTEMS):
            continue  # the sandbox has its own /proc and /dev: never the host's
        path = Path(word)
        if path.is_file() and os.access(path, os.X_OK):
            executables.append(path)
        elif path.is_file():
            files.append(path)
    return executables, files


def path_dirs(env: Mapping[str, str]) -> list[Path]:
    """PATH entries; a virtualenv's root for a venv's `bin/` (its site-packages; its base
    interpreter: `venv_bases`); and a version manager's root for its `shims/` (pyenv, rbenv,
    nodenv, asdf, mise: a shim only runs `<root>/libexec/...`, which lives beside it, and the
    real interpreters under it)."""
    found: list[Path] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if not entry.startswith("/") or not Path(entry).is_dir():
            continue
        path = Path(entry)
        found.append(path)
        if (path.parent / "pyvenv.cfg").exists():
            found.append(path.parent)
        if path.name == "shims" and path.parent != Path("/"):
            found.append(path.parent)
    return found


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
    binary, reason = probe(env, network=network)
    if binary is None:
        if mode == "bwrap":
            raise SandboxError(f"run.sandbox is bwrap, but {reason} (or set run.sandbox: none)")
        warn(
            f"{who} run without a sandbox: {reason}; they can read and write whatever you can "
            "(set run.sandbox: none to silence this)"
        )
        return None
    temp_root = temp_root or default_temp_root()
    hidden: list[Path] = []
    links: list[Path] = []
    if repo_root is not None:
        hidden, links = _repository_parts(repo_root, link, temp_root)
    repo = hidden[0] if hidden else None
    dirs = path_dirs(env)
    dirs += venv_bases(env, links, hidden, repo)
    files: list[Path] = []
    writable = list(home_writable)
    writable_from = [("run.sandbox_home_writable in gitgauge.yaml", entry) for entry in writable]
    agent_writable: list[Path] = []
    test_executables, _ = command_paths(test_command)
    named = [("testCommand in gitgauge.yaml", exe) for exe in test_executables]
    for source, exposure in exposures:
        named += [(source, exe) for exe in exposure.executables]
        for file in exposure.files:
            if _under(file.resolve(), hidden):
                raise SandboxError(
                    f"{source}: the command's file {file} lives inside your repository {repo}: "
                    "the sandbox hides the repository, so the agent could not read it; move it "
                    "outside the repository, or set run.sandbox: none"
                )
            files.append(file)
        writable += [entry for entry in exposure.home_writable if entry not in writable]
        writable_from += [(source, entry) for entry in exposure.home_writable]
        for directory in exposure.writable:
            _refuse_writable_repository(source, directory, hidden, repo)
            agent_writable.append(directory.resolve())
    for source, executable in named:
        if _under(executable.resolve(), hidden) or _under(executable.absolute(), hidden):
            raise SandboxError(
                f"{source}: the program {executable} lives inside your repository {repo}: the "
                "sandbox hides the repository, so it cannot run there; install it elsewhere, "
                "or set run.sandbox: none"
            )
        dirs += installation(executable)
    home_text = env.get("HOME")
    home = Path(home_text).resolve() if home_text else None
    if home is not None:
        for source, entry in writable_from:
            _refuse_writable_repository(source, home / entry.rstrip("/"), hidden, repo)
    if home is not None and agent_home_missing(home, writable):
        _create_home_entries(home, writable)
    for directory in agent_writable:
        directory.mkdir(parents=True, exist_ok=True)  # a bind mount needs something to mount
    return Sandbox(
        bwrap=binary,
        network=network,
        home=home,
        hidden=tuple(hidden),
        temp_root=temp_root,
        exposed_dirs=tuple(d for d in dict.fromkeys(dirs) if not _under(d, hidden)),
        exposed_files=tuple(dict.fromkeys(files)),
        links=tuple(links),
        home_writable=tuple(writable),
        agent_writable=tuple(dict.fromkeys(agent_writable)),
    )


def _repository_parts(
    repo_root: Path, link: Sequence[str], temp_root: Path
) -> tuple[list[Path], list[Path]]:
    """(what to hide: the repository and its git directory; the `worktree.link` directories to
    show read-only), refusing a policy that would show the fix anyway."""
    repo = repo_root.resolve()
    hidden = [repo]
    common = git_common_dir(repo_root)
    if not _under(common, [repo]):
        hidden.append(common)
    if _under(temp_root, hidden):
        raise SandboxError(
            f"the temporary directory {temp_root} (TMPDIR) is inside your repository {repo}: "
            "the sandbox hides the repository, and gitgauge's workspaces live there; "
            "point TMPDIR outside the repository"
        )
    links: list[Path] = []
    for name in link:
        linked = repo_root / name
        if not linked.exists():
            continue  # the worktree warns about it
        real = linked.resolve()
        if any(_under(place, [real]) for place in hidden) or _under(real, [common]):
            raise SandboxError(
                f"worktree.link: {name} resolves to {real}, which holds your repository or its "
                "git directory: read-only inside the sandbox it would still show the fix; "
                "link only dependency directories (.venv, node_modules)"
            )
        links.append(linked.absolute())
    return hidden, links


def venv_bases(
    env: Mapping[str, str], links: Sequence[Path], hidden: Sequence[Path], repo: Path | None
) -> list[Path]:
    """The base interpreters' installations of the virtualenvs on PATH and in `worktree.link`,
    refusing one the sandbox hides: every `python` of that venv would be `not found`."""
    venvs = [(f"worktree.link: {link.name}", link) for link in links]
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry.startswith("/"):
            venvs.append((f"the virtualenv {Path(entry).parent} on PATH", Path(entry).parent))
    shown = [place for link in links for place in (link, link.resolve())]
    found: list[Path] = []
    for source, venv in venvs:
        if not (venv / "pyvenv.cfg").is_file():
            continue
        for base in venv_base(venv):
            if _under(base, hidden) and not _under(base, shown):
                raise SandboxError(
                    f"{source}: its base interpreter lives in {base}, inside your repository "
                    f"{repo}, which the sandbox hides, so its python could not start there; "
                    "make the venv from a python outside the repository, or set run.sandbox: none"
                )
            found.append(base)
    return found


def _refuse_writable_repository(
    source: str, path: Path, hidden: Sequence[Path], repo: Path | None
) -> None:
    """A read-write mount for the agent must neither lie inside the hidden repository nor hold it:
    either would bring (part of) it back, writable."""
    for candidate in (path.absolute(), path.resolve()):
        if _under(candidate, hidden) or any(_under(place, [candidate]) for place in hidden):
            raise SandboxError(
                f"{source}: {path} would be writable for the agent, but it holds or lies inside "
                f"your repository {repo}, which the sandbox hides; choose a directory outside "
                "it, or set run.sandbox: none"
            )


def agent_home_missing(home: Path, entries: Sequence[str]) -> bool:
    return any(not (home / entry.rstrip("/")).exists() for entry in entries)


def _create_home_entries(home: Path, entries: Sequence[str]) -> None:
    """Create the writable $HOME entries that do not exist yet: a bind mount needs something to
    mount, and inside, $HOME is read-only (the agent could not create them itself)."""
    for entry in entries:
        path = home / entry.rstrip("/")
        if path.exists() or path.is_symlink():
            continue
        if entry.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            # An empty JSON object for a JSON file: the claude CLI reads ~/.claude.json first.
            path.write_text("{}\n" if path.suffix == ".json" else "", encoding="utf-8")


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
