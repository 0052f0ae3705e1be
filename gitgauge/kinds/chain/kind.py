"""What `kind: rebase` and `kind: commits` share: tasks mined from a file-commit chain
(`kinds/chain/mine.py`), scored by checks first and a judge second.

After the agent, its git directory is read as data (`core/git/series.py`): HEAD, the branch it
names and the in-progress markers as files, its index and object files copied; its series is
the run of commits from HEAD back along first parents to the chain's parent. The checks, each a
result field (`core.records.CHAIN_CHECKS`), and RESOLVED when every one holds:

- checkTree: the series' last tree is the chain's newest tree (files setupCommand made, and the
  harness's, left out on both sides);
- checkNothingInProgress: no rebase, merge, cherry-pick or revert left unfinished;
- checkNothingUncommitted: the work tree and the index hold the series' last tree;
- checkSeriesLength: 1 to 2 x N commits;
- checkSubjectsDistinct: no two subjects equal;
- checkBranch: the series sits on the chain's parent (rebase: on the branch the rebase started
  from; commits: wherever HEAD is).

With `chains.testEachCommit` (and a suite that passed at the newest commit when mined), every
commit of the series is built and tested in a fresh checkout. With `chains.judge`, the judge
(`kinds/chain/judge.py`) compares the series with the original, both orders.
"""

from __future__ import annotations

import os
import shutil
from abc import abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitgauge.core.errors import GitError
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff, _plain_file, edit_tree, parse_tree_listing
from gitgauge.core.git.series import (
    CHAIN_BRANCH,
    AgentHistory,
    HeadState,
    SeriesCommit,
    attach_head,
    copy_objects,
    read_head_state,
    show_original,
)
from gitgauge.core.kinds import (
    CellNotes,
    KindMiner,
    KindPair,
    PairContext,
    ReportColumns,
    RunContext,
    TaskKind,
)
from gitgauge.core.paths import is_protected
from gitgauge.core.records import (
    CHAIN_CHECKS,
    ChainResultDraft,
    JudgeCheck,
    RunResult,
    Task,
)
from gitgauge.kinds.chain import judge as chain_judge
from gitgauge.running.scoring.additions import SYMLINK_MODE, Added, dropped_by_rule

if TYPE_CHECKING:
    from gitgauge.running.pair import PairSteps

MAX_SERIES_WALK = 100
"""How far back from HEAD the chain's parent is looked for (a series is at most 2 x N)."""


class ChainKind(TaskKind):
    """The base of the two chain kinds; each says how its workspace starts, what gold does and
    where its series must end up (`placed`)."""

    draft = ChainResultDraft
    judged = True
    # With `chains.testEachCommit`, every commit of the series is tested (`graded_commit`).
    graded_by_suite = True
    rewritable = False

    def compared_trees(self, task: Task) -> tuple[str, ...]:
        """The chain's commits: the checks compare the series with the newest tree, and
        `testEachCommit` every commit's files with the original versions (by object id)."""
        return tuple(task.chain)

    def gold_paths(self, repo: Repository, task: Task) -> list[str]:
        """Every path a commit of the chain changes (both sides of renames)."""
        paths: list[str] = []
        for commit in task.chain:
            for path in chain_commit_paths(repo, commit):
                if path not in paths:
                    paths.append(path)
        return paths

    def run_checks(self, run: RunContext) -> dict[str, JudgeCheck]:
        """The judge's position check (`judge.position_check`), once per run: the two chain
        kinds share it, so only the kind of the task it judges makes it; a resumed run that
        recorded one keeps it."""
        if run.resumed is not None and run.resumed.judgeCheck is not None:
            return {}
        first = chain_judge.first_judged(run.tasks)
        if first is None or first.kind != self.name:
            return {}
        check = chain_judge.position_check(run)
        return {} if check is None else {"judgeCheck": check}

    def enter(self, pair: PairContext) -> KindPair:
        # Here, not at the top: a report loads the kinds, and no running/ with them.
        from gitgauge.running.steps import checkout_steps

        steps = checkout_steps(pair, ChainResultDraft)
        attach_head(steps.workspace.agent_git, CHAIN_BRANCH)
        return ChainPair(steps, self, start=self.started(steps))

    @abstractmethod
    def started(self, pair: PairSteps[ChainResultDraft]) -> str:
        """Make the checkout, on the chain's branch, what this kind's agent starts from; returns
        the tree the agent's diff is measured against."""

    def miner(self) -> KindMiner:
        """One miner for both chain kinds: a chain makes a task of each."""
        from gitgauge.kinds.chain.mine import MINER

        return MINER

    def placed(self, head: HeadState, series: Sequence[SeriesCommit] | None) -> bool:
        """Whether the series ends where this kind wants it."""
        return series is not None

    def checks(self, result: RunResult) -> tuple[int, int] | None:
        # A pair that never got to grading (an error) held none.
        values = [getattr(result, name) for name in CHAIN_CHECKS]
        return sum(1 for value in values if value is True), len(values)

    def row_counts(self, results: Sequence[RunResult]) -> dict[str, int]:
        held = asked = 0
        for result in results:
            counted = self.checks(result) or (0, 0)
            held, asked = held + counted[0], asked + counted[1]
        verdicts = [
            verdict
            for result in results
            for verdict in (result.judgeAsFirst, result.judgeAsSecond)
            if verdict is not None
        ]
        return {
            "checks_held": held,
            "checks_asked": asked,
            "solved": sum(1 for result in results if result.solved),
            "judged": sum(1 for result in results if result.solved is not None),
            "wins": verdicts.count("win"),
            "ties": verdicts.count("tie"),
            "losses": verdicts.count("loss"),
        }

    report_columns = ReportColumns(
        headers=("CHECKS", "SOLVED", "WIN/TIE/LOSS"),
        cells=lambda counts, attempts: chain_cells(counts, attempts),
        json=(
            ("checks_held", "checksHeld"),
            ("checks_asked", "checksAsked"),
            ("solved", "solved"),
            ("judged", "judged"),
            ("wins", "wins"),
            ("ties", "ties"),
            ("losses", "losses"),
        ),
        footnote=(
            "KIND rebase / commits: commit-history tasks, RESOLVED when every check holds; "
            "CHECKS: checks that held over those asked (6 per attempt: tree, nothing in "
            "progress, nothing uncommitted, series length, distinct subjects, branch); SOLVED: "
            "attempts the judge preferred to the original in both orders (GitGoodBench's "
            "measure; - without a judge); WIN/TIE/LOSS: its verdicts over both orders."
        ),
    )

    def cell_notes(self, results: Sequence[RunResult]) -> CellNotes:
        counts = self.row_counts(results)
        checks = f", {counts['checks_held']}/{counts['checks_asked']} checks"
        solved = counts["solved"] if counts["judged"] else 0
        return CellNotes(
            single=checks + (", solved" if solved else ""),
            per_count=checks,
            parts=(f"{solved} solved",) if solved else (),
        )

    def matrix_fields(self, results: Sequence[RunResult]) -> dict[str, Any]:
        counts = self.row_counts(results)
        return {
            **self.matrix_counts(
                counts, (("checks_held", "checksHeld"), ("checks_asked", "checksAsked"))
            ),
            "solved": counts["solved"] if counts["judged"] else None,
            "series": [None if one.series is None else list(one.series) for one in results],
            "originalSeries": list(
                next((a.originalSeries for a in results if a.originalSeries), [])
            ),
        }

    def describe(self, result: RunResult) -> str:
        counted = self.checks(result)
        if counted is None or result.status == "error":
            return ""
        text = f", {counted[0]}/{counted[1]} checks"
        if result.series is not None:
            text += f", {len(result.series)} commit{'' if len(result.series) == 1 else 's'}"
        if result.seriesTested:
            text += f", {result.seriesPassing}/{result.seriesTested} commits pass"
        if result.solved is not None:
            verdicts = f"{result.judgeAsFirst}/{result.judgeAsSecond}"
            text += f", {'solved' if result.solved else 'not solved'} ({verdicts})"
        elif result.judgeProblem:
            text += (
                f", judge: unscored ({result.judgeAsFirst or '-'}/{result.judgeAsSecond or '-'})"
            )
        return text


def chain_cells(counts: Mapping[str, int], attempts: int) -> list[str]:
    """CHECKS `held/asked`, SOLVED `solved/attempts` and WIN/TIE/LOSS; `-` where no judge ran."""
    checks = f"{counts['checks_held']}/{counts['checks_asked']}"
    if not counts["judged"]:
        return [checks, "-", "-"]
    return [
        checks,
        f"{counts['solved']}/{attempts}",
        f"{counts['wins']}/{counts['ties']}/{counts['losses']}",
    ]


def chain_commit_paths(repo: Repository, commit: str) -> list[str]:
    """The paths `commit` changes against its first parent (both sides of renames)."""
    paths: list[str] = []
    for change in repo.diff_names(f"{commit}^", commit):
        for path in (change.old_path, change.path):
            if path is not None and path not in paths:
                paths.append(path)
    return paths


class ChainPair(KindPair):
    """One chain task's pair after its kind entered the workspace (`start` set by the kind)."""

    def __init__(self, pair: PairSteps[ChainResultDraft], kind: ChainKind, *, start: str) -> None:
        self.pair = pair
        self.kind = kind
        self.start = start
        self.setup_files: set[str] = set()
        self.head = HeadState(ref=None, sha=None, in_progress=())
        self.index_copy: Path | None = None
        self.objects_copied = False

    @property
    def holder(self) -> Path:
        return self.pair.workspace.checkout.holder

    def after_setup(self) -> None:
        # What setup made is not the agent's work: left out of the tree comparisons.
        self.setup_files = self.pair.workspace.checkout.untracked()

    def after_agent(self) -> None:
        agent_git = self.pair.workspace.agent_git
        self.head = read_head_state(agent_git)
        index = _plain_file(agent_git / "index")
        self.index_copy = None
        if index is not None:
            self.index_copy = self.holder / "agent-index"
            self.index_copy.write_bytes(index)
        objects = self.holder / "agent-objects"
        if objects.exists():
            shutil.rmtree(objects)
        self.objects_copied = copy_objects(agent_git, objects)

    def grade(self, diff: AgentDiff) -> None:
        pair, task = self.pair, self.pair.task
        draft = pair.draft
        assert task.chainParent is not None
        draft.update(originalSeries=list(task.chainSubjects))
        checkout = pair.workspace.checkout
        history = AgentHistory(
            self.holder,
            stores=[checkout.git_dir / "objects", *pair.workspace.stores],
            agent_objects=self.holder / "agent-objects",
        )
        head = self.head
        series = (
            history.walk(head.sha, task.chainParent, limit=MAX_SERIES_WALK)
            if head.sha is not None and self.objects_copied
            else None
        )
        head_commit = history.commit(head.sha) if head.sha and self.objects_copied else None
        left_out = [*self.setup_files, *pair.planned.harness.overlays]
        # From the user's repository: a commits task's workspace never holds the newest commit.
        reference = _without(parse_tree_listing(pair.repo.tree_listing(task.fix)), left_out)
        head_files = _without(history.entries(head_commit.tree), left_out) if head_commit else None
        work_files = _without(history.entries(checkout.write_tree()), left_out)
        index_tree = history.index_tree(self.index_copy) if self.index_copy else None
        index_files = _without(history.entries(index_tree), left_out) if index_tree else None
        count = len(task.chain)
        checks = {
            "checkTree": head_files is not None and head_files == reference,
            "checkNothingInProgress": not head.in_progress,
            "checkNothingUncommitted": head_files is not None
            and work_files == head_files
            and index_files == head_files,
            "checkSeriesLength": series is not None and 1 <= len(series) <= 2 * count,
            "checkSubjectsDistinct": series is not None
            and len({commit.subject for commit in series}) == len(series),
            "checkBranch": self.kind.placed(head, series),
        }
        draft.update(
            **checks,
            series=None if series is None else [commit.subject for commit in series],
            status="resolved" if all(checks.values()) else "unresolved",
        )
        if series:
            if pair.config.chains.testEachCommit:
                self._test_each_commit(history, series)
            self._judge(history, series)
        elif pair.config.chains.judge:
            draft.update(judgeProblem="no series on top of the chain's parent to judge")

    def _test_each_commit(self, history: AgentHistory, series: Sequence[SeriesCommit]) -> None:
        """Every commit of the series built and tested in a fresh checkout of the chain's
        parent (setupCommand run again), its tree laid in: a bisectable history passes at each."""
        pair, task = self.pair, self.pair.task
        draft = pair.draft
        assert task.chainParent is not None
        if not task.testsAtNewest:
            pair.warn(
                f"chains.testEachCommit: task {task.id} is not tested commit by commit: its "
                + (
                    "suite failed at the chain's newest commit when it was mined"
                    if task.testsAtNewest is False
                    else "tasks were mined before gitgauge tested the newest commit; mine again"
                )
            )
            return
        checkout = pair.workspace.checkout
        passing = 0
        trees = [task.chainParent, *task.chain]
        listings = [parse_tree_listing(pair.repo.tree_listing(sha)) for sha in trees]
        parent = listings[0]
        versions = original_versions(listings)
        reverted: list[str] = []
        dropped: dict[str, str] = {}
        for number, commit in enumerate(series, 1):
            pair.workspace.reset(task.chainParent)
            if pair.config.setupCommand:
                setup_error = pair.setup()
                if setup_error is not None:
                    draft.error("setup", f"testing commit {number} of the series: {setup_error}")
                    return
            entries = history.entries(commit.tree) or {}
            graded = graded_commit(
                entries,
                parent=parent,
                versions=versions,
                patterns=pair.config.tests.patterns,
                read_link=lambda object_id: history.read_blob(object_id),
            )
            stand_ins = pair.stand_ins(
                graded.kept,
                start_files=parent.keys(),
                tree_files=entries.keys(),
                ready=bool(pair.config.setupCommand),
            )
            tree = edit_tree(
                history.git_dir,
                commit.tree,
                scratch=self.holder,
                remove=[*graded.remove, *stand_ins],
                put=graded.put,
            )
            reverted += [path for path in graded.reverted if path not in reverted]
            for path, why in {**graded.dropped, **stand_ins}.items():
                dropped.setdefault(path, why)
            history.lay_tree(tree, work_tree=checkout.path, index=checkout.index)
            checkout.index_holds = None
            ran = pair.commands.suite(
                checkout.path,
                env=pair.env,
                mounts=pair.test_mounts,
                log_dir=pair.log_dir,
                name=f"test-commit-{number}",
                report=False,
            )
            passing += 1 if ran.result.ok else 0
        draft.update(
            seriesTested=len(series), seriesPassing=passing, reverted=reverted, dropped=dropped
        )

    def _judge(self, history: AgentHistory, series: Sequence[SeriesCommit]) -> None:
        pair, task = self.pair, self.pair.task
        draft = pair.draft
        judge = chain_judge.judge_for(pair.config, env=os.environ, warn=pair.warn)
        if judge is None:
            if pair.config.chains.judge:
                draft.update(judgeProblem="no judge available (see the warning)")
            return
        try:
            verdicts = judge.compare(
                history.show([commit.sha for commit in series]),
                show_original(pair.repo, task.chain),
            )
        except GitError as error:
            draft.update(judgeProblem=f"the series could not be shown: {error}")
            return
        draft.update(**verdicts.fields("judge"), solved=verdicts.solved, judgeModel=judge.model_id)


Entry = tuple[str, str]
"""A tree entry: (mode, object id)."""


def original_versions(listings: Sequence[dict[str, Entry]]) -> dict[str, set[Entry | None]]:
    """path -> every version the original history had of it (None: a tree without it), over
    the chain's parent and each of its commits."""
    paths = {path for listing in listings for path in listing}
    return {path: {listing.get(path) for listing in listings} for path in paths}


@dataclass(frozen=True)
class GradedCommit:
    """One commit of an agent's series as it is tested: its tests and test set-up only in
    versions the original history had, and nothing it added that is not project code."""

    put: dict[str, Entry]
    """Protected paths set back to the chain's parent's version."""
    remove: list[str]
    """Dropped additions, taken out."""
    reverted: list[str]
    dropped: dict[str, str]
    kept: list[str]
    """Additions that stay (ordinary project code, to be asked about stand-ins)."""


def graded_commit(
    entries: dict[str, Entry],
    *,
    parent: dict[str, Entry],
    versions: dict[str, set[Entry | None]],
    patterns: Sequence[str],
    read_link: Callable[[str], bytes],
) -> GradedCommit:
    """What of `entries` (a commit of the agent's series) the suite may see. A series may
    reorder, squash or reword the chain, so each of its commits holds, of every path, some
    version the chain had at some point: a test or test set-up file in a version it never had
    is put back to the parent's, and an addition the chain never made is judged by the
    additions rule (`running.scoring.additions`)."""
    put: dict[str, Entry] = {}
    remove: list[str] = []
    reverted: list[str] = []
    added: list[Added] = []
    for path in sorted(set(entries) | set(parent)):
        entry = entries.get(path)
        if entry in versions.get(path, {None}):
            continue
        if path in parent and is_protected(path, patterns=patterns):
            reverted.append(path)
            put[path] = parent[path]
        elif entry is not None and path not in parent:
            mode, object_id = entry
            target = None
            if mode == SYMLINK_MODE:
                target = read_link(object_id).decode("utf-8", "surrogateescape")
            added.append(Added(path, mode, target))
    dropped = dropped_by_rule(added, start_files=parent.keys(), patterns=patterns)
    for item in added:  # a test the chain never had is not the agent's to add, whatever its name
        if item.path not in dropped and is_protected(item.path, patterns=patterns):
            dropped[item.path] = "a test file: the suite's tests are the project's"
    remove += sorted(dropped)
    kept = [item.path for item in added if item.path not in dropped]
    return GradedCommit(put, remove, reverted, dropped, kept)


def _without(
    entries: dict[str, tuple[str, str]] | None, paths: Collection[str]
) -> dict[str, tuple[str, str]] | None:
    """`entries` without `paths` (files, or directories and everything below them)."""
    if entries is None:
        return None
    prefixes = tuple(f"{path.rstrip('/')}/" for path in paths)
    return {
        path: entry
        for path, entry in entries.items()
        if path not in paths and not path.startswith(prefixes)
    }
