"""The records gitgauge writes: tasks (`.gitgauge/tasks/<id>.yaml`), results
(`results/<config>/<task>.json`), run manifests (`run.json`), and the drafts a pair fills.

Field names are the on-disk keys, spelled as the spec spells them (`testCommand`, `testFiles`,
`baseSuitePasses`), so a file written by gitgauge reads the same as the documentation; every
persisted field has a one-line docstring, the file-format reference in code (docs/file-formats.md
follows it). Records are read leniently (`extra="ignore"`: a newer gitgauge may add fields) and
checked as data (ids, paths, numbers: see `Task`, `implausible`). What people write is in
`core/schema.py`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)

from gitgauge.core.schema import AgentConfig, Timeouts

TASK_SCHEMA_VERSION = 1
RESULT_SCHEMA_VERSION = 1
MANIFEST_SCHEMA_VERSION = 1


PromptQuality = Literal["rich", "title-only"]
TaskKind = Literal["fix", "merge", "rebase", "commits", "fixture"]
MergeDifficulty = Literal["easy", "medium", "hard"]
FixtureDifficulty = Literal["trivial", "easy", "medium", "hard", "expert"]
FixtureMode = Literal["agent", "text"]


TASK_ID = re.compile(r"[0-9a-f]{8}(?:-[a-z0-9]+)*")
"""What `mining.classify.task_id` makes (8 hex digits of the commit, then the subject's ASCII
slug), and so the only ids a task file may have: an id becomes file and folder names."""
TASK_ID_MAX_LENGTH = 57
"""8 hex digits, a dash and a slug of at most 48 characters."""
FIXTURE_TASK_ID = re.compile(r"gitbench-[a-z0-9_]+(?:-[a-z0-9_]+)+")
"""A fixture task's id (`kind: fixture`): `gitbench-<benchmark>-<fixture id>`, both slugged to
lower-case letters, digits and `_` between single dashes (what `gitgauge import gitbench`
makes). Only fixture tasks may have one; every other kind keeps `TASK_ID`."""
FIXTURE_TASK_ID_MAX_LENGTH = 120
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A commit as a task stores it (SHA-1 or SHA-256): never a revision git could read as an option."""


class Task(BaseModel):
    """A verified fail-to-pass task: `.gitgauge/tasks/<id>.yaml`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = TASK_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    id: StrictStr
    """Short sha plus an ASCII slug of the subject; also the file name."""
    base: StrictStr
    """Full sha of the fix's parent: where an agent starts (empty for a fixture task, which
    brings its own repository)."""
    fix: StrictStr
    """Full sha of the fix commit (empty for a fixture task)."""
    subject: StrictStr
    """Subject line of the fix commit."""
    body: StrictStr = ""
    """Body of the fix commit message (may be empty)."""
    prompt: StrictStr
    """What the agent is asked to do."""
    originalPrompt: StrictStr | None = None
    """The commit-message prompt, kept when `prompt` was rewritten."""
    testFiles: list[StrictStr]
    """Test paths the fix touched (added, modified, deleted, both sides of renames)."""
    promptQuality: PromptQuality
    """`rich` when the body has 40 or more non-whitespace characters, else `title-only`."""
    baseSuitePasses: StrictBool | None = None
    """Whether the base commit's own, unmodified suite passed at mine time (None: unknown)."""
    baseTimedOut: StrictBool = False
    """Whether the failing run at the base (with the fix's tests) ended by timeout."""
    testCommand: StrictStr | None = None
    """The testCommand that proved this task."""
    setupCommand: StrictStr | None = None
    """The setupCommand in force when this task was proved."""
    minedAt: StrictStr
    """UTC time of verification, ISO 8601."""
    failToPass: list[StrictStr] | None = None
    """Tests that pass at the fix and not at the parent with the fix's tests (per-test
    verdicts); None: the task was proved, and is scored, by exit codes."""
    passToPass: StrictInt | None = None
    """How many tests pass at the parent and at the fix; their names are in `<id>.tests.json`."""
    passToPassTests: list[StrictStr] | None = Field(default=None, exclude=True)
    """The PASS_TO_PASS names (kept beside the task file, not in it: there may be thousands)."""
    failingBoth: list[StrictStr] = Field(default_factory=list)
    """Tests that fail at the fix and at the parent: ignored by scoring."""
    flaky: list[StrictStr] = Field(default_factory=list)
    """Tests whose outcome changed between two runs of one commit: ignored by scoring."""
    noTestPassedAtParent: StrictBool = False
    """No test passed at the parent: the fix may repair the environment, not a bug; review it."""
    notRunAtParent: StrictInt = 0
    """Tests passing at the fix that did not run at the parent (missing from its report, and of
    no test file of the fix): neither FAIL_TO_PASS nor PASS_TO_PASS."""
    failToPassOutsideFix: StrictBool = False
    """FAIL_TO_PASS holds no test of the fix's own test files: real only if those tests failed
    before the fix for the reason it repairs; review it."""
    rewriteModel: StrictStr | None = None
    """Model id that rewrote `prompt` (None: the prompt is the commit message's)."""
    rewriteBackend: Literal["anthropic-sdk", "claude-cli"] | None = None
    """How the rewrite was asked: the Anthropic Python SDK or the claude CLI."""
    rewriteInputTokens: int | None = None
    """Input tokens the rewrite used (cached ones included), as the backend reported them."""
    rewriteOutputTokens: int | None = None
    """Output tokens the rewrite used."""
    rewriteCostUsd: float | None = None
    """Cost the backend reported (the claude CLI's `total_cost_usd`; the SDK reports none)."""
    # -- merge-conflict tasks (kind: merge); `fix` then holds the recorded merge too --
    kind: TaskKind = "fix"
    """`fix`: a fail-to-pass bug fix; `merge`: resolve the conflicts of a recorded merge;
    `fixture`: a git-skill fixture (GitBench's format) in a repository of its own."""
    other: StrictStr | None = None
    """Merge tasks: full sha of the merge's second parent, merged into `base`."""
    merge: StrictStr | None = None
    """Merge tasks: full sha of the recorded merge commit (the reference resolution)."""
    conflictFiles: list[StrictStr] = Field(default_factory=list)
    """Merge tasks: the paths re-merging `other` into `base` leaves in conflict."""
    conflictRegions: StrictInt | None = None
    """Merge tasks: conflict regions over those files (a modify/delete counts as one)."""
    difficulty: MergeDifficulty | FixtureDifficulty | None = None
    """Merge tasks, as GitGoodBench: easy 1 file 1 region, medium 1 file more, hard more files;
    chain tasks, by `purity`: easy from 0.9, medium from 0.7, hard below; fixture tasks: the
    fixture's own (trivial, easy, medium, hard, expert)."""
    testsAtMerge: StrictBool | None = None
    """Merge tasks: whether `testCommand` passed at the recorded merge (False: exact match only)."""
    # -- commit-history tasks (kind: rebase, kind: commits) from a file-commit chain; `fix`
    # holds the chain's newest commit, `base` where the agent starts --
    chain: list[StrictStr] = Field(default_factory=list)
    """Chain tasks: the chain's commits, oldest first (full shas); the first one's parent is
    the chain's parent."""
    chainSubjects: list[StrictStr] = Field(default_factory=list)
    """Chain tasks: the subjects of those commits, oldest first (the original series)."""
    file: StrictStr | None = None
    """Chain tasks: the file every commit of the chain modifies."""
    purity: float | None = None
    """Chain tasks: the share of the chain's changed lines that are in `file` (0 to 1)."""
    testsAtNewest: StrictBool | None = None
    """Chain tasks: whether `testCommand` passed at the chain's newest commit (what
    `chains.testEachCommit` needs)."""
    chainParent: StrictStr | None = None
    """Chain tasks: full sha of the chain's parent, which the agent's series goes on top of."""
    # -- git-skill fixtures (kind: fixture; `gitgauge import gitbench`) --
    benchmark: StrictStr | None = None
    """Fixture tasks: the benchmark (the pack's folder) the fixture belongs to."""
    fixtureId: StrictStr | None = None
    """Fixture tasks: the fixture's own id, as its file gives it."""
    tags: list[StrictStr] = Field(default_factory=list)
    """Fixture tasks: the fixture's tags."""
    purpose: StrictStr | None = None
    """Fixture tasks: what skill the fixture tests, in its author's words."""
    contentHash: StrictStr | None = None
    """Fixture tasks: sha256 of the fixture's content (a re-import compares it)."""
    source: StrictStr | None = None
    """Fixture tasks: the fixture file it was imported from."""
    mode: FixtureMode | None = None
    """Fixture tasks: `agent` (works in the repository) or `text` (GitBench's protocol: the
    context in the prompt, the final message is the answer); `run --mode` overrides it."""
    nonDiscriminating: StrictBool | None = None
    """Fixture tasks: the noop baseline passes it (its assertions hold on the untouched
    repository), so passing it says nothing of an agent."""
    fixture: dict[str, Any] | None = None
    """Fixture tasks: the fixture itself (setup, prompt, expected, scoring), as imported."""


ResultStatus = Literal["resolved", "unresolved", "error", "unscored"]
ErrorKind = Literal[
    "setup",
    "adapter-exit",
    "adapter-timeout",
    "adapter-output",
    "escaped-workspace",
    "internal",
    "executor-lost",
    "patch-too-large",
]
ErrorCause = Literal["not-logged-in", "bad-model", "auth", "quota"]
"""An adapter error that no retry of the same setup can fix: the agent is not logged in, its
model does not exist, its credentials are refused, or its account is out of quota. `run` stops a
config whose first pairs all fail with one of these (see `running/gate.py`)."""


class AgentBehaviour(BaseModel):
    """What the agent did in one pair, counted from its transcript
    (`logs/<config>/<task>/transcript.jsonl`; see `core/transcript.py`)."""

    model_config = ConfigDict(extra="ignore")

    source: Literal["claude", "codex"]
    """The transcript's shape: claude's stream-json or codex's exec --json events."""
    turns: StrictInt
    """Model responses (claude: distinct assistant messages; codex: completed items)."""
    toolCalls: dict[StrictStr, StrictInt] = Field(default_factory=dict)
    """Tool calls by tool name (claude's `Read`, `Bash`, ...; codex's `shell`, `file_change`)."""
    shellCommands: StrictInt = 0
    """Shell commands that ran (claude's Bash, codex's commands; refused ones left out)."""
    testRuns: StrictInt = 0
    """Shell commands that ran the suite: the testCommand, or a known test runner."""
    filesRead: StrictInt | None = None
    """Distinct files read with a read tool; None for codex (it reads through shell commands)."""
    filesEdited: StrictInt = 0
    """Distinct files changed with an edit tool (failed and refused edits left out)."""
    deniedToolCalls: StrictInt = 0
    """Tool calls the harness refused to run (claude's permissions)."""
    firstEditSeconds: float | None = None
    """Seconds from the agent's start to its first edit; None: no edit, or no timestamps."""

    @property
    def ran_tests(self) -> bool:
        return self.testRuns > 0


class RunResult(BaseModel):
    """One config x task pair: `.gitgauge/runs/<run>/results/<config>/<task>.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = RESULT_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    runId: StrictStr
    """The run this pair belongs to (the name of its run directory)."""
    config: StrictStr
    """Agent config name."""
    task: StrictStr
    """Task id."""
    attempt: StrictInt = 1
    """Which attempt of this pair (`run --repeat N` makes N independent attempts)."""
    status: ResultStatus
    """resolved / unresolved, or error when setup or the adapter failed (not scored), or
    unscored when nothing could score it (a fixture's LLM judge unavailable): left out of
    totals and listed."""
    errorKind: ErrorKind | None = None
    """What failed, for errors (setup, adapter-exit, adapter-timeout, ...; see `ErrorKind`)."""
    errorMessage: str | None = None
    """Why, in one line (the agent's own words where it gave any)."""
    errorCause: ErrorCause | None = None
    """For adapter errors no retry fixes: not-logged-in, bad-model, auth or quota."""
    costUsd: float | None = None
    """`total_cost_usd` reported by the adapter; None when it reports none."""
    inputTokens: int | None = None
    """Input tokens the agent reported (cached ones included); None when it reports none."""
    outputTokens: int | None = None
    """Output tokens the agent reported."""
    cacheCreationInputTokens: int | None = None
    """Input tokens written to the prompt cache (Anthropic's usage)."""
    cacheReadInputTokens: int | None = None
    """Input tokens read from the prompt cache."""
    numTurns: int | None = None
    """Turns of the agent's loop, as it reported them."""
    reasoningOutputTokens: int | None = None
    """Reasoning tokens among `outputTokens` (codex); None when the agent reports none."""
    adapterSeconds: float | None = None
    """Wall time of the adapter run."""
    wallSeconds: float | None = None
    """Wall-clock time of the whole pair: setup, agent and grading (None: results before it)."""
    setupSeconds: float | None = None
    """Of `wallSeconds`: the workspace and `setupCommand`."""
    agentSeconds: float | None = None
    """Of `wallSeconds`: the harness laid in, the adapter, and its work read back as a patch."""
    gradingSeconds: float | None = None
    """Of `wallSeconds`: the kind's grading (protection, fresh checkout, the suites)."""
    behaviour: AgentBehaviour | None = None
    """What the agent did, from its transcript; None without one."""
    earlierErrors: StrictInt = 0
    """Errors this pair ended in before `run --resume --retry-errors` ran it again; each
    record is kept in `logs/<config>/<task>/errored-N/`."""
    diffFiles: int | None = None
    """Files the agent's patch changes (renames count once)."""
    diffInsertions: int | None = None
    """Lines the agent's patch inserts (binary files count none)."""
    diffDeletions: int | None = None
    """Lines the agent's patch deletes."""
    regressed: bool | None = None
    """True when the base suite fails after the agent's work and passed at base; None: unknown."""
    reverted: list[str] = Field(default_factory=list)
    """Protected pre-existing files the agent edited, reverted before scoring."""
    deleted: list[str] = Field(default_factory=list)
    """Brand-new test-infrastructure files the agent added, deleted before scoring (results
    written before `dropped`, which holds them now)."""
    dropped: dict[str, str] = Field(default_factory=dict)
    """Files the agent added that are not ordinary project code (tests, configuration,
    dependencies, stand-ins for installed modules), left out of the graded tree: path -> why."""
    testExitCode: int | None = None
    """Exit code of the suite with the task's tests (None: timed out, or not run)."""
    testTimedOut: bool = False
    """Whether that run ended by `timeouts.test`."""
    testOutputTail: str | None = None
    """The end of that run's output (all of it is in the pair's logs)."""
    baseTestExitCode: int | None = None
    """Exit code of the base's own suite over the agent's work (the regression check)."""
    baseTestOutputTail: str | None = None
    """The end of that run's output."""
    failToPassFailed: list[str] | None = None
    """FAIL_TO_PASS tests that did not pass (per-test scoring); None: scored by exit code."""
    passToPassFailed: list[str] | None = None
    """PASS_TO_PASS tests that did not pass: the regressions (per-test scoring)."""
    # -- merge-conflict tasks --
    kind: StrictStr = "fix"
    """The task's kind (`fix`, `merge`), so reports keep the kinds apart."""
    exact: bool | None = None
    """Merge tasks: every conflicted file equals the recorded merge's (GitGoodBench's metric)."""
    exactTree: bool | None = None
    """Merge tasks: the whole staged tree equals the recorded merge's tree."""
    exactFiles: list[str] = Field(default_factory=list)
    """Merge tasks: the conflicted files whose content equals the recorded merge's."""
    markerFiles: list[str] = Field(default_factory=list)
    """Merge tasks: files that still hold conflict markers."""
    unmergedPaths: list[str] = Field(default_factory=list)
    """Merge tasks: paths left unmerged in the index and untouched by the agent."""
    outsideChanges: list[str] = Field(default_factory=list)
    """Merge tasks: paths the agent changed outside the conflicted files (kept, reported)."""
    mergeAbandoned: bool | None = None
    """Merge tasks: the agent undid the merge (`git merge --abort`); never resolved."""
    # -- commit-history tasks (rebase, commits): the checks, then the judge --
    checkTree: bool | None = None
    """Chain tasks: the series' last tree equals the chain's newest tree (nothing lost, nothing
    added; files setupCommand or the harness made excepted)."""
    checkNothingInProgress: bool | None = None
    """Chain tasks: no rebase, merge, cherry-pick or revert left in progress."""
    checkNothingUncommitted: bool | None = None
    """Chain tasks: the work tree and the index hold exactly the series' last tree."""
    checkSeriesLength: bool | None = None
    """Chain tasks: the series has between 1 and twice the chain's commits."""
    checkSubjectsDistinct: bool | None = None
    """Chain tasks: no two commits of the series have the same subject."""
    checkBranch: bool | None = None
    """Chain tasks: the series sits on the chain's parent, on the branch the rebase started
    from (rebase) or wherever HEAD is (commits)."""
    series: list[str] | None = None
    """Chain tasks: the subjects of the agent's series, oldest first (None: no series found on
    top of the chain's parent)."""
    originalSeries: list[str] = Field(default_factory=list)
    """Chain tasks: the subjects of the original chain, oldest first."""
    seriesTested: int | None = None
    """Chain tasks with `chains.testEachCommit`: commits of the series built and tested."""
    seriesPassing: int | None = None
    """Of those, how many passed `testCommand`."""
    judgeAsFirst: Literal["win", "tie", "loss"] | None = None
    """Chain tasks: the judge's verdict on the agent's series shown first (as A), from the
    agent's side; None: not judged."""
    judgeAsSecond: Literal["win", "tie", "loss"] | None = None
    """The verdict with the agent's series shown second (as B)."""
    solved: bool | None = None
    """Chain tasks: the judge preferred the agent's series in both orders (GitGoodBench's
    measure); None: not judged in both orders."""
    judgeProblem: str | None = None
    """Why the judge gave no verdict (unavailable, malformed answer, ...)."""
    judgeModel: str | None = None
    """Model id of the judge."""
    judgeInputTokens: int | None = None
    """Input tokens of both judge requests, as the backend reported them."""
    judgeOutputTokens: int | None = None
    """Output tokens of both judge requests."""
    judgeCostUsd: float | None = None
    """Cost of both judge requests (the claude CLI reports one; the SDK none)."""
    # -- git-skill fixtures --
    benchmark: str | None = None
    """Fixture tasks: the fixture's benchmark (`report --by benchmark` groups by it)."""
    difficulty: str | None = None
    """Fixture tasks: the fixture's difficulty (trivial, easy, medium, hard, expert)."""
    mode: FixtureMode | None = None
    """Fixture tasks: the mode the pair ran in (agent or text)."""
    scorer: str | None = None
    """Fixture tasks: the fixture's scorer (`scoring.type`)."""
    score: float | None = None
    """Fixture tasks: the number compared with the threshold (similarity, the judge's score)."""
    answer: str | None = None
    """Fixture tasks: the answer scored (its start; all of it is in the pair's logs)."""
    answerSource: Literal["file", "message"] | None = None
    """Fixture tasks: where the answer came from: `$GITGAUGE_ANSWER`, or the final message."""
    scoreDetail: str | None = None
    """Fixture tasks: why the scorer decided as it did, in one line."""
    failedAssertions: list[str] = Field(default_factory=list)
    """Fixture tasks: the state assertions that did not hold."""
    sandbox: Literal["bwrap", "none"] | None = None
    """The sandbox this pair's agent and test commands ran in (on a Ray node: the one that node
    could give); None when the pair did not get that far, and in results written before
    gitgauge recorded it per pair (the manifest's `sandbox` then says)."""
    startedAt: str
    """UTC time the pair started, ISO 8601."""
    finishedAt: str
    """UTC time the pair finished, ISO 8601."""


class ResultDraft(BaseModel):
    """What a pair has measured so far, before it becomes a `RunResult`: filled step by step (an
    error keeps what was measured), and refusing a field its kind does not have, so a misspelt
    or misplaced key is a bug that shows, not a value silently dropped. The fields are
    `RunResult`'s; see there."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    kind: StrictStr = "fix"
    sandbox: Literal["bwrap", "none"] | None = None
    status: ResultStatus = "error"
    errorKind: ErrorKind | None = None
    errorMessage: str | None = None
    errorCause: ErrorCause | None = None
    costUsd: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheCreationInputTokens: int | None = None
    cacheReadInputTokens: int | None = None
    numTurns: int | None = None
    reasoningOutputTokens: int | None = None
    adapterSeconds: float | None = None
    wallSeconds: float | None = None
    setupSeconds: float | None = None
    agentSeconds: float | None = None
    gradingSeconds: float | None = None
    behaviour: AgentBehaviour | None = None
    earlierErrors: int = 0
    diffFiles: int | None = None
    diffInsertions: int | None = None
    diffDeletions: int | None = None
    testExitCode: int | None = None
    testTimedOut: bool = False
    testOutputTail: str | None = None

    def update(self, **fields: Any) -> None:
        """Set `fields` (each validated; an unknown one raises)."""
        for name, value in fields.items():
            setattr(self, name, value)

    def error(self, kind: ErrorKind, message: str) -> None:
        self.update(status="error", errorKind=kind, errorMessage=message)

    def fields(self) -> dict[str, Any]:
        """What was set, as `RunResult` keyword arguments."""
        return self.model_dump(exclude_unset=True) | {"kind": self.kind, "status": self.status}


class FixResultDraft(ResultDraft):
    """A fix task's pair: protection and the base suite."""

    regressed: bool | None = None
    reverted: list[str] = Field(default_factory=list)
    dropped: dict[str, str] = Field(default_factory=dict)
    baseTestExitCode: int | None = None
    baseTestOutputTail: str | None = None
    failToPassFailed: list[str] | None = None
    passToPassFailed: list[str] | None = None


class MergeResultDraft(ResultDraft):
    """A merge task's pair: exact match and what is left unmerged."""

    exact: bool | None = None
    exactTree: bool | None = None
    exactFiles: list[str] = Field(default_factory=list)
    markerFiles: list[str] = Field(default_factory=list)
    unmergedPaths: list[str] = Field(default_factory=list)
    outsideChanges: list[str] = Field(default_factory=list)
    mergeAbandoned: bool | None = None
    reverted: list[str] = Field(default_factory=list)
    dropped: dict[str, str] = Field(default_factory=dict)


class ChainResultDraft(ResultDraft):
    """A commit-history task's pair: its checks, per-commit tests and the judge."""

    checkTree: bool | None = None
    checkNothingInProgress: bool | None = None
    checkNothingUncommitted: bool | None = None
    checkSeriesLength: bool | None = None
    checkSubjectsDistinct: bool | None = None
    checkBranch: bool | None = None
    series: list[str] | None = None
    originalSeries: list[str] = Field(default_factory=list)
    seriesTested: int | None = None
    seriesPassing: int | None = None
    reverted: list[str] = Field(default_factory=list)
    dropped: dict[str, str] = Field(default_factory=dict)
    judgeAsFirst: Literal["win", "tie", "loss"] | None = None
    judgeAsSecond: Literal["win", "tie", "loss"] | None = None
    solved: bool | None = None
    judgeProblem: str | None = None
    judgeModel: str | None = None
    judgeInputTokens: int | None = None
    judgeOutputTokens: int | None = None
    judgeCostUsd: float | None = None


CHAIN_CHECKS = (
    "checkTree",
    "checkNothingInProgress",
    "checkNothingUncommitted",
    "checkSeriesLength",
    "checkSubjectsDistinct",
    "checkBranch",
)
"""The checks of a chain task's pair, in the order docs/guide/chain-tasks.md lists them: RESOLVED
when all hold."""


class JudgeCheck(BaseModel):
    """The judge's position-bias check of a run: the original series against itself."""

    model_config = ConfigDict(extra="ignore")

    task: StrictStr
    """The task whose original series was judged against itself."""
    model: StrictStr
    """Model id of the judge."""
    backend: StrictStr
    """anthropic-sdk or claude-cli."""
    asFirst: Literal["win", "tie", "loss"] | None = None
    """The verdict for the copy shown first; `tie` is the only unbiased one."""
    asSecond: Literal["win", "tie", "loss"] | None = None
    """The verdict for the copy shown second."""
    problem: StrictStr | None = None
    """Why a verdict is missing (a malformed answer, an error)."""
    inputTokens: int | None = None
    """Input tokens of the two requests."""
    outputTokens: int | None = None
    """Output tokens of the two requests."""
    costUsd: float | None = None
    """Their cost, when the backend reports one."""

    @property
    def unbiased(self) -> bool:
        return self.asFirst == "tie" and self.asSecond == "tie"

    def describe(self) -> str:
        """One line for the run's output and the report."""
        shown = f"{self.asFirst or '-'}/{self.asSecond or '-'}"
        where = f"judge position check: the original series of {self.task} against itself"
        if self.unbiased:
            return f"{where}: tie/tie (no position bias seen)"
        if self.asFirst is None or self.asSecond is None:
            return f"{where}: {shown}, unscored ({self.problem})"
        return (
            f"{where}: {shown}, not tie/tie: the judge favours a position or a copy; read "
            "SOLVED with care"
        )


class FixtureResultDraft(ResultDraft):
    """A fixture task's pair: its mode, its answer and the scorer's verdict."""

    benchmark: str | None = None
    difficulty: str | None = None
    mode: FixtureMode | None = None
    scorer: str | None = None
    score: float | None = None
    answer: str | None = None
    answerSource: Literal["file", "message"] | None = None
    scoreDetail: str | None = None
    failedAssertions: list[str] = Field(default_factory=list)


MAX_COST_USD = 1_000_000.0
"""Past a million dollars a pair's cost is a corrupt or forged record, not a measurement."""
MAX_COUNT = 10**12
"""Tokens, turns and diff lines past a trillion: corrupt, not measured."""
MAX_SECONDS = 7 * 86_400.0
"""A week of adapter time: timeouts are at most a day."""
_COUNT_FIELDS = (
    "inputTokens",
    "outputTokens",
    "cacheCreationInputTokens",
    "cacheReadInputTokens",
    "reasoningOutputTokens",
    "numTurns",
    "diffFiles",
    "diffInsertions",
    "diffDeletions",
    "judgeInputTokens",
    "judgeOutputTokens",
    "seriesTested",
    "seriesPassing",
)


_SECONDS_FIELDS = ("wallSeconds", "setupSeconds", "agentSeconds", "gradingSeconds")


def implausible(result: RunResult) -> str | None:
    """`key: why` for the first number of `result` no pair could have measured (NaN, infinite,
    negative, past its cap), or None. Such a result would poison every average it joins."""
    limits = {"costUsd": (MAX_COST_USD, "USD"), "adapterSeconds": (MAX_SECONDS, "seconds")}
    limits["judgeCostUsd"] = (MAX_COST_USD, "USD")
    limits.update({name: (MAX_SECONDS, "seconds") for name in _SECONDS_FIELDS})
    limits.update({name: (float(MAX_COUNT), "") for name in _COUNT_FIELDS})
    for name, (cap, unit) in limits.items():
        value = getattr(result, name)
        if value is None:
            continue
        shown = f"{value} {unit}".strip()
        if not math.isfinite(value):
            return f"{name}: {value} is not a finite number"
        if value < 0:
            return f"{name}: {shown} is negative"
        if value > cap:
            return f"{name}: {shown} is past the plausible {cap:,.0f} {unit}".rstrip()
    return None


def wall_seconds(result: RunResult) -> float | None:
    """A pair's wall-clock time: its `wallSeconds`, else (results written before gitgauge
    recorded it) the time between its `startedAt` and `finishedAt`."""
    if result.wallSeconds is not None:
        return result.wallSeconds
    try:
        started = datetime.fromisoformat(result.startedAt.replace("Z", "+00:00"))
        finished = datetime.fromisoformat(result.finishedAt.replace("Z", "+00:00"))
        seconds = (finished - started).total_seconds()
    except (ValueError, TypeError):
        return None
    return seconds if 0 <= seconds <= MAX_SECONDS else None


class RunManifest(BaseModel):
    """`.gitgauge/runs/<run>/run.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = MANIFEST_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    runId: StrictStr
    """UTC start time and six hex digits, also the run directory's name."""
    gitgaugeVersion: StrictStr
    """The gitgauge that made the run."""
    configs: list[AgentConfig]
    """The agent configs as given, `env` values replaced by `***` (names only)."""
    configFiles: list[StrictStr]
    """Paths of the config files, in `-c` order."""
    tasks: list[StrictStr]
    """Task ids of the run."""
    testCommand: StrictStr
    """gitgauge.yaml's testCommand the run graded with."""
    setupCommand: StrictStr | None = None
    """gitgauge.yaml's setupCommand the run used (None: none)."""
    timeouts: Timeouts
    """The timeouts in force (milliseconds)."""
    repeat: StrictInt = 1
    """Attempts per config x task pair."""
    history: StrictStr = "isolated"
    """`run.history` in force: isolated or full."""
    sandbox: StrictStr = "none"
    """The sandbox the run's agents and test commands ran in: bwrap or none. With the ray
    executor, where every node decides for itself, `run.sandbox` as asked: bwrap (every pair
    that ran, ran in it), none, or auto (each result's `sandbox` says)."""
    sandboxNetwork: StrictBool | None = None
    """With a sandbox (or `auto` on Ray): whether it shared the network (`run.sandbox_network`)."""
    startedAt: StrictStr
    """UTC time the run started, ISO 8601."""
    finishedAt: StrictStr | None = None
    """UTC time the run finished; None while it runs, or when it was interrupted."""
    harness: dict[StrictStr, StrictStr] | None = None
    """Config name -> fingerprint of its harness (see `harness/<config>/harness.json`); None in
    runs made before gitgauge recorded harnesses."""
    judgeCheck: JudgeCheck | None = None
    """The judge's position-bias check (an original series against itself), when the run
    judged commit-history tasks."""
    mode: StrictStr | None = None
    """`run --mode`: the mode every task of a kind with modes ran in (fixture tasks: agent or
    text); None: each task's own."""
