"""The records people write: `gitgauge.yaml` (`RepoConfig`) and agent configs (`AgentConfig`).

Field names are the keys a person types, spelled as the spec spells them (`testCommand`,
`setupCommand`, `mine.last`, `timeouts.test`, `worktree.link`), and every record forbids unknown
keys and coerced types, so a typo is an error that names the key. Every field's docstring is the
reference (docs/reference/config.md is generated from it). What
gitgauge itself writes is in `core/records.py`.
"""

from __future__ import annotations

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


class _HumanRecord(BaseModel):
    """YAML a person writes: unknown keys and coerced types are errors, not guesses."""

    model_config = ConfigDict(extra="forbid", strict=True)


MAX_CHAIN_LENGTH = 20
"""The longest chain `mine.chainLength` may ask for: a series of more is no longer a cleanup."""


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
    chains: StrictBool = False
    """Also mine commit-history tasks (`kind: rebase`, `kind: commits`) from file-commit chains
    (`mine --chains`)."""
    chainLength: list[StrictInt] = Field(default_factory=lambda: [3, 6])
    """`[shortest, longest]` commits of a chain (GitGoodBench's 3 to 6)."""
    chainPurity: float = Field(default=0.5, ge=0.0, le=1.0)
    """Chains whose share of changed lines in their file is lower than this are skipped."""
    executor: Literal["local", "ray"] = "local"
    """Where candidates are verified: `local` (this machine, `-j` at a time) or `ray` (one Ray
    task per candidate on a cluster, with the `run.ray` settings: docs/cluster.md)."""

    @field_validator("chainLength")
    @classmethod
    def _chain_length(cls, bounds: list[int]) -> list[int]:
        if len(bounds) != 2 or not 2 <= bounds[0] <= bounds[1] <= MAX_CHAIN_LENGTH:
            raise ValueError(
                f"{bounds} is not [shortest, longest] with 2 <= shortest <= longest <= "
                f"{MAX_CHAIN_LENGTH} (like [3, 6])"
            )
        return bounds


class ChainsSettings(_HumanRecord):
    """`chains`: how `run` scores commit-history tasks (`kind: rebase`, `kind: commits`)."""

    testEachCommit: StrictBool = False
    """Build and test every commit of an agent's series (when the suite passes at the chain's
    newest commit) and record the share that pass: a bisectable history."""
    judge: StrictBool = False
    """Ask a model to compare each series with the original, both orders (`run --judge`); it
    is sent the repository's commits (trusted repositories only)."""
    judgeModel: StrictStr = Field(default="haiku", min_length=1)
    """The judge's model: haiku, sonnet, opus or a model id (`run --judge-model`)."""


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
    """Extra globs for the project's test files (`*` crosses `/` in a pattern with a `/`);
    gitgauge adds `folder/*` for each folder your pytest `testpaths` names."""

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


class Limits(_HumanRecord):
    """`run.limits`: how much of an agent's work crosses to the grader. A pair over a limit is
    not graded: it is `error (patch-too-large)`, with the size and the biggest files named."""

    patchBytes: StrictInt = Field(default=20 * 1024 * 1024, gt=0)
    """The largest patch of an agent's work that is graded, in bytes (as `git diff --binary`
    writes it; 20 MiB by default)."""
    files: StrictInt = Field(default=2000, gt=0)
    """The most files an agent's patch may change."""


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

    limits: Limits = Field(default_factory=Limits)
    """How large an agent's patch may be and still be graded."""
    executor: Literal["local", "ray"] = "local"
    """Where pairs run: `local` (this machine, `-j` at a time) or `ray` (a Ray cluster)."""
    ray: RaySettings = Field(default_factory=RaySettings)
    """With `executor: ray`: the cluster and what a pair asks of it."""


class RepoConfig(_HumanRecord):
    """`gitgauge.yaml` at the repository root."""

    testCommand: StrictStr = Field(min_length=1)
    """Shell command that runs the test suite; exit 0 means the suite passes."""
    setupCommand: StrictStr | None = None
    """Shell command run in each worktree before `testCommand` (e.g. installing dependencies)."""
    env: dict[StrictStr, StrictStr | None] = Field(default_factory=dict)
    """Variables for `setupCommand` and `testCommand`, beyond the few gitgauge passes (PATH,
    HOME, locale, toolchain locations; docs/guide/running.md): `NAME: null` passes NAME as it
    is in gitgauge's environment (when it is set), `NAME: value` sets it, `${OTHER}` in a
    value takes OTHER from gitgauge's environment and `$$` is a literal `$`. A name listed here
    reaches the suite even when it looks secret (`*_TOKEN`); its value is still masked in
    stored logs."""

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str | None]) -> dict[str, str | None]:
        for name in env:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"{name!r} is not an environment variable name (letters, digits, _)"
                )
        return env

    mine: MineSettings = Field(default_factory=MineSettings)
    """How `gitgauge mine` scans and verifies (docs/guide/mining.md)."""
    timeouts: Timeouts = Field(default_factory=Timeouts)
    """Time limits of one setup, test and agent run, in milliseconds."""
    worktree: WorktreeSettings = Field(default_factory=WorktreeSettings)
    """What every checkout links from your checkout."""
    tests: TestsSettings = Field(default_factory=TestsSettings)
    """Your project's own test files and per-test reports."""
    run: RunSettings = Field(default_factory=RunSettings)
    """How `gitgauge run` isolates and places its pairs."""
    chains: ChainsSettings = Field(default_factory=ChainsSettings)
    """How `gitgauge run` scores commit-history tasks (docs/guide/chain-tasks.md)."""


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
    harnessFiles: list[StrictStr] | None = None
    """The workspace paths `gitgauge ci` compares between two refs (a trailing `/` names a
    directory); default `CLAUDE.md`, `AGENTS.md`, `.claude/`. `run` ignores it."""
