"""Task kinds: one small interface and one registry, like the adapters'.

A kind (`fix`, `merge`, later `rebase`, `commits`, `fixture`) is one module of `gitgauge/kinds/`
that subclasses `TaskKind` and registers itself. Everything that differs between kinds is a
method or an attribute here: which history a workspace holds, how the workspace is entered, what
gold does, how a pair is graded and which result fields it adds (its `draft` record), which
report columns it counts, whether it exports, how its prompt is rewritten. Every stage asks the
kind through `get(task.kind)`; nothing outside `gitgauge/kinds/` compares a kind's name to a
string (`tests/test_layering.py` checks it).

The kinds live above the stages (a kind joins mining, running and reporting), so the stages get
them from this registry, which loads the built-ins by module name the way a plugin registry loads
its entry points: core never imports a kind's code.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from gitgauge.core.errors import TaskError
from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.checkout import AgentDiff
from gitgauge.core.prompt_request import RewriteRequest
from gitgauge.core.records import (
    TASK_ID,
    TASK_ID_MAX_LENGTH,
    ResultDraft,
    RunManifest,
    RunResult,
    Task,
)
from gitgauge.core.registry import Registry
from gitgauge.core.schema import RepoConfig

if TYPE_CHECKING:  # the store loads tasks through this registry: no import at run time
    from gitgauge.core.git.checkout import CheckoutPool
    from gitgauge.core.sandbox import Sandbox
    from gitgauge.core.store import Store
    from gitgauge.core.suite_jobs import SuiteJobs

BUILTINS = "gitgauge.kinds"
"""The package whose import registers the built-in kinds."""


class TaskKind(ABC):
    """One kind of task. Subclasses set `name` and register with `@register`."""

    name: ClassVar[str]
    row_suffix: ClassVar[str] = ""
    """Added to a config's name on this kind's report rows (`sonnet (merge)`)."""
    exportable: ClassVar[bool] = False
    """Whether SWE-bench and Harbor exports can hold it (a bug fix with tests)."""
    draft: ClassVar[type[ResultDraft]] = ResultDraft
    """The result record a pair of this kind fills: it refuses any field the kind does not add."""
    graded_by_suite: ClassVar[bool] = False
    """Whether a pair's verdict runs the project's suite over the agent's work: such a kind
    grades on the project's tests, never the agent's (protection and the additions rule,
    `running/scoring/protect.py`), and `tests/test_hostile_agent.py` runs the same hostile
    patches against each."""
    judged: ClassVar[bool] = False
    """Whether a judge compares its pairs' work with the original (reports show SOLVED and
    WIN/TIE/LOSS; `run` checks the judge's position bias once)."""
    rewritable: ClassVar[bool] = True
    """Whether `rewrite` may rewrite its prompts (a prompt gitgauge wrote itself needs none)."""
    own_repository: ClassVar[bool] = False
    """The kind brings its own repository (`fixture`): its tasks name no commit of the user's
    (`base` and `fix` empty, no `history_tips`), a pair's workspace is a fresh directory that
    `enter` fills (`running.workspace.FreshWorkspace`), `setupCommand` does not run there, and
    the agent's work is read from that directory, not from a checkout of the user's history."""
    modes: ClassVar[tuple[str, ...]] = ()
    """The modes its tasks can run in (`run --mode`); empty: one way only."""
    task_id: ClassVar[re.Pattern[str]] = TASK_ID
    """The ids its tasks may have (an id becomes file and folder names)."""
    task_id_max_length: ClassVar[int] = TASK_ID_MAX_LENGTH
    remote: ClassVar[bool] = True
    """Whether its pairs can run on a remote executor's node (`--executor ray`), which holds a
    history copy and the files shipped with the task, not the user's repository."""

    def task_problem(self, task: Task) -> str | None:
        """`key: why` for a field of a task file of this kind that cannot be used, beyond the
        id, commit and path checks every task file gets (`core.store`); None when fine."""
        return None

    def commits(self, task: Task) -> tuple[str, ...]:
        """The commits of the user's repository a task needs (a run skips it without them)."""
        return (task.base, task.fix, *([task.other] if task.other else []))

    # -- what a workspace and its history hold -------------------------------------------------

    def history_tips(self, task: Task) -> tuple[str, ...]:
        """The commits whose history a pair's workspace holds: the task's `base` (and, for a
        merge, the other parent), never the answer."""
        return (task.base,)

    def gold_paths(self, repo: Repository, task: Task) -> list[str]:
        """The paths of the answer `gold` writes (what a remote node must be sent for it)."""
        return []

    def laid_paths(self, task: Task) -> tuple[str, ...]:
        """The paths of `fix` a pair's grading may lay over any agent's result (a fix's test
        files; a merge's too, and what its recorded merge changed beyond the conflicts). A
        remote executor's node is sent their files with every pair, whatever the adapter."""
        return tuple(task.testFiles)

    def compared_trees(self, task: Task) -> tuple[str, ...]:
        """The commits whose whole tree a pair's grading compares by object id (a merge's
        recorded merge: `exact`, `exactTree`). A remote executor's node is sent their tree
        listings (ids and paths, never contents), besides the history up to `history_tips` and
        the fix's files."""
        return ()

    def remote_reads(  # noqa: B027 - most kinds read nothing past their history
        self, repo: Repository, task: Task, *, gold: bool, judging: bool
    ) -> None:
        """Make, through `repo`, every read of the user's repository that a pair of `task`
        makes beyond its history copy (`history_tips`) and the files and listings the hooks
        above ship (a commits task's chain, past its base); `gold`: the pair's adapter reads
        the fix; `judging`: the run's judge compares the pair's work with the original
        (`chains.judge`). A remote executor makes them on the driver through a repository
        that records them (`git`, `read_blob`, `is_submodule`, `diff_names`,
        `tree_listing`), and a node answers them from the record. By default none."""

    @abstractmethod
    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        """Write the task's own answer into `workspace` (the `gold` baseline)."""

    def gold_run(self, context: GoldContext) -> str | None:
        """The `gold` baseline in an agent's place (`running.adapters.base.AdapterContext`: its
        workspace, environment and sandbox); returns gold's final message, for a kind that
        scores an answer. By default `gold` writes the answer and says nothing."""
        self.gold(context.repo, context.task, context.workspace)
        return None

    # -- a pair ----------------------------------------------------------------------------------

    @abstractmethod
    def enter(self, pair: PairContext) -> KindPair:
        """Make the fresh workspace of `pair` (`running.steps.PairSteps`, or `FreshSteps` for a
        kind that brings its own repository: `running.steps.checkout_steps` and
        `own_repository_steps` narrow it, with the kind's draft type) what this kind's agent
        starts from (a checkout of `base`, or `base` with `other` merged in), and return the
        pair's kind-specific steps."""

    # -- a run -----------------------------------------------------------------------------------

    def run_checks(self, run: RunContext) -> Mapping[str, RunCheck]:
        """Checks of the whole run, made once before its first pair: the run asks each kind
        among its tasks. Returns `RunManifest` field -> its record: `run` prints each one's
        `describe()` line and the manifest records it when the run finishes (the chain kinds:
        `judgeCheck`, the judge's position check). What a resumed run recorded is not asked
        again. By default: none."""
        return {}

    # -- reports ---------------------------------------------------------------------------------

    def row_counts(self, results: Sequence[RunResult]) -> dict[str, int]:
        """This kind's own counts for a report row (merge: `exact`, `exact_tree`)."""
        return {}

    def describe(self, result: RunResult) -> str:
        """What a finished pair's line adds to its status (merge: `, exact`)."""
        return ""

    report_columns: ClassVar[ReportColumns | None] = None
    """Its own columns of the report (merge: EXACT; the chain kinds: CHECKS, SOLVED, ...)."""

    def footnotes(self, results: Sequence[RunResult]) -> list[str]:
        """Sentences the report's footnote adds about these results of this kind (every row's
        of the kind together), after the columns' own footnote (merge: the tasks whose
        recorded merge changed files outside the conflicts). By default none."""
        return []

    def cell_notes(self, results: Sequence[RunResult]) -> CellNotes:
        """What a matrix cell of one task's attempts adds to its outcome."""
        return CellNotes()

    def matrix_fields(self, results: Sequence[RunResult]) -> dict[str, Any]:
        """Fields a matrix record (`report --matrix --format json`) of one task's attempts adds
        (with the kind's name: `kind`, as `matrix_counts` starts them)."""
        return {}

    def matrix_counts(
        self, counts: Mapping[str, int], keys: Sequence[tuple[str, str]]
    ) -> dict[str, Any]:
        """The kind's name (`kind`) and the `row_counts` that `keys` names, as (count, key in
        the record) like `ReportColumns.json`: what a kind's `matrix_fields` starts with."""
        return {"kind": self.name, **{key: counts[count] for count, key in keys}}

    def group_of(self, result: RunResult) -> str | None:
        """The group the HTML matrix shows a task under (a fixture's benchmark), or None."""
        return None

    def checks(self, result: RunResult) -> tuple[int, int] | None:
        """(held, asked) of the kind's checks on a pair (RESOLVED: all held); None when the
        kind has none."""
        return None

    # -- mining ----------------------------------------------------------------------------------

    def miner(self) -> KindMiner | None:
        """How this kind's tasks are mined from the history; None for a kind the mining stage
        mines itself (`fix`) or that is imported, not mined (`fixture`)."""
        return None

    def rewrite_request(
        self, repo: Repository, task: Task, commit: Commit | None
    ) -> RewriteRequest:
        """The spoiler-free prompt request (`mining.rewrite_request.RewriteRequest`) for a
        task of this kind; the mining stage sends it."""
        raise TaskError(f"tasks of kind {self.name!r} have no prompt rewriting")


@dataclass(frozen=True)
class ReportColumns:
    """A kind's own columns of `report`'s table (after RESOLVED) and of its JSON and CSV, read
    from the kind's `row_counts`; rows of other kinds show `-` (and null) there."""

    headers: tuple[str, ...]
    cells: Callable[[Mapping[str, int], int], list[str]]
    """One text per header, from a row's counts and its number of attempts."""
    json: tuple[tuple[str, str], ...]
    """(count of `row_counts`, key in the JSON and CSV rows)."""
    footnote: str
    """What the columns mean, under the table."""


@dataclass(frozen=True)
class CellNotes:
    """What a kind adds to a cell of the per-task matrix (`report --matrix`)."""

    single: str = ""
    """After the outcome of a single attempt (`, exact`)."""
    per_count: str = ""
    """After `k/N` resolved, with repeats (`, 5/6 checks`)."""
    parts: tuple[str, ...] = ()
    """More parts after that (`2 exact`)."""


@dataclass(frozen=True)
class MiningEvents:
    """What a kind's miner says as it goes (the CLI prints it)."""

    on_start: Callable[[Commit], None]
    """A candidate's verification starts."""
    on_task: Callable[[Commit, Task, str], None]
    """A task was saved (with a note, or "")."""
    on_skip: Callable[[Commit, str], None]
    """A commit was passed over, and why."""
    on_total: Callable[[int], None]
    """How many more candidates are about to be verified."""
    on_error: Callable[[Commit, str], None]
    """A candidate with no verdict, and why (`mine --executor ray`: its node was lost): counted
    with the errors, not remembered, so the next mine verifies it again."""


@dataclass
class MiningContext:
    """What every kind's miner gets from `mine`: one history, one checkout pool, one sandbox,
    the same flags."""

    repo: Repository
    config: RepoConfig
    store: Store
    pool: CheckoutPool
    sandbox: Sandbox | None
    last: int
    """How many commits of HEAD are scanned."""
    jobs: int
    force: bool
    """Judge again what an earlier mine judged."""
    dry_run: bool
    """Report candidates, verify nothing."""
    warn: Callable[[str], None]
    events: MiningEvents
    prepare_task: Callable[[Task, Commit], Task] | None
    """Applied to a task before it is saved (prompt rewriting)."""
    mined: set[str]
    """The `fix` commits of the tasks already saved."""
    suites: SuiteJobs
    """Where a miner runs its per-candidate suites: here on `jobs` threads with `pool`'s
    checkouts, or on the cluster the fix candidates go to (`mine --executor ray`)."""
    merge_commits: list[Commit] = field(default_factory=list)
    """The merge commits among the scanned ones (collected when a miner `takes_merges`)."""


@dataclass(frozen=True)
class RunContext:
    """What every kind's `run_checks` is given: the run's repository, configuration and tasks
    (all of the run's, every kind's)."""

    repo: Repository
    config: RepoConfig
    tasks: Sequence[Task]
    env: Mapping[str, str]
    warn: Callable[[str], None]
    resumed: RunManifest | None = None
    """The manifest of the run `--resume` continues; None for a new run."""


class RunCheck(Protocol):
    """A check of a whole run (`TaskKind.run_checks`): a record of the run's manifest."""

    def describe(self) -> str:
        """One line for the run's output."""
        ...


class MinedKind(Protocol):
    """What a kind's miner found: its tasks, and its own lines of `mine`'s summary."""

    tasks: list[Task]
    already_mined: int
    """Candidates of this miner whose tasks an earlier mine saved."""

    def lines(self) -> list[str]: ...


class KindMiner(ABC):
    """How tasks of one or more kinds are found in the history (merge tasks among the merge
    commits, chain tasks among file-commit chains). `fix` tasks are the mining stage's own walk;
    every other kind with tasks in the history brings one of these."""

    option: ClassVar[str]
    """`mine.<option>` in gitgauge.yaml and `mine --<option>` turn it on (`merges`)."""
    takes_merges: ClassVar[bool] = False
    """It mines the merge commits the history walk passes over (they are collected for it)."""

    def enabled(self, config: RepoConfig, asked: bool | None) -> bool:
        """On when `mine --<option>` says so, else when `mine.<option>` does."""
        return bool(getattr(config.mine, self.option)) if asked is None else asked

    def check(self, repo: Repository) -> None:  # noqa: B027 - most need nothing
        """Refuse, before any work, what this miner cannot do here (an old git)."""

    @abstractmethod
    def mine(self, context: MiningContext) -> MinedKind:
        """Find, verify and save this miner's tasks."""


class TaskContext(Protocol):
    """The task and the user's repository, which every context of one task's hooks holds."""

    @property
    def task(self) -> Task: ...

    @property
    def repo(self) -> Repository: ...


class PairContext(TaskContext, Protocol):
    """What every kind's `enter` is given (`running.steps.PairSteps` and `FreshSteps` are it):
    the pair's task, configuration, repository, draft and logs."""

    @property
    def config(self) -> RepoConfig: ...

    @property
    def draft(self) -> ResultDraft: ...

    @property
    def log_dir(self) -> Path: ...

    @property
    def mode(self) -> str | None: ...

    def warn(self, message: str) -> None: ...


class GoldContext(TaskContext, Protocol):
    """What the `gold` baseline gets in an agent's place (`running.adapters.AdapterContext` is
    it): the workspace, the task, the repository, the environment and the sandbox."""

    @property
    def workspace(self) -> Path: ...

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def sandbox(self) -> Sequence[str]: ...


class KindPair(ABC):
    """One pair's kind-specific state and steps. `running.pair` owns the sequence (workspace,
    setup, harness, agent, its work read as a patch, grade, result) and calls these for the
    steps that differ between kinds."""

    start: str
    """The tree the agent starts from: its diff and patch are measured against it."""
    prompt: str | None = None
    """This pair's prompt when the kind makes it per pair (a fixture's, from its built
    repository); None: the task's `prompt`."""

    def agent_said(self, message: str | None) -> None:  # noqa: B027
        """The agent's final message (claude's `result`, codex's last message, a script's
        stdout), once it exited: a kind that scores an answer keeps it."""

    def after_setup(self) -> None:  # noqa: B027 - most kinds need nothing here
        """Called once setupCommand ran, before the agent (a merge notes what setup made)."""

    def after_agent(self) -> None:  # noqa: B027
        """Called once the agent exited, before its work is read."""

    @abstractmethod
    def grade(self, diff: AgentDiff) -> None:
        """Grade the agent's work (`diff`: its tree against `start`, in gitgauge's index) into
        the pair's draft; only called when the agent ran to completion."""


class KindSetupError(TaskError):
    """A kind could not make a pair's starting state from the task's own data (a fixture's
    setup failed): the pair is an error of kind `setup`."""


KINDS: Registry[TaskKind] = Registry("task kind", builtins=BUILTINS)
"""Every kind, by name, in the order reports show them (registration order: fix first)."""


def register(cls: type[TaskKind]) -> type[TaskKind]:
    """Class decorator: register one instance of the kind under its `name`."""
    KINDS.add(cls.name, cls())
    return cls


def get(name: str) -> TaskKind:
    """The kind called `name`; an unknown one is a `TaskError` listing the known ones."""
    return KINDS.get(name)


def names() -> list[str]:
    """Every kind, in the order reports show them (registration order: fix first)."""
    return KINDS.names()


def miners(config: RepoConfig, asked: Mapping[str, bool | None]) -> list[KindMiner]:
    """The miners of the registered kinds that are on (each once: the two chain kinds share
    one), in the kinds' order. `asked`: a miner's option -> on or off from the command line
    (None: its `mine.<option>`)."""
    found: list[KindMiner] = []
    for name in names():
        miner = get(name).miner()
        if miner is not None and miner not in found:
            if miner.enabled(config, asked.get(miner.option)):
                found.append(miner)
    return found
