"""Every test-infrastructure pattern the README lists, and every test-file convention, protected
in a real worktree: an edited file is reverted, a new infrastructure file deleted."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from conftest import GitRepo
from mine_helpers import isolated, new_repo
from scoring_helpers import agent_workspace, graded

from gitgauge.core.paths import TEST_INFRA_PATTERNS
from gitgauge.running.scoring.protect import Protection

README = Path(__file__).parents[1] / "README.md"

# One real file name per pattern.
INFRA_EXAMPLES = {
    "conftest.py": "conftest.py",
    "pytest.ini": "pytest.ini",
    "tox.ini": "tox.ini",
    "noxfile.py": "noxfile.py",
    "setup.cfg": "setup.cfg",
    "pyproject.toml": "pyproject.toml",
    ".coveragerc": ".coveragerc",
    "requirements*.txt": "requirements-dev.txt",
    "Pipfile": "Pipfile",
    "Pipfile.lock": "Pipfile.lock",
    "poetry.lock": "poetry.lock",
    "Makefile": "Makefile",
    "package.json": "package.json",
    "package-lock.json": "package-lock.json",
    "yarn.lock": "yarn.lock",
    "pnpm-lock.yaml": "pnpm-lock.yaml",
    "vitest.config.*": "vitest.config.ts",
    "vitest.workspace.*": "vitest.workspace.json",
    "jest.config.*": "jest.config.js",
    "karma.conf.*": "karma.conf.js",
    "playwright.config.*": "playwright.config.ts",
    "cypress.config.*": "cypress.config.mjs",
    ".mocharc*": ".mocharc.yml",
}
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


def test_the_readme_lists_exactly_the_protected_infrastructure_patterns() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    paragraph = text.split("test-infrastructure heuristic — files named", 1)[1]
    paragraph = paragraph.split("in any directory", 1)[0]
    listed = re.findall(r"`([^`]+)`", paragraph)
    assert listed == list(TEST_INFRA_PATTERNS)
    assert set(INFRA_EXAMPLES) == set(TEST_INFRA_PATTERNS)


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
        contents = {
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
    assert protection.deleted == [new]
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
