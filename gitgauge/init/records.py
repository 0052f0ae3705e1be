"""What `gitgauge init` found: each choice with the file it came from, and the settings it makes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Ecosystem = Literal["python", "javascript"]


@dataclass(frozen=True)
class Choice:
    """One decision, as `init` prints it: `key: value  (source)`."""

    key: str
    """The config key it sets (`testCommand`), or what it is (`interpreter`, `per-test reports`)."""
    value: str
    source: str
    """The file (and table, script or variable) it was read from, or why it was chosen."""

    def line(self) -> str:
        return f"{self.key}: {self.value}  ({self.source})"


@dataclass(frozen=True)
class Detected:
    """A project `init` could read: the settings to write and how each was chosen."""

    ecosystem: Ecosystem
    test_command: str
    link: tuple[str, ...] = ()
    """`worktree.link`: an environment inside the repository, linked into every checkout."""
    choices: tuple[Choice, ...] = ()
    notes: tuple[str, ...] = ()
    """What to do before `mine` works (an interpreter without pytest, no node_modules yet)."""
    also: tuple[str, ...] = ()
    """Other suites found (a package.json's beside a Python project's), one line each."""
    package_manager: str | None = None
    """JavaScript: npm, yarn, pnpm or bun (what `init --env` installs with)."""


@dataclass(frozen=True)
class Unreadable:
    """A project `init` could not read: the commented template, and what it looked for."""

    looked_for: str


@dataclass(frozen=True)
class Measured:
    """The detected testCommand run once at HEAD, as `mine` runs it."""

    commit: str
    seconds: float
    exit_code: int | None
    tests: int | None
    """How many tests the per-test report listed; None without one."""
    passed: int | None
    report: str | None
    """`JUnit XML` or `TAP on stdout`; None when no per-test report arrived."""
    finished: bool = True
    """Whether the run started and ended by itself (its time says how long the suite takes)."""
    problem: str | None = None
    """Why the run cannot serve `mine` (did not start, timed out, no test passed)."""


@dataclass(frozen=True)
class Settings:
    """The keys `init` sets in gitgauge.yaml (every other key keeps its default)."""

    test_command: str
    link: tuple[str, ...] = ()
    timeout_test_ms: int | None = None
    comments: dict[str, str] = field(default_factory=dict)
    """A comment above each key written (`testCommand`, `worktree`, `timeouts`): its source."""

    def values(self) -> dict[str, object]:
        """The keys as gitgauge.yaml holds them (nested sections)."""
        values: dict[str, object] = {"testCommand": self.test_command}
        if self.link:
            values["worktree"] = {"link": list(self.link)}
        if self.timeout_test_ms is not None:
            values["timeouts"] = {"test": self.timeout_test_ms}
        return values
