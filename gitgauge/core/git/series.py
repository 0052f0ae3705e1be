"""A commit-history task's workspace (`kind: rebase`, `kind: commits`), before the agent and
for gold: HEAD put on the series' branch, the interactive rebase the agent starts inside, gold's
`rebase --continue` and gold's commits (the original series, messages and authors kept).

Before an agent runs, its git directory is gitgauge's own: the rebase is started there with an
explicit `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` and gitgauge's command-line settings
(`owned.owned_git`). After the agent, its git directory is never run: HEAD, refs and the
in-progress markers are read as plain files and its object files copied (`agent_dir`), and the
series is read through a git directory of gitgauge's (`agent_history.AgentHistory`). Mining's
side is `firstparent`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Repository

# Imports written `name as name` are re-exports: kinds/chain/ imports the whole commit-history
# door from here.
from gitgauge.core.git.agent_dir import OBJECT_ID
from gitgauge.core.git.agent_dir import HeadState as HeadState
from gitgauge.core.git.agent_dir import copy_objects as copy_objects
from gitgauge.core.git.agent_dir import read_head_state as read_head_state
from gitgauge.core.git.agent_history import AgentHistory as AgentHistory
from gitgauge.core.git.agent_history import SeriesCommit as SeriesCommit
from gitgauge.core.git.agent_history import show_original as show_original
from gitgauge.core.git.firstparent import LoggedCommit as LoggedCommit
from gitgauge.core.git.firstparent import first_parent_log as first_parent_log
from gitgauge.core.git.firstparent import replay_problem as replay_problem
from gitgauge.core.git.firstparent import tree_of as tree_of
from gitgauge.core.git.owned import owned_git

CHAIN_BRANCH = "main"
"""The branch an agent's series is on: the rebase starts from it, the commits go onto it."""
BREAK_FIRST = (
    'f() { { printf "break\\n"; cat "$1"; } > "$1.gitgauge" && mv "$1.gitgauge" "$1"; }; f'
)
"""`GIT_SEQUENCE_EDITOR` that puts `break` before the todo list's first pick: the rebase stops
before doing anything, and the agent starts inside it."""


def attach_head(agent_dir: Path, branch: str = CHAIN_BRANCH) -> None:
    """HEAD on `branch` at the commit `agent_repository` detached it at (the checkout's), as a
    developer's checkout has it: a reset, a rebase and new commits then move the branch. The
    branch is a loose ref: with `run.history: full` the packed refs also hold the user's own
    branches, and git reads the last of two packed `refs/heads/main`; a loose one wins."""
    head = (agent_dir / "HEAD").read_text(encoding="utf-8").strip()
    if not OBJECT_ID.fullmatch(head):
        raise GitError(f"{agent_dir / 'HEAD'} is not a detached HEAD ({head[:60]!r})")
    ref = agent_dir / "refs" / "heads" / branch
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(f"{head}\n", encoding="utf-8")
    (agent_dir / "HEAD").write_text(f"ref: refs/heads/{branch}\n", encoding="utf-8")


def start_rebase(agent_dir: Path, work_tree: Path, *, count: int) -> list[str]:
    """`git rebase -i HEAD~count` in the agent's fresh git directory, with a sequence editor that
    puts `break` first: the rebase stops before its first pick, HEAD detached at the chain's
    parent, the todo list picking the chain unchanged. Returns the todo list's lines."""
    owned_git(
        agent_dir,
        "rebase",
        "--interactive",
        "--no-autosquash",
        f"HEAD~{count}",
        work_tree=work_tree,
        index=agent_dir / "index",
        extra_env={"GIT_SEQUENCE_EDITOR": BREAK_FIRST, "GIT_EDITOR": "true"},
    )
    todo = agent_dir / "rebase-merge" / "git-rebase-todo"
    if not todo.is_file():
        raise GitError(f"git rebase -i HEAD~{count} did not stop at its `break` in {agent_dir}")
    return [line for line in todo.read_text(encoding="utf-8").splitlines() if line.strip()]


def finish_rebase(work_tree: Path) -> None:
    """`git rebase --continue` through the work tree's `.git`, as an agent would run it (gold on
    a rebase task: the todo list as it stands replays the chain unchanged)."""
    _workspace_git(work_tree, "rebase", "--continue", extra={"GIT_EDITOR": "true"})


@dataclass(frozen=True)
class Author:
    name: str
    email: str
    date: str


def commit_author(repo: Repository, sha: str) -> Author:
    name, email, date = repo.git("log", "-1", "--format=%an%x00%ae%x00%aI", sha).strip().split("\0")
    return Author(name, email, date)


def raw_message(repo: Repository, sha: str) -> str:
    """A commit's message exactly as its object holds it."""
    raw = repo.git("cat-file", "commit", sha)
    return raw.split("\n\n", 1)[1] if "\n\n" in raw else ""


def commit_everything(
    work_tree: Path, message: str, *, author: Author, paths: Sequence[str]
) -> None:
    """Stage `paths` (new, changed and deleted files alike) and `git commit` through the work
    tree's `.git`, the message kept byte for byte (gold on a commits task writes the original
    series)."""
    _workspace_git(work_tree, "add", "--all", "--", *(f":(literal){path}" for path in paths))
    _workspace_git(
        work_tree,
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "--cleanup=verbatim",
        "--file=-",
        stdin_text=message,
        extra={
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_AUTHOR_DATE": author.date,
        },
    )


def _workspace_git(
    work_tree: Path, *args: str, extra: dict[str, str] | None = None, stdin_text: str | None = None
) -> None:
    env = process.clean_env(
        cwd=work_tree,
        extra={
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "gitgauge",
            "GIT_AUTHOR_EMAIL": "gitgauge@localhost",
            "GIT_COMMITTER_NAME": "gitgauge",
            "GIT_COMMITTER_EMAIL": "gitgauge@localhost",
            **(extra or {}),
        },
    )
    result = process.run(
        ["git", *NO_HOOKS, *args], cwd=work_tree, env=env, stdin_text=stdin_text, tail_bytes=None
    )
    if not result.ok:
        detail = (
            result.stderr_tail.strip() or result.stdout_tail.strip() or f"exit {result.exit_code}"
        )
        raise GitError(f"git {' '.join(args[:2])} failed in {work_tree}: {detail}")
