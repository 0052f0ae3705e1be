"""The records gitgauge writes: tasks (`.gitgauge/tasks/<id>.yaml`), results
(`results/<config>/<task>.json`), run manifests (`run.json`), and the drafts a pair fills.

Field names are the on-disk keys, spelled as the spec spells them (`testCommand`, `testFiles`,
`baseSuitePasses`), so a file written by gitgauge reads the same as the documentation. Every
persisted field has a docstring: the file-format reference in code, from which
`docs/gen_reference.py` writes the field tables of docs/file-formats.md. Records are read
leniently (`extra="ignore"`: a newer gitgauge may add fields) and checked as data (ids, paths,
numbers: see `Task`, `implausible`). What people write is in `core/schema.py`.

- `group.py`: `FieldGroup`, the base of every group of fields;
- `task.py`: `Task`, composed of the fields every task has and one group per kind;
- `fields.py`: the groups of a result's fields, each declared once;
- `result.py`: `RunResult` (every group) and the drafts (the common group and their kind's);
- `manifest.py`: `RunManifest` and the judge's position check.
"""

from __future__ import annotations

from gitgauge.core.records.fields import (
    AgentBehaviour,
    ChainResultFields,
    CommonResultFields,
    ErrorCause,
    ErrorKind,
    FixResultFields,
    FixtureResultFields,
    JudgeVerdict,
    MergeResultFields,
    ProtectionFields,
    ResultStatus,
)
from gitgauge.core.records.group import FieldGroup
from gitgauge.core.records.manifest import MANIFEST_SCHEMA_VERSION, JudgeCheck, RunManifest
from gitgauge.core.records.result import (
    CHAIN_CHECKS,
    MAX_COST_USD,
    MAX_COUNT,
    MAX_SECONDS,
    RESULT_SCHEMA_VERSION,
    ChainResultDraft,
    FixResultDraft,
    FixtureResultDraft,
    MergeResultDraft,
    OlderResultFields,
    ResultDraft,
    ResultIdentity,
    RunResult,
    implausible,
    wall_seconds,
)
from gitgauge.core.records.task import (
    FIXTURE_TASK_ID,
    FIXTURE_TASK_ID_MAX_LENGTH,
    FULL_SHA,
    TASK_ID,
    TASK_ID_MAX_LENGTH,
    TASK_SCHEMA_VERSION,
    ChainTaskFields,
    FixTaskFields,
    FixtureDifficulty,
    FixtureMode,
    FixtureTaskFields,
    MergeDifficulty,
    MergeTaskFields,
    PromptQuality,
    Task,
    TaskFields,
    TaskKind,
)

__all__ = [
    "CHAIN_CHECKS",
    "FIXTURE_TASK_ID",
    "FIXTURE_TASK_ID_MAX_LENGTH",
    "FULL_SHA",
    "MANIFEST_SCHEMA_VERSION",
    "MAX_COST_USD",
    "MAX_COUNT",
    "MAX_SECONDS",
    "RESULT_SCHEMA_VERSION",
    "TASK_ID",
    "TASK_ID_MAX_LENGTH",
    "TASK_SCHEMA_VERSION",
    "AgentBehaviour",
    "ChainResultDraft",
    "ChainResultFields",
    "ChainTaskFields",
    "CommonResultFields",
    "ErrorCause",
    "ErrorKind",
    "FieldGroup",
    "FixResultDraft",
    "FixResultFields",
    "FixTaskFields",
    "FixtureDifficulty",
    "FixtureMode",
    "FixtureResultDraft",
    "FixtureResultFields",
    "FixtureTaskFields",
    "JudgeCheck",
    "JudgeVerdict",
    "MergeDifficulty",
    "MergeResultDraft",
    "MergeResultFields",
    "MergeTaskFields",
    "OlderResultFields",
    "PromptQuality",
    "ProtectionFields",
    "ResultDraft",
    "ResultIdentity",
    "ResultStatus",
    "RunManifest",
    "RunResult",
    "Task",
    "TaskFields",
    "TaskKind",
    "implausible",
    "wall_seconds",
]
