"""A sixth kind of task, written here the way a new built-in kind is written in
`gitgauge/kinds/<kind>/` (docs/architecture.md, "A new kind"): one class, registered, touching
no other file. `readme` tasks are mined from commits whose subject starts with `docs:` and that
change README.md alone; an agent resolves one when its README.md is the commit's.

The test registers it, mines it, runs gold and noop on it and reports it, through the real CLI
in this process (the kind is registered here only), and then forgets it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gitgauge.cli import app
from gitgauge.core import process
from gitgauge.core.git import Repository
from gitgauge.core.git.checkout import AgentDiff, parse_tree_listing
from gitgauge.core.kinds import (
    KINDS,
    KindMiner,
    KindPair,
    MiningContext,
    PairContext,
    TaskKind,
    register,
)
from gitgauge.core.records import ResultDraft, Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.worktree import lay_files
from gitgauge.mining.classify import task_id

README = "README.md"


class ReadmeMiner(KindMiner):
    """Commits of HEAD whose subject starts with `docs:` and that change README.md alone."""

    option = "readme"

    def enabled(self, config: RepoConfig, asked: bool | None) -> bool:
        return asked is not False  # no `mine.readme` key: on unless `asked` says otherwise

    def mine(self, context: MiningContext) -> MinedReadmes:
        found = MinedReadmes()
        for commit in context.repo.log("HEAD", max_count=context.last):
            if not commit.subject.startswith("docs:") or commit.paths != [README]:
                continue
            task = Task(
                id=task_id(commit.sha, commit.subject),
                kind="readme",
                base=commit.parents[0],
                fix=commit.sha,
                subject=commit.subject,
                prompt=f"Update {README}: {commit.subject.removeprefix('docs:').strip()}",
                testFiles=[],
                promptQuality="title-only",
                minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            )
            context.store.save_task(task)
            found.tasks.append(task)
            context.events.on_task(commit, task, "")
        return found


class MinedReadmes:
    def __init__(self) -> None:
        self.tasks: list[Task] = []
        self.already_mined = 0

    def lines(self) -> list[str]:
        return [f"readme tasks:      {len(self.tasks)}"]


MINER = ReadmeMiner()


class ReadmeKind(TaskKind):
    name = "readme"
    row_suffix = " (readme)"
    draft = ResultDraft

    def gold_paths(self, repo: Repository, task: Task) -> list[str]:
        return [README]

    def gold(self, repo: Repository, task: Task, workspace: Path) -> None:
        lay_files(repo, task.fix, [README], workspace)

    def enter(self, pair: PairContext) -> KindPair:
        return ReadmePair(pair)

    def miner(self) -> KindMiner:
        return MINER


class ReadmePair(KindPair):
    def __init__(self, pair: PairContext) -> None:
        from gitgauge.running.steps import checkout_steps

        self.pair = checkout_steps(pair, ResultDraft)
        self.start = pair.task.base

    def grade(self, diff: AgentDiff) -> None:
        checkout = self.pair.workspace.checkout
        left = checkout.entries(checkout.write_tree()).get(README)
        wanted = parse_tree_listing(self.pair.repo.tree_listing(self.pair.task.fix)).get(README)
        self.pair.draft.update(status="resolved" if left == wanted else "unresolved")


@pytest.fixture
def readme_kind() -> Iterator[None]:
    register(ReadmeKind)
    try:
        yield
    finally:
        KINDS.remove("readme")
        process.clear_cancel()  # the last command's end stopped every child: start again


def cli(*args: str) -> str:
    """One command in this process, as its own process would run it (a command stops every
    child when it ends: the next one starts allowed again)."""
    process.clear_cancel()
    done = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return done.output


def test_a_sixth_kind_is_one_class_mined_run_and_reported(
    readme_kind: None, git_repo: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git_repo  # conftest's GitRepo: the git CLI, never gitgauge's own door
    root: Path = repo.root
    commit = repo.commit
    commit(
        "Initial", files={README: "# calc\n", "calc.py": "x = 1\n", ".gitignore": ".gitgauge/\n"}
    )
    commit("docs: say what calc does", files={README: "# calc\n\nAdds numbers.\n"})
    commit("Make x two", files={"calc.py": "x = 2\n"})
    (root / "gitgauge.yaml").write_text("testCommand: 'true'\nrun:\n  sandbox: none\n")
    monkeypatch.chdir(root)

    mined = cli("mine")
    assert "readme tasks:      1" in mined
    (task,) = (root / ".gitgauge" / "tasks").glob("*.yaml")
    assert "kind: readme" in task.read_text()

    ran = cli("run", "-c", "gold", "-c", "noop")
    assert "resolved" in ran
    report = cli("report", "--format", "json")
    rows = {row["config"]: row for row in _json(report)}
    assert (rows["gold"]["kind"], rows["gold"]["resolved"], rows["noop"]["resolved"]) == (
        "readme",
        1,
        0,
    )
    table = cli("report")
    assert table.splitlines()[2].split()[:2] == ["gold", "1/1"], table


def test_without_registering_it_a_readme_task_file_is_refused(
    git_repo: Any, tmp_path: Path
) -> None:
    """The kinds are a registry: a task file of a kind nobody registered is no task."""
    from gitgauge.core.store import Store

    root: Path = git_repo.root
    sha = git_repo.commit("Initial", files={README: "x\n"})
    tasks = root / ".gitgauge" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / f"{sha[:8]}-docs.yaml").write_text(
        f"schemaVersion: 1\nid: {sha[:8]}-docs\nkind: readme\nbase: {sha}\nfix: {sha}\n"
        "subject: docs\nprompt: p\ntestFiles: []\npromptQuality: title-only\nminedAt: x\n"
    )
    warnings: list[str] = []
    assert Store(root).load_tasks(warn=warnings.append) == []
    assert any("unknown task kind 'readme'" in warning for warning in warnings), warnings


def _json(text: str) -> Sequence[dict[str, object]]:
    import json

    loaded = json.loads(text)
    assert isinstance(loaded, list)
    return loaded
