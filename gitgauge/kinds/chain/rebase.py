"""`kind: rebase`: clean a file-commit chain up inside an interactive rebase (GitGoodBench's
rebase scenario, mined from your own history by `mine --chains`, `kinds/chain/mine.py`).

A pair: a history copy up to the chain's newest commit (the chain, nothing after it), a checkout
of it on branch `main`, and `git rebase -i HEAD~N` started in the agent's fresh git directory
with a sequence editor that puts `break` first, all before the agent runs: the agent starts
inside the paused rebase (HEAD detached at the chain's parent, the todo list picking the chain
unchanged). Scored by the checks of `kinds/chain/kind.py`; the series must end on `main`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge.core.git import Repository
from gitgauge.core.git.series import (
    CHAIN_BRANCH,
    HeadState,
    SeriesCommit,
    finish_rebase,
    start_rebase,
    tree_of,
)
from gitgauge.core.kinds import register
from gitgauge.core.records import ChainResultDraft, Task
from gitgauge.kinds.chain.kind import ChainKind

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


@register
class RebaseKind(ChainKind):
    name = "rebase"
    row_suffix = " (rebase)"

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        """`git rebase --continue`: the todo list as it stands replays the original series."""
        finish_rebase(workspace)

    def started(self, pair: PairSteps[ChainResultDraft]) -> str:
        """`git rebase -i HEAD~N` started and paused at its `break`."""
        workspace = pair.workspace
        start_rebase(workspace.agent_git, workspace.path, count=len(pair.task.chain))
        # Measured against the tree the series must arrive at: a faithful agent's diff is empty.
        return tree_of(pair.repo, pair.task.fix)

    def placed(self, head: HeadState, series: Sequence[SeriesCommit] | None) -> bool:
        """On the branch the rebase started from, on top of the chain's parent."""
        return series is not None and head.ref == f"refs/heads/{CHAIN_BRANCH}"
