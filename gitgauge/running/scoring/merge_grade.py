"""Scoring a merge task: resolved? exact?

- **resolved**: no conflict marker left in any conflicted or changed file, no conflicted path
  left unmerged and untouched, and, when the suite passed at the recorded merge
  (`testsAtMerge`), `testCommand` passes on the agent's result.
- **exact** (GitGoodBench's metric): every conflicted file's content equals the recorded merge's
  (both absent counts as equal: a modify/delete resolved by deleting). **exactTree**: the whole
  staged tree equals the merge's, files the setup step made excepted.

Files are compared by blob id, computed in the workspace and read from the user's repository:
an isolated workspace never holds the merge, but a blob id is the same wherever it is computed.
Protected files are not reverted (the conflict may be in a test file); changes outside the
conflicted files are reported (`outsideChanges`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.mergetree import has_markers, unmerged_paths
from gitgauge.core.records import RepoConfig, Task
from gitgauge.running.merge_workspace import ConflictState, read_files


@dataclass(frozen=True)
class MergeGrade:
    resolved: bool
    exact: bool
    exact_tree: bool
    exact_files: list[str]
    marker_files: list[str]
    unmerged: list[str]
    outside: list[str]
    abandoned: bool
    """The agent undid the merge (`git merge --abort`, a reset to base): nothing was merged."""
    test: process.CommandResult | None
    """The suite on the agent's result; None when the task is scored by exact match only."""


def untouched_unmerged(workspace: Path, state: ConflictState) -> list[str]:
    """Paths still unmerged in the index whose files the agent left as the merge made them.

    Call before gitgauge stages the work: an agent may resolve by editing the files without
    `git add`, but a path it neither edited nor staged (a modify/delete left alone) is not
    resolved, although it holds no marker.
    """
    still = unmerged_paths(workspace)
    now = read_files(workspace, list(still))
    return [path for path in still if path not in state.files or now[path] == state.files[path]]


def untracked_files(repo: Repository, workspace: Path) -> set[str]:
    """Untracked, not ignored files: what the setup step made before the agent started."""
    listed = repo.git("ls-files", "--others", "--exclude-standard", "-z", cwd=workspace)
    return {path for path in listed.split("\0") if path}


def grade_merge(
    repo: Repository,
    task: Task,
    workspace: Path,
    state: ConflictState,
    config: RepoConfig,
    *,
    unmerged: list[str],
    setup_files: Collection[str],
    env: Mapping[str, str],
    log_dir: Path,
    wrapper: Sequence[str] = (),
) -> MergeGrade:
    """Grade the staged workspace (call `diffstat.stage_all` first)."""
    assert task.merge is not None
    staged = _entries(repo.git("ls-files", "-s", "-z", cwd=workspace), staged=True)
    for path in setup_files:
        staged.pop(path, None)
    recorded = _entries(repo.tree_listing(task.merge), staged=False)
    automerged = _entries(
        repo.git("ls-tree", "-r", "-z", state.start.automerged_tree, cwd=workspace), staged=False
    )
    conflicted = set(task.conflictFiles)
    exact_files = [path for path in task.conflictFiles if staged.get(path) == recorded.get(path)]
    changed = sorted(
        path for path in set(staged) | set(automerged) if staged.get(path) != automerged.get(path)
    )
    outside = [path for path in changed if path not in conflicted]
    marker_files = [
        path
        for path in dict.fromkeys([*task.conflictFiles, *changed])
        if (workspace / path).is_file()
        and not (workspace / path).is_symlink()
        and has_markers((workspace / path).read_bytes())
    ]
    abandoned = _abandoned(repo, workspace, task)
    test: process.CommandResult | None = None
    if task.testsAtMerge and not abandoned:
        test = process.run(
            config.testCommand,
            cwd=workspace,
            timeout_seconds=config.timeouts.test / 1000,
            env=env,
            stdout_path=log_dir / "test.stdout",
            stderr_path=log_dir / "test.stderr",
            wrapper=wrapper,
        )
    resolved = not marker_files and not unmerged and not abandoned and (test is None or test.ok)
    return MergeGrade(
        resolved=resolved,
        exact=len(exact_files) == len(task.conflictFiles),
        exact_tree=staged == recorded,
        exact_files=exact_files,
        marker_files=marker_files,
        unmerged=unmerged,
        outside=outside,
        abandoned=abandoned,
        test=test,
    )


def _abandoned(repo: Repository, workspace: Path, task: Task) -> bool:
    """No merge in progress, and `other` not merged into HEAD either (the agent may have
    committed the merge): the merge was undone."""
    assert task.other is not None
    in_progress = repo.git("rev-parse", "--git-path", "MERGE_HEAD", cwd=workspace).strip()
    if (workspace / in_progress).exists():
        return False
    merged = process.run(["git", "merge-base", "--is-ancestor", task.other, "HEAD"], cwd=workspace)
    return merged.exit_code != 0


def _entries(listing: str, *, staged: bool) -> dict[str, str]:
    """path -> object id from `git ls-files -s -z` (`mode sha stage\\tpath`) or
    `git ls-tree -r -z` (`mode type sha\\tpath`)."""
    entries: dict[str, str] = {}
    for record in listing.split("\0"):
        if "\t" not in record:
            continue
        meta, path = record.split("\t", 1)
        fields = meta.split()
        entries[path] = fields[1] if staged else fields[2]
    return entries
