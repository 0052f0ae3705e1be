"""Which paths are tests, test infrastructure or Markdown.

Mining (is a commit a fix that touches tests and source?) and running (which edits of an agent are
reverted before scoring?) must agree on these rules, so they live below both stages. Each rule is
documented in docs/guide/mining.md and docs/guide/running.md ("Protected files") with a test and
a counter-example.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

TEST_DIR_SEGMENTS = frozenset(
    {"test", "tests", "__tests__", "spec", "specs", "testdata", "__snapshots__"}
)
"""Directory names (any depth, any case): Go's `testdata/` fixtures and Jest/Vitest/syrupy
`__snapshots__/` are tests too, laid over with the fix and protected from the agent."""
ROOT_TEST_DIRS = frozenset({"t", "testing"})
"""Directory names that mark tests only at the repository root: Perl's `t/`, and `testing/`
(pytest's own layout; deeper down, a `testing` package is usually library code: `numpy.testing`).
A project's pytest `testpaths` add their folders (`core.testpaths`)."""
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


@dataclass(frozen=True)
class InfraName:
    """A name that configures how the suite runs: an agent may not add or change it."""

    pattern: str
    """A file-name glob, matched in any directory and in any case; with a `/`, the path's last
    segments (`.cargo/config.toml`); ending in `/`, every file under such a directory."""
    runner: str
    """What reads it."""
    why: str
    """What an agent that adds or edits it could do to the suite or to what it reports."""


TEST_INFRA = (
    # -- pytest: it reads the first of these it finds in the rootdir or a parent of it.
    InfraName(
        "conftest.py",
        "pytest",
        "hooks and fixtures loaded into every session below its folder: skip or pass every test",
    ),
    InfraName("pytest.ini", "pytest", "`addopts = -p plugin` loads code; `testpaths` picks tests"),
    InfraName(".pytest.ini", "pytest", "the same as `pytest.ini`, hidden"),
    InfraName("pytest.toml", "pytest", "the same in TOML (pytest 9), read before `pytest.ini`"),
    InfraName(".pytest.toml", "pytest", "the same as `pytest.toml`, hidden"),
    InfraName(
        "pyproject.toml",
        "pytest, coverage.py, build backends",
        "`[tool.pytest]`, `[tool.coverage]`, the dependencies the set-up installs",
    ),
    InfraName("tox.ini", "pytest, tox, coverage.py", "`[pytest]`, tox's test commands"),
    InfraName("setup.cfg", "pytest, coverage.py", "`[tool:pytest]`, `[coverage:*]`"),
    InfraName("noxfile.py", "nox", "the sessions `nox` runs"),
    InfraName(
        ".coveragerc", "coverage.py", "`fail_under` decides the exit code; `plugins` load code"
    ),
    # -- Python start-up: `site` imports these from whatever is on sys.path when an interpreter
    # starts (PYTHONPATH, an editable install's folder, the worktree paths gitgauge puts first
    # for a linked editable install), so gitgauge cannot know the import root: any folder counts.
    InfraName(
        "sitecustomize.*",
        "Python start-up",
        "imported by every interpreter the suite starts, before any test (`.py`, `.pyc`, `.so`)",
    ),
    InfraName("sitecustomize/", "Python start-up", "the same, as a package"),
    InfraName("usercustomize.*", "Python start-up", "imported after `sitecustomize`, the same way"),
    InfraName("usercustomize/", "Python start-up", "the same, as a package"),
    InfraName(
        "*.pth",
        "Python start-up",
        "its `import` lines run at start-up from a site directory (a virtualenv in the workspace)",
    ),
    # -- what the set-up installs under the tests
    InfraName("requirements*.txt", "pip", "the packages the set-up installs"),
    InfraName("requirements/*.txt", "pip", "the same, in a `requirements/` folder"),
    InfraName("Pipfile", "pipenv", "the packages the set-up installs"),
    InfraName("Pipfile.lock", "pipenv", "their versions"),
    InfraName("poetry.lock", "poetry", "the versions the set-up installs"),
    InfraName("uv.lock", "uv", "the versions `uv run` installs before the tests run"),
    InfraName("Makefile", "make", "the recipe of `make test` (also `makefile`)"),
    InfraName("GNUmakefile", "make", "read by GNU make before `Makefile`"),
    # -- JavaScript
    InfraName(
        "package.json",
        "npm, yarn, pnpm, jest, mocha, nyc",
        "`scripts.test`, and the runners' config it can hold",
    ),
    InfraName("package-lock.json", "npm", "the versions the set-up installs"),
    InfraName("npm-shrinkwrap.json", "npm", "the same, published"),
    InfraName("yarn.lock", "yarn", "the versions the set-up installs"),
    InfraName("pnpm-lock.yaml", "pnpm", "the versions the set-up installs"),
    InfraName(".npmrc", "npm, pnpm", "`node-options = --require cheat.js` reaches every script"),
    InfraName(".yarnrc", "yarn", "`yarn-path` runs a file of the repository as yarn itself"),
    InfraName(".yarnrc.yml", "yarn", "`yarnPath`: the same"),
    InfraName("jest.config.*", "jest", "`setupFiles`, reporters, `testMatch`"),
    InfraName(
        "babel.config.*", "jest (babel-jest)", "a plugin rewrites every test file before it runs"
    ),
    InfraName(".babelrc", "jest (babel-jest)", "the same"),
    InfraName(".babelrc.*", "jest (babel-jest)", "the same"),
    InfraName("vitest.config.*", "vitest", "`setupFiles`, reporters, `include`"),
    InfraName("vitest.workspace.*", "vitest", "which projects and configs run"),
    InfraName("vite.config.*", "vitest", "its `test` section, read when there is no vitest.config"),
    InfraName(".mocharc*", "mocha", "`require` loads code; `spec` picks the tests"),
    InfraName("karma.conf.*", "karma", "frameworks, files and reporters"),
    InfraName("playwright.config.*", "playwright", "`testDir`, `globalSetup`, reporters"),
    InfraName("playwright-ct.config.*", "playwright", "the same, for component tests"),
    InfraName("cypress.config.*", "cypress", "`setupNodeEvents` runs code; `specPattern`"),
    InfraName("cypress.json", "cypress", "the same, before Cypress 10"),
    InfraName(
        "node.config.json",
        "node's test runner",
        "`--experimental-config-file`: flags and `--import` of every node the suite starts",
    ),
    InfraName(".nycrc*", "nyc", "`require` loads code; `check-coverage` decides the exit code"),
    InfraName(".c8rc*", "c8", "`check-coverage` decides the exit code"),
    # -- Go
    InfraName(
        "go.mod", "go", "`replace` points a test dependency (testify) at a folder of the repo"
    ),
    InfraName("go.sum", "go", "the checksums of go.mod's modules"),
    InfraName("go.work", "go", "a workspace: `use` and `replace` swap modules, from any parent"),
    InfraName("go.work.sum", "go", "its checksums"),
    # -- Rust
    InfraName(
        "Cargo.toml",
        "cargo",
        "`[patch]` swaps a crate; `harness = false` makes a test binary print what it likes",
    ),
    InfraName("Cargo.lock", "cargo", "the versions cargo builds"),
    InfraName(
        "build.rs",
        "cargo",
        "a build script cargo compiles and runs before any test: it can rewrite the tests",
    ),
    InfraName(
        ".cargo/config.toml",
        "cargo",
        "`runner` runs every test binary through any program; read from every parent folder",
    ),
    InfraName(".cargo/config", "cargo", "the same, its old name"),
    InfraName(
        ".config/nextest.toml",
        "cargo nextest",
        "`default-filter` drops tests, `retries` passes failing ones, where the JUnit goes",
    ),
    # -- JVM
    InfraName("pom.xml", "Maven", "surefire's `testFailureIgnore` and `skipTests`, plugins"),
    InfraName(
        ".mvn/", "Maven", "`maven.config`, `jvm.config`, `extensions.xml` (code), the wrapper"
    ),
    InfraName("mvnw", "Maven", "the wrapper script `./mvnw test` runs"),
    InfraName("mvnw.cmd", "Maven", "the same, on Windows"),
    InfraName(
        "*.gradle",
        "Gradle",
        "build and settings scripts and the scripts they apply: `ignoreFailures = true`",
    ),
    InfraName("*.gradle.kts", "Gradle", "the same, in Kotlin"),
    InfraName("gradle.properties", "Gradle", "JVM arguments and properties the build reads"),
    InfraName(
        "gradle/wrapper/",
        "Gradle",
        "the distribution `./gradlew` downloads (a URL) and the jar it runs",
    ),
    InfraName("gradle/*.versions.toml", "Gradle", "the version catalog: dependency versions"),
    InfraName("gradlew", "Gradle", "the wrapper script `./gradlew test` runs"),
    InfraName("gradlew.bat", "Gradle", "the same, on Windows"),
    InfraName("buildSrc/", "Gradle", "code compiled into the build before any task runs"),
)
"""Test infrastructure: every name a suite runner gitgauge documents reads for its configuration
(docs/guide/running.md, "Protected files"). Sources the tests import are not in it (see
Limitations)."""
TEST_INFRA_PATTERNS = tuple(name.pattern for name in TEST_INFRA)
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
LOCK_FILE_NAMES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "mix.lock",
        "flake.lock",
    }
)
"""Dependency lock files: a conflict or a chain there says little about an agent."""


_TEST_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in TEST_NAME_PATTERNS))
"""`TEST_NAME_PATTERNS` as one expression: `fnmatchcase` of each, at once (mine asks it of every
path of every commit the subject rule takes)."""


def matches_pattern(path: str, pattern: str) -> bool:
    """A `tests.patterns` glob: with a `/` it matches the whole path (`*` crosses directories,
    so `qa/*` is everything under `qa/`), without one the file name in any directory."""
    if "/" in pattern:
        return fnmatch.fnmatchcase(path, pattern.removeprefix("/"))
    return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern)


def is_test_file(path: str, *, patterns: Sequence[str] = ()) -> bool:
    """Test files by directory segment or file name (see docs/guide/mining.md), or by one
    of the project's own `tests.patterns`."""
    # git's paths are relative and plain: split them as `PurePosixPath` would, faster.
    parts = PurePosixPath(path).parts if path.startswith("/") else _plain_parts(path)
    if not parts:
        return False
    if any(segment.lower() in TEST_DIR_SEGMENTS for segment in parts[:-1]):
        return True
    if len(parts) > 1 and parts[0] in ROOT_TEST_DIRS:
        return True
    if _TEST_NAME.match(parts[-1]):
        return True
    return any(matches_pattern(path, pattern) for pattern in patterns)


def _plain_parts(path: str) -> tuple[str, ...]:
    """`PurePosixPath(path).parts` of a relative path (empty and `.` segments dropped)."""
    return tuple(part for part in path.split("/") if part and part != ".")


def is_test_infra(path: str) -> bool:
    """Files that configure how tests run: a name of `TEST_INFRA`, in any directory and any case
    (on a case-insensitive file system pytest opens `PYTEST.INI` as `pytest.ini`)."""
    return infra_name(path) is not None


def infra_name(path: str) -> InfraName | None:
    """The first `TEST_INFRA` entry `path` matches (see `is_test_infra`), or None."""
    parts = tuple(part.lower() for part in PurePosixPath(path).parts)
    if not parts:
        return None
    return next((name for name in TEST_INFRA if _infra_matches(parts, name.pattern.lower())), None)


def _infra_matches(parts: tuple[str, ...], pattern: str) -> bool:
    if pattern.endswith("/"):  # a folder: any file below it, wherever the folder is
        folder = pattern.rstrip("/").split("/")
        parents = parts[:-1]
        return any(
            _segments_match(parents[start : start + len(folder)], folder)
            for start in range(len(parents) - len(folder) + 1)
        )
    segments = pattern.split("/")
    return len(parts) >= len(segments) and _segments_match(parts[-len(segments) :], segments)


def _segments_match(parts: Sequence[str], segments: Sequence[str]) -> bool:
    return all(
        fnmatch.fnmatchcase(part, segment) for part, segment in zip(parts, segments, strict=True)
    )


def is_protected(path: str, *, patterns: Sequence[str] = ()) -> bool:
    """Paths an agent may not change for scoring: tests and test infrastructure."""
    return is_test_file(path, patterns=patterns) or is_test_infra(path)


def is_docs_or_lock(path: str) -> bool:
    """Markdown and dependency lock files (merge and chain mining pass over them)."""
    return is_markdown(path) or PurePosixPath(path).name in LOCK_FILE_NAMES


def is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in MARKDOWN_SUFFIXES


def repository_path_problem(path: str) -> str | None:
    """Why `path` (from a task file) is not a file path inside a repository's work tree, or None.

    Task files are data a person can edit: a `testFiles` entry `../../victim` or `/etc/x` made
    gitgauge delete and write files outside the workspace. A path git itself could have written
    is relative, has no empty, `.` or `..` segment and no `.git` segment (in any case: git refuses
    those in trees, and a case-insensitive file system opens `.GIT` as `.git`). A backslash is an
    ordinary file-name character on the systems gitgauge runs on, so it is allowed.
    """
    if not path:
        return "an empty path"
    if "\0" in path:
        return f"{path!r} holds a NUL byte"
    if path.startswith("/"):
        return f"{path!r} is absolute; paths are relative to the repository root"
    segments = path.split("/")
    if "" in segments:
        return f"{path!r} has an empty segment (`//` or a trailing `/`)"
    if "." in segments or ".." in segments:
        return f"{path!r} has a `.` or `..` segment; paths must stay inside the repository"
    if any(segment.lower() == ".git" for segment in segments):
        return f"{path!r} lies in `.git`; only files of the work tree belong in a task"
    return None
