"""Reading what gitgauge wrote: its runs, results and tasks, the journals of sample suites, and
the summary `mine` prints; and a sample checkout watched while gitgauge mines and runs it
(`watch`: the checkout before and after, what gitgauge left in its private TMPDIR)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gitgauge.core.store import Store, config_dir_name
from helpers.repos import GitRepo


@dataclass(frozen=True)
class Watched:
    """What a module's repository, mined and run once, leaves besides its records: the journal
    folder of its scripted agents, the user's checkout before and after (`GitRepo.snapshot`),
    and what gitgauge left in its private TMPDIR."""

    journal: Path
    before: dict[str, str]
    after: dict[str, str]
    temp_left: list[str]


def journal_and_tmp(base: Path) -> tuple[Path, Path]:
    """base/journal (for the scripted agents) and base/tmp (gitgauge's TMPDIR), made empty."""
    folders = base / "journal", base / "tmp"
    for folder in folders:
        folder.mkdir()
    return folders


@dataclass(frozen=True)
class Watch:
    root: Path
    journal: Path
    private_tmp: Path
    before: dict[str, str]
    env: dict[str, str]
    """gitgauge's environment: its TMPDIR private, the journal folder named for the agents."""

    def done(self) -> dict[str, Any]:
        """`Watched`'s fields, with the checkout as it is now as `after`."""
        return {
            "journal": self.journal,
            "before": self.before,
            "after": GitRepo(self.root).snapshot(),
            "temp_left": sorted(p.name for p in self.private_tmp.iterdir()),
        }


def watch(base: Path, root: Path, journal_variable: str, **env: str) -> Watch:
    """Watch the checkout at `root` from now on, with base/journal (in `journal_variable`) and
    base/tmp made empty; inside `isolated(base)`, whose environment `env` adds to."""
    journal, private_tmp = journal_and_tmp(base)
    environment = dict(os.environ, TMPDIR=str(private_tmp), **{journal_variable: str(journal)})
    environment.update(env)
    return Watch(root, journal, private_tmp, GitRepo(root).snapshot(), environment)


def runs_in_order(root: Path) -> list[Path]:
    """`root`'s run directories in the order the runs started, by gitgauge's own ordering
    (`Store.load_runs`): a run id's timestamp has one-second steps, and two runs of one second
    differ by their manifests' start times, not by their ids' random suffixes."""

    def unreadable(message: str) -> None:
        raise AssertionError(f"a run of {root} cannot be read: {message}")

    store = Store(root)
    return [store.runs_dir / run.run_id for run in store.load_runs(warn=unreadable)]


def only_run_dir(repo: GitRepo) -> Path:
    (run_dir,) = (repo.root / ".gitgauge" / "runs").iterdir()
    return run_dir


def load_result(run_dir: Path, config: str, task_id: str) -> dict[str, Any]:
    path = run_dir / "results" / config_dir_name(config) / f"{task_id}.json"
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def load_tasks(repo: GitRepo) -> dict[str, dict[str, Any]]:
    """Every task file, parsed as a plain YAML reader would, keyed by the fix sha."""
    tasks: dict[str, dict[str, Any]] = {}
    for path in sorted((repo.root / ".gitgauge" / "tasks").glob("*.yaml")):
        task = yaml.safe_load(path.read_text(encoding="utf-8"))
        task["_file"] = path.name
        tasks[task["fix"]] = task
    return tasks


def read_journal(journal: Path) -> list[dict[str, Any]]:
    """The JSON lines a sample's test runner appended to `journal` (none: empty)."""
    if not journal.exists():
        return []
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


def summary(stdout: str) -> dict[str, str]:
    """The summary block after `mine`'s progress lines: `label: value` pairs."""
    block = stdout.rsplit("\n\n", 1)[-1]
    pairs: dict[str, str] = {}
    for line in block.splitlines():
        if ":" in line and not line.startswith("tasks saved"):
            label, value = line.split(":", 1)
            pairs[label.strip()] = value.strip()
    return pairs
