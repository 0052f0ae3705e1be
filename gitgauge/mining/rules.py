"""Why a commit is (not) a candidate: the subject rule, then the file rule, for one commit.

`mine` counts every decision by rule, so its summary explains each commit it left out, and
`mine --explain SHA` prints the decision for one commit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gitgauge.core.git import Commit
from gitgauge.core.paths import is_markdown, is_test_file
from gitgauge.core.schema import RepoConfig
from gitgauge.mining.classify import (
    SUBJECT_RULES,
    PathRule,
    SubjectTypes,
    SubjectVerdict,
    classify_subject,
    path_rule,
)

PATH_DROPS: tuple[PathRule, ...] = ("no test file", "only tests or Markdown")


@dataclass(frozen=True)
class Decision:
    """The classification of one commit (merge and root commits are decided before)."""

    subject: SubjectVerdict
    paths: PathRule | None
    """The file rule's outcome; None when the subject already ruled the commit out."""

    @property
    def candidate(self) -> bool:
        return self.subject.candidate and self.paths == "tests-and-source"


def subject_types(config: RepoConfig) -> SubjectTypes:
    return SubjectTypes.extended(fix=config.mine.fixTypes, non_fix=config.mine.nonFixTypes)


def decide(commit: Commit, config: RepoConfig, *, types: SubjectTypes | None = None) -> Decision:
    subject = classify_subject(commit.subject, types=types or subject_types(config))
    if not subject.candidate:
        return Decision(subject, None)
    return Decision(subject, path_rule(commit.paths, patterns=config.tests.patterns))


@dataclass
class RuleCounts:
    """How many commits each rule took and dropped."""

    taken: Counter[str] = field(default_factory=Counter)
    """Subject rules that let a commit through (`SUBJECT_RULES` labels)."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Subject rules and file rules that left a commit out."""

    def count(self, decision: Decision) -> None:
        label = SUBJECT_RULES[decision.subject.rule]
        if not decision.subject.candidate:
            self.dropped[label] += 1
            return
        self.taken[label] += 1
        if decision.paths is not None and decision.paths != "tests-and-source":
            self.dropped[decision.paths] += 1


def describe_files(commit: Commit, config: RepoConfig) -> list[tuple[str, str]]:
    """Each path the commit touched and what the file rule sees in it."""
    described = []
    for path in commit.paths:
        if is_test_file(path, patterns=config.tests.patterns):
            kind = "test"
        elif is_markdown(path):
            kind = "markdown"
        else:
            kind = "source"
        described.append((path, kind))
    return described
