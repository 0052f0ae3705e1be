"""Typed records that cross the disk boundary.

Field names are the on-disk keys, spelled as the spec spells them (`testCommand`, `testFiles`,
`baseSuitePasses`), so a file written by gitgauge reads the same as the documentation. Records
written by humans (`gitgauge.yaml`, agent configs) forbid unknown keys so a typo is an error.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
)

TASK_SCHEMA_VERSION = 1
RESULT_SCHEMA_VERSION = 1
MANIFEST_SCHEMA_VERSION = 1


class _HumanRecord(BaseModel):
    """YAML a person writes: unknown keys and coerced types are errors, not guesses."""

    model_config = ConfigDict(extra="forbid", strict=True)


class MineSettings(_HumanRecord):
    last: StrictInt = Field(default=200, gt=0)
    """How many recent commits of HEAD `gitgauge mine` scans."""


class Timeouts(_HumanRecord):
    """Milliseconds, as the spec writes them."""

    test: StrictInt = Field(default=300_000, gt=0)
    """Timeout of one `testCommand` run."""
    setup: StrictInt = Field(default=600_000, gt=0)
    """Timeout of one `setupCommand` run."""
    adapter: StrictInt = Field(default=900_000, gt=0)
    """Timeout of one agent adapter run."""


class WorktreeSettings(_HumanRecord):
    link: list[StrictStr] = Field(default_factory=list)
    """Directories of the main checkout symlinked into every throwaway worktree."""

    @field_validator("link")
    @classmethod
    def _relative_inside(cls, names: list[str]) -> list[str]:
        for name in names:
            parts = PurePosixPath(name).parts
            if not name or PurePosixPath(name).is_absolute() or ".." in parts or ".git" in parts:
                raise ValueError(
                    f"{name!r} must be a directory path relative to the repository root"
                )
        return names


class RunSettings(_HumanRecord):
    history: Literal["isolated", "full"] = "isolated"
    """What git history an agent's workspace holds: `isolated` (default) only the history up to
    the task's base, so no git command reaches the fix; `full` a worktree of your repository
    (the spec's behaviour: every commit, the fix included, is readable)."""


class RepoConfig(_HumanRecord):
    """`gitgauge.yaml` at the repository root."""

    testCommand: StrictStr = Field(min_length=1)
    """Shell command that runs the test suite; exit 0 means the suite passes."""
    setupCommand: StrictStr | None = None
    """Shell command run in each worktree before `testCommand` (e.g. installing dependencies)."""
    mine: MineSettings = Field(default_factory=MineSettings)
    timeouts: Timeouts = Field(default_factory=Timeouts)
    worktree: WorktreeSettings = Field(default_factory=WorktreeSettings)
    run: RunSettings = Field(default_factory=RunSettings)


class Pricing(_HumanRecord):
    """US dollars per million tokens, for adapters whose agent reports tokens but no cost."""

    input: float = Field(ge=0)
    """Price of a million input tokens that were not read from the prompt cache."""
    cachedInput: float | None = Field(default=None, ge=0)
    """Price of a million cached input tokens (default: the `input` price)."""
    output: float = Field(ge=0)
    """Price of a million output tokens (reasoning tokens included)."""

    def cost_usd(self, *, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float:
        """The cost of one run; `input_tokens` counts the cached ones too (OpenAI's usage)."""
        cached_price = self.input if self.cachedInput is None else self.cachedInput
        uncached = max(input_tokens - cached_input_tokens, 0)
        total = uncached * self.input + cached_input_tokens * cached_price
        return (total + output_tokens * self.output) / 1_000_000


class AgentConfig(_HumanRecord):
    """One harness configuration to benchmark (one YAML file per configuration)."""

    name: StrictStr = Field(min_length=1)
    """Label shown in the report; unique among the configs of a run."""
    adapter: StrictStr = Field(min_length=1)
    """Which adapter runs the agent: claude-code, codex, script, gold or noop."""
    model: StrictStr | None = None
    """Passed to the adapter (claude-code: `--model`)."""
    args: list[StrictStr] = Field(default_factory=list)
    """Extra CLI arguments appended to the adapter invocation."""
    command: StrictStr | None = None
    """Shell command for the `script` adapter."""
    pricing: Pricing | None = None
    """Token prices for AVG COST, used by adapters that report tokens but no cost (codex)."""


PromptQuality = Literal["rich", "title-only"]


class Task(BaseModel):
    """A verified fail-to-pass task: `.gitgauge/tasks/<id>.yaml`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = TASK_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    id: StrictStr
    """Short sha plus an ASCII slug of the subject; also the file name."""
    base: StrictStr
    """Full sha of the fix's parent: where an agent starts."""
    fix: StrictStr
    """Full sha of the fix commit."""
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


ResultStatus = Literal["resolved", "unresolved", "error"]
ErrorKind = Literal[
    "setup", "adapter-exit", "adapter-timeout", "adapter-output", "escaped-workspace", "internal"
]


class RunResult(BaseModel):
    """One config x task pair: `.gitgauge/runs/<run>/results/<config>/<task>.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = RESULT_SCHEMA_VERSION
    runId: StrictStr
    config: StrictStr
    """Agent config name."""
    task: StrictStr
    """Task id."""
    attempt: StrictInt = 1
    """Which attempt of this pair (`run --repeat N` makes N independent attempts)."""
    status: ResultStatus
    """resolved / unresolved, or error when setup or the adapter failed (not scored)."""
    errorKind: ErrorKind | None = None
    errorMessage: str | None = None
    costUsd: float | None = None
    """`total_cost_usd` reported by the adapter; None when it reports none."""
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheCreationInputTokens: int | None = None
    cacheReadInputTokens: int | None = None
    numTurns: int | None = None
    reasoningOutputTokens: int | None = None
    """Reasoning tokens among `outputTokens` (codex); None when the agent reports none."""
    adapterSeconds: float | None = None
    """Wall time of the adapter run."""
    diffFiles: int | None = None
    diffInsertions: int | None = None
    diffDeletions: int | None = None
    regressed: bool | None = None
    """True when the base suite fails after the agent's work and passed at base; None: unknown."""
    reverted: list[str] = Field(default_factory=list)
    """Protected pre-existing files the agent edited, reverted before scoring."""
    deleted: list[str] = Field(default_factory=list)
    """Brand-new test-infrastructure files the agent added, deleted before scoring."""
    testExitCode: int | None = None
    testTimedOut: bool = False
    testOutputTail: str | None = None
    baseTestExitCode: int | None = None
    baseTestOutputTail: str | None = None
    startedAt: str
    finishedAt: str


class RunManifest(BaseModel):
    """`.gitgauge/runs/<run>/run.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = MANIFEST_SCHEMA_VERSION
    runId: StrictStr
    gitgaugeVersion: StrictStr
    configs: list[AgentConfig]
    """The agent configs as given."""
    configFiles: list[StrictStr]
    """Paths of the config files, in `-c` order."""
    tasks: list[StrictStr]
    """Task ids of the run."""
    testCommand: StrictStr
    setupCommand: StrictStr | None = None
    timeouts: Timeouts
    repeat: StrictInt = 1
    """Attempts per config x task pair."""
    history: StrictStr = "isolated"
    """`run.history` in force: isolated or full."""
    startedAt: StrictStr
    finishedAt: StrictStr | None = None
