"""A task file, `.gitgauge/tasks/<id>.yaml`: the fields every task has, then one group per kind.

`Task` composes the groups; each field is declared once, in its group, with the docstring
docs/file-formats.md shows (`docs/gen_reference.py` writes the tables from them, a section per
group, in the order of the file). A mention of `docs/<page>.md` in a docstring becomes a link there.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr

from gitgauge.core.records.group import FieldGroup

TASK_SCHEMA_VERSION = 1

PromptQuality = Literal["rich", "title-only"]
TaskKind = StrictStr
"""A registered kind's name (`core.kinds.KINDS`: `fix`, `merge`, `rebase`, `commits`, `fixture`
are built in); the store refuses a task file whose kind no kind registered."""
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


class TaskFields(FieldGroup):
    """Every task.

    What every task file holds, whatever its kind; the kind's own keys follow."""

    schemaVersion: StrictInt = TASK_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    id: StrictStr
    """The first 8 hex digits of the fix's sha, then `-` and an ASCII slug of its subject
    (`[0-9a-f]{8}(-[a-z0-9]+)*`, at most 57 characters; a fixture task's: see `fixtureId`); also
    the file name."""
    base: StrictStr
    """Full sha of the fix's parent: where an agent starts (every sha of a task file is a full
    one: 40 or 64 lowercase hex digits). Empty for a fixture task, which brings its own
    repository."""
    fix: StrictStr
    """Full sha of the fix commit (a merge task's recorded merge, a chain task's newest commit;
    empty for a fixture task)."""
    subject: StrictStr
    """Subject line of the fix commit."""
    body: StrictStr = ""
    """Body of the fix commit message (may be empty)."""
    prompt: StrictStr
    """What the agent is asked to do: `Fix the following bug:\\n\\n<subject>\\n\\n<body>`, or a
    rewritten prompt."""
    originalPrompt: StrictStr | None = None
    """The commit-message prompt, kept when `prompt` was rewritten."""
    testFiles: list[StrictStr]
    """Test paths the fix touched (added, modified, deleted, both sides of renames), laid over
    the agent's work from `fix` to score it. Paths here, in `conflictFiles` and in `file` are
    relative to the repository root, as git writes them."""
    promptQuality: PromptQuality
    """`rich` when the body has 40 or more non-whitespace characters, else `title-only`."""
    testCommand: StrictStr | None = None
    """The testCommand that proved this task."""
    setupCommand: StrictStr | None = None
    """The setupCommand in force when this task was proved."""
    minedAt: StrictStr
    """UTC time of verification, ISO 8601."""
    rewriteModel: StrictStr | None = None
    """Model id that rewrote `prompt` (None: the prompt is the commit message's). This and the
    other `rewrite*` keys are set when the prompt was rewritten: see
    docs/guide/mining.md#spoiler-free-prompts-rewrite-prompts."""
    rewriteBackend: Literal["anthropic-sdk", "claude-cli"] | None = None
    """How the rewrite was asked: the Anthropic Python SDK or the claude CLI."""
    rewriteInputTokens: int | None = None
    """Input tokens the rewrite used (cached ones included), as the backend reported them."""
    rewriteOutputTokens: int | None = None
    """Output tokens the rewrite used."""
    rewriteCostUsd: float | None = None
    """Cost the backend reported (the claude CLI's `total_cost_usd`; the SDK reports none)."""
    kind: TaskKind = "fix"
    """`fix`: a fail-to-pass bug fix (the default: files without the key read as fix tasks);
    `merge`: resolve the conflicts of a recorded merge (docs/guide/merge-tasks.md); `rebase`,
    `commits`: clean up a file-commit chain's history, or commit its changes as a series
    (docs/guide/chain-tasks.md); `fixture`: a git-skill fixture (GitBench's format) in a
    repository of its own (docs/guide/fixture-tasks.md)."""
    difficulty: MergeDifficulty | FixtureDifficulty | None = None
    """Merge tasks, as GitGoodBench: easy 1 file 1 region, medium 1 file more, hard more files;
    chain tasks, by `purity`: easy from 0.9, medium from 0.7, hard below; fixture tasks: the
    fixture's own (trivial, easy, medium, hard, expert); None for fix tasks."""


class FixTaskFields(FieldGroup):
    """Fix tasks (`kind: fix`).

    How `mine` proved the fix: the base's own suite and, for per-test tasks, each test's verdict
    at the parent and at the fix (docs/guide/per-test-verdicts.md)."""

    baseSuitePasses: StrictBool | None = None
    """Whether the base commit's own, unmodified suite passed at mine time (None: unknown, and
    no regression check)."""
    baseTimedOut: StrictBool = False
    """Whether the failing run at the base (with the fix's tests) ended by timeout."""
    failToPass: list[StrictStr] | None = None
    """Per-test tasks: the tests that pass at the fix and not at the parent with the fix's tests
    (a test missing from the parent's report only when it is one of the fix's own); None: the
    task was proved, and is scored, by exit codes."""
    passToPass: StrictInt | None = None
    """Per-test tasks: how many tests pass at the parent and at the fix; their names are in
    `<id>.tests.json` (without that file the regression check is unknown, and
    `export --format swebench` skips the task)."""
    passToPassTests: list[StrictStr] | None = Field(default=None, exclude=True)
    """The PASS_TO_PASS names (kept beside the task file, not in it: there may be thousands)."""
    failingBoth: list[StrictStr] = Field(default_factory=list)
    """Tests that fail at the fix and at the parent: ignored by scoring."""
    flaky: list[StrictStr] = Field(default_factory=list)
    """Tests whose outcome changed between two runs of one commit (`mine.reruns`): ignored by
    scoring."""
    noTestPassedAtParent: StrictBool = False
    """No test passed at the parent: the fix may repair the environment, not a bug; review it."""
    notRunAtParent: StrictInt = 0
    """Per-test tasks: tests passing at the fix that did not run at the parent (missing from its
    report, and of no test file of the fix): neither FAIL_TO_PASS nor PASS_TO_PASS (0 in files
    written before it existed)."""
    failToPassOutsideFix: StrictBool = False
    """Per-test tasks: FAIL_TO_PASS holds none of the fix's own tests: the failing tests live in
    files the fix did not change (neither their test file nor a data file their parameter
    names): real only if those tests failed before the fix for the reason it repairs; review it."""


class MergeTaskFields(FieldGroup):
    """Merge tasks (`kind: merge`).

    A recorded merge to resolve again (docs/guide/merge-tasks.md): `base` is its first parent,
    and `fix` holds the recorded merge too."""

    other: StrictStr | None = None
    """Full sha of the merge's second parent, merged into `base` (the first parent)."""
    merge: StrictStr | None = None
    """Full sha of the recorded merge commit, the reference resolution (`fix` holds the same
    sha)."""
    conflictFiles: list[StrictStr] = Field(default_factory=list)
    """The paths re-merging `other` into `base` leaves in conflict."""
    conflictRegions: StrictInt | None = None
    """Conflict regions over those files (a modify/delete counts as one)."""
    outsideConflicts: list[StrictStr] = Field(default_factory=list)
    """The paths the recorded merge changed beyond git's own merge of `base` and `other` and
    the conflict resolution (an evil merge's edits, a test file it renamed: both paths of a
    rename), sorted: where its tree differs from `git merge-tree --write-tree` of the parents
    outside `conflictFiles`. Gold writes them; `exactTree` needs them, `exact` and `resolved`
    do not (docs/guide/merge-tasks.md). Empty in files mined before it existed."""
    testsAtMerge: StrictBool | None = None
    """Whether `testCommand` passed at the recorded merge (False: scored by exact match only)."""


class ChainTaskFields(FieldGroup):
    """Chain tasks (`kind: rebase`, `kind: commits`).

    A file-commit chain (docs/guide/chain-tasks.md): `fix` holds its newest commit, `base` where
    the agent starts: the newest commit (`rebase`) or the chain's parent (`commits`)."""

    chain: list[StrictStr] = Field(default_factory=list)
    """The chain's commits, oldest first (full shas); the first one's parent is the chain's
    parent."""
    chainSubjects: list[StrictStr] = Field(default_factory=list)
    """The subjects of those commits, oldest first (the original series)."""
    file: StrictStr | None = None
    """The file every commit of the chain modifies."""
    purity: float | None = None
    """The share of the chain's changed lines that are in `file` (0 to 1)."""
    testsAtNewest: StrictBool | None = None
    """Whether `testCommand` passed at the chain's newest commit when mined
    (`chains.testEachCommit` tests a series commit by commit only then)."""
    chainParent: StrictStr | None = None
    """Full sha of the chain's parent, which the agent's series must sit on."""


class FixtureTaskFields(FieldGroup):
    """Fixture tasks (`kind: fixture`).

    A git-skill fixture in GitBench's format, imported by `gitgauge import gitbench`
    (docs/guide/fixture-tasks.md), in a repository of its own: `base` and `fix` are empty."""

    benchmark: StrictStr | None = None
    """The benchmark the fixture belongs to: its folder in the pack."""
    fixtureId: StrictStr | None = None
    """The fixture's own id, as its file gives it; the task's `id` is
    `gitbench-<benchmark>-<fixtureId>`, both slugged to `[a-z0-9_]` between dashes (at most 120
    characters)."""
    tags: list[StrictStr] = Field(default_factory=list)
    """The fixture's tags."""
    purpose: StrictStr | None = None
    """What skill the fixture tests, in its author's words."""
    contentHash: StrictStr | None = None
    """sha256 of the fixture's content, key order ignored (a re-import compares it)."""
    source: StrictStr | None = None
    """The fixture file it was imported from."""
    mode: FixtureMode | None = None
    """`agent` (works in the repository) or `text` (GitBench's protocol: the context in the
    prompt, the final message is the answer): the mode it runs in unless `run --mode` says
    otherwise (`command_equivalence` fixtures: always `text`)."""
    nonDiscriminating: StrictBool | None = None
    """The noop baseline passed it at import (its assertions hold on the untouched repository),
    so passing it says nothing of an agent."""
    fixture: dict[str, Any] | None = None
    """The fixture itself (`setup`, `prompt`, `expected`, `scoring`, ...), as imported; checked
    again whenever the task is read."""


# Bases from the last group to the first: pydantic orders the fields by the reversed MRO, so a
# file reads every task's keys, then the fix, merge, chain and fixture groups.
class Task(FixtureTaskFields, ChainTaskFields, MergeTaskFields, FixTaskFields, TaskFields):
    """A verified task: `.gitgauge/tasks/<id>.yaml`."""

    model_config = ConfigDict(extra="ignore", defer_build=False)
