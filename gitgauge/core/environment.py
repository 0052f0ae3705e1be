"""What the suite's environment holds, and which secrets never reach a stored file.

A test run executes the agent's code (at grading) or the project's history (at mine time, the
same policy so gold reproduces what mining saw). It gets an environment built from an allowlist,
not gitgauge's whole one: a run's code can print any variable it sees into the test output, the
JUnit report and the result file, and an agent's code is written to do what it likes.

- **Passed**: `PASSED` names (the path, home, temporary directory, locale and who runs it), the
  `PASSED_PREFIXES` families that configure a runtime rather than hold an account (`LC_*`,
  `PYTHON*`, `PYTEST_*`, `NODE_*`, `npm_config_*`, ...), gitgauge's own `GITGAUGE_*`, and every
  name the project's `gitgauge.yaml` `env` or the agent config's `env` gives (with their values).
- **Withheld**: everything else, and among the passed ones every name that holds one of
  `SECRET_WORDS` (`NODE_AUTH_TOKEN`, `PYTHON_KEYRING_PASSWORD`) unless a config names it.

Values of secret-named variables (passed or not) are masked (`Masker`) in what gitgauge stores
of a run: an agent ran with the real environment and its code may have written a key into a
source file that the tests then print.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitgauge.core.errors import ConfigError

PASSED = frozenset(
    {
        "PATH",
        "HOME",
        "TMPDIR",
        "TMP",
        "TEMP",
        "LANG",
        "LANGUAGE",
        "TZ",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "PWD",
        "CI",
        # Where a toolchain lives: none holds an account.
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "PYENV_ROOT",
        "PYENV_VERSION",
        "JAVA_HOME",
        "GOROOT",
        "GOPATH",
        "GOCACHE",
        "GOMODCACHE",
        "GOFLAGS",
        "GOTOOLCHAIN",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
        "NVM_DIR",
        "LD_LIBRARY_PATH",
        "PKG_CONFIG_PATH",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    }
)
"""Variables a suite gets from gitgauge's environment as they are (docs/guide/running.md)."""
PASSED_PREFIXES = ("LC_", "PYTHON", "PYTEST_", "NODE_", "npm_config_", "NPM_CONFIG_", "GITGAUGE_")
"""Families of variables that configure an interpreter or a runner, passed as they are."""
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PRIVATE")
"""A variable whose name holds one of these (in any case) is withheld even when its name is
passed, unless a config names it, and its value is masked in stored files."""
MIN_MASKED_LENGTH = 6
"""Shorter values are not masked: replacing every `abc` in a log would make it unreadable, and a
value that short is no secret worth the name."""


def mask_for(name: str) -> str:
    """What a masked value of `name` reads as in a stored file."""
    return f"[masked ${name}]"


_REFERENCE = re.compile(r"\$\$|\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def _passed(name: str) -> bool:
    return name in PASSED or name.startswith(PASSED_PREFIXES)


@dataclass(frozen=True)
class SuiteEnvironment:
    env: dict[str, str]
    """What the suite gets."""
    withheld: list[str] = field(default_factory=list)
    """Names of gitgauge's environment the suite does not get, sorted."""


def for_suite(inherited: Mapping[str, str], *, named: Mapping[str, str] = {}) -> SuiteEnvironment:
    """The suite's environment from `inherited` (gitgauge's, with its own additions) and
    `named` (the project's and the agent config's `env`, resolved): see the module's rule."""
    env: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in inherited.items():
        if name in named:
            continue
        if _passed(name) and not is_secret_name(name):
            env[name] = value
        else:
            withheld.append(name)
    env.update(named)
    return SuiteEnvironment(env=env, withheld=sorted(withheld))


def interpolate(value: str, *, key: str, source: str, environ: Mapping[str, str]) -> str:
    """`value` with `${NAME}` taken from `environ` and `$$` as a literal `$`; a reference to an
    unset or misspelt variable is a `ConfigError` naming `source` and `key`."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        wanted = match.group(1)
        if not _ENV_NAME.fullmatch(wanted):
            raise ConfigError(
                f"{source}: {key}: ${{{wanted}}} is not a variable name (write $$ for a literal $)"
            )
        if wanted not in environ:
            raise ConfigError(
                f"{source}: {key}: ${{{wanted}}} is not set in gitgauge's environment; "
                f"export {wanted} first (or write $$ for a literal $)"
            )
        return environ[wanted]

    return _REFERENCE.sub(replace, value)


class Masker:
    """Replaces the values of secret-named variables by `[masked $NAME]` in text and files.

    The values are those of gitgauge's own environment and of every config's `env`; the longest
    first, so a value that contains another is masked whole."""

    def __init__(self, sources: Iterable[Mapping[str, str]]) -> None:
        values: dict[str, str] = {}
        for source in sources:
            for name, value in source.items():
                if is_secret_name(name) and len(value) >= MIN_MASKED_LENGTH:
                    values.setdefault(value, name)
        self._pairs = sorted(values.items(), key=lambda item: -len(item[0]))
        self._bytes = [
            (value.encode("utf-8", "surrogateescape"), mask_for(name).encode())
            for value, name in self._pairs
        ]
        self._longest = max((len(value) for value, _ in self._bytes), default=0)

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def text(self, text: str) -> str:
        for value, name in self._pairs:
            if value in text:
                text = text.replace(value, mask_for(name))
        return text

    def values(self, value: Any) -> Any:
        """`value` (a record's fields: dicts, lists, strings) with every string masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.values(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.values(item) for item in value]
        return value

    def file(self, path: Path, *, chunk_bytes: int = 1 << 20) -> bool:
        """Mask `path` in place (streamed, so a large log costs no memory); True when it
        changed. A value that a read cuts in two is kept whole for the next round."""
        if not self._bytes:
            return False
        temporary = path.with_name(f".{path.name}.masking")
        try:
            changed = False
            with open(path, "rb") as source, open(temporary, "wb") as out:
                pending = b""
                while True:
                    chunk = source.read(chunk_bytes)
                    data = pending + chunk
                    cut = len(data) if not chunk else self._safe_cut(data)
                    masked = self._mask_bytes(data[:cut])
                    changed = changed or masked != data[:cut]
                    out.write(masked)
                    pending = data[cut:]
                    if not chunk:
                        break
            if changed:
                os.replace(temporary, path)
            return changed
        except OSError:
            return False
        finally:
            temporary.unlink(missing_ok=True)

    def _safe_cut(self, data: bytes) -> int:
        """Where `data` may be cut: its last `longest - 1` bytes could start a value, and no
        value may straddle the cut (moved before any that does)."""
        cut = max(len(data) - (self._longest - 1), 0)
        moved = True
        while moved:
            moved = False
            for value, _ in self._bytes:
                start = data.find(value, max(cut - len(value) + 1, 0))
                if start != -1 and start < cut:
                    cut, moved = start, True
        return cut

    def _mask_bytes(self, data: bytes) -> bytes:
        for value, replacement in self._bytes:
            if value in data:
                data = data.replace(value, replacement)
        return data

    def tree(self, root: Path) -> None:
        """Mask every regular file under `root` (a pair's logs)."""
        if not self._bytes or not root.is_dir():
            return
        for folder, _, files in os.walk(root):
            for name in files:
                path = Path(folder) / name
                if path.is_file() and not path.is_symlink():
                    self.file(path)
