"""`gitgauge export`: mined tasks in the formats other tools read.

What both formats share lives here: which tasks can be exported (fix tasks whose commits are
still in the repository), how a fix splits into its source and test changes, the repository's
name, and the refusal to overwrite. `swebench_rows` writes SWE-bench instances (one JSON object
per task), their FAIL_TO_PASS / PASS_TO_PASS from the task's per-test verdicts with the test names
made pytest node ids where the repository's files at the fix say how (`pytest_node_ids`);
`export_harbor.py` writes Harbor task folders. Everything exported is read at the
task's `base` or `fix`: nothing after the fix reaches an export.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitgauge.core import kinds
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.paths import is_test_file
from gitgauge.core.records import Task
from gitgauge.core.store import Store, atomic_write_text
from gitgauge.exporting.formats import Exported, ExportFormat, ExportOptions, register

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
        if not kinds.get(task.kind).exportable:
            warn(f"skipping task {task.id}: kind {task.kind!r} has no equivalent in this format")
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
    url = repo.remote_url("origin") or ""
    match = re.search(r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$", url)
    if match:
        return f"{match[1]}/{match[2]}"
    return f"local/{repo.root.name}"


def per_test_lists(
    task: Task, repo: Repository, store: Store, *, warn: Warn
) -> tuple[list[str], list[str]] | None:
    """FAIL_TO_PASS and PASS_TO_PASS of `task`, named as SWE-bench's pytest log parser names
    tests (`pytest_node_ids`). A task proved by exit codes (`failToPass` null) has neither:
    `([], [])`. A per-test task whose PASS_TO_PASS names (`<id>.tests.json`, loaded by the store)
    are missing or unreadable is None, with a warning naming the file: an empty PASS_TO_PASS
    would tell SWE-bench that no test has to keep passing, which is not what was mined."""
    if task.failToPass is None:
        return [], []
    if task.passToPassTests is None:
        path = store.task_tests_path(task.id)
        shown = path.relative_to(repo.root) if path.is_relative_to(repo.root) else path
        state = "cannot be read" if path.exists() else "is missing"
        warn(
            f"skipping task {task.id}: {shown}, its PASS_TO_PASS test names, {state}; to get "
            f"it back delete .gitgauge/tasks/{task.id}.yaml and run `gitgauge mine --force`"
        )
        return None
    files = tree_paths(repo, task.fix)
    fail_to_pass, unmatched = pytest_node_ids(task.failToPass, files)
    pass_to_pass, unmatched_p2p = pytest_node_ids(task.passToPassTests, files)
    unmatched += unmatched_p2p
    if unmatched:
        total = len(task.failToPass) + len(task.passToPassTests)
        warn(
            f"task {task.id}: {len(unmatched)} of {total} test names are exported as the JUnit "
            f"report names them (classname::name), not as pytest node ids: no one file at the "
            f"fix matches their classname ({few_names(unmatched)})"
        )
    return fail_to_pass, pass_to_pass


def pytest_node_ids(names: Sequence[str], files: Iterable[str]) -> tuple[list[str], list[str]]:
    """`names` (`classname::name`, as gitgauge reads JUnit reports) as pytest node ids, which
    SWE-bench's pytest log parser reads from `pytest -rA`: `tests/test_x.py::test_y`,
    `tests/test_x.py::TestC::test_y[param]`. Returns them in order, and the names left as they were.

    pytest writes a test's classname as its node id's file path with `/` made `.` and `.py`
    dropped, then its classes, dot-joined (`tests.test_x.TestC`): where the path ends is not in
    the name. It is resolved against `files` (the repository's files at the fix): the longest
    dotted prefix that is exactly one file's mangled path is the file, the rest are classes. A name
    no file matches (another runner's, a file outside pytest's rootdir or generated by the suite),
    or that two files match, is kept as it is and returned in the second list."""
    index: dict[str, list[str]] = {}
    for path in files:
        index.setdefault(_mangled(path), []).append(path)
    converted: list[str] = []
    unmatched: list[str] = []
    for name in names:
        node_id = _node_id(name, index)
        if node_id is None:
            unmatched.append(name)
        converted.append(node_id or name)
    return converted, unmatched


def tree_paths(repo: Repository, commit: str) -> list[str]:
    """Every file path in `commit`'s tree."""
    return repo.paths_at(commit)


def _mangled(path: str) -> str:
    """A file's path as pytest writes it into a JUnit classname (`mangle_test_address`)."""
    return re.sub(r"\.py$", "", path.replace("/", "."))


def _node_id(name: str, index: dict[str, list[str]]) -> str | None:
    classname, separator, test = name.partition("::")
    if not separator or not classname:
        return None
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        paths = index.get(".".join(parts[:end]))
        if paths is None:
            continue
        classes = parts[end:]
        if len(paths) != 1 or not all(part.isidentifier() for part in classes):
            return None
        return "::".join([paths[0], *classes, test])
    return None


def few_names(names: Sequence[str], shown: int = 3) -> str:
    """A few names for a one-line warning."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def swebench_rows(tasks: Sequence[Task], repo: Repository, *, warn: Warn) -> list[dict[str, Any]]:
    """One SWE-bench instance per task. A task whose diff holds text that is not UTF-8 (JSON
    cannot carry it), or a per-test task whose PASS_TO_PASS names are lost (`per_test_lists`), is
    skipped with a warning naming the file; binary files travel as git binary patches (base85),
    which `git apply` applies."""
    name = repository_name(repo)
    store = Store(repo.root)
    rows: list[dict[str, Any]] = []
    for task in tasks:
        lists = per_test_lists(task, repo, store, warn=warn)
        if lists is None:
            continue
        fail_to_pass, pass_to_pass = lists
        changes = fix_changes(repo, task)
        undecodable = _undecodable_text(repo, task, [*changes.source, *changes.tests])
        if undecodable is not None:
            warn(
                f"skipping task {task.id}: {undecodable} is text that is not UTF-8, which a "
                f"SWE-bench JSON line cannot carry (export it with --format harbor)"
            )
            continue
        rows.append(
            {
                "instance_id": f"{name.replace('/', '__')}-{task.id}",
                "repo": name,
                "base_commit": task.base,
                "patch": repo.diff_text(task.base, task.fix, changes.source, binary=True),
                "test_patch": repo.diff_text(task.base, task.fix, changes.tests, binary=True),
                "problem_statement": task.prompt,
                "hints_text": "",
                "created_at": repo.commit_date(task.fix),
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


@register
class SwebenchFormat(ExportFormat):
    """SWE-bench instances, one JSON line each: to `--out`, or to standard output."""

    name = "swebench"

    def export(self, tasks: Sequence[Task], repo: Repository, options: ExportOptions) -> Exported:
        text = render_jsonl(swebench_rows(tasks, repo, warn=options.warn))
        out = options.out
        if out is None:
            return Exported(said=None, stdout=text.rstrip("\n"))
        atomic_write_text(out, text)
        return Exported(said=f"wrote {len(text.splitlines())} SWE-bench instances to {out}")
