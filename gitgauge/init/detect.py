"""Which suite a repository has: a Python project's (its tests found) first, else a JavaScript
project's; one line saying what was looked for when neither can be read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from gitgauge.init.files import ProjectFiles
from gitgauge.init.javascript import LOOKED_FOR, detect_javascript
from gitgauge.init.python import detect_python
from gitgauge.init.records import Detected, Settings, Unreadable

LOOKED_FOR_PYTHON = (
    "pytest's configuration (pytest.ini, pyproject.toml [tool.pytest.ini_options], setup.cfg, "
    "tox.ini), a conftest.py or test_*.py files"
)


def detect(
    files: ProjectFiles, *, env: Mapping[str, str], environment: str | None = None
) -> Detected | Unreadable:
    python = detect_python(files, env=env, environment=environment)
    javascript = detect_javascript(files, env=env)
    if python is not None:
        if isinstance(javascript, Detected):
            also = f"package.json's suite too: testCommand {javascript.test_command!r} runs it"
            python = replace(python, also=(*python.also, also))
        return python
    if isinstance(javascript, Detected):
        return javascript
    javascript_part = (
        javascript.looked_for
        if isinstance(javascript, Unreadable)
        else f"a package.json with a {LOOKED_FOR}"
    )
    return Unreadable(
        f"found no test suite to configure: looked for {LOOKED_FOR_PYTHON}; {javascript_part}"
    )


def settings_of(found: Detected) -> Settings:
    """The keys to write, each with the comment saying where it came from."""
    sources = {choice.key: choice for choice in found.choices}
    command = sources["testCommand"].source
    if "per-test reports" in sources:
        command += f"; per-test reports: {sources['per-test reports'].value}"
    comments = {"testCommand": command}
    if "worktree.link" in sources:
        comments["worktree"] = sources["worktree.link"].source
    return Settings(found.test_command, found.link, None, comments)
