"""Fixture tasks (GitBench's format) by hand: a fixture read by the real format checker, what a
repository answers to its probes, a pair's repository state, and a scorer's verdict."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gitgauge.kinds.fixture import derive, scorers
from gitgauge.kinds.fixture.derive import Expectation
from gitgauge.kinds.fixture.format import parse_fixture
from gitgauge.kinds.fixture.model import Fixture
from gitgauge.kinds.fixture.verdict import PathState, RepoState, Verdict

PAIR_REPOSITORY = "/pair/repo"
"""Where a pair's repository is, as its commands see it (a worktree's paths are absolute)."""


def unit_fixture(scoring: Mapping[str, Any] | None, keys: Mapping[str, Any]) -> Fixture:
    """Fixture f001 of benchmark `unit`, set up by `git init`, with `keys` (and `scoring`, when
    given), read by the real format checker."""
    raw: dict[str, Any] = {"id": "f001", "setup": ["git init"], **keys}
    if scoring is not None:
        raw["scoring"] = scoring
    return parse_fixture(raw, benchmark="unit", source="unit.yaml")


def pair_state(
    outputs: Mapping[str, tuple[int | None, str]] | None = None,
    paths: Mapping[str, PathState] | None = None,
) -> RepoState:
    """The pair's repository after the agent: `outputs` of its commands, what its `paths` hold."""
    return RepoState(PAIR_REPOSITORY, outputs or {}, paths=paths or {})


def judge(
    item: Fixture,
    answer: str | None,
    expectation: Expectation | None = None,
    state: RepoState | None = None,
    *,
    mode: str = "text",
    judge_score: float | None = None,
) -> Verdict:
    """`item`'s scorer on `answer`; without an `expectation`, the one derived from no probes,
    without a `state`, a repository that answered nothing."""
    return scorers.score(
        item,
        mode=mode,  # type: ignore[arg-type]
        answer=answer,
        expectation=expectation or derive.expectation(item, {}),
        state=state or pair_state(),
        judge_score=judge_score,
    )


def probe(item: Fixture, cwd: Path) -> dict[str, tuple[int | None, str]]:
    """Each of `item`'s probes run by bash in `cwd`: its exit code and stdout, by name."""
    found: dict[str, tuple[int | None, str]] = {}
    for name, command in derive.probes(item).items():
        done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)
        found[name] = (done.returncode, done.stdout)
    return found
