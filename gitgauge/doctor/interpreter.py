"""Which interpreters the suite really runs: `python`, `python3` and `node` (those testCommand's
words or PATH make relevant, and any interpreter testCommand names by path) resolved and asked
for their version by a short probe, in a checkout of HEAD with the suite's environment
(`core.suite.UserCommands.suite_environment`, `worktree.link` linked and redirected as mine does)
and in the sandbox mining's test runs get, then again outside it.

The sandbox hides the repository: a PATH entry inside it (an activated `.venv`, a
`node_modules/.bin`) is not there, and `python` silently becomes the next one on PATH. Such an
entry is named with the `worktree.link` that brings it back read-only.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gitgauge.core import links, process
from gitgauge.core.config import CONFIG_FILE
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import CheckoutPool
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import UserCommands
from gitgauge.doctor.findings import Found

Language = Literal["python", "node"]
PYTHON_WORD = re.compile(
    r"python[0-9.]*|pytest|py\.test|tox|nox|hatch|poetry|pdm|uv|uvx|pipenv|coverage"
)
"""Programs of a testCommand that run `python` (or are the Python interpreter)."""
NODE_WORDS = frozenset(
    {"node", "npm", "npx", "yarn", "pnpm", "mocha", "jest", "vitest", "tape", "ava", "tap"}
    | {"c8", "nyc", "ts-node", "tsx"}
)
"""Programs of a testCommand that run `node`."""
INTERPRETER = re.compile(r"python[0-9.]*|node")
PROBE_TIMEOUT_SECONDS = 60.0
MARK = "@@gitgauge-probe"
_ASK = {
    "python": (
        '-c \'import sys; sys.stdout.write("%d.%d.%d\\t%s\\n" % '
        "(tuple(sys.version_info[:3]) + (sys.executable,)))'"
    ),
    "node": '-e \'process.stdout.write(process.versions.node + "\\t" + process.execPath + "\\n")\'',
}
"""How each interpreter says its version and its own path (the one a shim or link leads to)."""


@dataclass(frozen=True)
class Resolved:
    """What one name resolved to where the probe ran."""

    found: str | None
    """`command -v` of the name; None: not found."""
    version: str | None = None
    executable: str | None = None
    """The interpreter's own path (`sys.executable`, `process.execPath`)."""
    problem: str | None = None
    """What it said when it was found but did not answer."""

    def same(self, other: Resolved) -> bool:
        return (self.found is None, self.version, self.executable, self.problem is None) == (
            other.found is None,
            other.version,
            other.executable,
            other.problem is None,
        )

    def shown(self) -> str:
        if self.found is None:
            return "not found"
        if self.problem is not None or self.version is None:
            return f"{self.found} (does not run: {self.problem or 'no answer'})"
        via = f", via {self.found}" if self.executable not in (None, self.found) else ""
        return f"{self.executable or self.found} ({self.version}{via})"


def wanted(test_command: str, env: dict[str, str], root: Path) -> list[tuple[str, Language]]:
    """The names to probe, with their language: `python` and `python3` when testCommand runs
    Python or PATH holds a virtualenv; `node` when it runs node or PATH holds a `node_modules`;
    and every interpreter testCommand names by a path (`.venv/bin/python`)."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    languages: set[Language] = set()
    named: list[tuple[str, Language]] = []
    for word in words:
        base = word.rsplit("/", 1)[-1]
        if PYTHON_WORD.fullmatch(base):
            languages.add("python")
        elif base in NODE_WORDS:
            languages.add("node")
        if "/" in word and INTERPRETER.fullmatch(base):
            named.append((word, "node" if base == "node" else "python"))
    for entry in _path_entries(env):
        venv = (entry.parent / "pyvenv.cfg").is_file()
        if venv or (_inside(entry, root) and _holds(entry, "python")):
            languages.add("python")
        if "node_modules" in entry.parts or (_inside(entry, root) and _holds(entry, "node")):
            languages.add("node")
    found: list[tuple[str, Language]] = []
    if "python" in languages:
        found += [("python", "python"), ("python3", "python")]
    if "node" in languages:
        found.append(("node", "node"))
    return found + [item for item in dict.fromkeys(named) if item not in found]


def script(names: Sequence[tuple[str, Language]]) -> str:
    """A POSIX shell script printing, per name, a `MARK` line (name, `command -v`, exit code)
    and what the interpreter answered."""
    lines = []
    for name, language in names:
        quoted = shlex.quote(name)
        lines.append(
            f"if found=$(command -v {quoted} 2>/dev/null); then "
            f'said=$("$found" {_ASK[language]} 2>&1); code=$?; '
            f'printf \'{MARK}\\t%s\\t%s\\t%s\\n%s\\n\' {quoted} "$found" "$code" "$said"; '
            f"else printf '{MARK}\\t%s\\t\\t\\n' {quoted}; fi"
        )
    return "\n".join(lines)


def parse(stdout: str) -> dict[str, Resolved]:
    """What `script` printed, by name."""
    resolved: dict[str, Resolved] = {}
    blocks = stdout.split(MARK + "\t")[1:]
    for block in blocks:
        head, _, said = block.partition("\n")
        name, found, code = (head.split("\t") + ["", "", ""])[:3]
        if not found:
            resolved[name] = Resolved(None)
            continue
        answer = said.strip().splitlines()
        first = answer[0] if answer else ""
        version, tab, executable = first.partition("\t")
        if code != "0" or not tab or not re.fullmatch(r"\d+\.\d+\.\d+\S*", version):
            problem = " ".join(said.split())[:160] or f"exit {code}"
            resolved[name] = Resolved(found, problem=problem)
        else:
            resolved[name] = Resolved(found, version, executable.strip())
    return resolved


def check_interpreters(
    repo: Repository, config: RepoConfig, head: str, sandbox: Sandbox | None, found: Found
) -> None:
    """Which interpreter the suite runs, in the sandbox and outside it (see the module)."""
    try:
        probed = _probe(repo, config, head, sandbox)
    except GitGaugeError as error:
        found("warn", f"interpreter: not checked ({error})")
        return
    if probed is None:
        return  # neither testCommand nor PATH says python or node
    names, env, inside, outside = probed
    if inside is None or outside is None:
        found("warn", "interpreter: the probe of python/node did not answer; not checked")
        return
    hidden = _hidden_entries(env, repo.root.resolve(), config.worktree.link) if sandbox else []
    _report(names, inside, outside, hidden, config, sandbox is not None, found)


Probed = tuple[
    list[tuple[str, Language]],
    dict[str, str],
    dict[str, Resolved] | None,
    dict[str, Resolved] | None,
]


def _probe(
    repo: Repository, config: RepoConfig, head: str, sandbox: Sandbox | None
) -> Probed | None:
    """(the names, the suite's environment, what they resolve to inside the sandbox and
    outside it), in a checkout of `head`; None when there is nothing to probe."""
    with CheckoutPool(owner_repository=repo.root) as pool, pool.slot(0) as checkout:
        checkout.reset(
            head,
            stores=repo.object_stores(),
            link=config.worktree.link,
            link_from=repo.root,
            warn=lambda message: None,
        )
        # The environment mining's test runs get (`mining.verify`), then the suite's share.
        redirect = links.worktree_env(repo.root, config.worktree.link, checkout.path)
        base = process.clean_env(cwd=checkout.path, extra={"GITGAUGE_JOB": "0", **redirect})
        env = UserCommands(config).suite_environment(base).env
        names = wanted(config.testCommand, env, repo.root.resolve())
        if not names:
            return None
        probe = script(names)
        wrapper: list[str] = []
        if sandbox is not None:
            mounts = Mounts(
                workspace=checkout.path, read_only=(checkout.git_dir, *repo.object_stores())
            )
            wrapper = sandbox.argv(mounts, agent=False)
        inside = _run(probe, checkout.path, env, wrapper)
        outside = _run(probe, checkout.path, env, []) if sandbox is not None else inside
    return names, env, inside, outside


def _run(
    probe: str, cwd: Path, env: dict[str, str], wrapper: list[str]
) -> dict[str, Resolved] | None:
    result = process.run(
        probe, cwd=cwd, env=env, wrapper=wrapper, timeout_seconds=PROBE_TIMEOUT_SECONDS
    )
    if result.timed_out or result.failed_to_start or MARK not in result.stdout_tail:
        return None
    return parse(result.stdout_tail)


def _report(
    names: list[tuple[str, Language]],
    inside: dict[str, Resolved],
    outside: dict[str, Resolved],
    hidden: list[tuple[Path, str]],
    config: RepoConfig,
    sandboxed: bool,
    found: Found,
) -> None:
    order = [name for name, _ in names if name in inside and name in outside]
    differ = [name for name in order if not inside[name].same(outside[name])]
    if not differ:
        where = "in the sandbox, as outside it" if sandboxed else "(no sandbox)"
        found("ok", f"interpreter {where}: {_summary(order, inside)}")
    named: set[Path] = set()
    by_cause: dict[Path | None, list[str]] = {}
    for name in differ:
        cause = _cause(outside[name], hidden)
        by_cause.setdefault(cause, []).append(name)
    for cause, group in by_cause.items():
        first = group[0]
        also = f" (and {', '.join(group[1:])} likewise)" if group[1:] else ""
        text = (
            f"interpreter: in the sandbox `{first}` is {inside[first].shown()}, outside it "
            f"{outside[first].shown()}{also}"
        )
        if cause is not None:
            named.add(cause)
            link = dict(hidden)[cause]
            found("FAIL", text, [_hidden_hint(cause, link, config)])
        elif any(inside[name].found is None for name in group):
            found(
                "FAIL",
                text,
                [
                    "the sandbox shows the system directories, PATH's directories and the "
                    "programs testCommand names by absolute path: name the interpreter by its "
                    "path in testCommand, or set run.sandbox: none"
                ],
            )
        else:
            found(
                "warn",
                text,
                [
                    "name the interpreter you mean by its path in testCommand "
                    "(`/path/to/python -m pytest`)"
                ],
            )
    for entry, link in hidden:
        if entry not in named:
            found(
                "warn",
                f"PATH: {entry} lies inside your repository, which the sandbox hides: the suite "
                "cannot run what it holds",
                [_hidden_hint(entry, link, config)],
            )


def _hidden_hint(entry: Path, link: str, config: RepoConfig) -> str:
    listed = ", ".join([*config.worktree.link, link])
    return (
        f"PATH's {entry} lies inside your repository, which the sandbox hides: add "
        f"`worktree.link: [{listed}]` to {CONFIG_FILE} (linked read-only into every checkout "
        "and shown in the sandbox; docs/guide/configuration.md)"
    )


def _summary(order: list[str], resolved: dict[str, Resolved]) -> str:
    groups: dict[str, list[str]] = {}
    for name in order:
        groups.setdefault(resolved[name].shown(), []).append(name)
    return "; ".join(f"{', '.join(names)}: {shown}" for shown, names in groups.items())


def _cause(outside: Resolved, hidden: list[tuple[Path, str]]) -> Path | None:
    """The hidden PATH entry the name resolves to outside the sandbox, if any."""
    if outside.found is None:
        return None
    path = Path(outside.found)
    for entry, _ in hidden:
        if path.parent == entry or path.parent.resolve() == entry:
            return entry
    return None


def _hidden_entries(env: dict[str, str], root: Path, link: Sequence[str]) -> list[tuple[Path, str]]:
    """PATH's entries inside the repository and outside every `worktree.link` directory, each
    with the directory to link: the virtualenv or `node_modules` holding it, else its first
    folder."""
    shown = [(root / name).resolve() for name in link]
    hidden: list[tuple[Path, str]] = []
    for entry in _path_entries(env):
        real = entry.resolve()
        if not _inside(real, root) or any(real == d or d in real.parents for d in shown):
            continue
        hidden.append((real, _link_for(real, root)))
    return list(dict.fromkeys(hidden))


def _link_for(entry: Path, root: Path) -> str:
    for folder in (entry, *entry.parents):
        if folder == root:
            break
        if (folder / "pyvenv.cfg").is_file() or folder.name == "node_modules":
            return folder.relative_to(root).as_posix()
    return entry.relative_to(root).parts[0]


def _path_entries(env: dict[str, str]) -> list[Path]:
    entries = env.get("PATH", "").split(os.pathsep)
    return [Path(entry) for entry in entries if entry.startswith("/") and Path(entry).is_dir()]


def _inside(path: Path, root: Path) -> bool:
    real = path.resolve()
    return real == root or root in real.parents


def _holds(entry: Path, program: str) -> bool:
    return any(os.access(path, os.X_OK) for path in entry.glob(f"{program}*") if path.is_file())
