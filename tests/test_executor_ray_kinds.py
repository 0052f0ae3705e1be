"""Every kind of task on a real Ray cluster (`gitgauge run --executor ray`): fixture tasks
(`gitgauge import gitbench` of a few sample fixtures: each pair builds its fixture on the node,
in the node's sandbox) and chain tasks (`mine --chains`: rebase and commits pairs get their
history and what their grading compares) give the same verdicts as a local run.

The two-node loopback cluster is `tests/test_executor_ray.py`'s fixture, started once for this
module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.chain_judge import fewer_commits_win
from helpers.cli import run_gitgauge
from helpers.configs import configs_args, gold_noop_and, write_configs
from helpers.environment import isolated
from helpers.fakes.anthropic_api import serve as serve_anthropic
from helpers.fakes.messages_api import Reply
from helpers.fakes.messages_api import serve as serve_messages
from helpers.ray_cluster import (
    Cluster,
    nodes_sandboxed,
    ray_flags,
    run_dir,
    statuses_by_config_and_kind,
)
from helpers.ray_cluster import cluster as cluster  # the module's one cluster
from helpers.repos import new_repo
from helpers.repos.chains import CHAIN_CHECKS, build_chain_repo

# A real two-node Ray cluster: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RAY_NODE_IPS = ("127.0.0.4", "127.0.0.5")
"""This module's cluster's nodes (`test_executor_ray.py`'s may run beside it, on .2 and .3)."""
SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fixtures"
FIXTURES = (
    "history/h001-subject-of-config.yaml",  # a text answer, exact match
    "history/h004-hash-of-typo-fix.yaml",  # a hash derived from the built repository
    "config/g002-remove-temp-file.yaml",  # state assertions (its one wrong answer breaks it)
    "reflog/r001-recover-reset.yaml",  # the repository's state after the agent
    "merge_conflicts/m001-keep-both-lines.yaml",  # resolved files, written by gold
    "commit_messages/c002-explain-rename.yaml",  # llm_judge: judged on the node
)
JUDGE_C002 = "It renames the function greet to welcome"
"""In gold's answer to the llm_judge fixture (its `expected`), never in the wrong answer."""
# The judges' credentials reach the nodes through run.ray.env (the nodes have none).
JUDGE_ENV = "run:\n  ray:\n    env: [ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL]\n"
WRONG_ANSWER = "rm -f keep.txt"
WRONG = (
    f'if [ -d .git ]; then {WRONG_ANSWER}; echo "{WRONG_ANSWER}" > "$GITGAUGE_ANSWER"; '
    f'else echo "{WRONG_ANSWER}"; fi'
)
FIXTURE_FIELDS = ("kind", "status", "errorKind", "score", "failedAssertions", "mode", "sandbox")
CHAIN_FIELDS = (
    "kind",
    "status",
    "errorKind",
    *CHAIN_CHECKS,
    "series",
    "originalSeries",
    "seriesTested",
    "seriesPassing",
    "judgeAsFirst",
    "judgeAsSecond",
    "solved",
    "judgeProblem",
    "diffFiles",
    "sandbox",
)
# Everything in one commit (every check holds), wherever the workspace starts.
SQUASH = (
    'if [ -d "$(git rev-parse --git-path rebase-merge)" ]; then '
    'onto=$(cat "$(git rev-parse --git-path rebase-merge)/onto"); '
    "git rebase --abort && git reset -q --soft $onto; fi; "
    'git add -A && git commit -q -m "Do all of it at once"'
)


def verdicts(run: Path, fields: tuple[str, ...]) -> dict[tuple[str, str], list[Any]]:
    found = {}
    for path in (run / "results").glob("*/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[(record["config"], record["task"])] = [record.get(name) for name in fields]
    return found


def both_ways(
    root: Path, args: list[str], cluster: Cluster, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    local = run_gitgauge("run", *args, cwd=root, env=env, timeout=900)
    assert local.returncode == 0, local.stderr + local.stdout
    remote = run_gitgauge("run", *args, *ray_flags(cluster), cwd=root, env=env, timeout=900)
    assert remote.returncode == 0, remote.stderr + remote.stdout
    return local, remote


def test_fixture_tasks_build_their_repository_on_the_node_with_the_same_verdicts(
    cluster: Cluster, tmp_path: Path
) -> None:
    boxed = nodes_sandboxed()
    source = tmp_path / "pack" / "fixtures"
    for relative in FIXTURES:
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / relative, source / relative)
    configs = write_configs(tmp_path / "configs", gold_noop_and(wrong=WRONG))
    with isolated(tmp_path), serve_messages() as api:
        # The judge: the wrong answer scores low, gold's (the reference itself) high.
        api.replies = [Reply(WRONG_ANSWER, "0.1"), Reply(JUDGE_C002, "0.95")]
        repo = new_repo(tmp_path / "repo")
        repo.write("gitgauge.yaml", 'testCommand: "true"\n' + JUDGE_ENV)
        repo.git("add", "gitgauge.yaml")
        repo.git("commit", "-q", "-m", "gitgauge")
        env = dict(os.environ, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=api.base_url)
        imported = run_gitgauge("import", "gitbench", str(source.parent), cwd=repo.root, env=env)
        assert imported.returncode == 0, imported.stderr + imported.stdout
        for mode in ("agent", "text"):
            args = [*configs_args(*configs.values()), "--mode", mode]
            local, remote = both_ways(repo.root, args, cluster, env)
            here = verdicts(run_dir(repo, local.stdout), FIXTURE_FIELDS)
            there = verdicts(run_dir(repo, remote.stdout), FIXTURE_FIELDS)
            assert len(here) == 3 * len(FIXTURES)
            assert there == here
            resolved = {key for key, (_, status, *_) in there.items() if status == "resolved"}
            # gold resolves each; noop only the fixture whose assertions hold untouched.
            assert resolved == {
                *(("gold", task) for _, task in there),
                ("noop", "gitbench-config-g002"),
            }
            sandboxes = {record[-1] for record in there.values()}
            assert sandboxes == {"bwrap" if boxed else "none"}
            nodes = {
                json.loads(path.read_text(encoding="utf-8"))["node"]
                for path in run_dir(repo, remote.stdout).glob("logs/*/*/node.json")
            }
            assert nodes <= set(cluster.temp)
    assert cluster.leftovers() == []


def test_rebase_and_commits_tasks_get_their_history_and_grade_as_locally(
    cluster: Cluster, tmp_path: Path
) -> None:
    configs = write_configs(tmp_path / "configs", gold_noop_and(squash=SQUASH))
    with isolated(tmp_path), serve_anthropic() as fake:
        built = build_chain_repo(tmp_path / "repo")
        root = built.root
        (root / "gitgauge.yaml").write_text(
            "testCommand: python3 run_tests.py\nchains:\n  testEachCommit: true\n" + JUDGE_ENV
        )
        env = dict(os.environ, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url)
        mine = run_gitgauge("mine", "--chains", cwd=root, env=env)
        assert mine.returncode == 0, mine.stderr
        mined = [
            yaml.safe_load(path.read_text(encoding="utf-8"))["kind"]
            for path in (root / ".gitgauge" / "tasks").glob("*.yaml")
        ]
        assert sorted(set(mined)) == ["commits", "rebase"], mine.stdout
        fake.answer(fewer_commits_win)
        args = [*configs_args(*configs.values()), "--judge"]
        local, remote = both_ways(root, args, cluster, env)
        here = verdicts(run_dir(built.repo, local.stdout), CHAIN_FIELDS)
        there = verdicts(run_dir(built.repo, remote.stdout), CHAIN_FIELDS)
        assert there == here
        by_config = statuses_by_config_and_kind(
            (config, record[0], record[1]) for (config, _), record in there.items()
        )
        assert by_config == {
            ("gold", "rebase"): {"resolved"},
            ("gold", "commits"): {"resolved"},
            ("noop", "rebase"): {"unresolved"},
            ("noop", "commits"): {"unresolved"},
            ("squash", "rebase"): {"resolved"},
            ("squash", "commits"): {"resolved"},
        }, there
        # The judge ran on the nodes (with the credentials run.ray.env sent), for both kinds.
        solved = CHAIN_FIELDS.index("solved")
        judged = {
            (config, record[0])
            for (config, _), record in there.items()
            if record[solved] is not None
        }
        assert judged == {(c, k) for c in ("gold", "squash") for k in ("rebase", "commits")}
    assert cluster.leftovers() == []


def test_a_commits_agent_on_a_node_reads_no_object_of_the_chain(
    cluster: Cluster, tmp_path: Path
) -> None:
    found = tmp_path / "found"
    found.mkdir()
    # Unsandboxed, so it can write where the test reads; the agent's git sees its task's copy.
    lister = (
        "git cat-file --batch-all-objects --batch-check='%(objectname)' "
        f'> {found}/"$GITGAUGE_TASK_ID"; exit 0'
    )
    configs = write_configs(
        tmp_path / "configs", {"lister": {"adapter": "script", "command": lister}}
    )
    with isolated(tmp_path):
        built = build_chain_repo(tmp_path / "repo")
        root = built.root
        (root / "gitgauge.yaml").write_text("testCommand: python3 run_tests.py\n")
        mine = run_gitgauge("mine", "--chains", cwd=root)
        assert mine.returncode == 0, mine.stderr
        args = [*configs_args(*configs.values()), "--sandbox", "none", *ray_flags(cluster)]
        run = run_gitgauge("run", *args, cwd=root, timeout=900)
        assert run.returncode == 0, run.stderr + run.stdout
        tasks = [
            yaml.safe_load(path.read_text(encoding="utf-8"))
            for path in (root / ".gitgauge" / "tasks").glob("*.yaml")
        ]
        assert {task["kind"] for task in tasks} == {"rebase", "commits"}
        for task in tasks:
            objects = set((found / task["id"]).read_text(encoding="utf-8").split())
            if task["kind"] == "rebase":  # its history holds the chain: the listing works
                assert set(task["chain"]) <= objects
                continue
            assert task["chainParent"] in objects
            only_chain = built.repo.git(
                "rev-list", "--objects", task["fix"], f"^{task['chainParent']}"
            )
            leaked = {line.split()[0] for line in only_chain.splitlines()} & objects
            assert not leaked, (task["id"], leaked)
    assert cluster.leftovers() == []
