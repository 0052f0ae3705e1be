"""The groups of a result's fields, each declared once with its docstring: what every pair
measures, what the pairs graded on the project's tree share, and what each kind adds.

`RunResult` (`result.py`) composes every group; a kind's draft composes the common group and its
kind's, so it refuses a field its kind does not fill. docs/file-formats.md shows the fields a
section per group, in the order of the file (`docs/gen_reference.py` writes the tables).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from gitgauge.core.records.group import FieldGroup
from gitgauge.core.records.task import FixtureMode

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
ErrorCause = Literal[
    "not-logged-in", "bad-model", "auth", "quota", "unreachable", "command-not-found"
]
"""An adapter error that no retry of the same setup can fix: the agent is not logged in, its
model does not exist, its credentials are refused, its account is out of quota, its API cannot
be reached (no DNS, refused connections: after the CLI's own retries), or its command or binary
is not found or not executable. `run` stops a config whose first pairs all fail with one of these
(an unreachable API after its first pair; see `running/gate.py`)."""
JudgeVerdict = Literal["win", "tie", "loss"]


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


class CommonResultFields(FieldGroup):
    """Every result.

    What every pair measures, whatever its task's kind: its outcome, what the agent cost and
    did, its patch and the suite's verdict on it."""

    status: ResultStatus
    """`resolved` or `unresolved`; `error` when setup, the adapter or the workspace failed (the
    pair was not scored); `unscored` when nothing could score it (a fixture's LLM judge
    unavailable): left out of every count, and listed."""
    errorKind: ErrorKind | None = None
    """What failed, for errors: `setup`, `adapter-exit`, `adapter-timeout`, `adapter-output`,
    `escaped-workspace` (the agent symlinked a directory gitgauge had to write into), `internal`
    (a git command failed in the workspace; with the ray executor also an agent binary missing
    on a node, named in the message), `executor-lost` (the Ray worker or node running the pair
    died, also after Ray's retries; `run --resume --retry-errors` runs it again),
    `patch-too-large` (the agent's patch is over `run.limits`: not graded, the biggest files
    named)."""
    errorMessage: str | None = None
    """What went wrong, in one line (the agent's own words where it gave any), with the tail of
    the relevant output."""
    errorCause: ErrorCause | None = None
    """For adapter errors no retry of the same setup fixes; `run` stops a config whose first 3
    pairs all have the same one (`unreachable`: its first pair)."""
    costUsd: float | None = None
    """`total_cost_usd` the adapter reported (claude-code), or the tokens priced by the config's
    `pricing:` (codex); None when there is neither. Kept for errors too."""
    inputTokens: int | None = None
    """Input tokens the agent reported, cached ones included (claude's `usage`; codex's
    `input_tokens` from its last `turn.completed` event); None when it reports none."""
    outputTokens: int | None = None
    """Output tokens the agent reported (claude's `usage`; codex's `output_tokens`, reasoning
    included)."""
    cacheCreationInputTokens: int | None = None
    """Input tokens written to the prompt cache (claude's `usage`; codex's
    `cache_write_input_tokens`)."""
    cacheReadInputTokens: int | None = None
    """Input tokens read from the prompt cache (claude's `usage`; codex's
    `cached_input_tokens`)."""
    numTurns: int | None = None
    """Turns of the agent's loop, as it reported them: claude's `num_turns`; codex: its completed
    commands, file changes, tool calls and messages."""
    reasoningOutputTokens: int | None = None
    """Reasoning tokens among `outputTokens` (codex's `reasoning_output_tokens`); None for the
    other adapters."""
    adapterSeconds: float | None = None
    """Wall time of the adapter run; None when setup failed."""
    wallSeconds: float | None = None
    """Wall-clock time of the whole pair: setup, agent and grading (None in results written
    before it was recorded: `report` then uses `finishedAt - startedAt`)."""
    setupSeconds: float | None = None
    """Of `wallSeconds`: the workspace and `setupCommand`."""
    agentSeconds: float | None = None
    """Of `wallSeconds`: the harness laid in, the adapter, and its work read back as a patch."""
    gradingSeconds: float | None = None
    """Of `wallSeconds`: the kind's grading (protection, fresh checkout, the suites)."""
    behaviour: AgentBehaviour | None = None
    """What the agent did, from its transcript (`transcript.jsonl`); None without one."""
    earlierErrors: StrictInt = 0
    """Errors this pair ended in before `run --resume --retry-errors` ran it again; each
    record is kept in `logs/<config>/<task>/errored-N/`."""
    diffFiles: int | None = None
    """Files the agent's patch changes against `base`: new untracked files included,
    `worktree.link` paths and ignored files excluded, a rename counted once."""
    diffInsertions: int | None = None
    """Lines the agent's patch inserts (a binary file counts as a file with 0 lines), measured
    before protected files are reverted."""
    diffDeletions: int | None = None
    """Lines the agent's patch deletes (measured as `diffInsertions` is)."""
    testExitCode: int | None = None
    """Exit code of `testCommand` with the task's tests (None: timed out, or not run)."""
    testTimedOut: bool = False
    """Whether that run ended by `timeouts.test`."""
    testOutputTail: str | None = None
    """The last 4,000 characters of that run's stdout and stderr (all of it is in the pair's
    logs)."""
    kind: StrictStr = "fix"
    """The task's kind (`fix`, `merge`, `rebase`, `commits`, `fixture`), so reports keep the
    kinds apart; results without the key are fix results."""
    sandbox: Literal["bwrap", "none"] | None = None
    """The sandbox this pair's agent and test commands ran in (with `--executor ray`, the one its
    node could give); None when the pair did not get that far, and in results written before
    gitgauge recorded it per pair (the manifest's `sandbox` then says)."""


class ProtectionFields(FieldGroup):
    """Fix, merge and chain results.

    The kinds graded on the project's own tree: what the agent changed there that grading must
    not take from it (docs/guide/running.md#protected-files)."""

    reverted: list[str] = Field(default_factory=list)
    """Protected pre-existing files (tests, test infrastructure) the agent changed or deleted,
    restored to `base` before scoring."""
    dropped: dict[str, str] = Field(default_factory=dict)
    """Files the agent added that are not ordinary project code (tests, configuration,
    dependencies, links out, stand-ins for installed modules), left out of the graded tree:
    path -> why (docs/guide/running.md#what-an-agent-may-add). On a merge task also for its
    suite; on a chain task over the commits `chains.testEachCommit` tested."""


class FixResultFields(ProtectionFields):
    """Fix results.

    The base's own suite over the agent's work (the regression check) and, for per-test tasks,
    the tests that did not pass."""

    regressed: bool | None = None
    """The base's own suite fails after the agent's work and passed at mine time; None: unknown,
    or not scored."""
    baseTestExitCode: int | None = None
    """Exit code of the base's own suite over the agent's work (None: not run)."""
    baseTestOutputTail: str | None = None
    """The end of that run's output (None: not run)."""
    failToPassFailed: list[str] | None = None
    """Per-test scoring: the FAIL_TO_PASS tests that did not pass (empty: resolved); None:
    scored by exit code."""
    passToPassFailed: list[str] | None = None
    """Per-test scoring: the PASS_TO_PASS tests that did not pass, the regressions (non-empty:
    regressed); None: scored by exit code, or the names are missing."""


class MergeResultFields(ProtectionFields):
    """Merge results.

    The exact match with the recorded merge, and what the agent left unmerged or changed
    besides."""

    exact: bool | None = None
    """Every conflicted file equals the recorded merge's (GitGoodBench's metric)."""
    exactTree: bool | None = None
    """The whole staged tree equals the recorded merge's tree (files the setup step made
    excepted)."""
    exactFiles: list[str] = Field(default_factory=list)
    """The conflicted files whose content equals the recorded merge's."""
    markerFiles: list[str] = Field(default_factory=list)
    """Files that still hold conflict markers."""
    unmergedPaths: list[str] = Field(default_factory=list)
    """Conflicted paths left unmerged in the index and untouched by the agent."""
    outsideChanges: list[str] = Field(default_factory=list)
    """Paths the agent changed outside the conflicted files, against the conflicted state (kept,
    reported)."""
    mergeAbandoned: bool | None = None
    """The agent undid the merge (`git merge --abort`, a reset): never resolved."""
    outsideConflicts: list[str] = Field(default_factory=list)
    """The task's `outsideConflicts` when the pair was graded: what the recorded merge changed
    beyond the conflicts, which `exactTree` asks for and no agent can be expected to match
    (the report's footnote names these tasks)."""


class ChainResultFields(ProtectionFields):
    """Chain results (`rebase`, `commits`).

    The six `check*` fields are the checks of docs/guide/chain-tasks.md: the pair is `resolved`
    when all hold, and each is None when the pair never got to grading. Then the agent's series,
    its per-commit tests, and the judge's verdicts."""

    checkTree: bool | None = None
    """The series' last tree equals the chain's newest tree (nothing lost, nothing added; files
    setupCommand or the harness made excepted)."""
    checkNothingInProgress: bool | None = None
    """No rebase, merge, cherry-pick or revert left in progress."""
    checkNothingUncommitted: bool | None = None
    """The work tree and the index hold exactly the series' last tree."""
    checkSeriesLength: bool | None = None
    """The series has between 1 and twice the chain's commits."""
    checkSubjectsDistinct: bool | None = None
    """No two commits of the series have the same subject."""
    checkBranch: bool | None = None
    """The series sits on the chain's parent, on the branch the rebase started from (rebase) or
    wherever HEAD is (commits)."""
    series: list[str] | None = None
    """The subjects of the agent's series, oldest first (None: no series found on top of the
    chain's parent)."""
    originalSeries: list[str] = Field(default_factory=list)
    """The subjects of the original chain, oldest first."""
    seriesTested: int | None = None
    """With `chains.testEachCommit`: commits of the series built and tested."""
    seriesPassing: int | None = None
    """Of those, how many passed `testCommand`."""
    judgeAsFirst: JudgeVerdict | None = None
    """The judge's verdict on the agent's series shown first (as A), from the agent's side;
    None: not judged, or unscored."""
    judgeAsSecond: JudgeVerdict | None = None
    """The verdict with the agent's series shown second (as B)."""
    solved: bool | None = None
    """The judge preferred the agent's series in both orders (GitGoodBench's measure); None: not
    judged in both orders."""
    judgeProblem: str | None = None
    """Why the judge gave no verdict (no judge available, a malformed answer, a failed
    request)."""
    judgeModel: str | None = None
    """Model id of the judge."""
    judgeInputTokens: int | None = None
    """Input tokens of both judge requests, as the backend reported them."""
    judgeOutputTokens: int | None = None
    """Output tokens of both judge requests."""
    judgeCostUsd: float | None = None
    """Cost of both judge requests (the claude CLI reports one; the SDK none); counted in no
    AVG COST."""


class FixtureResultFields(FieldGroup):
    """Fixture results.

    The mode the pair ran in, the answer it gave and the scorer's verdict."""

    benchmark: str | None = None
    """The fixture's benchmark, the task's (`report --by benchmark` groups by it)."""
    difficulty: str | None = None
    """The fixture's difficulty, the task's (trivial, easy, medium, hard, expert)."""
    mode: FixtureMode | None = None
    """The mode the pair ran in (agent or text)."""
    scorer: str | None = None
    """The fixture's scorer (`scoring.type`)."""
    score: float | None = None
    """The number compared with the threshold (a similarity ratio, the LLM judge's score)."""
    answer: str | None = None
    """The answer scored: its first 2,000 characters (all of it is in the pair's
    `answer.txt`)."""
    answerSource: Literal["file", "message"] | None = None
    """Where the answer came from: `$GITGAUGE_ANSWER`, or the agent's final message."""
    scoreDetail: str | None = None
    """Why the scorer decided as it did, in one line."""
    failedAssertions: list[str] = Field(default_factory=list)
    """The state assertions that did not hold."""
