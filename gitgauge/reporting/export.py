"""`gitgauge export`: mined tasks in the formats other tools read.

What both formats share lives here: which tasks can be exported (fix tasks whose commits are
still in the repository), how a fix splits into its source and test changes, the repository's
name, and the refusal to overwrite. `swebench_rows` writes SWE-bench instances (one JSON object
per task); `export_harbor.py` writes Harbor task folders. Everything exported is read at the
task's `base` or `fix`: nothing after the fix reaches an export.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitgauge.core.errors import GitError, GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.paths import is_test_file
from gitgauge.core.records import Task

Warn = Callable[[str], None]
SWEBENCH_VERSION = "0.0"
"""SWE-bench's `version` keys per-repository environment specs; a mined repository has none."""
_BINARY_PROBE = 8000
"""git calls a file binary when its first 8000 bytes hold a NUL."""


class ExportError(GitGaugeError):
    """An export that cannot be written (no tasks, an existing output...)."""


@dataclass(frozen=True)
class FixChanges:
    """The paths a task's fix changed (both sides of renames), split like `gold` splits them."""

    source: list[str]
    """Changed paths that are not test files: what an agent must change (the `patch`)."""
    tests: list[str]
    """Changed test files: laid over before the test command runs (the `test_patch`)."""


def exportable_tasks(tasks: Sequence[Task], repo: Repository, *, warn: Warn) -> list[Task]:
    """The tasks an export can hold; others are skipped with a warning naming them.

    A task whose `base` or `fix` is gone from the repository (history rewritten, a fresh clone)
    is skipped, as is a task of another kind than a bug fix. No task left is an `ExportError`.
    """
    if not tasks:
        raise ExportError("no tasks to export in .gitgauge/tasks/: run `gitgauge mine` first")
    kept: list[Task] = []
    for task in tasks:
        kind = getattr(task, "kind", None) or "fix"
        if kind != "fix":
            warn(f"skipping task {task.id}: kind {kind!r} has no equivalent in this format")
            continue
        missing = [sha for sha in (task.base, task.fix) if not repo.has_commit(sha)]
        if missing:
            warn(
                f"skipping task {task.id}: commit {missing[0]} is not in this repository "
                f"(history rewritten? fetch it, or delete .gitgauge/tasks/{task.id}.yaml)"
            )
            continue
        kept.append(task)
    if not kept:
        raise ExportError("no task could be exported (see the warnings above)")
    return kept


def fix_changes(repo: Repository, task: Task) -> FixChanges:
    source: list[str] = []
    tests: list[str] = []
    for change in repo.diff_names(task.base, task.fix):
        for path in (change.old_path, change.path):
            if path is None:
                continue
            bucket = tests if is_test_file(path) or path in task.testFiles else source
            if path not in bucket:
                bucket.append(path)
    return FixChanges(source=source, tests=tests)


def refuse_existing(path: Path, *, force: bool) -> None:
    if (path.exists() or path.is_symlink()) and not force:
        raise ExportError(f"{path} already exists: choose another --out, or pass --force")


def repository_name(repo: Repository) -> str:
    """`owner/name` from the `origin` remote's URL, else `local/<directory name>`."""
    try:
        url = repo.git("remote", "get-url", "origin").strip()
    except GitError:
        url = ""
    match = re.search(r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$", url)
    if match:
        return f"{match[1]}/{match[2]}"
    return f"local/{repo.root.name}"


def per_test_lists(task: Task) -> tuple[list[str], list[str]]:
    """The task's per-test verdicts (`failToPass`, `passToPass`) when it records them."""
    fail_to_pass = getattr(task, "failToPass", None) or []
    pass_to_pass = getattr(task, "passToPass", None) or []
    return [str(name) for name in fail_to_pass], [str(name) for name in pass_to_pass]


def swebench_rows(tasks: Sequence[Task], repo: Repository, *, warn: Warn) -> list[dict[str, Any]]:
    """One SWE-bench instance per task. A task whose diff holds text that is not UTF-8 (JSON
    cannot carry it) is skipped with a warning naming the file; binary files travel as git
    binary patches (base85), which `git apply` applies."""
    name = repository_name(repo)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        changes = fix_changes(repo, task)
        undecodable = _undecodable_text(repo, task, [*changes.source, *changes.tests])
        if undecodable is not None:
            warn(
                f"skipping task {task.id}: {undecodable} is text that is not UTF-8, which a "
                f"SWE-bench JSON line cannot carry (export it with --format harbor)"
            )
            continue
        fail_to_pass, pass_to_pass = per_test_lists(task)
        rows.append(
            {
                "instance_id": f"{name.replace('/', '__')}-{task.id}",
                "repo": name,
                "base_commit": task.base,
                "patch": repo.diff_text(task.base, task.fix, changes.source, binary=True),
                "test_patch": repo.diff_text(task.base, task.fix, changes.tests, binary=True),
                "problem_statement": task.prompt,
                "hints_text": "",
                "created_at": repo.git("show", "-s", "--format=%cI", task.fix).strip(),
                "version": SWEBENCH_VERSION,
                "environment_setup_commit": task.base,
                "FAIL_TO_PASS": json.dumps(fail_to_pass),
                "PASS_TO_PASS": json.dumps(pass_to_pass),
            }
        )
    if not rows:
        raise ExportError("no task could be exported (see the warnings above)")
    return rows


def render_jsonl(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _undecodable_text(repo: Repository, task: Task, paths: Sequence[str]) -> str | None:
    """The first path whose text (not binary) content at base or fix is not UTF-8."""
    for path in paths:
        for commit in (task.base, task.fix):
            blob = repo.read_blob(commit, path)
            if blob is None or b"\0" in blob.data[:_BINARY_PROBE]:
                continue
            try:
                blob.data.decode("utf-8")
            except UnicodeDecodeError:
                return path
    return None
