"""The checkouts `mine` and `run` test in hold the tags of their commit's history, and none past
it, through the CLI as a user runs it, on the sample of `helpers.repos.tagged` (a project whose
suite asserts the version it reads from git): every checkout its suite ran in is checked, the
mining ones at the fix and at its parent and the grading ones of `gitgauge run` (also with
`run.history: full`, in the sandbox and on a Ray node's copy); a script agent lists what its
workspace's git shows it.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require, require_bwrap
from helpers.configs import agent_config, configs_args
from helpers.environment import isolated
from helpers.repos.tagged import LISTER, VISIBLE_AT_BASE, Sample, build, drain, merged
from helpers.results import load_result, load_tasks, only_run_dir

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


@dataclass
class Mined:
    sample: Sample
    stdout: str
    records: list[dict[str, Any]]
    before: dict[str, str]
    """The user's repository before `mine` (and before each run)."""


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mined]:
    base = tmp_path_factory.mktemp("tags")
    with isolated(base):
        sample = build(base)
        before = sample.repo.snapshot()
        outcome = run_gitgauge("mine", cwd=sample.repo.root, env=sample.env)
        assert outcome.returncode == 0, outcome.stderr
        yield Mined(sample, outcome.stdout, drain(sample.seen), before)


def test_the_sample_tags_are_what_the_test_expects(mined: Mined) -> None:
    repo, sample = mined.sample.repo, mined.sample
    assert merged(repo, sample.base) == VISIBLE_AT_BASE
    assert merged(repo, sample.fix) == [*VISIBLE_AT_BASE, "v1.2.0"]
    past_or_elsewhere = {"a-tree", "a-blob", "v1.3.0", "v9.9.9-unmerged"}
    assert set(repo.git("tag", "--list").split()) >= past_or_elsewhere


def test_mine_verifies_where_the_suite_reads_its_version(mined: Mined) -> None:
    sample = mined.sample
    tasks = load_tasks(sample.repo)
    assert list(tasks) == [sample.fix], mined.stdout
    assert tasks[sample.fix]["failToPass"] == ["tests.test_clamp::test_clamp_high"]
    # The version test passed at the fix and at its parent (without tags it fails at both).
    assert tasks[sample.fix]["failingBoth"] == [] and tasks[sample.fix]["passToPass"] == 1
    by_head = {record["head"]: record for record in mined.records}
    assert set(by_head) == {sample.fix, sample.base}
    for record in mined.records:
        # Every tag in the commit's history, the annotated and nested ones too; none past it.
        assert record["tags"] == merged(sample.repo, record["head"]), record
    assert by_head[sample.base]["describe"] == "v1.1.0"
    assert by_head[sample.fix]["describe"] == "v1.2.0"
    assert sample.repo.snapshot() == mined.before  # no tag, ref or file of the user's changed


def test_setuptools_scm_reads_the_real_version_in_mine(mined: Mined) -> None:
    require(_has_setuptools_scm(), "setuptools-scm (the `test` extra)")
    at_fix = [record["scm"] for record in mined.records if record["head"] == mined.sample.fix]
    at_base = [record["scm"] for record in mined.records if record["head"] == mined.sample.base]
    assert at_fix and set(at_fix) == {"1.2.0"}
    # At the parent the fix's tests are laid in: a dirty tree after v1.1.0 when they change a
    # tracked file (1.1.1.dev0+g...), v1.1.0 itself when they are new, as here.
    assert at_base and all(
        version == "1.1.0" or version.startswith("1.1.1.dev0+g") for version in at_base
    ), at_base


def test_run_grades_and_the_agent_works_with_the_tags_of_base_only(
    mined: Mined, tmp_path: Path
) -> None:
    sample = mined.sample
    task = load_tasks(sample.repo)[sample.fix]
    lister = tmp_path / "lister.py"
    lister.write_text(LISTER, encoding="utf-8")
    saw = tmp_path / "agent-saw.json"
    release = sample.repo.git("rev-parse", "v1.2.0").strip()  # the fix's annotated tag object
    folder = tmp_path / "configs"
    gold = agent_config(folder, "gold", adapter="gold")
    script = agent_config(
        folder,
        "lister",
        adapter="script",
        command=f"{shlex.quote(sys.executable)} {lister} {saw} {release}",
    )

    outcome = run_gitgauge(
        "run", *configs_args(gold, script), "--task", task["id"], cwd=sample.repo.root,
        env=sample.env,
    )  # fmt: skip

    assert outcome.returncode == 0, outcome.stderr
    run_dir = only_run_dir(sample.repo)
    graded = load_result(run_dir, "gold", task["id"])
    assert graded["status"] == "resolved" and graded["regressed"] is False, graded
    assert graded["testExitCode"] == 0  # the whole suite, its version test too
    records = drain(sample.seen)
    assert records and {record["head"] for record in records} == {sample.base}
    assert all(record["tags"] == VISIBLE_AT_BASE for record in records), records
    agent = json.loads(saw.read_text(encoding="utf-8"))
    assert agent["tags"] == VISIBLE_AT_BASE
    assert agent["describe"] == "v1.1.0"
    assert agent["released"] == "tag"  # an annotated tag's object is in the history copy...
    assert agent["future"] != 0  # ...and the fix's is not
    assert not [ref for ref in agent["refs"] if "v1.2.0" in ref or "v1.3.0" in ref]
    assert sample.repo.snapshot() == mined.before


def test_with_full_history_the_grading_checkout_still_holds_base_tags_only(
    mined: Mined, tmp_path: Path
) -> None:
    """`run.history: full` shows the agent every ref (the spec's behaviour); the suite graded
    still reads the version of base."""
    sample = mined.sample
    task = load_tasks(sample.repo)[sample.fix]
    config_file = sample.repo.root / "gitgauge.yaml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    config_file.write_text(
        yaml.safe_dump({**config, "run": {**config["run"], "history": "full"}}), encoding="utf-8"
    )
    try:
        outcome = run_gitgauge(
            "run", "-c", "gold", "--task", task["id"], cwd=sample.repo.root, env=sample.env
        )
    finally:
        config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    assert outcome.returncode == 0, outcome.stderr
    assert "resolved" in outcome.stdout.splitlines()[0], outcome.stdout
    graded = max(
        (sample.repo.root / ".gitgauge" / "runs").glob("*/results/gold/*.json"),
        key=lambda path: path.stat().st_mtime,
    )
    assert json.loads(graded.read_text(encoding="utf-8"))["testExitCode"] == 0
    records = drain(sample.seen)
    assert records and all(
        record["head"] == sample.base and record["tags"] == VISIBLE_AT_BASE for record in records
    ), records


def _has_setuptools_scm() -> bool:
    import importlib.util

    return importlib.util.find_spec("setuptools_scm") is not None


def test_a_ray_node_makes_its_history_copy_with_the_tags_of_base(
    mined: Mined, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node side of a pair (`shipped.run_on_node`, in this process: no cluster needed): the
    pack brings the annotated tags' objects and the request their names, and nothing past base."""
    from helpers.node_pair import node_run, plan, run_pair

    from gitgauge.core.git.tags import merged_tags
    from gitgauge.running.executors.shipped import node_root

    sample = mined.sample
    monkeypatch.setenv("TAGS_SEEN", str(sample.seen))
    monkeypatch.setenv("TMPDIR", sample.env["TMPDIR"])
    lister = tmp_path / "lister.py"
    lister.write_text(LISTER, encoding="utf-8")
    saw = tmp_path / "agent-saw.json"
    release = sample.repo.git("rev-parse", "v1.2.0").strip()
    config = agent_config(
        tmp_path / "configs",
        "lister",
        adapter="script",
        command=f"{shlex.quote(sys.executable)} {lister} {saw} {release}",
    )
    repo, run_plan = plan(sample.repo.root, [config])
    (planned,) = run_plan.configs
    (task,) = run_plan.tasks
    with node_run(tmp_path) as run_id:
        outcome = run_pair(repo, run_id, planned, task, tags=repo.tags_at(task.base))
        copies = list((node_root(run_id) / "history").glob("*.git"))
        assert len(copies) == 1
        node_tags = merged_tags(copies[0], task.base)
    assert outcome.result.status == "unresolved", outcome.result
    agent = json.loads(saw.read_text(encoding="utf-8"))
    assert agent["tags"] == VISIBLE_AT_BASE and agent["describe"] == "v1.1.0"
    assert agent["released"] == "tag" and agent["future"] != 0
    records = drain(sample.seen)  # the node's grading run
    assert records and all(record["tags"] == VISIBLE_AT_BASE for record in records), records
    assert [tag.name.removeprefix("refs/tags/") for tag in node_tags] == VISIBLE_AT_BASE
    assert sample.repo.snapshot() == mined.before


def test_in_the_sandbox_the_suite_reads_its_version_too(tmp_path: Path) -> None:
    """Mine's test runs and the grading run in bubblewrap (`run.sandbox: auto` where it works):
    gitgauge's git directory and the objects are mounted read-only, the tags in them readable."""
    require_bwrap()
    sample = build(tmp_path, sandbox="bwrap")
    env = {name: value for name, value in sample.env.items() if name != "TAGS_SEEN"}

    mined = run_gitgauge("mine", cwd=sample.repo.root, env=env)

    assert mined.returncode == 0, mined.stderr
    tasks = load_tasks(sample.repo)
    assert list(tasks) == [sample.fix], mined.stdout
    assert tasks[sample.fix]["failingBoth"] == [] and tasks[sample.fix]["passToPass"] == 1
    ran = run_gitgauge(
        "run", "-c", "gold", "--task", tasks[sample.fix]["id"], cwd=sample.repo.root, env=env
    )
    assert ran.returncode == 0, ran.stderr
    graded = load_result(only_run_dir(sample.repo), "gold", tasks[sample.fix]["id"])
    assert graded["status"] == "resolved" and graded["sandbox"] == "bwrap", graded
    assert graded["testExitCode"] == 0 and graded["regressed"] is False
