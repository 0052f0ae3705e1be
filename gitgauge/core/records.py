"""Typed records that cross the disk boundary.

Field names are the on-disk keys, spelled as the spec spells them (`testCommand`, `testFiles`,
`baseSuitePasses`), so a file written by gitgauge reads the same as the documentation. Records
written by humans (`gitgauge.yaml`, agent configs) forbid unknown keys so a typo is an error.

One module on purpose, though it is past 400 lines: it is the file-format reference in code, and
a reader checking a key wants every record in one place (docs/file-formats.md follows it).
"""

from __future__ import annotations

import math
import re
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
    model_validator,
)

from gitgauge.core.prompt_template import check_template

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

TASK_SCHEMA_VERSION = 1
RESULT_SCHEMA_VERSION = 1
MANIFEST_SCHEMA_VERSION = 1


class _HumanRecord(BaseModel):
    """YAML a person writes: unknown keys and coerced types are errors, not guesses."""

    model_config = ConfigDict(extra="forbid", strict=True)


class MineSettings(_HumanRecord):
    last: StrictInt = Field(default=200, gt=0)
    """How many recent commits of HEAD `gitgauge mine` scans."""
    reruns: StrictInt = Field(default=1, ge=0)
    """How many times each decisive suite run is repeated to spot flaky tests (0: never)."""
    fixTypes: list[StrictStr] = Field(default_factory=list)
    """Extra commit-subject types (`type: ...`) that mark a bug fix, beside fix/bugfix/hotfix."""
    nonFixTypes: list[StrictStr] = Field(default_factory=list)
    """Extra commit-subject types that mark anything but a bug fix (house conventions)."""

    @field_validator("fixTypes", "nonFixTypes")
    @classmethod
    def _type_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
                raise ValueError(f"{name!r} is not a commit type (letters, digits, - and _)")
        return names

    @model_validator(mode="after")
    def _disjoint(self) -> MineSettings:
        both = {t.lower() for t in self.fixTypes} & {t.lower() for t in self.nonFixTypes}
        if both:
            raise ValueError(
                f"{', '.join(sorted(both))} is both in fixTypes and nonFixTypes; keep one"
            )
        return self

    merges: StrictBool = False
    """Also mine merge-conflict tasks from the merge commits among them (`mine --merges`)."""
    maxConflicts: StrictInt = Field(default=8, gt=0)
    """Merges with more conflict regions than this are skipped (GitGoodBench's cap)."""


MAX_TIMEOUT_MS = 86_400_000
"""A day. Past it a timeout is a unit mistake or a hang waiting to happen (9e10 ms is three
years of waiting for a suite that hangs)."""


class Timeouts(_HumanRecord):
    """Milliseconds, as the spec writes them; at most a day (`MAX_TIMEOUT_MS`)."""

    test: StrictInt = Field(default=300_000, gt=0)
    """Timeout of one `testCommand` run."""
    setup: StrictInt = Field(default=600_000, gt=0)
    """Timeout of one `setupCommand` run."""
    adapter: StrictInt = Field(default=900_000, gt=0)
    """Timeout of one agent adapter run."""

    @field_validator("test", "setup", "adapter")
    @classmethod
    def _at_most_a_day(cls, milliseconds: int) -> int:
        if milliseconds > MAX_TIMEOUT_MS:
            raise ValueError(
                f"{milliseconds} ms is more than a day; at most {MAX_TIMEOUT_MS} "
                "(timeouts are milliseconds)"
            )
        return milliseconds


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


class TestsSettings(_HumanRecord):
    """Where per-test reports come from, besides `$GITGAUGE_JUNIT_XML` and pytest's."""

    __test__ = False  # not a pytest test class

    junit: StrictStr | None = None
    """Glob (relative to the repository root) of JUnit XML files the suite writes in the worktree,
    e.g. `target/surefire-reports/*.xml`; deleted before every run, read after it."""

    @field_validator("junit")
    @classmethod
    def _relative_glob(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            parts = PurePosixPath(pattern).parts
            if not pattern or PurePosixPath(pattern).is_absolute() or ".." in parts:
                raise ValueError(
                    f"{pattern!r} must be a glob relative to the repository root "
                    "(like target/surefire-reports/*.xml)"
                )
        return pattern

    patterns: list[StrictStr] = Field(default_factory=list)
    """Extra globs for the project's test files (`*` crosses `/` in a pattern with a `/`)."""

    @field_validator("patterns")
    @classmethod
    def _not_empty(cls, patterns: list[str]) -> list[str]:
        if any(not pattern.strip() for pattern in patterns):
            raise ValueError("a pattern must not be empty")
        return patterns


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
    the task's base, so no git command reaches the fix; `full` the objects of your repository
    (the spec's behaviour: every commit, the fix included, is readable)."""
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    """Run agents, the scoring test commands and mine's test runs in a bubblewrap sandbox (one
    policy, so gold reproduces what mining saw): `auto` (default) when
    `bwrap` works on this machine, `bwrap` always (an error where it cannot), `none` never."""
    sandbox_network: StrictBool = True
    """Whether sandboxed commands share the network (agents need their API); false cuts it."""
    sandbox_home_writable: list[StrictStr] = Field(default_factory=list)
    """$HOME entries an agent may write inside the sandbox, besides its adapter's own (the
    claude CLI: `.claude/`, `.claude.json`); relative to $HOME, a trailing `/` for a directory."""

    @field_validator("sandbox_home_writable")
    @classmethod
    def _relative_to_home(cls, names: list[str]) -> list[str]:
        for name in names:
            path = PurePosixPath(name)
            if not name or path.is_absolute() or ".." in path.parts or not path.parts:
                raise ValueError(f"{name!r} must be a path relative to $HOME, like `.cache/`")
        return names

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
    tests: TestsSettings = Field(default_factory=TestsSettings)
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
    files: dict[StrictStr, StrictStr | None] = Field(default_factory=dict)
    """Workspace path -> local file or directory (relative to the config file) laid into every
    workspace before the agent starts; null removes the repository's own file. Put back to the
    task's base before scoring."""
    configDir: StrictStr | None = None
    """Local directory (relative to the config file) used as the agent's user-level configuration
    (`CLAUDE_CONFIG_DIR`), copied afresh for every pair."""
    env: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    """Extra environment variables for the agent; `${NAME}` takes NAME from gitgauge's own
    environment, `$$` is a literal `$`. Values are never written to run records."""
    prompt: StrictStr | None = None
    """Template around the task prompt: `{prompt}` plus `{taskId}`, `{base}`, `{subject}`,
    `{testFiles}`; `{{`/`}}` for literal braces."""

    @field_validator("prompt")
    @classmethod
    def _renderable(cls, template: str | None) -> str | None:
        if template is not None:
            check_template(template)
        return template

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        for name in env:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"{name!r} is not an environment variable name (letters, digits, _)"
                )
        return env

    pricing: Pricing | None = None
    """Token prices for AVG COST, used by adapters that report tokens but no cost (codex)."""


PromptQuality = Literal["rich", "title-only"]
TaskKind = Literal["fix", "merge"]
MergeDifficulty = Literal["easy", "medium", "hard"]


TASK_ID = re.compile(r"[0-9a-f]{8}(?:-[a-z0-9]+)*")
"""What `mining.classify.task_id` makes (8 hex digits of the commit, then the subject's ASCII
slug), and so the only ids a task file may have: an id becomes file and folder names."""
TASK_ID_MAX_LENGTH = 57
"""8 hex digits, a dash and a slug of at most 48 characters."""
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
    """`fix`: a fail-to-pass bug fix; `merge`: resolve the conflicts of a recorded merge."""
    other: StrictStr | None = None
    """Merge tasks: full sha of the merge's second parent, merged into `base`."""
    merge: StrictStr | None = None
    """Merge tasks: full sha of the recorded merge commit (the reference resolution)."""
    conflictFiles: list[StrictStr] = Field(default_factory=list)
    """Merge tasks: the paths re-merging `other` into `base` leaves in conflict."""
    conflictRegions: StrictInt | None = None
    """Merge tasks: conflict regions over those files (a modify/delete counts as one)."""
    difficulty: MergeDifficulty | None = None
    """Merge tasks, as GitGoodBench: easy 1 file 1 region, medium 1 file more, hard more files."""
    testsAtMerge: StrictBool | None = None
    """Merge tasks: whether `testCommand` passed at the recorded merge (False: exact match only)."""


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
    failToPassFailed: list[str] | None = None
    """FAIL_TO_PASS tests that did not pass (per-test scoring); None: scored by exit code."""
    passToPassFailed: list[str] | None = None
    """PASS_TO_PASS tests that did not pass: the regressions (per-test scoring)."""
    # -- merge-conflict tasks --
    kind: Literal["fix", "merge"] = "fix"
    """The task's kind, so reports keep fix and merge tasks apart."""
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
    sandbox: Literal["bwrap", "none"] | None = None
    """The sandbox this pair's agent and test commands ran in (on a Ray node: the one that node
    could give); None when the pair did not get that far, and in results written before
    gitgauge recorded it per pair (the manifest's `sandbox` then says)."""
    startedAt: str
    finishedAt: str


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
)


def implausible(result: RunResult) -> str | None:
    """`key: why` for the first number of `result` no pair could have measured (NaN, infinite,
    negative, past its cap), or None. Such a result would poison every average it joins."""
    limits = {"costUsd": (MAX_COST_USD, "USD"), "adapterSeconds": (MAX_SECONDS, "seconds")}
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


class RunManifest(BaseModel):
    """`.gitgauge/runs/<run>/run.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = MANIFEST_SCHEMA_VERSION
    runId: StrictStr
    gitgaugeVersion: StrictStr
    configs: list[AgentConfig]
    """The agent configs as given, `env` values replaced by `***` (names only)."""
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
    sandbox: StrictStr = "none"
    """The sandbox the run's agents and test commands ran in: bwrap or none. With the ray
    executor, where every node decides for itself, `run.sandbox` as asked: bwrap (every pair
    that ran, ran in it), none, or auto (each result's `sandbox` says)."""
    sandboxNetwork: StrictBool | None = None
    """With a sandbox (or `auto` on Ray): whether it shared the network (`run.sandbox_network`)."""
    startedAt: StrictStr
    finishedAt: StrictStr | None = None
    harness: dict[StrictStr, StrictStr] | None = None
    """Config name -> fingerprint of its harness (see `harness/<config>/harness.json`); None in
    runs made before gitgauge recorded harnesses."""
