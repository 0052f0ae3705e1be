"""Concurrent checkouts of one repository: `mine -j 4` over dozens of candidates whose test command
returns at once, so the resets of four threads' checkouts overlap all the time.

gitgauge once used `git worktree add` per candidate, and git deletes `.git/worktrees/` when the
last worktree is removed: an add in another thread at that moment failed. Its checkouts now have
git directories of their own (`core.checkout`) and never register a worktree in the user's
repository; this is the real code path, run hard.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo, new_repo
from helpers.repos.sample import leftovers, mine_env

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

CANDIDATES = 40


def build_many_fixes(root: Path) -> GitRepo:
    """`CANDIDATES` fix commits, each touching a test and a source file; the test command is
    `true`, so every candidate is judged in milliseconds ("passes before the fix")."""
    repo = new_repo(root)
    repo.commit("Initial", files={"src/a.py": "A = 0\n", "tests/test_a.py": "A = 0\n"})
    for n in range(1, CANDIDATES + 1):
        repo.commit(
            f"fix: case {n}",
            files={"src/a.py": f"A = {n}\n", "tests/test_a.py": f"A = {n}\n"},
        )
    (repo.root / "gitgauge.yaml").write_text(
        f'testCommand: "true"\nmine:\n  last: {CANDIDATES + 5}\n', encoding="utf-8"
    )
    return repo


def test_mine_j4_over_dozens_of_instant_candidates_never_races(tmp_path: Path) -> None:
    repo = build_many_fixes(tmp_path / "repo")
    journal = tmp_path / "journal.jsonl"
    # Three rounds: each judges every candidate again (--force), about 240 worktree adds and
    # removes in four threads.
    for _ in range(3):
        result = run_gitgauge("mine", "-j", "4", "--force", cwd=repo.root, env=mine_env(journal))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "failed" not in result.stderr, result.stderr
        assert "passes before the fix" in result.stdout
    assert leftovers(journal) == []
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_threads_resetting_checkouts_of_one_repository(
    tmp_path: Path, no_stray_worktrees: None
) -> None:
    """The same through the library door, from eight threads at once (no test command at all):
    each slot's checkout reset back and forth between commits, always exactly the commit."""
    from gitgauge.core.git import Repository
    from gitgauge.core.git.checkout import CheckoutPool

    repo = build_many_fixes(tmp_path / "repo")
    host = Repository(repo.root)
    shas = repo.git("rev-list", "HEAD").split()[:25]
    errors: list[BaseException] = []
    pool = CheckoutPool(owner_repository=host.root)

    def cycle(slot: int) -> None:
        try:
            with pool.slot(slot) as checkout:
                for number, sha in zip(range(CANDIDATES, 0, -1), shas, strict=False):
                    checkout.reset(sha, stores=host.object_stores(), warn=lambda _message: None)
                    assert (checkout.path / "src" / "a.py").read_text() == f"A = {number}\n"
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=cycle, args=(slot,)) for slot in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pool.close()
    assert errors == []
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_reset_killed_by_gitgauges_own_stop_is_not_reported_as_a_dirty_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mining stops after three candidates whose test command cannot start, and an interrupt
    stops a run: both kill every running command, a checkout's `git reset` among them. That
    kill is gitgauge's, not a tree git could not clean: no "could not be cleaned" warning and
    no rebuild; the checkout is simply reset again when next used, the killed git's lock gone."""
    from gitgauge.core import process
    from gitgauge.core.git import Repository
    from gitgauge.core.git.checkout import CheckoutPool

    repo = build_many_fixes(tmp_path / "repo")
    host = Repository(repo.root)
    first, second = repo.git("rev-list", "HEAD").split()[:2]
    real_git = shutil.which("git")
    assert real_git is not None
    started = tmp_path / "reset-started"
    # A git that, once armed, hangs in `reset` holding the index lock as the real one does.
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        f'if [ -e "{tmp_path}/armed" ]; then for a in "$@"; do if [ "$a" = reset ]; then\n'
        f'  : > "$GIT_DIR/index.lock"; : > "{started}"; exec sleep 60; fi; done; fi\n'
        f'exec "{real_git}" "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    warnings: list[str] = []
    outcome: list[BaseException] = []
    with CheckoutPool(owner_repository=host.root) as pool, pool.slot(0) as checkout:
        checkout.reset(first, stores=host.object_stores(), warn=warnings.append)
        (tmp_path / "armed").touch()

        def reset_again() -> None:
            try:
                checkout.reset(second, stores=host.object_stores(), warn=warnings.append)
            except BaseException as error:  # noqa: BLE001 - inspected below
                outcome.append(error)

        worker = threading.Thread(target=reset_again)
        worker.start()
        for _ in range(600):
            if started.exists():
                break
            time.sleep(0.05)
        assert started.exists(), "the shim's reset never started"
        try:
            assert process.cancel_all() >= 1
            worker.join(timeout=30)
        finally:
            process.clear_cancel()
        assert not worker.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], process.Cancelled), outcome
        assert warnings == []
        assert not (checkout.git_dir / "index.lock").exists()
        (tmp_path / "armed").unlink()
        checkout.reset(second, stores=host.object_stores(), warn=warnings.append)
        assert warnings == []
        assert (checkout.path / "src" / "a.py").read_text() == f"A = {CANDIDATES - 1}\n"
