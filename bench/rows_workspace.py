"""The rows of the isolated workspace of `run.history: isolated` (6, 6b, 6c), measured in
process against a plain `git worktree add`."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from common import Bench, Row, git, ms, say


def isolated_workspace(bench: Bench, history: Path) -> None:
    # Imported here: everything else goes through the CLI, as a user would.
    from gitgauge.core.git import Repository
    from gitgauge.running.workspace import TaskWorkspaces

    say("row 6: isolated workspace vs git worktree add")
    repo = Repository(history)
    # The newest possible base: the copy holds (almost) the whole history, the worst case.
    base = git("rev-parse", "HEAD~1", cwd=history).strip()
    commits = int(git("rev-list", "--count", base, cwd=history))
    warnings: list[str] = []
    prepare: list[float] = []
    further: list[float] = []
    for _ in range(bench.sizes.repeats):
        started = time.perf_counter()
        with TaskWorkspaces(
            repo, base, history="isolated", link=[], warn=warnings.append
        ) as prepared:
            with prepared.workspace():
                prepare.append(time.perf_counter() - started)
            started = time.perf_counter()
            with prepared.workspace():
                further.append(time.perf_counter() - started)
    plain: list[float] = []
    holder = Path(tempfile.mkdtemp(prefix="plain-wt-", dir=bench.root))
    for n in range(bench.sizes.repeats):
        path = holder / f"wt{n}"
        started = time.perf_counter()
        git("worktree", "add", "--detach", "--quiet", str(path), base, cwd=history)
        plain.append(time.perf_counter() - started)
        git("worktree", "remove", "--force", str(path), cwd=history)
    shutil.rmtree(holder)
    first, again, checkout = min(prepare), min(further), min(plain)
    bench.rows.append(
        Row(
            "6",
            f"isolated workspace: history copy + first checkout ({commits:,} commits)",
            f"{first:.2f} s",
            f"git worktree add of base: {ms(checkout)}",
            f"{first / checkout:.2f}x",
        )
    )
    bench.rows.append(
        Row(
            "6b",
            "isolated workspace: each further checkout of the same task",
            ms(again),
            f"git worktree add of base: {ms(checkout)}",
            f"{again / checkout:.2f}x",
        )
    )
    # A run over several tasks shares its copies: the next task (base 100 commits later)
    # borrows the previous copy's objects and packs only the commits in between.
    from gitgauge.running.workspace import HistoryCopies

    older = git("rev-parse", "HEAD~101", cwd=history).strip()
    chained: list[float] = []
    for _ in range(bench.sizes.repeats):
        with HistoryCopies(repo) as copies:
            copies.get(older)
            started = time.perf_counter()
            with TaskWorkspaces(
                repo, base, history="isolated", link=[], warn=warnings.append, copies=copies
            ) as prepared:
                with prepared.workspace():
                    chained.append(time.perf_counter() - started)
    next_task = min(chained)
    bench.rows.append(
        Row(
            "6c",
            "isolated workspace of a run's next task (base 100 commits later): chained copy",
            ms(next_task),
            f"git worktree add of base: {ms(checkout)}",
            f"{next_task / checkout:.2f}x",
        )
    )
    if warnings:
        bench.notes.append(f"row 6 warnings: {'; '.join(warnings)}")
