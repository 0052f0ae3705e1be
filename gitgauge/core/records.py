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


class RaySettings(_HumanRecord):
    """`run.ray`: where and how pairs run with `run.executor: ray` (docs/cluster.md)."""

    address: StrictStr | None = None
    """The cluster's address (host:port); default `RAY_ADDRESS`, else a local Ray instance."""
    resources: dict[StrictStr, float] = Field(default_factory=lambda: {"CPU": 1.0})
    """Ray resources one pair needs (custom ones, like `agent: 1`, cap concurrent agents)."""
    env: list[StrictStr] = Field(default_factory=list)
    """Names of environment variables passed to workers (values never written anywhere)."""
    link: Literal["error", "skip"] = "error"
    """`worktree.link` on a node: an error (default), or `skip` to run without the links."""


class RunSettings(_HumanRecord):
    history: Literal["isolated", "full"] = "isolated"
    """What git history an agent's workspace holds: `isolated` (default) only the history up to
    the task's base, so no git command reaches the fix; `full` a worktree of your repository
    (the spec's behaviour: every commit, the fix included, is readable)."""
    executor: Literal["local", "ray"] = "local"
    """Where pairs run: `local` (this machine, `-j` at a time) or `ray` (a Ray cluster)."""
    ray: RaySettings = Field(default_factory=RaySettings)


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


class AgentConfig(_HumanRecord):
    """One harness configuration to benchmark (one YAML file per configuration)."""

    name: StrictStr = Field(min_length=1)
    """Label shown in the report; unique among the configs of a run."""
    adapter: StrictStr = Field(min_length=1)
    """Which adapter runs the agent: claude-code, script, gold or noop."""
    model: StrictStr | None = None
    """Passed to the adapter (claude-code: `--model`)."""
    args: list[StrictStr] = Field(default_factory=list)
    """Extra CLI arguments appended to the adapter invocation."""
    command: StrictStr | None = None
    """Shell command for the `script` adapter."""


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
    "setup",
    "adapter-exit",
    "adapter-timeout",
    "adapter-output",
    "escaped-workspace",
    "internal",
    "executor-lost",
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
