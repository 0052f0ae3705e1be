"""Spoiler-free task prompts: ask a model to describe a fix's symptom and expected behaviour
without revealing how it was fixed (`gitgauge mine --rewrite-prompts`, `gitgauge rewrite`).

The use case: `Rewriter` (the `mine` hook, one task at a time) and `rewrite_tasks` (tasks mined
earlier), the totals they keep, and the checks an answer must pass. The request is built by
`rewrite_request` and sent by a backend from `rewrite_backends`.

A rewrite that fails for any reason keeps the original prompt with a warning: never fatal.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from gitgauge.core import kinds
from gitgauge.core.errors import GitError, TaskError
from gitgauge.core.git import Commit, Repository
from gitgauge.core.records import Task
from gitgauge.core.store import Store
from gitgauge.core.task_ids import resolve_task_id

# Re-exported: the `--rewrite-model` default the CLI offers, next to `Rewriter.create`.
from gitgauge.mining.rewrite_backends import DEFAULT_MODEL as DEFAULT_MODEL
from gitgauge.mining.rewrite_backends import (
    MAX_ANSWER_TOKENS,
    Completion,
    ModelBackend,
    RewriteFailed,
    Usage,
    choose_backend,
)

Warn = Callable[[str], None]


@dataclass
class RewriteTotals:
    rewritten: int = 0
    kept: int = 0
    """Rewrites that failed: the original prompt was kept."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    """Sum of the costs reported; None when no backend reported one."""

    def add(self, usage: Usage, *, ok: bool) -> None:
        if ok:
            self.rewritten += 1
        else:
            self.kept += 1
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        if usage.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd


class Rewriter:
    """Rewrites task prompts; a failure warns (naming the task and why) and keeps the original."""

    def __init__(self, repo: Repository, backend: ModelBackend, *, model: str, warn: Warn) -> None:
        self.repo = repo
        self.backend = backend
        self.model = model
        """As the user wrote it (an alias, or an id)."""
        self.warn = warn
        self.totals = RewriteTotals()
        # Verification may run in parallel; the totals are shared.
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, repo: Repository, *, model: str, warn: Warn, env: Mapping[str, str]
    ) -> Rewriter:
        """Choose the backend now, so a missing one stops the command before any work."""
        return cls(repo, choose_backend(model, env=env), model=model, warn=warn)

    def describe(self) -> str:
        model_id = self.backend.model_id
        name = self.model if self.model == model_id else f"{self.model} ({model_id})"
        return f"{name} through {self.backend.describe()}"

    def prepare_task(self, task: Task, commit: Commit) -> Task:
        """The `mine` hook: the verified task, its prompt rewritten when the model delivers."""
        return self.rewrite(task, commit=commit)

    def rewrite(self, task: Task, *, commit: Commit | None = None) -> Task:
        # A task rewritten before keeps its commit-message prompt as the original.
        original = task.originalPrompt or task.prompt
        try:
            # The kind knows what may be shown (a merge: never its diff or message).
            request = kinds.get(task.kind).rewrite_request(self.repo, task, commit)
            completion = self.backend.complete(request)
            text = _check_answer(completion, original=original, task=task, nonce=request.nonce)
        except (RewriteFailed, GitError) as failure:
            usage = failure.usage if isinstance(failure, RewriteFailed) else Usage()
            with self._lock:
                self.totals.add(usage, ok=False)
            self.warn(f"task {task.id}: prompt not rewritten, original kept: {failure}")
            return task
        with self._lock:
            self.totals.add(completion.usage, ok=True)
        return task.model_copy(
            update={
                "prompt": text,
                "originalPrompt": original,
                "rewriteModel": self.backend.model_id,
                "rewriteBackend": self.backend.kind,
                "rewriteInputTokens": completion.usage.input_tokens,
                "rewriteOutputTokens": completion.usage.output_tokens,
                "rewriteCostUsd": completion.usage.cost_usd,
            }
        )


def _check_answer(completion: Completion, *, original: str, task: Task, nonce: str) -> str:
    text = completion.text.strip()
    if not text:
        raise RewriteFailed("the model's answer was empty", completion.usage)
    if completion.truncated:
        raise RewriteFailed(
            f"the answer was cut off at {MAX_ANSWER_TOKENS} tokens", completion.usage
        )
    echoes = {_squash(original), _squash(f"{task.subject}\n\n{task.body}"), _squash(task.subject)}
    if _squash(text) in echoes:
        raise RewriteFailed("the model answered with the original prompt", completion.usage)
    if nonce in text:
        raise RewriteFailed("the answer repeats the request's delimiters", completion.usage)
    return text


@dataclass
class RewriteRun:
    """What `gitgauge rewrite` did, task by task."""

    rewritten: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Already rewritten (use --force to rewrite again)."""


def rewrite_tasks(
    store: Store,
    rewriter: Rewriter,
    *,
    task_id: str | None = None,
    force: bool = False,
    warn: Warn,
    on_task: Callable[[Task, str], None] = lambda task, outcome: None,
) -> RewriteRun:
    """Rewrite already-mined tasks (one, or all), saving each as soon as it is done."""
    run = RewriteRun()
    refused: set[str] = set()
    for task in _select(store, task_id, warn=warn):
        if not kinds.get(task.kind).rewritable:
            # A prompt gitgauge wrote itself (a chain task's) holds no spoiler to rewrite.
            run.skipped.append(task.id)
            on_task(task, "own prompt")
            continue
        if task.originalPrompt is not None and not force:
            run.skipped.append(task.id)
            on_task(task, "skipped")
            continue
        try:
            updated = rewriter.rewrite(task)
        except TaskError as refusal:
            # A kind without prompt rewriting (a fixture makes its prompt per pair): asked for
            # by id, an error; among all tasks, kept, said once per kind, the others rewritten.
            if task_id is not None:
                raise
            if str(refusal) not in refused:
                refused.add(str(refusal))
                warn(f"{refusal}: kept as they are")
            run.kept.append(task.id)
            on_task(task, "kept")
            continue
        if updated is task:
            run.kept.append(task.id)
            on_task(task, "kept")
            continue
        store.save_task(updated)
        run.rewritten.append(task.id)
        on_task(updated, "rewritten")
    return run


def _select(store: Store, task_id: str | None, *, warn: Warn) -> Iterator[Task]:
    if task_id is None:
        yield from store.load_tasks(warn=warn)
        return
    on_disk = [path.stem for path in store.tasks_dir.glob("*.yaml")]
    task_id = resolve_task_id(task_id, on_disk) or task_id
    path = store.task_path(task_id)
    if "/" in task_id or not path.is_file():
        raise TaskError(
            f"no task {task_id!r} in {store.tasks_dir} (task ids are the file names there, "
            "without .yaml)"
        )
    yield store.load_task_file(path)


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()
