"""Concurrent checkouts of one repository: `mine -j 4` over dozens of candidates whose test command
returns at once, so the resets of four threads' checkouts overlap all the time.

gitgauge once used `git worktree add` per candidate, and git deletes `.git/worktrees/` when the
last worktree is removed: an add in another thread at that moment failed. Its checkouts now have
git directories of their own (`core.checkout`) and never register a worktree in the user's
repository; this is the real code path, run hard.
"""

from __future__ import annotations

import threading
from pathlib import Path

from conftest import GitRepo, run_gitgauge
from mine_helpers import leftovers, mine_env, new_repo

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
