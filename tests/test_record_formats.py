"""The task and result files keep their format while the records are composed of field groups.

`tests/fixtures/formats/` holds files written by the records and the store as they were before
the groups (`fixtures/formats/README.md`): a fix, a merge, a rebase and a fixture task, a run's
manifest and a result of each kind, errors included, plus files of an older gitgauge. Each loads
through the store's own reading, and writing it again gives the same data, each value spelled
the same: the same text once the keys are in the order of the groups (the manifest, whose model
did not change, the same text as it is). Then the records themselves: every field of every
draft is the result's own field (one declaration, one type, one docstring), a draft refuses the
fields of other kinds, and a result is made from a draft strictly.
"""

from __future__ import annotations

import ast
import json
import shutil
import types
from pathlib import Path
from typing import Any, TypedDict

import pytest
import yaml
from pydantic import BaseModel, ValidationError

import gitgauge.core.records as records
from gitgauge.core.records import (
    ChainResultDraft,
    FixResultDraft,
    FixtureResultDraft,
    JudgeCheck,
    MergeResultDraft,
    ResultDraft,
    RunResult,
    Task,
)
from gitgauge.core.store import Store, dump_yaml
from gitgauge.kinds.chain.judge import Verdicts

ROOT = Path(__file__).resolve().parents[1]
FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
PACKAGE = ROOT / "gitgauge" / "core" / "records"
DRAFTS = (ResultDraft, FixResultDraft, MergeResultDraft, ChainResultDraft, FixtureResultDraft)


class Identity(TypedDict):
    """A result's required identity (`ResultIdentity`), as keyword arguments."""

    runId: str
    config: str
    task: str
    startedAt: str
    finishedAt: str


IDENTITY: Identity = {
    "runId": "20240501T093000Z-3fa9c2",
    "config": "sonnet",
    "task": "1a2b3c4d-fix-overflow-in-cumsum",
    "startedAt": "2024-05-01T09:30:01.204Z",
    "finishedAt": "2024-05-01T09:34:27.918Z",
}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A repository's `.gitgauge/` holding the fixtures' tasks and run."""
    for folder in ("tasks", "runs"):
        shutil.copytree(FORMATS / folder, tmp_path / ".gitgauge" / folder)
    return Store(tmp_path)


ADDED_SINCE: dict[str, Any] = {"outsideConflicts": []}
"""Keys the task and result records gained after the fixtures were written, with the value a
file without them reads as (`outsideConflicts`: issue 36)."""


def _as_now(data: dict[str, Any]) -> dict[str, Any]:
    """A fixture's data with the keys added since, at what a file without them reads as."""
    return {**data, **{key: value for key, value in ADDED_SINCE.items() if key not in data}}


def _in_order(data: dict[str, Any], order: list[str]) -> dict[str, Any]:
    assert sorted(data) == sorted(order)
    return {key: data[key] for key in order}


def _written(tmp_path: Path) -> Store:
    fresh = Store(tmp_path / "again")
    fresh.root.mkdir(parents=True)
    return fresh


# -- the files ------------------------------------------------------------------------------------


def test_every_task_file_loads_and_is_written_again_as_it_was(store: Store, tmp_path: Path) -> None:
    warnings: list[str] = []
    tasks = store.load_tasks(warn=warnings.append)
    assert warnings == []
    assert sorted(task.kind for task in tasks) == ["fix", "fixture", "merge", "rebase"]
    fresh = _written(tmp_path)
    for task in tasks:
        before = store.task_path(task.id).read_text(encoding="utf-8")
        after = fresh.save_task(task).read_text(encoding="utf-8")
        written = yaml.safe_load(after)
        assert written == _as_now(yaml.safe_load(before)), task.id
        assert after == dump_yaml(_in_order(_as_now(yaml.safe_load(before)), list(written))), (
            task.id
        )
    # A merge task mined before `outsideConflicts` existed reads as one whose merge changed
    # nothing beyond its conflicts.
    assert [task.outsideConflicts for task in tasks if task.kind == "merge"] == [[]]
    (per_test,) = [task for task in tasks if task.passToPassTests is not None]
    beside = store.task_tests_path(per_test.id).read_text(encoding="utf-8")
    assert fresh.task_tests_path(per_test.id).read_text(encoding="utf-8") == beside


def test_every_result_file_loads_and_is_written_again_as_it_was(
    store: Store, tmp_path: Path
) -> None:
    warnings: list[str] = []
    (run,) = store.load_runs(warn=warnings.append)
    assert warnings == []
    assert sorted((result.kind, result.status) for result in run.results) == [
        ("fix", "error"),
        ("fix", "error"),
        ("fix", "resolved"),
        ("fixture", "unresolved"),
        ("merge", "unresolved"),
        ("rebase", "resolved"),
    ]
    assert {result.errorKind for result in run.results} >= {"adapter-exit", "adapter-timeout"}
    fresh = _written(tmp_path)
    for result in run.results:
        where = store.result_path(result.runId, result.config, result.task, result.attempt)
        before = where.read_text(encoding="utf-8")
        after = fresh.save_result(result).read_text(encoding="utf-8")
        written = json.loads(after)
        assert written == _as_now(json.loads(before)), where.name
        reordered = _in_order(_as_now(json.loads(before)), list(written))
        assert after == json.dumps(reordered, indent=2, ensure_ascii=False) + "\n", where.name
    assert run.manifest is not None
    manifest = store.run_dir(run.run_id) / "run.json"
    again = fresh.save_manifest(run.manifest).read_text(encoding="utf-8")
    assert again == manifest.read_text(encoding="utf-8")


def test_files_of_an_older_gitgauge_load_as_they_did() -> None:
    """Keys it does not know are ignored, keys added since take their defaults: what the
    records made of these files before the groups (`*.loaded.*`), they make now."""
    legacy = FORMATS / "legacy"
    task = Task.model_validate(yaml.safe_load((legacy / "task.yaml").read_text(encoding="utf-8")))
    loaded_task = yaml.safe_load((legacy / "task.loaded.yaml").read_text(encoding="utf-8"))
    assert task.model_dump(mode="json") == _as_now(loaded_task)
    raw = json.loads((legacy / "result.json").read_text(encoding="utf-8"))
    result = RunResult.model_validate(raw)
    loaded_result = json.loads((legacy / "result.loaded.json").read_text(encoding="utf-8"))
    assert result.model_dump(mode="json") == _as_now(loaded_result)
    assert result.deleted == ["tests/conftest_extra.py"] and result.kind == "fix"


# -- the records ----------------------------------------------------------------------------------


def _declarations() -> dict[str, dict[str, bool]]:
    """Class name -> field name -> whether a docstring follows it, over the package's modules."""
    found: dict[str, dict[str, bool]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef):
                continue
            fields = found.setdefault(node.name, {})
            for index, statement in enumerate(node.body):
                if not isinstance(statement, ast.AnnAssign):
                    continue
                name = getattr(statement.target, "id", "")
                following = node.body[index + 1] if index + 1 < len(node.body) else None
                fields[name] = (
                    isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)
                )
    return found


def _declared_in(model: type[BaseModel], name: str) -> list[str]:
    declared = _declarations()
    return [cls.__name__ for cls in model.__mro__ if name in declared.get(cls.__name__, {})]


@pytest.mark.parametrize("draft", DRAFTS, ids=lambda draft: draft.__name__)
def test_every_draft_field_is_the_result_field(draft: type[ResultDraft]) -> None:
    """Same type, same default, and the one declaration (with its docstring) both compose."""
    for name, field in draft.model_fields.items():
        assert name in RunResult.model_fields, f"{draft.__name__}.{name} is no RunResult field"
        kept = RunResult.model_fields[name]
        assert (field.annotation, field.metadata) == (kept.annotation, kept.metadata), name
        if not field.is_required():
            assert field.get_default(call_default_factory=True) == kept.get_default(
                call_default_factory=True
            ), name
        owners = _declared_in(draft, name)
        assert len(owners) == 1 and owners == _declared_in(RunResult, name), (name, owners)


@pytest.mark.parametrize("model", [RunResult, Task], ids=lambda model: model.__name__)
def test_every_field_is_declared_once_with_a_docstring(model: type[BaseModel]) -> None:
    declared = _declarations()
    for name in model.model_fields:
        owners = _declared_in(model, name)
        assert len(owners) == 1, (name, owners)
        assert declared[owners[0]][name], f"{owners[0]}.{name} has no docstring"


def test_every_record_field_has_a_docstring() -> None:
    """What tests/test_conventions.py checks of one module, over the package."""
    undocumented = [
        f"{cls}.{name}"
        for cls, fields in _declarations().items()
        for name, documented in fields.items()
        if name != "model_config" and not documented
    ]
    assert undocumented == []


def test_the_drift_is_gone() -> None:
    """`earlierErrors` was a lax `int` in the drafts and a `StrictInt` in the result."""
    # mypy synthesizes each draft subclass an `__init__` of its fields (pydantic's
    # dataclass_transform), hiding ResultDraft.__init__, which defaults `status` to "error".
    draft = FixResultDraft(kind="fix")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        draft.update(earlierErrors="1")
    with pytest.raises(ValidationError):
        # A str on purpose, refused by the StrictInt (mypy refuses it too).
        RunResult(**IDENTITY, status="error", earlierErrors="1")  # type: ignore[arg-type]
    draft.update(earlierErrors=2)
    assert draft.earlierErrors == 2


@pytest.mark.parametrize(
    ("draft", "foreign"),
    [
        (ResultDraft, "reverted"),
        (FixResultDraft, "exact"),
        (FixResultDraft, "checkTree"),
        (MergeResultDraft, "regressed"),
        (ChainResultDraft, "failToPassFailed"),
        (FixtureResultDraft, "dropped"),
        (FixtureResultDraft, "deleted"),
        (ChainResultDraft, "runId"),
    ],
)
def test_a_draft_refuses_the_fields_its_kind_does_not_fill(
    draft: type[ResultDraft], foreign: str
) -> None:
    made = draft(kind="fix", sandbox="none")
    with pytest.raises(ValidationError, match=foreign):
        made.update(**{foreign: True})
    assert draft.model_config.get("extra") == "forbid"
    assert draft.model_config.get("validate_assignment") is True
    assert made.status == "error"  # a pair that stops before grading is an error


def test_a_result_is_read_leniently() -> None:
    assert RunResult.model_config.get("extra") == "ignore"
    assert Task.model_config.get("extra") == "ignore"
    read = RunResult.model_validate({**IDENTITY, "status": "resolved", "fromTheFuture": 1})
    assert not hasattr(read, "fromTheFuture")


def test_from_draft_makes_the_result_the_pair_made_before() -> None:
    # `status` defaults in ResultDraft.__init__, hidden from mypy: see test_the_drift_is_gone.
    draft = MergeResultDraft(kind="merge", sandbox="bwrap")  # type: ignore[call-arg]
    draft.update(status="unresolved", exact=False, markerFiles=["README.md"], costUsd=0.25)
    made = RunResult.from_draft(draft, attempt=2, **IDENTITY)
    assert made == RunResult(attempt=2, **IDENTITY, **draft.fields())
    masked = RunResult.from_draft(
        draft, mask=lambda fields: {**fields, "markerFiles": ["***"]}, **IDENTITY
    )
    assert masked.markerFiles == ["***"] and masked.runId == IDENTITY["runId"]


def test_from_draft_refuses_a_key_the_result_does_not_have() -> None:
    """The lenient reading would drop it: a draft field forgotten in RunResult is a bug that
    shows."""

    class GainedAField(FixResultDraft):
        notInTheResult: int = 0
        """A field a draft gained and RunResult did not."""

    # `status` defaults in ResultDraft.__init__, hidden from mypy: see test_the_drift_is_gone.
    draft = GainedAField(kind="fix")  # type: ignore[call-arg]
    draft.update(notInTheResult=3)
    with pytest.raises(ValidationError, match="notInTheResult"):
        RunResult.from_draft(draft, **IDENTITY)
    with pytest.raises(ValidationError, match="nodeName"):
        # `status`: see test_the_drift_is_gone.
        RunResult.from_draft(FixResultDraft(), nodeName="n1", **IDENTITY)  # type: ignore[call-arg]


def test_the_judges_verdicts_are_fields_of_the_records_they_fill() -> None:
    """`Verdicts.fields` fills the manifest's `JudgeCheck`, which reads leniently (a misspelt
    key would vanish), and, prefixed, a chain pair's result: every key is a field of each."""
    verdicts = Verdicts("tie", "win", None, 10, 2, 0.5)
    assert set(verdicts.fields()) <= set(JudgeCheck.model_fields)
    assert set(verdicts.fields("judge")) <= set(RunResult.model_fields)
    check = JudgeCheck(task="t", model="m", backend="claude-cli", **verdicts.fields())
    assert (check.asFirst, check.asSecond, check.costUsd) == ("tie", "win", 0.5)


# -- the page -------------------------------------------------------------------------------------


def test_the_field_tables_of_the_file_formats_page_are_generated(gen: types.ModuleType) -> None:
    page = (ROOT / "docs/file-formats.md").read_text(encoding="utf-8")
    assert gen.render_formats_page(page, records, ROOT) == page
    for model in (Task, RunResult):
        for name, field in model.model_fields.items():
            assert (f"| `{name}` |" in page) is not field.exclude, name
    assert "| `behaviour.firstEditSeconds` |" in page
    assert "### Fix, merge and chain results" in page
    edited = page.replace("| `exactTree` |", "| `exactTrees` |")
    assert gen.render_formats_page(edited, records, ROOT) == page
