"""Pure heuristics: which subjects look like bug fixes; task ids and prompts from a commit.

The path rules (tests, test infrastructure) live in `gitgauge.core.paths`, shared with running.

These decide what gets mined and what an agent may not edit, so each rule is documented in
docs/guide/mining.md and docs/guide/running.md ("Protected files") and each has a test with a
counter-example.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gitgauge.core.paths import is_markdown, is_test_file
from gitgauge.core.records import PromptQuality

FIX_TYPES = frozenset({"fix", "bugfix", "hotfix"})
"""Conventional Commits types that mark a bug fix (matched case-insensitively)."""
NON_FIX_TYPES = frozenset(
    {
        # Conventional Commits / Angular
        "feat", "docs", "style", "refactor", "perf", "test", "build", "ci", "chore", "revert",
        # common extras (commitizen, semantic-release, gitmoji-free house styles)
        "feature", "doc", "tests", "deps", "release", "wip", "improvement",
    }
)  # fmt: skip
"""Conventional types that mark anything but a bug fix. A `prefix:` that is in neither list is an
area tag (`jsonutils:`, `net/http:`, NumPy's `BUG:`/`TST:`), judged by the bug-word rule."""

# `type: ...`, `type(scope): ...`, `type!: ...`, `type(scope)!: ...`; an area tag may hold `/`,
# `.` and the like (`net/http:`, `drm/i915:`), but no space.
_PREFIX = re.compile(r"^\s*(?P<type>[^\s:()!]+)(?:\([^()]*\))?!?:")
_TYPE_SHAPE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# git's own revert subject: `Revert "fix: handle empty input"`.
_REVERT = re.compile(r'^\s*Revert\s+"', re.IGNORECASE)

_BUG_WORDS = (
    "fix|fixes|fixed|fixing|bug|bugs|bugfix|bugfixes|hotfix|error|errors|crash|crashes|crashed"
    "|defect|defects|regression|regressions"
)
# Whole words only: "prefix", "fixture" and "debug" are not bug words.
_BUG_WORD = re.compile(rf"(?<!\w)(?:{_BUG_WORDS})(?!\w)", re.IGNORECASE)
_KOREAN_BUG_WORDS = ("수정", "오류", "버그")

RICH_BODY_MIN_CHARS = 40
"""A body with at least this many non-whitespace characters makes a `rich` prompt."""

SubjectRule = Literal[
    "conventional-fix", "conventional-other", "area-bug-word", "bug-word", "revert", "none"
]
SUBJECT_RULES: dict[SubjectRule, str] = {
    "conventional-fix": "conventional fix type",
    "conventional-other": "other conventional type",
    "area-bug-word": "area tag + bug word",
    "bug-word": "bug word",
    "revert": "revert",
    "none": "no bug word",
}
"""Every subject rule and how the summary names it."""


@dataclass(frozen=True)
class SubjectVerdict:
    candidate: bool
    rule: SubjectRule
    """Which rule decided (see `SUBJECT_RULES`)."""
    prefix: str | None = None
    """The `type:` or area tag of the subject, if any."""


@dataclass(frozen=True)
class SubjectTypes:
    """The Conventional types of a project: the built-in lists plus `mine.fixTypes` and
    `mine.nonFixTypes` (which win over the built-in lists)."""

    fix: frozenset[str] = FIX_TYPES
    non_fix: frozenset[str] = NON_FIX_TYPES - FIX_TYPES

    @classmethod
    def extended(cls, *, fix: Iterable[str] = (), non_fix: Iterable[str] = ()) -> SubjectTypes:
        extra_fix = {t.lower() for t in fix}
        extra_non_fix = {t.lower() for t in non_fix}
        return cls(
            fix=frozenset((FIX_TYPES - extra_non_fix) | extra_fix),
            non_fix=frozenset((NON_FIX_TYPES - extra_fix) | extra_non_fix),
        )


def classify_subject(subject: str, *, types: SubjectTypes | None = None) -> SubjectVerdict:
    """Decide from the subject line alone whether a commit may be a bug fix."""
    types = types or SubjectTypes()
    if _REVERT.match(subject):
        return SubjectVerdict(candidate=False, rule="revert")
    prefixed = _PREFIX.match(subject)
    prefix = prefixed.group("type") if prefixed else None
    if prefix is not None and _TYPE_SHAPE.fullmatch(prefix):
        kind = prefix.lower()
        if kind in types.fix:
            return SubjectVerdict(candidate=True, rule="conventional-fix", prefix=prefix)
        if kind in types.non_fix:
            return SubjectVerdict(candidate=False, rule="conventional-other", prefix=prefix)
    if _BUG_WORD.search(subject) or any(word in subject for word in _KOREAN_BUG_WORDS):
        rule: SubjectRule = "area-bug-word" if prefix is not None else "bug-word"
        return SubjectVerdict(candidate=True, rule=rule, prefix=prefix)
    return SubjectVerdict(candidate=False, rule="none", prefix=prefix)


PathRule = Literal["tests-and-source", "no test file", "only tests or Markdown"]


def path_rule(paths: list[str], *, patterns: Sequence[str] = ()) -> PathRule:
    """Whether a commit touches a test file and a file that is neither a test nor Markdown."""
    if not any(is_test_file(p, patterns=patterns) for p in paths):
        return "no test file"
    if not any(not is_test_file(p, patterns=patterns) and not is_markdown(p) for p in paths):
        return "only tests or Markdown"
    return "tests-and-source"


def touches_tests_and_source(paths: list[str], *, patterns: Sequence[str] = ()) -> bool:
    """At least one test file and at least one file that is neither a test nor Markdown."""
    return path_rule(paths, patterns=patterns) == "tests-and-source"


def prompt_quality(body: str) -> PromptQuality:
    non_whitespace = sum(1 for ch in body if not ch.isspace())
    return "rich" if non_whitespace >= RICH_BODY_MIN_CHARS else "title-only"


def build_prompt(subject: str, body: str) -> str:
    """The spec's prompt: `Fix the following bug:\\n\\n<subject>\\n\\n<body>` (no empty body)."""
    body = body.strip()
    prompt = f"Fix the following bug:\n\n{subject.strip()}"
    return f"{prompt}\n\n{body}" if body else prompt


def slugify(text: str, *, max_length: int = 48) -> str:
    """An ASCII slug: accents folded, everything else not alphanumeric becomes one dash."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:max_length].rstrip("-")


def task_id(sha: str, subject: str) -> str:
    slug = slugify(subject)
    return f"{sha[:8]}-{slug}" if slug else sha[:8]
