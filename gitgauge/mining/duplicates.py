"""One fix, one task: candidates whose change is another candidate's (a cherry-pick, a backport)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from gitgauge.core.git import Repository
from gitgauge.core.git.patchids import patch_ids
from gitgauge.core.paths import MARKDOWN_SUFFIXES, is_markdown

if TYPE_CHECKING:
    from gitgauge.mining.mine import Candidate


def duplicates(
    repo: Repository, candidates: list[Candidate], *, mined: set[str]
) -> dict[str, Candidate]:
    """One fix, one task: candidates whose change (`git patch-id --stable` of everything but
    Markdown: a backport's changelog line differs) is the same as another's -> the candidate kept
    for them: the one already saved as a task, else the newest (the first in `git log` order).
    Cherry-picks to release lines are the same bug, not independent tasks. The ids of all
    candidates come from one `git log -p | git patch-id` (a candidate whose parent is not in
    this clone has none: verification will say so)."""
    # A patch id hashes each file's diff with its name: two candidates can share one only when
    # they change the same files, so only those are asked (most candidates share their set of
    # files with no other). A file whose diff shows no line (a mode-only change) is in the set
    # but not in the id: such candidates differ by it, and are not taken for one change.
    files_of = {
        candidate.commit.sha: frozenset(p for p in candidate.commit.paths if not is_markdown(p))
        for candidate in candidates
    }
    sharing = Counter(files_of.values())
    # In `git log` order: git reads neighbouring commits' objects faster (about a fifth off
    # against the commits grouped by their files).
    commits = [c.commit for c in candidates if sharing[files_of[c.commit.sha]] > 1]
    patches = patch_ids(repo, commits, ignored_suffixes=MARKDOWN_SUFFIXES)
    groups: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        patch = patches.get(candidate.commit.sha)
        if patch is not None:
            groups.setdefault(patch, []).append(candidate)
    kept: dict[str, Candidate] = {}
    for group in groups.values():
        keeper = next((c for c in group if c.commit.sha in mined), group[0])
        kept.update({c.commit.sha: keeper for c in group if c is not keeper})
    return kept
