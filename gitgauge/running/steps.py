"""The steps of one pair that every kind of task shares, bound to its workspace and draft: what
a kind's `enter` and its pair's `grade` use (`core.kinds`). `PairSteps` for a checkout of the
user's history, `FreshSteps` for a kind that brings its own repository; `bounded_patch` keeps
what the agent wrote within `run.limits` before anything reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff, blob_sizes, edit_tree
from gitgauge.core.importable import interpreters
from gitgauge.core.kinds import PairContext
from gitgauge.core.records import ResultDraft, Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import Limits, RepoConfig
from gitgauge.core.suite import UserCommands
from gitgauge.core.text import visible
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import AdapterOutcome
from gitgauge.running.plan import PlannedConfig
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.additions import module_names, shadow_reasons
from gitgauge.running.scoring.protect import Protection
from gitgauge.running.workspace import FreshWorkspace, Workspace

if TYPE_CHECKING:
    from gitgauge.running.pair import Pair

D = TypeVar("D", bound=ResultDraft)
"""The draft a kind's pairs fill (`TaskKind.draft`)."""


def bounded_patch(
    diff: AgentDiff,
    *,
    limits: Limits,
    log_dir: Path,
    draft: ResultDraft,
    write: Callable[[Path, int], int | None],
    sizes: Callable[[list[str]], dict[str, int]],
) -> AgentDiff | None:
    """`diff`, its stats in the draft and its patch (streamed by git) in the logs; None, and
    the pair an error `patch-too-large` naming the biggest files, when it is over
    `run.limits`: nothing that large is read into memory, written to the logs or graded."""
    stat = diffstat.diff_stat(diff)
    draft.update(diffFiles=stat.files, diffInsertions=stat.insertions, diffDeletions=stat.deletions)
    if stat.files > limits.files:
        draft.error(
            "patch-too-large",
            f"the agent's patch changes {stat.files} files, more than run.limits.files "
            f"({limits.files}); it was not graded" + _biggest(diff, sizes),
        )
        return None
    written = write(log_dir / "agent.patch", limits.patchBytes)
    if written is None:
        draft.error(
            "patch-too-large",
            f"the agent's patch is larger than run.limits.patchBytes ({limits.patchBytes:,} "
            f"bytes); it was not graded" + _biggest(diff, sizes),
        )
        return None
    return diff


def _biggest(diff: AgentDiff, sizes: Callable[[list[str]], dict[str, int]]) -> str:
    known = sizes([change.object_id for change in diff.changes if change.object_id])
    ranked = sorted(
        ((known.get(change.object_id, 0), change.path) for change in diff.changes),
        reverse=True,
    )[:3]
    if not ranked or not ranked[0][0]:
        return ""
    return "; the biggest files: " + ", ".join(
        f"{visible(path)} ({size / 1_000_000:.1f} MB)" for size, path in ranked if size
    )


class _OfPair:
    """What both kinds of steps read from their pair: the repository, the config, the sandbox,
    the user's commands, `run --mode` and the run's warnings."""

    pair: Pair
    planned: PlannedConfig

    @property
    def repo(self) -> Repository:
        return self.pair.repo

    @property
    def config(self) -> RepoConfig:
        return self.pair.config

    @property
    def sandbox(self) -> Sandbox | None:
        return self.pair.sandbox

    @property
    def commands(self) -> UserCommands:
        """The user's commands for this pair: its test runs get the config's `env` too."""
        return self.pair.commands.for_agent(self.planned.harness.env)

    @property
    def mode(self) -> str | None:
        """`run --mode`, when it was given."""
        return self.pair.mode

    def warn(self, message: str) -> None:
        self.pair.warn(message)


@dataclass(frozen=True)
class PairSteps(_OfPair, Generic[D]):
    """The steps every kind of task shares, bound to one pair's workspace and draft: what a
    kind's `enter` and its pair's `grade` use (`core.kinds`)."""

    pair: Pair
    planned: PlannedConfig
    task: Task
    workspace: Workspace
    env: dict[str, str]
    log_dir: Path
    draft: D

    def setup(self) -> str | None:
        return self.pair._setup(self.workspace.path, self.env, self.log_dir)

    def run_agent(self, *, prompt: str | None = None) -> AdapterOutcome:
        """The agent on the task (`prompt`: the kind's own for this pair, if it made one)."""
        task = self.task if prompt is None else self.task.model_copy(update={"prompt": prompt})
        return self.pair._run_agent(
            self.planned, task, self.workspace, self.env, self.log_dir, self.draft
        )

    def read_work(self, *, start: str) -> AgentDiff | None:
        """What the agent left, read through gitgauge's own git directory and index (only
        this crosses to the grader), the harness taken out of it; its diff against `start`
        (the tree it started from) in the draft and its patch in the logs. None when it is
        over `run.limits` (`bounded_patch`)."""
        checkout = self.workspace.checkout
        checkout.read_agent_tree(start)
        checkout.reset_paths(start, self.planned.harness.overlays)
        return bounded_patch(
            checkout.diff(start),
            limits=self.config.run.limits,
            log_dir=self.log_dir,
            draft=self.draft,
            write=lambda dest, limit: checkout.write_patch(start, dest, limit_bytes=limit),
            sizes=lambda ids: blob_sizes(checkout.git_dir, ids),
        )

    @property
    def test_mounts(self) -> Mounts:
        """A test run's own paths: the checkout, gitgauge's git directory for it (read-only:
        the suite may run git), and the object stores it reads."""
        checkout = self.workspace.checkout
        return Mounts(workspace=checkout.path, read_only=(checkout.git_dir, *self.workspace.stores))

    def lay_graded(
        self, tree: str, *, base: str, protection: Protection | None = None
    ) -> dict[str, str] | None:
        """A fresh checkout of `base` (the same one, reset and checked clean: nothing of the
        agent's survives), `setupCommand` run again on it, then `tree` laid in: the graded
        work is the agent's patch and nothing else. Of what `protection` kept of the agent's
        additions, the stand-ins for modules the grading interpreter imports from elsewhere
        are left out; they are returned (path -> why). None (and an error) when setup fails."""
        checkout = self.workspace.checkout
        if not self.pair.config.setupCommand:  # nothing to run on base: straight to the tree
            # The interpreter is asked before anything is laid: what the agent left in the
            # work tree is hidden from it, and an interpreter path is read from your checkout.
            stand_ins = self._stand_ins_of(protection, ready=False)
            self.workspace.lay_fresh(self._without(tree, stand_ins))
            return stand_ins
        self.workspace.reset(base)
        setup_error = self.setup()
        if setup_error is not None:
            self.draft.error("setup", f"in the grading checkout: {setup_error}")
            return None
        # Asked now, of the checkout as set up and before the agent's tree is in it.
        stand_ins = self._stand_ins_of(protection, ready=True)
        checkout.lay_tree(self._without(tree, stand_ins))
        return stand_ins

    def _stand_ins_of(self, protection: Protection | None, *, ready: bool) -> dict[str, str]:
        if protection is None or not protection.kept:
            return {}
        return self.stand_ins(
            protection.kept,
            start_files=protection.start_files,
            tree_files=protection.tree_files,
            ready=ready,
        )

    def stand_ins(
        self,
        added: Sequence[str],
        *,
        start_files: Collection[str],
        tree_files: Collection[str],
        ready: bool,
    ) -> dict[str, str]:
        """path -> why, for the files of `added` that bring a top-level module the grading
        interpreter imports from elsewhere (`running.scoring.additions.module_names`; the
        files of the tree the agent started from and of its own). `ready`: the workspace holds
        a set-up checkout of the base (interpreters named relative to it are the ones set up
        there), not the agent's leftovers."""
        if not added:
            return {}
        names = module_names(added, start_files=start_files, tree_files=tree_files)
        if not names:
            return {}
        env = self.commands.suite_environment(self.env).env
        found = interpreters(
            self.config.testCommand,
            env=env,
            cwd=self.workspace.path if ready else self.repo.root,
        )
        hidden = [self.workspace.path, self.repo.root]
        return shadow_reasons(
            names, self.pair.imports.shadowed(names, interpreters=found, env=env, hidden=hidden)
        )

    def _without(self, tree: str, paths: Collection[str]) -> str:
        checkout = self.workspace.checkout
        return edit_tree(checkout.git_dir, tree, scratch=checkout.holder, remove=sorted(paths))


@dataclass(frozen=True)
class FreshSteps(_OfPair, Generic[D]):
    """The steps of a pair whose kind brings its own repository (`TaskKind.own_repository`),
    bound to its `FreshWorkspace`: what that kind's `enter` and `grade` use."""

    pair: Pair
    planned: PlannedConfig
    task: Task
    workspace: FreshWorkspace
    log_dir: Path
    draft: D
    slot: int

    def run_agent(self, *, prompt: str | None = None) -> AdapterOutcome:
        """The harness laid into where the kind's agent works (and taken out again after it:
        this workspace is graded as the agent left it), then the adapter, in the sandbox with
        the workspace's own writable places."""
        workspace = self.workspace
        task = self.task if prompt is None else self.task.model_copy(update={"prompt": prompt})
        env = process.clean_env(
            cwd=workspace.path, extra={"GITGAUGE_JOB": str(self.slot), **workspace.env}
        )
        with harnesses.overlaid(
            self.planned.harness, workspace.path, keep=workspace.holder / "harness-kept"
        ):
            return self.pair._adapter_run(
                self.planned,
                task,
                Mounts(workspace.path, writable=workspace.writable),
                env=env,
                log_dir=self.log_dir,
                draft=self.draft,
            )

    def read_work(self, *, start: str) -> AgentDiff | None:
        """What the agent changed in the kind's repository (its `reader`), as a diff against
        `start` in the draft and a patch in the logs; an empty diff, and no diff size, when
        the kind's work is no tree (a fixture's text mode: the agent only answers). None when
        it is over `run.limits` (`bounded_patch`)."""
        reader = self.workspace.reader
        if reader is None or not start:
            return AgentDiff(changes=(), numstat="")
        end = reader.read()
        return bounded_patch(
            reader.diff(start, end),
            limits=self.config.run.limits,
            log_dir=self.log_dir,
            draft=self.draft,
            write=lambda dest, limit: reader.write_patch(start, end, dest, limit_bytes=limit),
            sizes=lambda ids: blob_sizes(reader.git_dir, ids),
        )


def checkout_steps(pair: PairContext, draft: type[D]) -> PairSteps[D]:
    """`pair` (what `core.kinds` types as a `PairContext`) as the steps of a checkout of the
    user's history whose draft is a `draft`: a kind's `enter` narrows it once, and its pair's
    steps are typed from then on."""
    if not isinstance(pair, PairSteps) or not isinstance(pair.draft, draft):
        raise TypeError(f"expected the steps of a checkout with a {draft.__name__}, got {pair!r}")
    return cast("PairSteps[D]", pair)


def own_repository_steps(pair: PairContext, draft: type[D]) -> FreshSteps[D]:
    """`pair` as the steps of a kind that brings its own repository (`FreshSteps`), with a
    `draft`: see `checkout_steps`."""
    if not isinstance(pair, FreshSteps) or not isinstance(pair.draft, draft):
        raise TypeError(f"expected the steps of a fresh workspace with a {draft.__name__}")
    return cast("FreshSteps[D]", pair)
