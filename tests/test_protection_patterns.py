"""Every test-infrastructure name of the table (`TEST_INFRA`; docs/guide/running.md, "Protected
files"), and every test-file convention, protected in a real worktree: an edited file is reverted,
a new infrastructure file deleted; near misses are not protected."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from helpers.environment import isolated
from helpers.repos import GitRepo, new_repo
from helpers.workspace import agent_workspace, graded

from gitgauge.core.paths import TEST_INFRA, TEST_INFRA_PATTERNS, is_protected, is_test_infra
from gitgauge.running.scoring.protect import Protection

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RUNNING_PAGE = Path(__file__).parents[1] / "docs" / "guide" / "running.md"

# One real path per name of the table (a folder name: a file under it).
INFRA_EXAMPLES = {
    "conftest.py": "conftest.py",
    "pytest.ini": "pytest.ini",
    ".pytest.ini": ".pytest.ini",
    "pytest.toml": "pytest.toml",
    ".pytest.toml": ".pytest.toml",
    "pyproject.toml": "pyproject.toml",
    "tox.ini": "tox.ini",
    "setup.cfg": "setup.cfg",
    "noxfile.py": "noxfile.py",
    ".coveragerc": ".coveragerc",
    "sitecustomize.*": "sitecustomize.py",
    "sitecustomize/": "sitecustomize/__init__.py",
    "usercustomize.*": "usercustomize.cpython-311-x86_64-linux-gnu.so",
    "usercustomize/": "usercustomize/__init__.py",
    "*.pth": "zz_cheat.pth",
    "requirements*.txt": "requirements-dev.txt",
    "requirements/*.txt": "requirements/test.txt",
    "Pipfile": "Pipfile",
    "Pipfile.lock": "Pipfile.lock",
    "poetry.lock": "poetry.lock",
    "uv.lock": "uv.lock",
    "Makefile": "makefile",
    "GNUmakefile": "GNUmakefile",
    "package.json": "package.json",
    "package-lock.json": "package-lock.json",
    "npm-shrinkwrap.json": "npm-shrinkwrap.json",
    "yarn.lock": "yarn.lock",
    "pnpm-lock.yaml": "pnpm-lock.yaml",
    ".npmrc": ".npmrc",
    ".yarnrc": ".yarnrc",
    ".yarnrc.yml": ".yarnrc.yml",
    "jest.config.*": "jest.config.js",
    "babel.config.*": "babel.config.cjs",
    ".babelrc": ".babelrc",
    ".babelrc.*": ".babelrc.json",
    "vitest.config.*": "vitest.config.ts",
    "vitest.workspace.*": "vitest.workspace.json",
    "vite.config.*": "vite.config.mts",
    ".mocharc*": ".mocharc.yml",
    "karma.conf.*": "karma.conf.js",
    "playwright.config.*": "playwright.config.ts",
    "playwright-ct.config.*": "playwright-ct.config.ts",
    "cypress.config.*": "cypress.config.mjs",
    "cypress.json": "cypress.json",
    "node.config.json": "node.config.json",
    ".nycrc*": ".nycrc.json",
    ".c8rc*": ".c8rc",
    "go.mod": "go.mod",
    "go.sum": "go.sum",
    "go.work": "go.work",
    "go.work.sum": "go.work.sum",
    "Cargo.toml": "Cargo.toml",
    "Cargo.lock": "Cargo.lock",
    "build.rs": "build.rs",
    ".cargo/config.toml": ".cargo/config.toml",
    ".cargo/config": ".cargo/config",
    ".config/nextest.toml": ".config/nextest.toml",
    "pom.xml": "pom.xml",
    ".mvn/": ".mvn/extensions.xml",
    "mvnw": "mvnw",
    "mvnw.cmd": "mvnw.cmd",
    "*.gradle": "settings.gradle",
    "*.gradle.kts": "build.gradle.kts",
    "gradle.properties": "gradle.properties",
    "gradle/wrapper/": "gradle/wrapper/gradle-wrapper.jar",
    "gradle/*.versions.toml": "gradle/libs.versions.toml",
    "gradlew": "gradlew",
    "gradlew.bat": "gradlew.bat",
    "buildSrc/": "buildSrc/src/main/kotlin/Conventions.kt",
}
# Near misses: not test infrastructure, so an agent's edit stays and a fix's edit scores.
NOT_INFRA = [
    "src/pytest_helpers.py",
    "pytest_plugin.py",
    "docs/pytest.md",
    "src/site.py",
    "setup.py",
    "src/build.rs.md",
    "src/main.rs",
    "config.toml",
    "cargo/config.toml",
    ".config/other.toml",
    "Makefile.am",
    "requirements.md",
    "src/gradle/Wrapper.kt",
    "wrapper/gradle-wrapper.jar",
    "gradle/settings.toml",
    "vendor/github.com/stretchr/testify/assert/assertions.go",
    "src/babel.ts",
    "lib/packages.json5",
]
# Test files of other ecosystems: edits are reverted (new plain test files stay).
TEST_FILES = [
    "polls/tests.py",
    "test.py",
    "lib/foo_test.rb",
    "src/FooTest.php",
    "Foo/FooTests.cs",
    "base/foo_unittest.cc",
    "cypress/e2e/login.cy.ts",
    "lib/app/parser_test.exs",
    "t/basic.t",
    "pkg/parse/testdata/input.json",
    "src/__snapshots__/Button.test.tsx.snap",
]


def test_the_docs_table_is_the_protected_infrastructure_table() -> None:
    text = RUNNING_PAGE.read_text(encoding="utf-8")
    section = text.split("### Protected files\n", 1)[1].split("\n### ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in section.splitlines()
        if line.startswith("| `")
    ]
    assert rows == [[f"`{name.pattern}`", name.runner, name.why] for name in TEST_INFRA]
    assert list(INFRA_EXAMPLES) == list(TEST_INFRA_PATTERNS)


@pytest.mark.parametrize("pattern", list(INFRA_EXAMPLES))
def test_every_infrastructure_name_is_protected_in_any_folder_and_case(pattern: str) -> None:
    example = INFRA_EXAMPLES[pattern]
    for path in (example, f"pkg/deep/{example}", example.upper()):
        assert is_test_infra(path), path
        assert is_protected(path), path


@pytest.mark.parametrize("path", NOT_INFRA)
def test_near_misses_are_not_protected(path: str) -> None:
    assert not is_test_infra(path)
    assert not is_protected(path)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitRepo]:
    base = tmp_path_factory.mktemp("protect")
    with isolated(base):
        repo = new_repo(base / "repo")
        files: dict[str, str | bytes | None] = {"app.py": "x = 1\n"}
        files.update({name: "original\n" for name in INFRA_EXAMPLES.values()})
        files.update({path: "original\n" for path in TEST_FILES})
        files["qa/cases/login.yaml"] = "original\n"
        repo.commit("initial", files=files)
        yield repo


def _protect_after(
    repo: GitRepo, edits: dict[str, str], *, patterns: Sequence[str] = ()
) -> tuple[Protection, dict[str, str | bool]]:
    base = repo.git("rev-parse", "HEAD").strip()
    with agent_workspace(repo.root, base) as opened:
        workspace = opened.path
        for path, text in edits.items():
            (workspace / path).parent.mkdir(parents=True, exist_ok=True)
            (workspace / path).write_text(text, encoding="utf-8")
        protection = graded(opened, base, patterns=patterns)
        contents: dict[str, str | bool] = {
            path: (workspace / path).exists() and (workspace / path).read_text() for path in edits
        }
    return protection, contents


@pytest.mark.parametrize("pattern", list(INFRA_EXAMPLES))
def test_an_edited_infrastructure_file_is_reverted(base_repo: GitRepo, pattern: str) -> None:
    name = INFRA_EXAMPLES[pattern]
    protection, contents = _protect_after(base_repo, {name: "weakened\n", "app.py": "x = 2\n"})
    assert protection.reverted == [name]
    assert contents == {name: "original\n", "app.py": "x = 2\n"}


@pytest.mark.parametrize("pattern", list(INFRA_EXAMPLES))
def test_a_new_infrastructure_file_is_deleted(base_repo: GitRepo, pattern: str) -> None:
    new = f"pkg/deep/{INFRA_EXAMPLES[pattern]}"  # in any directory
    protection, contents = _protect_after(base_repo, {new: "skip everything\n"})
    assert list(protection.dropped) == [new]
    assert contents == {new: False}


@pytest.mark.parametrize("path", TEST_FILES)
def test_an_edited_test_file_of_any_convention_is_reverted(base_repo: GitRepo, path: str) -> None:
    protection, contents = _protect_after(base_repo, {path: "rewritten snapshot\n"})
    assert protection.reverted == [path]
    assert contents == {path: "original\n"}


def test_project_test_patterns_are_protected_too(base_repo: GitRepo) -> None:
    edit = {"qa/cases/login.yaml": "weakened\n"}
    unprotected, contents = _protect_after(base_repo, edit)
    assert unprotected.reverted == []
    assert contents == edit
    protection, contents = _protect_after(base_repo, edit, patterns=["qa/*"])
    assert protection.reverted == ["qa/cases/login.yaml"]
    assert contents == {"qa/cases/login.yaml": "original\n"}
