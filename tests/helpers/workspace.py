"""What a pair does with an agent's work, step by step, for tests that act as the agent in a real
workspace: edit its files, then read them back as gitgauge's graded tree."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gitgauge.core.git import Repository
from gitgauge.running.scoring.protect import Protection, protect
from gitgauge.running.workspace import TaskWorkspaces, Workspace


def no_warnings(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


@contextmanager
def agent_workspace(
    root: Path, base: str, *, link: Sequence[str] = (), history: str = "isolated"
) -> Iterator[Workspace]:
    """A pair's workspace of `root`'s repository at `base`, as `gitgauge run` makes it."""
    repo = Repository(root)
    with TaskWorkspaces(
        repo,
        base,
        history="full" if history == "full" else "isolated",
        link=link,
        warn=no_warnings,
    ) as prepared:
        with prepared.workspace() as workspace:
            yield workspace


def graded(workspace: Workspace, base: str, *, patterns: Sequence[str] = ()) -> Protection:
    """Read what the agent left, protect it, and lay the graded tree into the checkout reset
    to `base` (what `Pair` does before the suite runs)."""
    checkout = workspace.checkout
    checkout.read_agent_tree(base)
    protection = protect(checkout, checkout.diff(base), base, patterns=patterns)
    workspace.lay_fresh(checkout.write_tree())
    return protection
