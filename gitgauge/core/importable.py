"""Which top-level module names a Python interpreter imports from elsewhere: asked of the
interpreter itself, never read from a list of names.

A file the agent adds at an import root under a name the interpreter already imports (the
standard library, site-packages, the test runner and everything it loads at start-up) stands in
for that module: a root `pytest.py` under `python -m pytest`, an `iniconfig.py` that pytest
imports before any test. `interpreters` finds the interpreters a `testCommand` runs;
`ImportProbe` asks each, in a fresh empty directory and with the project's own directories taken
off `sys.path`, which of some names it can import and from where.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process

_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
FALLBACKS = ("python3", "python")
"""Asked too, when on PATH: a `make test` or `tox` runs an interpreter the command never names."""
PROBE_TIMEOUT_SECONDS = 60

# Run as `python -c PROBE NAMES_JSON HIDDEN_JSON`: takes the hidden directories off sys.path,
# then asks the import system (and the standard library's own list) about each name.
PROBE = """
import importlib.util, json, os, sys
names, hidden = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def project(entry):
    # The project's own code: inside a hidden directory, but not an installed package there
    # (a linked or set-up `.venv` inside the checkout holds what is installed, not the project).
    real = os.path.realpath(entry or os.getcwd())
    if any(part in ("site-packages", "dist-packages") for part in real.split(os.sep)):
        return False
    return any(real == h or real.startswith(h.rstrip(os.sep) + os.sep) for h in hidden)
sys.path[:] = [entry for entry in sys.path if entry and not project(entry)]
sys.path_importer_cache.clear()
stdlib = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)
found = {}
for name in names:
    if name in stdlib:
        found[name] = "the standard library"
        continue
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        spec = None
    if spec is not None:
        locations = list(spec.submodule_search_locations or [])
        origin = spec.origin if spec.origin not in (None, "namespace") else (
            locations[0] if locations else None)
        if origin is None or not project(origin):
            found[name] = origin or "elsewhere"
print(json.dumps(found))
"""


@dataclass(frozen=True)
class Interpreter:
    path: str
    named: bool
    """Whether the test command runs it (a word of it, or a `#!` line): one of `FALLBACKS`
    that cannot be asked is passed over, a named one that cannot is taken to import every name
    (what it would import is unknown, so nothing of the agent's may stand in for it)."""


def interpreters(test_command: str, *, env: Mapping[str, str], cwd: Path) -> list[Interpreter]:
    """The Python interpreters `test_command` runs, as absolute paths: every word that names
    one (`python3.12`, `.venv/bin/python`, relative to `cwd`), the interpreter of every script
    it runs through a `#!` line (`pytest`, `tox`), then `FALLBACKS` found on PATH."""
    try:
        words = shlex.split(test_command)
    except ValueError:
        words = test_command.split()
    path = os.pathsep.join(
        entry for entry in env.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(entry)
    )
    found: list[str] = []
    for word in words:
        if _ASSIGNMENT.match(word) or word.startswith("-"):
            continue
        resolved = _resolve(word, path=path, cwd=cwd)
        if resolved is None:
            continue
        if _PYTHON.fullmatch(Path(word).name):
            found.append(resolved)
            continue
        interpreter = _shebang_interpreter(resolved, path=path)
        if interpreter is not None:
            found.append(interpreter)
    # One question per installation: `python` and `python3` are often the same program.
    named = list({os.path.realpath(item): item for item in reversed(found)}.values())[::-1]
    seen = {os.path.realpath(item) for item in named}
    chosen = [Interpreter(item, True) for item in named]
    for name in FALLBACKS:
        item = shutil.which(name, path=path)
        if item is not None and os.path.realpath(item) not in seen:
            seen.add(os.path.realpath(item))
            chosen.append(Interpreter(item, False))
    return chosen


def _resolve(word: str, *, path: str, cwd: Path) -> str | None:
    if "/" in word:
        candidate = Path(word) if os.path.isabs(word) else cwd / word
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which(word, path=path)


def shebang_words(script: str | Path) -> list[str] | None:
    """The words of a script's `#!` line; None when it has none (a binary, a missing file)."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    return first[2:].decode("utf-8", "replace").split()


def _shebang_interpreter(script: str, *, path: str) -> str | None:
    words = shebang_words(script)
    if words is None:
        return None
    if words and Path(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-")]
        return shutil.which(words[0], path=path) if words and _PYTHON.fullmatch(words[0]) else None
    if words and _PYTHON.fullmatch(Path(words[0]).name) and os.path.isabs(words[0]):
        return words[0]
    return None


class ImportProbe:
    """Asks interpreters which names they import from elsewhere; answers are kept for the whole
    run (they depend on the interpreter's installation, not on any agent's work)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], str | None] = {}
        self._lock = threading.Lock()

    def shadowed(
        self,
        names: Collection[str],
        *,
        interpreters: Sequence[Interpreter],
        env: Mapping[str, str],
        hidden: Sequence[Path],
    ) -> dict[str, str]:
        """name -> `where (interpreter)` for each of `names` that one of `interpreters` imports
        from outside `hidden` (the workspace and the user's checkout: the project's own code;
        packages installed there, in a `.venv`, count as elsewhere)."""
        answers: dict[str, str] = {}
        for each in interpreters:
            interpreter = each.path
            with self._lock:
                unknown = [name for name in names if (interpreter, name) not in self._known]
            if unknown:
                asked = self._ask(each, unknown, env=env, hidden=hidden)
                with self._lock:
                    for name in unknown:
                        self._known[(interpreter, name)] = asked.get(name)
            with self._lock:
                for name in names:
                    where = self._known.get((interpreter, name))
                    if where is not None and name not in answers:
                        answers[name] = f"{where} ({interpreter})"
        return answers

    def _ask(
        self,
        each: Interpreter,
        names: Sequence[str],
        *,
        env: Mapping[str, str],
        hidden: Sequence[Path],
    ) -> dict[str, str]:
        interpreter = each.path
        roots = [os.path.realpath(root) for root in hidden]
        probe_env = {
            **{key: value for key, value in env.items() if not key.startswith("PYTHON")},
            # PYTHONPATH without the project's directories: the interpreter's start-up (its
            # `sitecustomize`, say) must not import what is being judged.
            "PYTHONPATH": os.pathsep.join(
                entry
                for entry in env.get("PYTHONPATH", "").split(os.pathsep)
                if entry and os.path.isabs(entry) and not _inside(entry, roots)
            ),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        with tempfile.TemporaryDirectory(prefix="gitgauge-probe-") as empty:
            result = process.run(
                [interpreter, "-c", PROBE, json.dumps(sorted(names)), json.dumps([*roots, empty])],
                cwd=Path(empty),
                env=probe_env,
                timeout_seconds=PROBE_TIMEOUT_SECONDS,
            )
        try:
            if not result.ok:
                raise ValueError(result.stderr_tail.strip()[-200:] or f"exit {result.exit_code}")
            answer = json.loads(result.stdout_tail.strip().splitlines()[-1])
            if not isinstance(answer, dict):
                raise ValueError("no answer")
        except (ValueError, IndexError):
            # The test command's own interpreter that cannot answer (too old, broken): every
            # name counts as taken, so nothing of the agent's hides behind a failed question.
            if each.named:
                return {name: "an unknown place (it could not be asked)" for name in names}
            return {}
        return {str(name): str(where) for name, where in answer.items() if name in names}


def _inside(entry: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(entry)
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
