"""The `.gitgauge/` layout, atomic writes and schema-version checks.

Every write goes to a temporary file in the same directory and is `os.replace`d into place, so a
crash or a full disk leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gitgauge.core import kinds
from gitgauge.core.errors import GitGaugeError, TaskError
from gitgauge.core.paths import repository_path_problem
from gitgauge.core.records import (
    FULL_SHA,
    MANIFEST_SCHEMA_VERSION,
    RESULT_SCHEMA_VERSION,
    TASK_ID,
    TASK_SCHEMA_VERSION,
    RunManifest,
    RunResult,
    Task,
    implausible,
)

STATE_DIR = ".gitgauge"
RUN_TIMESTAMP_FORMAT = "%Y%m%dT%H%M%SZ"
_SAFE_DIR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ERRORED_PREFIX = "errored-"
"""`logs/<config>/<task>/errored-N/`: an errored record that `--retry-errors` ran again."""
_KEPT_IN_LOG_DIR = re.compile(r"(?:attempt|errored)-\d+")
"""A log folder's entries that belong to other records: later attempts and kept errors."""

Record = TypeVar("Record", bound=BaseModel)


class StorageError(GitGaugeError):
    """A file under `.gitgauge/` could not be written."""


def current_umask() -> int:
    """The process's umask, read without changing it (`os.umask` can only be read by setting it,
    which races with threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _umask_guard:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


_umask_guard = threading.Lock()


def _ordinary_mode(path: Path) -> int:
    """The mode a plain `open(path, "w")` would leave: an existing file keeps its own, a new one
    gets 0666 less the umask. (`mkstemp` makes 0600 files, which a teammate, a CI container under
    another uid or a web server publishing the HTML report could not read.)"""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    try:
        # A full disk, a read-only directory or a file where a directory should be fails here
        # already, before any temporary file exists.
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise StorageError(f"could not write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _ordinary_mode(path))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError):
            raise StorageError(f"could not write {path}: {error.strerror or error}") from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        # A path of bytes that are not UTF-8 (read through surrogateescape): `\udcff` escapes
        # are ASCII, valid JSON, and read back as the same path.
        data = (json.dumps(value, indent=2) + "\n").encode("ascii")
    atomic_write_bytes(path, data)


def ensure_state_dir(state_dir: Path) -> None:
    """Create `.gitgauge/` with its `.gitignore`, so it never shows up in `git status` even
    when the user wrote gitgauge.yaml by hand instead of running `gitgauge init`."""
    state_dir.mkdir(parents=True, exist_ok=True)
    ignore = state_dir / ".gitignore"
    if not ignore.exists():
        atomic_write_text(ignore, "*\n")


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (prompts, bodies) as `|` blocks, so task files are easy to review."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def dump_yaml(value: Any) -> str:
    return yaml.dump(value, Dumper=_BlockDumper, allow_unicode=True, sort_keys=False, width=100)


class Store:
    """`.gitgauge/` of one repository."""

    def __init__(self, repo_root: Path) -> None:
        self.root = repo_root / STATE_DIR
        self.tasks_dir = self.root / "tasks"
        self.runs_dir = self.root / "runs"
        self.judged_dir = self.root / "judged"

    def task_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.yaml"

    def task_tests_path(self, task_id: str) -> Path:
        """The PASS_TO_PASS names of a per-test task, beside its YAML (too many to review)."""
        return self.tasks_dir / f"{task_id}.tests.json"

    def save_task(self, task: Task) -> Path:
        path = self.task_path(task.id)
        if task.passToPassTests is not None:
            atomic_write_json(
                self.task_tests_path(task.id),
                {"schemaVersion": TASK_SCHEMA_VERSION, "passToPass": task.passToPassTests},
            )
        atomic_write_text(path, dump_yaml(task.model_dump(mode="json")))
        return path

    def load_task_file(self, path: Path) -> Task:
        """One task file; raise `TaskError` naming the file when it cannot be used."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            raise TaskError(f"{path}: cannot read task file ({_short(error)})") from None
        if not isinstance(raw, dict):
            raise TaskError(f"{path}: not a task file (expected a mapping)")
        version = raw.get("schemaVersion")
        if isinstance(version, int) and version > TASK_SCHEMA_VERSION:
            raise TaskError(
                f"{path}: schemaVersion {version} is newer than this gitgauge understands "
                f"({TASK_SCHEMA_VERSION}); upgrade gitgauge"
            )
        try:
            task = Task.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"]) or "(top level)"
            raise TaskError(f"{path}: {key}: {first['msg']}") from None
        problem = _task_problem(path, task)
        if problem is not None:
            raise TaskError(f"{path}: {problem}")
        if task.passToPass is not None and task.passToPassTests is None:
            task.passToPassTests = _load_test_names(path.with_suffix(".tests.json"))
        return task

    def load_tasks(self, *, warn: Callable[[str], None]) -> list[Task]:
        """Every usable task, sorted by id; unusable files are skipped with a warning."""
        tasks: list[Task] = []
        if not self.tasks_dir.is_dir():
            return tasks
        for path in sorted(self.tasks_dir.glob("*.yaml")):
            try:
                tasks.append(self.load_task_file(path))
            except TaskError as error:
                warn(f"skipping {error}")
        return sorted(tasks, key=lambda task: task.id)

    def judgement_path(self, key: str) -> Path:
        return self.judged_dir / f"{key}.json"

    def load_judgement(self, key: str) -> str | None:
        """A short description of an earlier mine's verdict for this key, or None."""
        try:
            record = json.loads(self.judgement_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict):
            return None
        if record.get("verdict") == "verified":
            return f"verified as {record.get('task')} (task file since removed)"
        return f"rejected ({record.get('reason')})"

    def mined_fix_shas(self, *, warn: Callable[[str], None]) -> set[str]:
        # A chain task's `fix` is its newest commit, which may be a bug fix of its own.
        return {task.fix for task in self.load_tasks(warn=warn) if not task.chain}

    # -- runs: runs/<run-id>/run.json, results/<config>/<task>.json, logs/<config>/<task>/ --

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    def result_path(self, run_id: str, config_name: str, task_id: str, attempt: int = 1) -> Path:
        folder = self.run_dir(run_id) / "results" / config_dir_name(config_name)
        return folder / result_file_name(task_id, attempt)

    def log_dir(self, run_id: str, config_name: str, task_id: str, attempt: int = 1) -> Path:
        folder = self.run_dir(run_id) / "logs" / config_dir_name(config_name) / task_id
        return folder if attempt == 1 else folder / f"attempt-{attempt}"

    def set_aside(self, run_id: str, config_name: str, task_id: str, attempt: int = 1) -> int:
        """Move a finished pair's result and log files into `errored-N/` of its log folder
        (before `run --retry-errors` runs it again, so the first record is kept); N, from 1."""
        log_dir = self.log_dir(run_id, config_name, task_id, attempt)
        number = 1
        while (log_dir / f"{ERRORED_PREFIX}{number}").exists():
            number += 1
        target = log_dir / f"{ERRORED_PREFIX}{number}"
        try:
            target.mkdir(parents=True)
            for entry in sorted(log_dir.iterdir()):
                if entry != target and not _KEPT_IN_LOG_DIR.fullmatch(entry.name):
                    entry.rename(target / entry.name)
            self.result_path(run_id, config_name, task_id, attempt).rename(target / "result.json")
        except OSError as error:
            raise StorageError(
                f"could not keep the errored record of {config_name} on {task_id} in {target}: "
                f"{error.strerror or error}"
            ) from None
        return number

    def load_result(self, path: Path, *, warn: Callable[[str], None]) -> RunResult | None:
        """A finished pair's result, or None when there is none; one that cannot be used is
        skipped with a warning (`run --resume` then runs its pair again)."""
        if not path.exists():
            return None
        loaded = _load_result(path)
        if isinstance(loaded, str):
            warn(f"skipping {loaded}; its pair runs again")
            return None
        return loaded

    def load_run(self, run_id: str, *, warn: Callable[[str], None]) -> StoredRun | None:
        for run in self.load_runs(warn=warn):
            if run.run_id == run_id:
                return run
        return None

    def save_manifest(self, manifest: RunManifest) -> Path:
        path = self.run_dir(manifest.runId) / "run.json"
        atomic_write_json(path, manifest.model_dump(mode="json"))
        return path

    def save_result(self, result: RunResult) -> Path:
        path = self.result_path(result.runId, result.config, result.task, result.attempt)
        atomic_write_json(path, result.model_dump(mode="json"))
        return path

    def load_runs(self, *, warn: Callable[[str], None]) -> list[StoredRun]:
        """Every run with its manifest and results, oldest first; unreadable files are skipped."""
        runs: list[StoredRun] = []
        if not self.runs_dir.is_dir():
            return runs
        for run_dir in self.runs_dir.iterdir():
            if not run_dir.is_dir():
                continue
            loaded = _load_record(run_dir / "run.json", RunManifest, MANIFEST_SCHEMA_VERSION)
            manifest = loaded if isinstance(loaded, RunManifest) else None
            if isinstance(loaded, str) and (run_dir / "run.json").exists():
                warn(f"skipping {loaded}")
            results: list[RunResult] = []
            for path in sorted(run_dir.glob("results/*/*.json")):
                result = _load_result(path)
                if isinstance(result, str):
                    warn(f"skipping {result}")
                else:
                    results.append(result)
            if manifest is not None or results:
                runs.append(StoredRun(run_dir.name, manifest, results))
        return sorted(runs, key=lambda run: run.sort_key)


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    manifest: RunManifest | None
    """None when run.json is missing or unreadable (the results still count)."""
    results: list[RunResult]

    @property
    def sort_key(self) -> tuple[str, str, str]:
        # The id starts with a one-second timestamp; the manifest's start time orders two runs
        # started within the same second.
        started = self.manifest.startedAt if self.manifest is not None else ""
        return (self.run_id[: len("20240101T000000Z")], started, self.run_id)


def new_run_id(now: datetime | None = None) -> str:
    """`<UTC timestamp>-<6 hex digits>`: sorts by start time, unique across parallel runs."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{moment.strftime(RUN_TIMESTAMP_FORMAT)}-{secrets.token_hex(3)}"


def config_dir_name(name: str) -> str:
    """A directory name for an agent config: the name itself when it is safe on every file
    system, else a slug of it plus a short hash of the real name (so two names never share one).
    """
    if _SAFE_DIR_NAME.fullmatch(name) and not name.endswith("."):
        return name
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40] or "config"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}"


def result_file_name(task_id: str, attempt: int) -> str:
    # Attempt 1 keeps the plain name, so a run without --repeat has the documented layout.
    return f"{task_id}.json" if attempt == 1 else f"{task_id}.attempt-{attempt}.json"


def _task_problem(path: Path, task: Task) -> str | None:
    """`key: why` for the first field of a task file that must not become a path or an argument,
    or None. Task files are data a person can edit: `id: ../../x` wrote results and logs outside
    `.gitgauge/`, `testFiles: [../../victim]` deleted files outside the workspace."""
    kind = kinds.KINDS.find(task.kind)
    if kind is None:  # the kinds are a registry: a name no kind registered is no task
        return f"kind: unknown task kind {task.kind!r} (known: {', '.join(kinds.names())})"
    if len(task.id) > kind.task_id_max_length or not kind.task_id.fullmatch(task.id):
        if kind.task_id is not TASK_ID:
            return f"id: {task.id!r} is not the id of a {task.kind} task"
        return (
            f"id: {task.id!r} is not a task id (8 hex digits of the commit, then an ASCII slug "
            "of its subject: what `gitgauge mine` writes)"
        )
    if path.name != f"{task.id}.yaml":
        return f"id: {task.id!r} is not this file's name; a task file is named <id>.yaml"
    for key in ("base", "fix", "other", "merge", "chainParent"):
        sha = getattr(task, key)
        if kind.own_repository:  # its repository is its own: no commit of yours to name
            if sha:
                return f"{key}: a {task.kind} task names no commit, got {sha!r}"
        elif sha is not None and not FULL_SHA.fullmatch(sha):
            return f"{key}: {sha!r} is not a full commit sha (40 or 64 lowercase hex digits)"
    for index, sha in enumerate(task.chain):
        if not FULL_SHA.fullmatch(sha):
            return f"chain.{index}: {sha!r} is not a full commit sha (40 or 64 hex digits)"
    if task.file is not None and repository_path_problem(task.file) is not None:
        return f"file: {repository_path_problem(task.file)}"
    for key in ("testFiles", "conflictFiles"):
        for index, file in enumerate(getattr(task, key)):
            problem = repository_path_problem(file)
            if problem is not None:
                return f"{key}.{index}: {problem}"
    return kind.task_problem(task)


def _load_result(path: Path) -> RunResult | str:
    """The result in `path` (`results/<config>/<task>.json`), or why it cannot be counted: its
    numbers are impossible, or it names another run, config, task or attempt than where it lies
    (a result copied or forged into a folder would count for a config that never ran it)."""
    result = _load_record(path, RunResult, RESULT_SCHEMA_VERSION)
    if isinstance(result, str):
        return result
    problem = implausible(result)
    if problem is not None:
        return f"{path}: {problem}"
    run_dir = path.parent.parent.parent
    if result.runId != run_dir.name:
        return f"{path}: runId: {result.runId!r} is not the run it lies in ({run_dir.name})"
    if config_dir_name(result.config) != path.parent.name:
        return (
            f"{path}: config: {result.config!r} is not the config of its folder "
            f"(results/{path.parent.name}/)"
        )
    if not _SAFE_DIR_NAME.fullmatch(result.task) or (
        result_file_name(result.task, result.attempt) != path.name
    ):
        return (
            f"{path}: task: {result.task!r} (attempt {result.attempt}) is not the task of its "
            f"file name ({path.name})"
        )
    return result


def _load_test_names(path: Path) -> list[str] | None:
    """The PASS_TO_PASS list beside a task; None (regressions unknown) when it is unusable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    names = raw.get("passToPass") if isinstance(raw, dict) else None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return names


def _load_record(path: Path, model: type[Record], version: int) -> Record | str:
    """The record in `path`, or a one-line reason it cannot be used."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return f"{path}: cannot read ({_short(error)})"
    if not isinstance(raw, dict):
        return f"{path}: not a gitgauge record (expected a JSON object)"
    found = raw.get("schemaVersion")
    if isinstance(found, int) and found > version:
        return f"{path}: schemaVersion {found} is newer than this gitgauge understands; upgrade"
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return f"{path}: {key}: {first['msg']}"


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:200]
