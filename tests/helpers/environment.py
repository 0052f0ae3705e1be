"""Every test runs isolated from the developer's machine: HOME and git's global config point
into the test's own directory, and variables that would reach a real API or redirect git are
dropped (conftest.py's `isolated_environment` does it for every test; `isolated` for a
module-scoped repository built once)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

GIT_IDENTITY = "[user]\n\tname = gitgauge tests\n\temail = tests@gitgauge.invalid\n"
"""The git identity of the tests' commits (and of the real claude CLI's HOME)."""


def isolate(home: Path, patch: pytest.MonkeyPatch) -> None:
    """Point HOME and git's global config at `home`, and drop variables that would reach a real
    API or redirect git."""
    home.mkdir(parents=True, exist_ok=True)
    patch.setenv("HOME", str(home))
    patch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "GITGAUGE_CLAUDE_BIN",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
    ):
        patch.delenv(name, raising=False)
    (home / ".gitconfig").write_text(
        GIT_IDENTITY + "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )


@contextmanager
def isolated(base: Path) -> Iterator[None]:
    """The per-test isolation, for a module-scoped repository built once (HOME at base/home)."""
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        yield


def path_without_claude(shims: Path) -> str:
    """PATH with every tool but `claude`: a directory that holds claude (often /usr/bin, beside
    git and python3) is replaced by `shims`, links to everything else in it."""
    shims.mkdir(exist_ok=True)
    kept: list[str] = []
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not shutil.which("claude", path=entry):
            kept.append(entry)
            continue
        for tool in Path(entry).iterdir():
            if tool.name != "claude" and not (shims / tool.name).exists():
                (shims / tool.name).symlink_to(tool)
        kept.append(str(shims))
    return os.pathsep.join(kept)
