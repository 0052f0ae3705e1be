"""The check's tasks: mined once and reused while the base ref's history and the mining config
stay the same, then a fixed sample of them.

The cache is `.gitgauge/tasks/` itself (what a CI cache restores); `.gitgauge/ci-tasks.json`
records the key it was mined under: a digest of gitgauge.yaml's mining settings (everything but
`run`) and the newest commit mined (the base ref's). A key that matches means no mining at all;
otherwise `mine` runs through its use case, incrementally (tasks already saved and verdicts
remembered are not verified again), and the key is written. The tasks used are those whose
commits are all in the base ref's history, so a fix of the pull request itself is never one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import kinds
from gitgauge.core.errors import TaskError, UsageError
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store, atomic_write_json
from gitgauge.core.text import plural

KEY_FILE = "ci-tasks.json"
"""Under `.gitgauge/`: the key the tasks were last mined under."""
SAMPLE_SEED = "gitgauge-ci"
"""What the sample's order is seeded with: the same tasks on every rerun and on both sides."""


def cache_key(config: RepoConfig, base: str) -> str:
    settings = config.model_dump(mode="json", exclude={"run"})
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{digest[:16]}-{base[:12]}"


def recorded_key(store: Store) -> str | None:
    try:
        data = json.loads((store.root / KEY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get("key") if isinstance(data, dict) else None
    return key if isinstance(key, str) else None


@dataclass(frozen=True)
class CachedTasks:
    tasks: list[Task]
    """The usable tasks of the base ref's history, in id order."""
    hit: bool
    key: str
    mining_seconds: float


def cached_tasks(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    base: str,
    *,
    mine: Callable[[], int],
    say: Callable[[str], None],
    warn: Callable[[str], None],
) -> CachedTasks:
    """The tasks of `base`'s history: from `.gitgauge/tasks/` when its key matches, else after
    `mine()` (the mining use case, run by the caller's closure: it returns the new tasks)."""
    key = cache_key(config, base)
    hit = recorded_key(store) == key and store.tasks_dir.is_dir()
    seconds = 0.0
    if hit:
        say(f"tasks: cache hit (key {key}), no mining")
    else:
        say(f"tasks: cache miss (key {key}), mining the new commits")
        started = time.monotonic()
        found = mine()
        seconds = time.monotonic() - started
        atomic_write_json(store.root / KEY_FILE, {"key": key, "base": base})
        say(f"tasks: mined in {seconds:.1f}s, {plural(found, 'new task')}")
    tasks = [task for task in store.load_tasks(warn=warn) if _in_history(repo, task, base)]
    if not tasks:
        raise TaskError(
            f"no task in {store.tasks_dir} comes from the base's history: mine more commits "
            "(mine.last in gitgauge.yaml) or check testCommand with `gitgauge doctor`"
        )
    return CachedTasks(sorted(tasks, key=lambda task: task.id), hit, key, seconds)


def _in_history(repo: Repository, task: Task, base: str) -> bool:
    needed = kinds.get(task.kind).commits(task)
    return bool(needed) and all(
        repo.has_commit(sha) and repo.is_ancestor(sha, base) for sha in needed
    )


def sample(tasks: Sequence[Task], count: int | None) -> list[Task]:
    """`count` tasks in a seeded order that does not depend on which other tasks exist (each
    task's rank is a digest of its id), so a rerun, and both sides, get the same ones; all of
    them, in id order, without `count`."""
    if count is None:
        return list(tasks)
    if count <= 0:
        raise UsageError(f"--tasks must be a positive number of tasks, got {count}")

    def rank(task: Task) -> str:
        return hashlib.sha256(f"{SAMPLE_SEED}:{task.id}".encode()).hexdigest()

    chosen = sorted(tasks, key=rank)[:count]
    return sorted(chosen, key=lambda task: task.id)


def key_path(store: Store) -> Path:
    return store.root / KEY_FILE
