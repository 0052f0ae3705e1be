"""`gitgauge import gitbench PATH`: a GitBench-format fixture pack as tasks of `kind: fixture`.

PATH is a pack's root (holding `fixtures/`), its `fixtures/`, one benchmark folder or one file.
Each fixture is checked (`core/fixtures/format.py`: an unknown key or scorer skips it with one
line naming the file and the key), becomes `.gitgauge/tasks/gitbench-<benchmark>-<id>.yaml`, and
is compared with the task an earlier import made (new, changed, unchanged).

Then the `noop` baseline runs on every fixture, through the same pair as `gitgauge run` (its
repository built in the sandbox, nothing done, scored): a fixture whose setup fails is skipped as
broken, and one noop passes is flagged `nonDiscriminating` (its assertions already hold on the
untouched repository). `--check` also runs `gold` and `noop` in each mode a fixture has, and
reports every fixture that fails its own gold. A use case at the top: it joins importing (what
`mine` is to a history) with running the baselines.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitGaugeError, TaskError, UsageError
from gitgauge.core.fixtures.format import (
    MODES,
    Fixture,
    FixtureProblem,
    content_hash,
    pack_files,
    read_fixture_file,
)
from gitgauge.core.git import Repository
from gitgauge.core.parallel import in_order
from gitgauge.core.records import RunResult, Task
from gitgauge.core.sandbox import Sandbox, prepare
from gitgauge.core.schema import AgentConfig, RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.worktree import Warn
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import create
from gitgauge.running.pair import Pair
from gitgauge.running.plan import PlannedConfig

BASELINE_SOURCE = "gitgauge import --check"


@dataclass
class BenchmarkCount:
    imported: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class Broken:
    """A fixture that fails its own gold in a mode."""

    task: str
    mode: str
    why: str


@dataclass
class ImportOutcome:
    counts: dict[str, BenchmarkCount] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    """Tasks whose fixture differs from the one imported before."""
    non_discriminating: list[str] = field(default_factory=list)
    checked: bool = False
    broken: list[Broken] = field(default_factory=list)
    """With --check: fixtures that fail their own gold."""
    unscored: list[str] = field(default_factory=list)
    """With --check: fixtures gold could not be scored on (no LLM judge)."""
    noop_passes: dict[str, list[str]] = field(default_factory=dict)
    """With --check: mode -> fixtures noop passes in it."""
    gold_runs: dict[str, int] = field(default_factory=dict)
    """With --check: mode -> fixtures gold ran on."""

    @property
    def imported(self) -> int:
        return sum(count.imported for count in self.counts.values())


@dataclass(frozen=True)
class _Candidate:
    fixture: Fixture
    task: Task
    path: Path
    status: str
    """new, changed or unchanged."""


def import_pack(
    repo: Repository,
    config: RepoConfig,
    store: Store,
    path: Path,
    *,
    mode: str | None,
    check: bool,
    jobs: int,
    warn: Warn,
    on_change: Callable[[str], None] = lambda line: None,
) -> ImportOutcome:
    """Import the fixtures under `path` (see the module's docstring); nothing is saved for a
    fixture that cannot be read or whose setup fails."""
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    outcome = ImportOutcome(checked=check)
    candidates: list[_Candidate] = []
    seen: dict[str, Path] = {}
    for entry in pack_files(path):
        count = outcome.counts.setdefault(entry.benchmark, BenchmarkCount())
        try:
            fixture = read_fixture_file(entry.path, benchmark=entry.benchmark)
        except FixtureProblem as problem:
            warn(f"skipping {problem}")
            count.skipped += 1
            continue
        task = fixture_task(fixture, entry.path, mode=mode)
        if task.id in seen:
            warn(f"skipping {entry.path}: id: {task.id} is also the id of {seen[task.id]}")
            count.skipped += 1
            continue
        seen[task.id] = entry.path
        status, why = _compare(store, task)
        if status == "changed":
            on_change(f"changed: {task.id} ({entry.path}) {why}")
        candidates.append(_Candidate(fixture, task, entry.path, status))
    sandbox = fixture_sandbox(repo, config, warn=warn)
    baseline = _Baselines(repo, config, sandbox, warn=warn)
    saved: list[_Candidate] = []
    try:
        # noop in the task's own mode flags it; with --check in every mode it has, at once.
        asked = [(c.task, m) for c in candidates for m in _modes(c, every=check)]
        ran = baseline.run("noop", asked, jobs=jobs)
        noops = {(t.id, m): r for (t, m), r in zip(asked, ran, strict=True)}
        for candidate in candidates:
            result = noops[(candidate.task.id, candidate.task.mode)]
            count = outcome.counts[candidate.fixture.benchmark]
            if result.status == "error":
                warn(f"skipping {candidate.path}: {result.errorMessage}")
                count.skipped += 1
                continue
            flagged = result.status == "resolved"
            task = candidate.task.model_copy(update={"nonDiscriminating": flagged})
            if flagged:
                outcome.non_discriminating.append(task.id)
            store.save_task(task)
            saved.append(candidate)
            count.imported += 1
            setattr(count, candidate.status, getattr(count, candidate.status) + 1)
            if candidate.status == "changed":
                outcome.changed.append(task.id)
        if check:
            kept = {c.task.id for c in saved}
            for (task_id, task_mode), result in noops.items():
                if result.status == "resolved" and task_id in kept:
                    outcome.noop_passes.setdefault(task_mode or "", []).append(task_id)
            _check(baseline, saved, outcome, jobs=jobs)
    finally:
        baseline.close()
    return outcome


def fixture_task(fixture: Fixture, source: Path, *, mode: str | None) -> Task:
    """The task a fixture becomes (not yet flagged: that takes the noop baseline)."""
    chosen = "text" if fixture.text_only or mode == "text" else "agent"
    subject = fixture.description or f"{fixture.benchmark} {fixture.id}"
    return Task(
        id=fixture.task_id,
        kind="fixture",
        base="",
        fix="",
        subject=" ".join(subject.split()),
        prompt=fixture.prompt,
        testFiles=[],
        promptQuality="rich",
        minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        difficulty=fixture.difficulty,  # type: ignore[arg-type]  # format checked it
        benchmark=fixture.benchmark,
        fixtureId=fixture.id,
        tags=list(fixture.tags),
        purpose=fixture.purpose,
        contentHash=content_hash(fixture.raw),
        source=str(source.resolve()),
        mode=chosen,  # type: ignore[arg-type]
        fixture=dict(fixture.raw),
    )


def _compare(store: Store, task: Task) -> tuple[str, str]:
    """new, changed or unchanged, and what changed."""
    path = store.task_path(task.id)
    if not path.is_file():
        return "new", ""
    try:
        before = store.load_task_file(path)
    except TaskError:
        return "changed", "replaces a task file that could not be read"
    if before.contentHash != task.contentHash:
        return "changed", "differs from the fixture imported before"
    if before.mode != task.mode:
        return "changed", f"mode {before.mode} before, {task.mode} now"
    return "unchanged", ""


def fixture_sandbox(repo: Repository, config: RepoConfig, *, warn: Warn) -> Sandbox | None:
    """The sandbox the fixtures' setups and baselines run in (`run.sandbox` of gitgauge.yaml)."""
    return prepare(
        config.run.sandbox,
        network=config.run.sandbox_network,
        repo_root=repo.root,
        link=(),
        exposures=[],
        test_command="",
        home_writable=(),
        env=process.clean_env(),
        warn=warn,
        who="fixture setups",
    )


class _Baselines:
    """gold and noop as `gitgauge run` runs them, their logs in a directory of their own."""

    def __init__(
        self, repo: Repository, config: RepoConfig, sandbox: Sandbox | None, *, warn: Warn
    ) -> None:
        self.repo = repo
        self.config = config
        self.sandbox = sandbox
        self.warn = warn
        self.logs = tempfile.TemporaryDirectory(prefix="gitgauge-import-")

    def run(
        self, adapter: str, pairs: Sequence[tuple[Task, str | None]], *, jobs: int
    ) -> list[RunResult]:
        """`adapter` on each (task, mode) pair (mode None: the task's own)."""
        agent = AgentConfig(name=adapter, adapter=adapter)
        planned = PlannedConfig(
            agent,
            BASELINE_SOURCE,
            create(agent, source=BASELINE_SOURCE),
            harnesses.prepare(agent, source=BASELINE_SOURCE, environ=os.environ),
        )
        store = Store(Path(self.logs.name))
        by_mode = {
            mode: Pair(
                self.repo,
                self.config,
                store,
                f"import-{adapter}",
                self.warn,
                sandbox=self.sandbox,
                mode=mode,
            )
            for mode in {mode for _, mode in pairs}
        }

        def one(item: tuple[Task, str | None], slot: int) -> RunResult:
            task, mode = item
            return by_mode[mode].run(planned, task, None, slot=slot)

        return list(in_order(list(pairs), one, jobs=jobs, name="import"))

    def close(self) -> None:
        self.logs.cleanup()


def _modes(candidate: _Candidate, *, every: bool) -> tuple[str | None, ...]:
    """The task's own mode, or (`every`) each mode its fixture can run in."""
    if not every:
        return (candidate.task.mode,)
    return ("text",) if candidate.fixture.text_only else MODES


def _check(
    baseline: _Baselines, candidates: Sequence[_Candidate], outcome: ImportOutcome, *, jobs: int
) -> None:
    """gold in every mode each fixture has: who fails its own gold (a broken fixture)."""
    pairs = [(c.task, mode) for c in candidates for mode in _modes(c, every=True)]
    for (task, mode), result in zip(pairs, baseline.run("gold", pairs, jobs=jobs), strict=True):
        key = mode or ""
        outcome.gold_runs[key] = outcome.gold_runs.get(key, 0) + 1
        if result.status == "unscored":
            outcome.unscored.append(f"{task.id} ({mode})")
        elif result.status != "resolved":
            why = result.scoreDetail or result.errorMessage or result.status
            outcome.broken.append(Broken(task.id, key, why))


class BrokenFixtures(GitGaugeError):
    """`import --check` found fixtures that fail their own gold."""
