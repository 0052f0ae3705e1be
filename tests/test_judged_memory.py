"""The memory of judged candidates, through the CLI: a second `mine` verifies only new
candidates; changing what a verdict depends on (testCommand, setupCommand, worktree.link,
timeouts, tests.patterns) judges again; `--force` judges again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo
from helpers.repos.sample import (
    DEPS_MARKER,
    SETUP_COMMAND,
    TEST_COMMAND,
    leftovers,
    mine_env,
    sample_root_files,
)
from helpers.results import read_journal, summary

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

CONFIG: dict[str, Any] = {
    "testCommand": TEST_COMMAND,
    "setupCommand": SETUP_COMMAND,
    "worktree": {"link": ["deps"]},
    "timeouts": {"test": 60000, "setup": 60000},
    "env": {"MINE_JOURNAL": None, "MINE_PYTHON": None},  # what the sample's runner reads
    # The sample's runner writes its journal outside the checkout, which the sandbox hides.
    "run": {"sandbox": "none"},
}


def _configure(repo: GitRepo, config: dict[str, Any]) -> None:
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _mine(repo: GitRepo, tmp_path: Path, name: str, *args: str) -> tuple[set[str], dict[str, str]]:
    """Mine; return the commits the test command ran at, and the summary."""
    journal = tmp_path / f"{name}.jsonl"
    result = run_gitgauge("mine", *args, cwd=repo.root, env=mine_env(journal))
    assert result.returncode == 0, result.stdout + result.stderr
    assert leftovers(journal) == []
    return {run["head"] for run in read_journal(journal)}, summary(result.stdout)


def test_judged_candidates_are_remembered_until_what_judged_them_changes(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    repo = git_repo
    # Verifying the remembered candidate is the only thing that checks out its parent.
    parent = repo.commit("Initial layout", files=sample_root_files())
    # A candidate whose new test passes before the fix: rejected, and remembered.
    repo.commit(
        "Fix nothing that was broken",
        files={
            "src/calc.py": "def add(a, b):\n    return b + a\n",
            "tests/test_more.py": "from calc import add\n\n\ndef test_zero():\n"
            "    assert add(0, 0) == 0\n",
        },
    )
    (repo.root / ".gitignore").write_text("deps/\ngitgauge.yaml\n.gitgauge/\n")
    repo.write("deps/marker.txt", DEPS_MARKER)
    _configure(repo, CONFIG)

    heads, counts = _mine(repo, tmp_path, "first")
    assert parent in heads
    assert counts["rejected"] == "1"

    heads, counts = _mine(repo, tmp_path, "second")
    assert heads == set()
    assert counts["judged before"] == "1 (--force judges them again)"

    # A new candidate: only it is verified.
    new = repo.commit(
        "Fix add for strings",
        files={
            "src/calc.py": "def add(a, b):\n    return a + b if a is not None else b\n",
            "tests/test_none.py": "from calc import add\n\n\ndef test_none():\n"
            "    assert add(None, 2) == 2\n",
        },
    )
    heads, counts = _mine(repo, tmp_path, "third")
    assert parent not in heads
    assert new in heads
    assert counts["judged before"].startswith("1")

    changes: list[tuple[str, dict[str, Any]]] = [
        ("testCommand", {**CONFIG, "testCommand": TEST_COMMAND + " "}),
        ("setupCommand", {**CONFIG, "setupCommand": SETUP_COMMAND + " "}),
        ("worktree.link", {**CONFIG, "worktree": {"link": ["deps", "missing-dir"]}}),
        ("timeouts.test", {**CONFIG, "timeouts": {"test": 60001, "setup": 60000}}),
        ("timeouts.setup", {**CONFIG, "timeouts": {"test": 60000, "setup": 60001}}),
        ("tests.patterns", {**CONFIG, "tests": {"patterns": ["qa/*"]}}),
    ]
    for key, config in changes:
        _configure(repo, config)
        heads, _ = _mine(repo, tmp_path, f"changed-{key}")
        assert parent in heads, f"changing {key} must judge the candidate again"
        heads, _ = _mine(repo, tmp_path, f"unchanged-{key}")
        assert parent not in heads, f"the verdict under the new {key} must be remembered"

    heads, counts = _mine(repo, tmp_path, "forced", "--force")
    assert parent in heads
    assert "judged before" not in counts
