"""Pure heuristics: which subjects look like bug fixes; task ids and prompts from a commit.

The path rules (tests, test infrastructure) live in `gitgauge.core.paths`, shared with running.

These decide what gets mined and what an agent may not edit, so each rule is documented in the
README ("How mining works", "Protected files") and each has a test with a counter-example.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from gitgauge.core.paths import is_markdown, is_test_file
from gitgauge.core.records import PromptQuality

FIX_TYPES = frozenset({"fix", "bugfix", "hotfix"})
"""Conventional Commits types that mark a bug fix (matched case-insensitively)."""

# `type: ...`, `type(scope): ...`, `type!: ...`, `type(scope)!: ...`
_CONVENTIONAL = re.compile(r"^\s*(?P<type>[A-Za-z][A-Za-z0-9_-]*)(?:\([^()]*\))?!?:")

_BUG_WORDS = (
    "fix|fixes|fixed|fixing|bug|bugs|bugfix|bugfixes|hotfix|error|errors|crash|crashes|crashed"
    "|defect|defects|regression|regressions"
)
# Whole words only: "prefix", "fixture" and "debug" are not bug words.
_BUG_WORD = re.compile(rf"(?<!\w)(?:{_BUG_WORDS})(?!\w)", re.IGNORECASE)
_KOREAN_BUG_WORDS = ("수정", "오류", "버그")

RICH_BODY_MIN_CHARS = 40
"""A body with at least this many non-whitespace characters makes a `rich` prompt."""


@dataclass(frozen=True)
class SubjectVerdict:
    candidate: bool
    rule: Literal["conventional", "bug-word", "none"]
    """Which rule decided: a Conventional Commits type, a bug word, or neither."""


def classify_subject(subject: str) -> SubjectVerdict:
    """Decide from the subject line alone whether a commit may be a bug fix."""
    conventional = _CONVENTIONAL.match(subject)
    if conventional:
        is_fix = conventional.group("type").lower() in FIX_TYPES
        return SubjectVerdict(candidate=is_fix, rule="conventional")
    if _BUG_WORD.search(subject) or any(word in subject for word in _KOREAN_BUG_WORDS):
        return SubjectVerdict(candidate=True, rule="bug-word")
    return SubjectVerdict(candidate=False, rule="none")


def touches_tests_and_source(paths: list[str]) -> bool:
    """At least one test file and at least one file that is neither a test nor Markdown."""
    has_test = any(is_test_file(p) for p in paths)
    has_source = any(not is_test_file(p) and not is_markdown(p) for p in paths)
    return has_test and has_source


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
