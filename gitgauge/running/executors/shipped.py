"""What a pair needs on a machine that does not have the user's repository, and how a node runs it.

Travels to a node: the history up to the task's `base` as one git pack of exactly the objects
reachable from `base` (never the fix; for a merge task, from `base` and `other`, never the
recorded merge, whose tree listing travels instead, ids only, for grading) with the tags in
`base`'s history (their objects in the pack, their names in the request), the fix's test
files, and for adapters that read the fix (`gold`) the fix's own changes; for a chain task the
chain's tree listings and what its kind reads past the copy (`TaskKind.remote_reads`, recorded
here: `core.git.recorded`); for a fixture task nothing but the task, which holds its fixture (no
history: the node builds the fixture's repository in its own sandbox); the configs, and each
config's harness sources by value (the `files` overlays and the `configDir`, never a
credentials file), once per config. The node turns the pack into a bare history copy once
(later pairs of the task on that node reuse it; each pair works in an overlay repository of its
own), lays the harness sources out in the pair's own directory, makes its own sandbox from
`run.sandbox` (its bwrap, its paths), and runs the same `Pair.run` as a local run, on a
`ShippedRepository` that answers the fix's files and the recorded reads from what was shipped.
Comes back: the `RunResult` and the pair's log files.

Nothing here imports `ray`: the Ray glue (`ray.py`) calls `run_on_node`, and tests can too.
"""

from __future__ import annotations

import dataclasses
import fcntl
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from gitgauge import __version__
from gitgauge.core import kinds, node_local, process
from gitgauge.core.errors import GitError, GitGaugeError
from gitgauge.core.git import Blob, ChangedPath, Repository, both_sides, history
from gitgauge.core.git.history import HistoryCopy
from gitgauge.core.git.recorded import RecordedReads, RecordingRepository, ReplayingRepository
from gitgauge.core.git.tags import Tag, TagCache
from gitgauge.core.records import RunResult, Task
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.sandbox import prepare as prepare_sandbox
from gitgauge.core.schema import RepoConfig, WorktreeSettings
from gitgauge.core.store import Store
from gitgauge.running.adapters.base import Adapter
from gitgauge.running.executors import other_parent
from gitgauge.running.executors.shipped_harness import ShippedHarness, materialize_harness

if TYPE_CHECKING:
    from gitgauge.running.pair import Pair
    from gitgauge.running.plan import PlannedConfig

NODE_PREFIX = "gitgauge-ray-"
"""Everything a run leaves on a node lives in `<node temp>/gitgauge-ray-<run id>/`."""


@dataclass(frozen=True)
class FixFiles:
    """The part of the fix a node may see: the test files, and the source changes only for
    adapters that read the fix."""

    fix: str
    files: dict[str, Blob | None]
    """Path -> its content at the fix (None: the fix has no such file)."""
    submodules: frozenset[str] = frozenset()
    changes: tuple[ChangedPath, ...] | None = None
    """base..fix changes, shipped only for adapters that read the fix (`gold`)."""
    trees: dict[str, str] = field(default_factory=dict)
    """Commit -> its tree as `git ls-tree -r -z` lists it, for each commit the kind's grading
    compares by object id (`TaskKind.compared_trees`: a merge's recorded merge, for `exact` and
    `exactTree`; the chain kinds' chain): object ids and paths, never contents."""
    reads: RecordedReads = field(default_factory=RecordedReads)
    """What the kind reads of the user's repository past the history copy
    (`TaskKind.remote_reads`: a commits task's chain), answered from this record."""


def fix_files(
    repo: Repository, task: Task, *, with_source: bool, judging: bool = False
) -> FixFiles:
    """What a node gets of the task's answer side: `with_source` for adapters that read the
    fix (`gold`), `judging` when the run's judge compares a pair's work with the original."""
    kind = kinds.get(task.kind)
    if not kind.history_tips(task):
        # A kind with a repository of its own (a fixture): the task file holds all it needs.
        return FixFiles(fix="", files={})
    # What grading lays over any agent's result (a fix's tests, a merge's outside changes).
    paths = list(dict.fromkeys(kind.laid_paths(task)))
    changes: tuple[ChangedPath, ...] | None = None
    if with_source:
        # What gold writes (every conflicted file of a merge, changed from base or not).
        paths += [path for path in kind.gold_paths(repo, task) if path not in paths]
        changes = tuple(repo.diff_names(task.base, task.fix))
        paths = both_sides(changes, paths)
    submodules = frozenset(path for path in paths if repo.is_submodule(task.fix, path))
    files = {path: repo.read_blob(task.fix, path) for path in paths if path not in submodules}
    # Grading that compares trees by id (a merge's) gets their listings, ids only.
    trees = {commit: repo.tree_listing(commit) for commit in kind.compared_trees(task)}
    # What the kind's pair reads past the history (a commits task's chain), recorded here.
    recording = RecordingRepository(repo)
    kind.remote_reads(recording, task, gold=with_source, judging=judging)
    reads = recording.reads
    return FixFiles(
        fix=task.fix,
        files=files,
        submodules=submodules,
        changes=changes,
        trees=trees,
        reads=reads,
    )


def history_tips(task: Task) -> tuple[str, ...]:
    """The commits whose history a task's pairs need (its kind says: a merge's other parent
    too), never the answer."""
    return kinds.get(task.kind).history_tips(task)


def pack_history(repo: Repository, tips: tuple[str, ...]) -> bytes:
    """One git pack of exactly the objects reachable from `tips` (a task's `history_tips`)."""
    return history.pack_of(repo, tips)


class ShippedRepository(ReplayingRepository):
    """A node's stand-in for the user's repository: a bare history copy up to `base`, plus the
    fix's files that were shipped. There is no user checkout on a node to protect."""

    def __init__(self, root: Path, fix: FixFiles, *, held: tuple[str, ...] = ()) -> None:
        # No super(): no work tree here (`root`: the history copy; for a fixture, the run's
        # node directory, which only names the owner of the pair's temporary folders).
        self._local = threading.local()
        self.root = root
        self.fix = fix
        self.reads = fix.reads
        self.held = frozenset(held)
        """The commits the copy holds the history of (the task's `history_tips`): a fix
        among them (a rebase task's newest commit, its base) is read from the copy."""
        self._tags = TagCache(root)  # the copy's own: the tags in base's history

    def _shipped(self, commit: str) -> bool:
        """Whether `commit` is the fix, answered from what was shipped (not in the copy)."""
        return commit == self.fix.fix and commit not in self.held

    def read_blob(self, commit: str, path: str) -> Blob | None:
        if (commit, path) in self.reads.blobs:
            return self.reads.blobs[(commit, path)]
        if not self._shipped(commit):
            return super().read_blob(commit, path)
        if path not in self.fix.files:
            raise GitError(f"{path} of the fix {commit[:12]} was not sent to this node")
        return self.fix.files[path]

    def is_submodule(self, commit: str, path: str) -> bool:
        if (commit, path) in self.reads.submodules:
            return self.reads.submodules[(commit, path)]
        if not self._shipped(commit):
            return super().is_submodule(commit, path)
        return path in self.fix.submodules

    def tree_listing(self, commit: str) -> str:
        if commit in self.fix.trees:
            return self.fix.trees[commit]
        if commit in self.reads.trees:
            return self.reads.trees[commit]
        if not self._shipped(commit):
            return super().tree_listing(commit)
        raise GitError(f"the tree of {commit[:12]} was not sent to this node")

    def diff_names(self, old: str, new: str) -> list[ChangedPath]:
        if (old, new) in self.reads.changes:
            return list(self.reads.changes[(old, new)])
        if not self._shipped(new):
            return super().diff_names(old, new)
        if self.fix.changes is None:
            raise GitError(f"the changes of the fix {new[:12]} were not sent to this node")
        return list(self.fix.changes)

    def checkout_state(self) -> str:
        return ""

    def object_stores(self) -> tuple[Path, ...]:
        return (self.root / "objects",)


@dataclass(frozen=True)
class NodePairRequest:
    """One pair, as it travels to a node (the history pack travels separately, once per task)."""

    run_id: str
    planned: object
    """The `PlannedConfig` (typed loosely: `running.run` imports this module's package)."""
    task: Task
    attempt: int
    config: RepoConfig
    fix: FixFiles
    env: dict[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`, set for the pair only."""
    tags: tuple[Tag, ...] = ()
    """The tags in the task's base's history (`Repository.tags_at`): the node's copy holds
    them, their objects come in the pack."""
    mode: str | None = None
    """`run --mode` (`Pair.mode`): the mode of every task whose kind has modes."""
    version: str = __version__
    """The driver's gitgauge version (a node that joined after the start check compares it)."""


@dataclass(frozen=True)
class NodePairOutcome:
    result: RunResult
    logs: dict[str, bytes]
    """The pair's log files, by path relative to its log directory."""
    warnings: list[str]
    node: str
    history_copied: bool
    """Whether this pair made the node's history copy of the task (False: reused it)."""


@dataclass(frozen=True)
class NodeFacts:
    version: str
    git: bool


def probe_node() -> NodeFacts:
    """What the driver checks on every node before pairs start."""
    return NodeFacts(version=__version__, git=shutil.which("git") is not None)


def node_root(run_id: str) -> Path:
    return Path(_system_temp()) / f"{NODE_PREFIX}{run_id}"


def remove_node_run(run_id: str) -> bool:
    """Remove what the run left on this node (history copies, workspaces); whether any was."""
    root = node_root(run_id)
    existed = root.exists()
    shutil.rmtree(root, ignore_errors=True)
    return existed


def run_on_node(
    request: NodePairRequest,
    load_pack: Callable[[], bytes],
    harness: ShippedHarness,
    *,
    node: str,
) -> NodePairOutcome:
    """Run one pair here with `Pair.run`, exactly as a local run does, with the config's
    harness laid out from `harness` (what the driver read); `node` names this node in messages.
    A task with no history (a fixture, whose task file holds its fixture) gets no copy: its
    pair builds its own repository here, in this node's sandbox."""
    from gitgauge.running.pair import Pair
    from gitgauge.running.plan import PlannedConfig

    planned = request.planned
    assert isinstance(planned, PlannedConfig)
    task = request.task
    root = node_root(request.run_id)
    (root / "tmp").mkdir(parents=True, exist_ok=True)
    tips = history_tips(task)
    copy, copied = (
        _history_copy(root / "history", tips, load_pack, request.tags) if tips else (None, False)
    )
    repo = ShippedRepository(copy or root, request.fix, held=tips)
    # No `worktree.link` on a node (its directories are on the user's machine).
    config = request.config.model_copy(update={"worktree": WorktreeSettings()})
    warnings: list[str] = []
    pair_root = Path(tempfile.mkdtemp(prefix="pair-", dir=root / "tmp"))
    store = Store(pair_root)
    log_dir = store.log_dir(request.run_id, planned.config.name, task.id, request.attempt)
    previous_temp = tempfile.tempdir
    try:
        # The driver's paths do not exist here: the harness is laid out from what it sent.
        laid_out = materialize_harness(harness, planned.harness, pair_root / "harness")
        planned = dataclasses.replace(planned, harness=laid_out)
        # Workspaces go under the run's node directory, so removing it after an interrupt or a
        # killed worker leaves nothing behind.
        tempfile.tempdir = str(root / "tmp")
        with node_local.environment(request.env), node_local.slot(root) as slot:
            try:
                if request.version != __version__:
                    raise GitGaugeError(
                        f"gitgauge {__version__} here, {request.version} on the driver: install "
                        "the same version on the cluster"
                    )
                planned.adapter.check()
                sandbox = node_sandbox(config, planned.source, planned.adapter, warnings.append)
            except GitGaugeError as error:
                log_dir.mkdir(parents=True, exist_ok=True)
                result = _node_error(request, planned, f"on node {node}: {error}")
            else:
                pair = Pair(
                    repo,
                    config,
                    store,
                    request.run_id,
                    warnings.append,
                    sandbox=sandbox,
                    mode=request.mode,
                )
                result = _run_pair(pair, planned, request, copy, slot=slot)
        logs = {
            str(path.relative_to(log_dir)): path.read_bytes()
            for path in sorted(log_dir.rglob("*"))
            if path.is_file()
        }
    finally:
        tempfile.tempdir = previous_temp
        shutil.rmtree(pair_root, ignore_errors=True)
    return NodePairOutcome(
        result=result, logs=logs, warnings=warnings, node=node, history_copied=copied
    )


def _run_pair(
    pair: Pair, planned: PlannedConfig, request: NodePairRequest, copy: Path | None, *, slot: int
) -> RunResult:
    """`Pair.run` over the node's history copy, or with none (a kind with a repository of its
    own starts from a fresh directory)."""
    from gitgauge.running.workspace import TaskWorkspaces

    task = request.task
    if copy is None:
        return pair.run(planned, task, None, attempt=request.attempt, slot=slot)
    with TaskWorkspaces(
        pair.repo,
        task.base,
        history="isolated",
        link=[],
        warn=pair.warn,
        copy=HistoryCopy(copy, task.base),
        other=other_parent(task),
    ) as prepared:
        return pair.run(planned, task, prepared, attempt=request.attempt, slot=slot)


def _node_error(request: NodePairRequest, planned: PlannedConfig, message: str) -> RunResult:
    """The pair's result when it cannot run on this node (the version, the agent, the
    sandbox)."""
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return RunResult(
        runId=request.run_id,
        config=planned.config.name,
        task=request.task.id,
        attempt=request.attempt,
        status="error",
        errorKind="internal",
        errorMessage=message,
        startedAt=now,
        finishedAt=now,
    )


def node_sandbox(
    config: RepoConfig, source: str, adapter: Adapter, warn: Callable[[str], None]
) -> Sandbox | None:
    """This node's sandbox for a pair, from the run's `run.sandbox` (the mode
    `running.sandboxing.resolve_sandbox` gave, `--sandbox` included): its own bwrap, its own
    paths (the agent's binary, the testCommand's programs, its $HOME); nothing of the user's
    repository is here to hide, but the node's temporary directory, with every history copy and
    workspace of the run, is. `auto` without a working bwrap: None and a warning;
    `bwrap`: a `SandboxError` (the pair's error)."""
    env = process.clean_env()
    return prepare_sandbox(
        config.run.sandbox,
        network=config.run.sandbox_network,
        repo_root=None,
        link=[],
        exposures=[(source, adapter.sandbox_exposure(env))],
        test_command=config.testCommand,
        home_writable=config.run.sandbox_home_writable,
        env=env,
        warn=warn,
        temp_root=Path(_system_temp()).resolve(),
    )


_SYSTEM_TEMP: list[str] = []


def _system_temp() -> str:
    """The node's temporary directory, as it was before a pair redirected `tempfile`."""
    if not _SYSTEM_TEMP:
        _SYSTEM_TEMP.append(tempfile.gettempdir())
    return _SYSTEM_TEMP[0]


def _history_copy(
    folder: Path, tips: tuple[str, ...], load_pack: Callable[[], bytes], tags: tuple[Tag, ...]
) -> tuple[Path, bool]:
    """The node's bare copy of the history up to `tips` (a task's base, and a merge task's
    other parent), made by the first pair that needs it; `main` points at the base, and the
    copy holds `tags` (those in the base's history)."""
    folder.mkdir(parents=True, exist_ok=True)
    # A copy holding a merge task's other parent is its own: those commits need not be
    # ancestors of the base, so a fix task of the same base must not see them.
    name = "-".join(tips)
    target = folder / f"{name}.git"
    with _flock(folder / f"{name}.lock"):
        if (target / "HEAD").exists():
            return target, False
        building = folder / f"{name}.partial"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        try:
            history.copy_from_pack(building, load_pack(), tips[0], tags=tags)
        except GitError as error:
            raise GitError(f"on node {socket.gethostname()}: {error}") from None
        building.rename(target)
        return target, True


@contextmanager
def _flock(path: Path) -> Iterator[None]:
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
