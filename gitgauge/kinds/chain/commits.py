"""`kind: commits`: commit a file-commit chain's changes anew as a good series (GitGoodBench's
commit-writing scenario, mined from your own history by `mine --chains`, `kinds/chain/mine.py`).

A pair: a history copy up to the chain's parent only (no object reachable only from the chain's
commits), a checkout of it on branch `main`, and the chain's newest tree laid into the work tree
from your repository: HEAD and the index at the parent, the changes uncommitted, what
`git reset --mixed HEAD~N` leaves. Scored by the checks of `kinds/chain/kind.py`; the series
must end on top of the chain's parent.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge.core.git import Repository
from gitgauge.core.git.series import (
    commit_author,
    commit_everything,
    raw_message,
    show_original,
)
from gitgauge.core.kinds import register
from gitgauge.core.records import ChainResultDraft, Task
from gitgauge.core.worktree import lay_files
from gitgauge.kinds.chain.kind import ChainKind, chain_commit_paths

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps


@register
class CommitsKind(ChainKind):
    name = "commits"
    row_suffix = " (commits)"

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        """The original series: each commit's files laid and committed with its own message
        and author, oldest first (only its own paths staged: what setup made stays out)."""
        for commit in task.chain:
            paths = chain_commit_paths(repo, commit)
            lay_files(repo, commit, paths, workspace)
            commit_everything(
                workspace,
                raw_message(repo, commit),
                author=commit_author(repo, commit),
                paths=paths,
            )

    def remote_reads(self, repo: Repository, task: Task, *, gold: bool, judging: bool) -> None:
        """The chain lies past the workspace's history (its parent): what `enter` lays in (the
        newest tree's files), what `gold` commits (each commit's files, message and author)
        and the original series the judge is shown (`chains.judge`)."""
        for path in self.gold_paths(repo, task):
            if not repo.is_submodule(task.fix, path):
                repo.read_blob(task.fix, path)
        if gold:
            for commit in task.chain:
                for path in chain_commit_paths(repo, commit):
                    if not repo.is_submodule(commit, path):
                        repo.read_blob(commit, path)
                raw_message(repo, commit)
                commit_author(repo, commit)
        if judging:
            show_original(repo, task.chain)

    def started(self, pair: PairSteps[ChainResultDraft]) -> str:
        """The chain's newest tree laid into the work tree, HEAD and the index left at the
        parent."""
        workspace, task = pair.workspace, pair.task
        lay_files(pair.repo, task.fix, self.gold_paths(pair.repo, task), workspace.path)
        # The newest tree, read into gitgauge's own index and objects (the agent's index stays
        # at the parent): what the agent starts from and must commit.
        return workspace.checkout.read_agent_tree_from_index(exclude=workspace.link)
