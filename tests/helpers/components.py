"""Real components some tests need (node, chromium, bubblewrap, the claude CLI...): a test
skips where one is missing, but fails in CI (`CI=true`), where `.ci/run` installs them all, since
a skip there would hide a regression.

The real claude CLI (npm `@anthropic-ai/claude-code`) is kept off the network: `claude_env()` is
the environment for `gitgauge run` (or for the CLI directly) in which the Messages API is the
loopback fake (`helpers/fakes/messages_api.py`), the API key a dummy, every non-essential request
of the CLI (telemetry, error reports, auto-update, feature flags) is switched off, and HOME is a
temporary directory (the CLI writes `~/.claude` and `~/.claude.json`). As a second guard, the
fake is also the CLI's HTTP(S) proxy: a request for any other host lands on the fake as a
`CONNECT` and is refused, and `FakeMessagesApi.escapes()` lists it for the test to assert on.
The function takes only a URL and a directory, so a sandboxed run (issue #14: the sandbox shares
the network, the fake listens on 127.0.0.1) can use the same environment. A module of such tests
imports the fixture `fake_api` (its one fake, started once the CLI is known to be there) and
gives each test the fake `for_this_test`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers.environment import GIT_IDENTITY
from helpers.fakes.messages_api import CommandRule, FakeMessagesApi, Rule, serve


def require(available: bool, what: str) -> None:
    """Skip (locally) or fail (in CI) when `what` is not `available`."""
    if available:
        return
    message = f"{what} is missing (.ci/run installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def require_bwrap() -> None:
    """A working bubblewrap (without network), or the test skips (fails under CI=true)."""
    from gitgauge.core.sandbox import probe

    binary, reason = probe(os.environ, network=False)
    require(binary is not None, f"a working bwrap ({reason})")


def claude_binary() -> str:
    """The real claude executable on PATH; skips the test when missing, fails it under CI."""
    found = shutil.which("claude")
    require(found is not None, "the real claude CLI (npm install -g @anthropic-ai/claude-code)")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def fake_api() -> Iterator[FakeMessagesApi]:
    """The module's fake Messages API, started once the real claude CLI is known to be there:
    without it the test skips (or fails under CI) before anything is built."""
    claude_binary()
    with serve() as fake:
        yield fake


@contextmanager
def for_this_test(
    fake: FakeMessagesApi, rules: Iterable[Rule | CommandRule] = ()
) -> Iterator[FakeMessagesApi]:
    """`fake` with this test's own `rules` and request log; the rules are taken away after."""
    fake.rules = list(rules)
    fake.clear()
    yield fake
    fake.rules = []


QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
}
"""What turns off the CLI's requests beyond the Messages API (probed with strace: with these set,
the CLI connects to the API base URL only)."""

_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "GIT_", "GITGAUGE_")


def claude_env(
    base_url: str, home: Path, *, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a run of the real CLI against the fake at `base_url`, HOME at `home`
    (created, with a git identity). `base` defaults to this process's environment; whatever in it
    could reach a real API, redirect git or pick another claude binary is dropped."""
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    if not gitconfig.exists():
        gitconfig.write_text(GIT_IDENTITY, "utf-8")
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith(_DROPPED_PREFIXES)}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        env.pop(name, None)
        env.pop(name.lower(), None)
    env.update(QUIET)
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        HTTPS_PROXY=base_url,
        HTTP_PROXY=base_url,
        NO_PROXY="127.0.0.1,localhost",
    )
    return env
