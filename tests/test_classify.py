"""The mining heuristics, rule by rule, each with the counter-examples the spec names."""

from __future__ import annotations

import re

import pytest

from gitgauge.core.paths import is_markdown, is_test_file
from gitgauge.mining.classify import (
    build_prompt,
    classify_subject,
    prompt_quality,
    slugify,
    task_id,
    touches_tests_and_source,
)

# -- subjects ---------------------------------------------------------------------------------

# Conventional fix types are candidates, bug words or not.
CONVENTIONAL_FIXES = [
    "fix: handle empty input",
    "fix(parser): handle empty input",
    "fix!: drop the broken option",
    "fix(parser)!: drop the broken option",
    "bugfix: off by one in pagination",
    "hotfix: restore login",
    "hotfix(auth): restore login",
    # Conventional Commits types are not case-sensitive.
    "FIX: shouting type",
    "Fix(core): capitalised type",
    "BugFix: mixed case",
    "HOTFIX!: urgent",
    "fix: no bug word in the description at all",
]
# Other types are not candidates, even with bug words.
OTHER_CONVENTIONAL_TYPES = [
    "chore: fix lint",
    "feat: fix the bug in the new page",
    "docs(readme): fix typo",
    "refactor!: crash handling",
    "test: regression for #12",
    "ci: fixes",
]
# Words that merely contain a bug word.
NOT_BUG_WORDS = [
    "Add fixture",
    "Add fixtures for the parser",
    "Strip the prefix",
    "Add debug output",
    "debugger support",
    "Errorless path",
    "Bugle sounds",
    "crashpad integration",
    "Prefixed names",
    "Suffix handling",
    "pagination_fix",  # an underscore joins words: not a whole word
    "Ajoute lefix_é et l'éfix",  # accented letters are letters: not whole words
    "fixup the layout",
    "Update dependencies",
    "",
    "   ",
]


@pytest.mark.parametrize(
    ("subject", "candidate", "rule"),
    [
        *[(subject, True, "conventional-fix") for subject in CONVENTIONAL_FIXES],
        *[(subject, False, "conventional-other") for subject in OTHER_CONVENTIONAL_TYPES],
        *[(subject, False, "none") for subject in NOT_BUG_WORDS],
    ],
)
def test_conventional_types_and_words_that_merely_contain_a_bug_word(
    subject: str, candidate: bool, rule: str
) -> None:
    verdict = classify_subject(subject)
    assert verdict.candidate is candidate
    assert verdict.rule == rule


@pytest.mark.parametrize(
    "subject",
    [
        "Fix off-by-one in pager",
        "fixes #12",
        "Fixed the parser",
        "Fixing flaky clock",
        "Handle the bug in paging",
        "Two bugs in one",
        "Report error when the file is missing",
        "Errors are now shown",
        "crash on empty list",
        "Crashes when offline",
        "App crashed at start",
        "defect in rounding",
        "Several defects found by QA",
        "Regression in 2.1",
        "regressions since the refactor",
        "(fix) parenthesised",
        "Use bug-free parser",  # a hyphen ends a word
        "Fix: capitalised conventional type",
    ],
)
def test_bug_words_as_whole_words_make_candidates(subject: str) -> None:
    assert classify_subject(subject).candidate, subject


def test_a_conventional_subject_is_decided_by_its_type_alone() -> None:
    verdict = classify_subject("docs: fix the crash section")
    shouted = classify_subject("DOCS: fix the crash section")
    assert (verdict.candidate, verdict.rule) == (shouted.candidate, shouted.rule)
    assert not verdict.candidate
    assert verdict.rule == "conventional-other"


@pytest.mark.parametrize(
    "subject",
    ["버그 수정", "로그인 오류 처리", "페이지 버그", "수정: 빈 입력", "README수정"],
)
def test_korean_bug_words_anywhere_make_candidates(subject: str) -> None:
    assert classify_subject(subject).candidate


def test_bug_word_that_is_not_a_conventional_prefix_is_a_bug_word_match() -> None:
    # "Fix: ..." is a Conventional Commits subject of type fix; "Fix the parser" is a bug word.
    assert classify_subject("Fix the parser").rule == "bug-word"
    assert classify_subject("Fix: the parser").rule == "conventional-fix"


# -- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "test/unit.py",
        "tests/helpers.py",
        "src/__tests__/button.js",
        "spec/models/user.rb",
        "pkg/specs/thing.js",
        "Tests/Capitalised.py",  # directory segments match in any case
        "a/b/tests/data/fixture.json",
        "test_parser.py",
        "src/test_parser.py",
        "parser_test.py",
        "server_test.go",
        "button.test.tsx",
        "button.spec.ts",
        "ParserTest.java",
        "ParserTests.java",
        "ParserTest.kt",
        "user_spec.rb",
        "conftest.py",
        "src/pkg/conftest.py",
    ],
)
def test_test_file_patterns(path: str) -> None:
    assert is_test_file(path), path


@pytest.mark.parametrize(
    "path",
    [
        "src/contest.py",
        "latest.py",
        "src/attest/core.py",
        "testing.py",
        "src/testimony.py",
        "protest_test.txt",
        "specification.md",
        "inspect.py",
        "test",  # a file named `test` at the root is not in a test directory
        "README.md",
        "src/main.py",
        "Testament.java",
    ],
)
def test_paths_that_are_not_test_files(path: str) -> None:
    assert not is_test_file(path), path


@pytest.mark.parametrize("path", ["README.md", "docs/guide.markdown", "page.mdx", "NOTES.MD"])
def test_markdown(path: str) -> None:
    assert is_markdown(path)


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["src/parser.py", "tests/test_parser.py"], True),
        (["Makefile", "test_x.py"], True),
        (["src/parser.py"], False),  # no test file
        (["tests/test_parser.py"], False),  # no source file
        (["tests/test_parser.py", "conftest.py"], False),  # test infrastructure is test side
        (["README.md", "tests/test_parser.py"], False),  # Markdown is not source
        (["docs/a.markdown", "CHANGES.mdx", "tests/test_a.py"], False),
        (["docs/a.md", "docs/conf.txt", "tests/test_a.py"], True),
        ([], False),
    ],
)
def test_commit_must_touch_a_test_file_and_a_non_test_non_markdown_file(
    paths: list[str], expected: bool
) -> None:
    assert touches_tests_and_source(paths) is expected


# -- prompts, quality, ids ------------------------------------------------------------------------


def test_prompt_quality_boundary_is_40_non_whitespace_characters() -> None:
    assert prompt_quality("x" * 39) == "title-only"
    assert prompt_quality("x" * 40) == "rich"
    # Whitespace does not count, wherever it is.
    assert prompt_quality(" \n".join("x" * 13 for _ in range(3))) == "title-only"  # 39
    assert prompt_quality("\t" + " \n ".join("xxxx" for _ in range(10)) + "\n\n") == "rich"  # 40
    assert prompt_quality("") == "title-only"
    assert prompt_quality(" " * 100) == "title-only"


def test_prompt_with_and_without_body() -> None:
    assert build_prompt("Fix crash", "It crashed on empty input.") == (
        "Fix the following bug:\n\nFix crash\n\nIt crashed on empty input."
    )
    assert build_prompt("Fix crash", "") == "Fix the following bug:\n\nFix crash"
    assert build_prompt("Fix crash", "  \n\n ") == "Fix the following bug:\n\nFix crash"


def test_task_id_is_short_sha_and_ascii_slug() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert (
        task_id(sha, "fix(parser): Handle EMPTY input!") == "01234567-fix-parser-handle-empty-input"
    )
    assert task_id(sha, "Corrige l'erreur « été »") == "01234567-corrige-l-erreur-ete"
    # Nothing ASCII to slug: the short sha alone.
    assert task_id(sha, "버그 수정") == "01234567"
    assert task_id(sha, "") == "01234567"


def test_slug_is_ascii_bounded_and_never_ends_in_a_dash() -> None:
    slug = slugify("Fix " + "very-long-word " * 20)
    assert len(slug) <= 48
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
    assert slugify('Fix "quoted" key: value # {braces} ünïcödé') == (
        "fix-quoted-key-value-braces-unicode"
    )
