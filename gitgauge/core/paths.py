"""Which paths are tests, test infrastructure or Markdown.

Mining (is a commit a fix that touches tests and source?) and running (which edits of an agent are
reverted before scoring?) must agree on these rules, so they live below both stages. Each rule is
documented in the README ("How mining works", "Protected files") with a test and a counter-example.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import PurePosixPath

TEST_DIR_SEGMENTS = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "testdata", "__snapshots__"}
)
"""Directory names (any depth, any case): Go's `testdata/` fixtures and Jest/Vitest/syrupy
`__snapshots__/` are tests too, laid over with the fix and protected from the agent."""
ROOT_TEST_DIRS = frozenset({"t"})
"""Directory names that mark tests only at the repository root (Perl's `t/`)."""
TEST_NAME_PATTERNS = (
    "test_*.py",
    "*_test.py",
    "test.py",  # a root test module, and Django's app/tests.py
    "tests.py",
    "*_test.go",
    "*_test.rb",  # minitest, wherever it lives (lib/foo_test.rb)
    "*_test.exs",  # Elixir, also outside test/
    "*Test.php",  # PHPUnit, also under src/
    "*Tests.php",
    "*Test.cs",  # .NET
    "*Tests.cs",
    "*_test.c",
    "*_test.cc",  # C and C++ (GoogleTest, Chromium)
    "*_test.cpp",
    "*_unittest.cc",
    "*_unittest.cpp",
    "*.cy.*",  # Cypress
    "*.t",  # Perl
    "*.snap",  # Jest/Vitest/insta snapshots
    "*.test.*",
    "*.spec.*",
    "*Test.java",
    "*Tests.java",
    "*Test.kt",
    "*Tests.kt",
    "*_spec.rb",
    "conftest.py",
)
TEST_INFRA_PATTERNS = (
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "noxfile.py",
    "setup.cfg",
    "pyproject.toml",
    ".coveragerc",
    "requirements*.txt",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "Makefile",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "vitest.config.*",
    "vitest.workspace.*",
    "jest.config.*",
    "karma.conf.*",
    "playwright.config.*",
    "cypress.config.*",
    ".mocharc*",
)
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})


def _matches_any(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def matches_pattern(path: str, pattern: str) -> bool:
    """A `tests.patterns` glob: with a `/` it matches the whole path (`*` crosses directories,
    so `qa/*` is everything under `qa/`), without one the file name in any directory."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(path, pattern.removeprefix("/"))
    return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern)


def is_test_file(path: str, *, patterns: Sequence[str] = ()) -> bool:
    """Test files by directory segment or file name (see README, "How mining works"), or by one
    of the project's own `tests.patterns`."""
    parts = PurePosixPath(path).parts
    if not parts:
        return False
    if any(segment.lower() in TEST_DIR_SEGMENTS for segment in parts[:-1]):
        return True
    if len(parts) > 1 and parts[0] in ROOT_TEST_DIRS:
        return True
    if _matches_any(parts[-1], TEST_NAME_PATTERNS):
        return True
    return any(matches_pattern(path, pattern) for pattern in patterns)


def is_test_infra(path: str) -> bool:
    """Files that configure how tests run (by file name, in any directory)."""
    name = PurePosixPath(path).name
    return _matches_any(name, TEST_INFRA_PATTERNS)


def is_protected(path: str, *, patterns: Sequence[str] = ()) -> bool:
    """Paths an agent may not change for scoring: tests and test infrastructure."""
    return is_test_file(path, patterns=patterns) or is_test_infra(path)


def is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in MARKDOWN_SUFFIXES
