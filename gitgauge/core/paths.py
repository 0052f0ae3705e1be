"""Which paths are tests, test infrastructure or Markdown.

Mining (is a commit a fix that touches tests and source?) and running (which edits of an agent are
reverted before scoring?) must agree on these rules, so they live below both stages. Each rule is
documented in the README ("How mining works", "Protected files") with a test and a counter-example.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

TEST_DIR_SEGMENTS = frozenset({"test", "tests", "__tests__", "spec", "specs"})
TEST_NAME_PATTERNS = (
    "test_*.py",
    "*_test.py",
    "*_test.go",
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


def _matches_any(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def is_test_file(path: str) -> bool:
    """Test files by directory segment or file name (see README, "How mining works")."""
    parts = PurePosixPath(path).parts
    if any(segment.lower() in TEST_DIR_SEGMENTS for segment in parts[:-1]):
        return True
    return _matches_any(parts[-1], TEST_NAME_PATTERNS) if parts else False


def is_test_infra(path: str) -> bool:
    """Files that configure how tests run (by file name, in any directory)."""
    name = PurePosixPath(path).name
    return _matches_any(name, TEST_INFRA_PATTERNS)


def is_protected(path: str) -> bool:
    """Paths an agent may not change for scoring: tests and test infrastructure."""
    return is_test_file(path) or is_test_infra(path)


def is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in MARKDOWN_SUFFIXES
