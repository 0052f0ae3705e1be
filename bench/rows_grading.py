"""The rows of grading from a fresh checkout (8, 8b) and of mining a large tree against its
suite time (2c).

8, 8b: the git work of one pair as gitgauge does it now (a pooled checkout of its own reset to
base, the agent's tree read through gitgauge's own git directory and index, protected, and that
tree laid into the checkout made fresh again; no setupCommand), measured in process, against
the same pair as gitgauge did it before (a repository per pair over the history copy, `git
worktree add`, the agent's changes staged in the workspace's own index, the diffs, `git worktree
remove`), with plain git, in the same run on the same repository.

2c: `mine` on a 5,000-file tree with a suite of fixed length: its wall time over the time of the
suite runs that decide (fix, parent with the fix's tests, parent's own suite).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from common import Bench, Row, git, ms, say, verdict
from repos import fast_import, verification_commits, write_repo_config
from rows_mine import mine, test_clock

PAIRS_PER_REPEAT = 4
"""Pairs timed per flow and repeat (after one untimed pair that makes the slot's checkout)."""
GRADING_GOAL = 1.2
"""The git work of a pair may cost at most this many times what it cost before."""
MINE_GOAL = 1.1
"""mine on a large tree may take at most this many times the time of its decisive suite runs."""


def grading_rows(bench: Bench, small: Path) -> None:
    """Rows 8 (the verification repository) and 8b (a 5,000-file tree; fewer with --smoke)."""
    files = bench.sizes.wide_tree_files
    large = bench.root / "grading-large"
    fast_import(
        large,
        verification_commits(candidates=2, fillers=1, tree_files=files, sleep=bench.sizes.sleep),
    )
    for number, repo, label in (
        ("8", small, "git work / pair: grading from a fresh checkout vs before"),
        ("8b", large, f"git work / pair, {files:,}-file tree: fresh checkout vs before"),
    ):
        say(f"row {number}: {label}")
        now, before = pair_seconds(repo, pairs=PAIRS_PER_REPEAT * bench.sizes.repeats)
        ratio = now / before
        bench.rows.append(
            Row(
                number,
                label,
                ms(now),
                f"worktree per pair, workspace index: {ms(before)}",
                f"{ratio:.2f}x",
                f"<= {GRADING_GOAL}x",
                verdict(ratio, at_most=GRADING_GOAL),
            )
        )


def pair_seconds(path: Path, *, pairs: int) -> tuple[float, float]:
    """Mean seconds of one pair's git work: (gitgauge now, the flow of before)."""
    from gitgauge.core.git import Repository
    from gitgauge.core.git.checkout import CheckoutPool
    from gitgauge.running.scoring import diffstat
    from gitgauge.running.scoring.protect import protect
    from gitgauge.running.workspace import HistoryCopies, TaskWorkspaces

    repo = Repository(path)
    base = git("rev-parse", "HEAD~1", cwd=path).strip()
    edited = git("ls-tree", "-r", "--name-only", base, "src", cwd=path).split()[0]
    warnings: list[str] = []
    now: list[float] = []
    with (
        HistoryCopies(repo) as copies,
        CheckoutPool(owner_repository=repo.root) as pool,
        TaskWorkspaces(
            repo, base, history="isolated", link=[], warn=warnings.append, copies=copies, pool=pool
        ) as prepared,
    ):
        for n in range(pairs + 1):
            started = time.perf_counter()
            with prepared.workspace(0) as workspace:
                (workspace.path / edited).write_text(f"agent edit {n}\n")
                checkout = workspace.checkout
                checkout.read_agent_tree(base)
                diff = checkout.diff(base)
                diffstat.diff_stat(diff)
                protect(checkout, diff, base)
                workspace.lay_fresh(checkout.write_tree())
            if n:
                now.append(time.perf_counter() - started)
        copy = copies.get(base)
        before = [_pair_before(copy.root, base, edited) for _ in range(pairs)]
    return min(now), min(before)


def _pair_before(copy: Path, base: str, edited: str) -> float:
    """One pair as gitgauge 0.1 did its git work: an overlay repository over the history copy,
    a worktree of it, the agent's changes staged in the worktree's index, three diffs, removal."""
    holder = Path(tempfile.mkdtemp(prefix="before-pair-"))
    try:
        started = time.perf_counter()
        pair = holder / "pair.git"
        _git("init", "--bare", "--quiet", "--template=", str(pair), cwd=holder)
        (pair / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (pair / "objects" / "info" / "alternates").write_text(f"{copy / 'objects'}\n")
        _git("update-ref", "refs/heads/main", base, cwd=pair)
        _git("symbolic-ref", "HEAD", "refs/heads/main", cwd=pair)
        worktree = holder / "w"
        _git("worktree", "add", "--detach", "--quiet", str(worktree), base, cwd=pair)
        (worktree / edited).write_text("agent edit\n")
        _git("add", "--all", "--", ".", cwd=worktree)
        _git("diff", "--cached", "--numstat", "-z", "--find-renames", base, cwd=worktree)
        _git("diff", "--cached", "--binary", "--find-renames", base, cwd=worktree)
        _git("diff", "--cached", "--name-status", "-z", "--no-renames", base, cwd=worktree)
        _git("worktree", "remove", "--force", "--force", str(worktree), cwd=pair)
        return time.perf_counter() - started
    finally:
        shutil.rmtree(holder, ignore_errors=True)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def mine_large_tree(bench: Bench) -> None:
    """Row 2c: mine on a 5,000-file tree (fewer with --smoke), wall time over decisive suite
    time."""
    candidates, files = bench.sizes.large_candidates, bench.sizes.wide_tree_files
    say(f"row 2c: mine -j 1 of {candidates} candidates, {files:,}-file tree")
    repo = bench.root / "mine-large"
    fast_import(
        repo,
        verification_commits(
            candidates=candidates,
            fillers=bench.sizes.fillers,
            tree_files=files,
            sleep=bench.sizes.decisive_sleep,
        ),
    )
    write_repo_config(repo)
    clock = test_clock(bench, repo)
    mined = mine(bench, repo, clock, jobs=1, expect=candidates)
    ratio = mined.run.seconds / mined.test_seconds
    overhead = mined.overhead / candidates
    bench.rows.append(
        Row(
            "2c",
            f"mine wall / decisive suite time, {files:,}-file tree "
            f"(suite {bench.sizes.decisive_sleep:g} s)",
            f"{mined.run.seconds:.2f} s ({ms(overhead)} / candidate)",
            f"{mined.runs} suite runs: {mined.test_seconds:.2f} s",
            f"{ratio:.2f}x",
            f"<= {MINE_GOAL}x",
            verdict(ratio, at_most=MINE_GOAL),
        )
    )
