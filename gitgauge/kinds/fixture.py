"""`kind: fixture`: a git-skill fixture (GitBench's format, `gitgauge import gitbench`) in a
repository of its own, scored by the fixture's own scorer (`core/fixtures/`).

A pair (the kind brings its own repository: `TaskKind.own_repository`):
1. `enter`: a fresh fixture directory in the pair's `FreshWorkspace`; the fixture's `setup`
   built there with bash, in the sandbox, under the pinned environment (`core/git/fixture.py`);
   every expectation the repository decides (hashes by subject, reflog, bisect and stash
   targets, `self_check`s) derived now, before the agent can move what they point at;
2. the agent: in agent mode in the repository (its siblings writable), told to do the task and
   write its answer to `$GITGAUGE_ANSWER`; in text mode in an empty directory, the prompt
   carrying the benchmark's context read from the repository, its final message the answer;
3. `grade`: in text mode a state fixture's answer is executed in the repository (its
   commands, in the sandbox, as GitBench does); the scorer reads what it needs (the answer, the
   repository's outputs and files, an LLM judge's score) and decides. A fixture the judge cannot
   score is `unscored`.

Gold gives each fixture's expected answer in its scorer's form and, in agent mode, performs a
state fixture's `expected` commands (GitBench's reference answer to a mutating prompt) and
writes the resolved files of a `resolved_file_blocks` fixture.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitgauge.core.errors import TaskError
from gitgauge.core.fixtures import answers, derive, prompts, scorers
from gitgauge.core.fixtures.format import (
    MODES,
    Fixture,
    FixtureProblem,
    Mode,
    parse_fixture,
)
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff
from gitgauge.core.git.fixture import (
    ANSWER_ENV,
    OUTPUT_LIMIT,
    FixtureDirectory,
    FixtureSetupFailed,
    ShellOutput,
    Snapshot,
)
from gitgauge.core.kinds import KindPair, KindSetupError, TaskKind, register
from gitgauge.core.records import (
    FIXTURE_TASK_ID,
    FIXTURE_TASK_ID_MAX_LENGTH,
    FixtureResultDraft,
    RunResult,
    Task,
)
from gitgauge.core.store import atomic_write_text
from gitgauge.mining.fixture_judge import FixtureJudge

if TYPE_CHECKING:
    from gitgauge.running.pair import FreshSteps

ANSWER_KEPT = 2000
"""Characters of the answer a result keeps (all of it is in the pair's logs)."""

_active: dict[Path, _FixturePair] = {}
"""The pair working in a workspace, by its path: gold, in the agent's place, reads what the
pair derived before it (`gold_run`)."""
_active_lock = threading.Lock()
_judge_made: list[FixtureJudge] = []


def fixture_of(task: Task) -> Fixture:
    """The task's fixture, checked again (a task file is data too)."""
    if task.fixture is None or not task.benchmark:
        raise TaskError(f"task {task.id}: fixture: missing (re-import it)")
    try:
        return parse_fixture(task.fixture, benchmark=task.benchmark, source=f"task {task.id}")
    except FixtureProblem as problem:
        raise TaskError(str(problem)) from None


def pair_mode(fixture: Fixture, task: Task, asked: str | None) -> Mode:
    """The mode a pair runs in: `run --mode`, else the task's; a command_equivalence fixture
    always in text mode (an agent must not run the command it is asked to spell)."""
    if fixture.text_only:
        return "text"
    chosen = asked or task.mode or "agent"
    return "text" if chosen == "text" else "agent"


@register
class FixtureKind(TaskKind):
    name = "fixture"
    row_suffix = " (fixture)"
    draft = FixtureResultDraft
    own_repository = True
    modes = MODES
    task_id = FIXTURE_TASK_ID
    task_id_max_length = FIXTURE_TASK_ID_MAX_LENGTH

    def history_tips(self, task: Task) -> tuple[str, ...]:
        return ()

    def commits(self, task: Task) -> tuple[str, ...]:
        return ()

    def task_problem(self, task: Task) -> str | None:
        if task.fixture is None or not task.benchmark:
            return "fixture: missing (a fixture task keeps its fixture and benchmark)"
        try:
            parse_fixture(task.fixture, benchmark=task.benchmark, source="fixture")
        except FixtureProblem as problem:
            return f"fixture.{problem.key}: {problem.why}" if problem.key else str(problem)
        return None

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        raise TaskError(f"task {task.id}: a fixture's gold runs in its pair (gold_run)")

    def gold_run(self, context: Any) -> str | None:
        """The fixture's expected answer; in agent mode its expected commands run first (in
        the agent's sandbox and environment) and the answer goes to `$GITGAUGE_ANSWER`."""
        with _active_lock:
            pair = _active.get(Path(context.workspace))
        if pair is None:
            raise TaskError(f"task {context.task.id}: gold found no fixture pair to answer")
        return pair.gold(env=context.env, wrapper=context.sandbox)

    def enter(self, pair: Any) -> KindPair:
        return _FixturePair(pair)

    def row_counts(self, results: Sequence[RunResult]) -> dict[str, int]:
        return {"unscored": sum(1 for result in results if result.status == "unscored")}

    def describe(self, result: RunResult) -> str:
        if result.scoreDetail is None:
            return ""
        return f", {result.mode}: {' '.join(result.scoreDetail.split())[:120]}"


class _FixturePair(KindPair):
    def __init__(self, steps: FreshSteps) -> None:
        self.steps = steps
        task = steps.task
        self.fixture = fixture_of(task)
        self.mode: Mode = pair_mode(self.fixture, task, steps.mode)
        self.message: str | None = None
        draft = steps.draft
        assert isinstance(draft, FixtureResultDraft)
        draft.update(
            benchmark=task.benchmark,
            difficulty=task.difficulty,
            mode=self.mode,
            scorer=self.fixture.scoring.type,
        )
        workspace = steps.workspace
        self.directory = FixtureDirectory.make(workspace.holder)
        try:
            self.directory.build(
                self.fixture.setup,
                sandbox=steps.sandbox,
                timeout_seconds=steps.config.timeouts.setup / 1000,
            )
        except FixtureSetupFailed as failure:
            raise KindSetupError(f"the fixture's {failure}") from None
        # One sandbox for everything asked before the agent: the expectation, the context.
        wanted = derive.probes(self.fixture)
        context_commands = prompts.context_probes(self.fixture) if self.mode == "text" else ()
        asked = [*wanted.values(), *context_commands]
        ran = self.directory.run_all(
            asked, sandbox=steps.sandbox, timeout_seconds=steps.config.timeouts.setup / 1000
        )
        said = {command: out for command, out in zip(asked, ran, strict=True) if out is not None}
        self.expectation = derive.expectation(
            self.fixture,
            {
                name: (said[command].exit_code, said[command].stdout)
                for name, command in wanted.items()
                if command in said
            },
        )
        workspace.env = self.directory.agent_env()
        if self.mode == "agent":
            self._hide_from_git(steps.planned.harness.overlays)
            snapshot = Snapshot(self.directory)
            self.start = snapshot.read()
            workspace.path = self.directory.repo
            workspace.writable = (self.directory.root, self.directory.home)
            workspace.writable += (self.directory.answer_dir,)
            workspace.reader = snapshot
            self.prompt = prompts.agent_prompt(self.fixture)
        else:
            context = {
                command: said[command].stdout for command in context_commands if command in said
            }
            self.start = ""
            workspace.path = self.directory.scratch
            workspace.writable = (self.directory.answer_dir,)
            self.prompt = prompts.text_prompt(self.fixture, context)
        with _active_lock:
            _active[workspace.path] = self

    def _probe(self, command: str) -> ShellOutput:
        """A command in the repository after the agent (its configuration's programs off)."""
        return self.directory.run(command, sandbox=self.steps.sandbox, hardened=True)

    def _hide_from_git(self, overlays: Sequence[str]) -> None:
        """The config's files (a CLAUDE.md) are laid into the repository while the agent runs:
        listed in its `info/exclude`, `git status` does not show them and `git add -A` does
        not commit them. Written only into a real directory (a setup's symlink is not
        followed)."""
        info = self.directory.repo / ".git" / "info"
        if not overlays or not _real_dir(info.parent) or info.is_symlink():
            return
        info.mkdir(exist_ok=True)
        exclude = info / "exclude"
        if exclude.is_symlink():
            return
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write("".join(f"/{path}\n" for path in overlays))

    # -- gold ----------------------------------------------------------------------------------

    def gold(self, *, env: Any, wrapper: Sequence[str]) -> str | None:
        answer = scorers.gold_answer(self.fixture, self.expectation)
        if self.mode == "text":
            return answer
        for command in scorers.gold_commands(self.fixture):
            self.directory.run(command, sandbox=None, env=env, wrapper=wrapper)
        for path, content in self.fixture.scoring.expected_files.items():
            (self.directory.repo / path).write_text(content, encoding="utf-8")
        Path(env.get(ANSWER_ENV, self.directory.answer_file)).write_text(answer, encoding="utf-8")
        return None

    # -- after the agent -----------------------------------------------------------------------

    def agent_said(self, message: str | None) -> None:
        self.message = message

    def after_agent(self) -> None:
        with _active_lock:
            _active.pop(self.steps.workspace.path, None)

    def grade(self, diff: AgentDiff) -> None:
        steps, fixture = self.steps, self.fixture
        draft = steps.draft
        assert isinstance(draft, FixtureResultDraft)
        answer, source = self._answer()
        if self.mode == "text" and fixture.scoring.type == "state_assertions":
            self._execute(answer or "")
        commands, paths = scorers.observations(fixture, self.mode)
        state = scorers.RepoState(
            repository=str(self.directory.repo),
            outputs={
                command: ((ran := self._probe(command)).exit_code, ran.stdout)
                for command in commands
            },
            paths={path: self._path(path) for path in paths},
        )
        judged: float | None = None
        if fixture.scoring.type == "llm_judge" and (answer or "").strip():
            judgement = _judge().judge(
                prompt=fixture.prompt,
                reference=self.expectation.text,
                answer=answer or "",
                rubric=fixture.scoring.rubric,
            )
            judged = judgement.score
            if judged is None:
                steps.warn(f"{steps.task.id}: not scored: {judgement.reason}")
        verdict = scorers.score(
            fixture,
            mode=self.mode,
            answer=answer,
            expectation=self.expectation,
            state=state,
            judge_score=judged,
        )
        status = {True: "resolved", False: "unresolved", None: "unscored"}[verdict.passed]
        draft.update(
            status=status,
            score=verdict.score,
            answer=None if answer is None else answer[:ANSWER_KEPT],
            answerSource=source,
            scoreDetail=verdict.detail,
            failedAssertions=list(verdict.failed),
        )
        if answer is not None:
            atomic_write_text(steps.log_dir / "answer.txt", answer)

    def _answer(self) -> tuple[str | None, Any]:
        """`$GITGAUGE_ANSWER` when the agent wrote it, else its final message."""
        written = self.directory.read_answer()
        if written is not None and written.strip():
            return written, "file"
        if self.message is not None and self.message.strip():
            return self.message, "message"
        return None, None

    def _execute(self, answer: str) -> None:
        """A text-mode answer's commands, run in the repository as GitBench does (in the
        sandbox, each on its own), logged beside the answer."""
        log: list[str] = []
        for command in answers.commands(answer):
            ran = self.directory.run(command, sandbox=self.steps.sandbox)
            log.append(f"$ {command}\n{ran.stdout}{ran.stderr}[exit {ran.exit_code}]\n")
        atomic_write_text(self.steps.log_dir / "answer-commands.log", "".join(log))

    def _path(self, path: str) -> scorers.PathState:
        """A path of the fixture's directory as data: never followed out of it."""
        root = os.path.realpath(self.directory.root)
        target = os.path.realpath(os.path.join(self.directory.repo, path))
        if target != root and not target.startswith(root + os.sep):
            return scorers.PathState("other")
        if os.path.isdir(target):
            return scorers.PathState("dir")
        if not os.path.lexists(target):
            return scorers.PathState("missing")
        if not os.path.isfile(target):
            return scorers.PathState("other")
        try:
            with open(target, "rb") as handle:
                text = handle.read(OUTPUT_LIMIT).decode("utf-8", "replace")
        except OSError:
            return scorers.PathState("other")
        return scorers.PathState("file", text)


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _judge() -> FixtureJudge:
    """This process's judge (its backend is chosen once, on the first llm_judge fixture)."""
    with _active_lock:
        if not _judge_made:
            _judge_made.append(FixtureJudge(os.environ))
        return _judge_made[0]
