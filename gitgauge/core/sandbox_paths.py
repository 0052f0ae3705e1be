"""The paths of this machine a sandbox shows and hides, found here: the installation of a
program (its directory, its prefix, its `#!` interpreter, a virtualenv's base interpreter), the
programs and files a shell command names, the directories of PATH, the repository and its git
directory (with the `worktree.link` directories to show), and the $HOME entries an agent writes;
with the refusals of a policy that would show the repository anyway (`SandboxError`).
`core/sandbox.py` turns them into mounts.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from gitgauge.core.errors import GitGaugeError
from gitgauge.core.importable import shebang_words


class SandboxError(GitGaugeError):
    """The sandbox was asked for and cannot work, or the policy cannot be honoured."""


PSEUDO_FILE_SYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""The sandbox has its own: a command's words that name them are never the host's."""


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


def under(path: Path, roots: Iterable[Path]) -> bool:
    """Whether `path` is one of `roots` or lies inside one."""
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
    return [p for p in dict.fromkeys(found) if p != Path("/") and not under(p, own)]


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
        if not word.startswith("/") or under(Path(word), PSEUDO_FILE_SYSTEMS):
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


def repository_parts(
    repo_root: Path, link: Sequence[str], temp_root: Path
) -> tuple[list[Path], list[Path]]:
    """(what to hide: the repository and its git directory; the `worktree.link` directories to
    show read-only), refusing a policy that would show the fix anyway."""
    repo = repo_root.resolve()
    hidden = [repo]
    common = git_common_dir(repo_root)
    if not under(common, [repo]):
        hidden.append(common)
    if under(temp_root, hidden):
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
        if any(under(place, [real]) for place in hidden) or under(real, [common]):
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
            if under(base, hidden) and not under(base, shown):
                raise SandboxError(
                    f"{source}: its base interpreter lives in {base}, inside your repository "
                    f"{repo}, which the sandbox hides, so its python could not start there; "
                    "make the venv from a python outside the repository, or set run.sandbox: none"
                )
            found.append(base)
    return found


def refuse_writable_repository(
    source: str, path: Path, hidden: Sequence[Path], repo: Path | None
) -> None:
    """A read-write mount for the agent must neither lie inside the hidden repository nor hold it:
    either would bring (part of) it back, writable."""
    for candidate in (path.absolute(), path.resolve()):
        if under(candidate, hidden) or any(under(place, [candidate]) for place in hidden):
            raise SandboxError(
                f"{source}: {path} would be writable for the agent, but it holds or lies inside "
                f"your repository {repo}, which the sandbox hides; choose a directory outside "
                "it, or set run.sandbox: none"
            )


def agent_home_missing(home: Path, entries: Sequence[str]) -> bool:
    return any(not (home / entry.rstrip("/")).exists() for entry in entries)


def create_home_entries(home: Path, entries: Sequence[str]) -> None:
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
