"""`gitgauge run --executor ray` on a real Ray cluster: a head node and a second node started with
`ray start` on loopback addresses (127.0.0.2 and .3), once for the module.

Each node gets its own TMPDIR and Ray temp dir, and an environment marker by which the test finds
(and at the end stops) exactly the processes it started: `ray stop` would stop every Ray process
of the machine. Without the `ray` extra these tests are skipped, except under CI=true, where they
fail (`.ci/run` installs `gitgauge[ray]`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.cli import in_background, run_gitgauge
from helpers.environment import isolated
from helpers.node_pair import node_run, plan, run_pair
from helpers.ray_cluster import (
    HEAD_IP,
    NEEDS_THE_EXTRA,
    SECOND_IP,
    Cluster,
    assert_runs_without_importing_ray,
    driver_of_another_version,
    free_port,
    interrupt_once_both_nodes_work,
    kill_the_second_node_once_it_works,
    need_ray,
    nodes_sandboxed,
    ray_flags,
    run_dir,
    statuses_by_config_and_kind,
    version_refusal,
    without_ray,
)
from helpers.ray_cluster import cluster as cluster  # the module's one cluster
from helpers.ray_cluster import marks as marks
from helpers.repos import GitRepo, new_repo
from helpers.repos.sample import add_then_fix

from gitgauge.core import fingerprint
from gitgauge.core.config import load_repo_config
from gitgauge.core.sandbox import probe
from gitgauge.running.executors.shipped import node_root
from gitgauge.running.executors.shipped_harness import harness_changes, ship_harness

# A real two-node Ray cluster: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

FIX_MARK = "FIXMARK-5e1f"
"""In the newest fix's source change only (the older fix is part of the newer task's history, so
a node may legitimately hold it): an agent that finds the mark found a fix."""
SECRET = "s3cret-value-8d2c"

RUN_TESTS_PY = """\
import runpy, sys
from pathlib import Path

sys.path.insert(0, "src")
failed = 0
for path in sorted(Path("tests").glob("test_*.py")):
    try:
        runpy.run_path(str(path))
    except Exception as error:
        failed += 1
        print(path, "failed:", error)
sys.exit(1 if failed else 0)
"""


@dataclass(frozen=True)
class Mined:
    root: Path
    fixes: list[str]


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mined]:
    """Two proven tasks whose tests run in a blink (tests copy the repository first)."""
    base = tmp_path_factory.mktemp("ray-mined")
    with isolated(base):
        repo = new_repo(base / "repo")
        repo.commit("Initial", files={"run_tests.py": RUN_TESTS_PY, "README.md": "sample\n"})
        fixes = [
            add_then_fix(
                repo,
                name="calc",
                buggy="def add(a, b):\n    return a - b\n",
                fixed="def add(a, b):\n    return a + b\n",
                test="from calc import add\n\nassert add(2, 3) == 5\n",
                subject="Fix add returning the difference",
            ).fix,
            add_then_fix(
                repo,
                name="shout",
                buggy="def shout(text):\n    return text\n",
                fixed=f"def shout(text):\n    return text.upper()  # {FIX_MARK}\n",
                test="from shout import shout\n\nassert shout('hi') == 'HI'\n",
                subject="Fix shout not upper-casing",
            ).fix,
        ]
        config = {"testCommand": f"{sys.executable} -B run_tests.py", "timeouts": {"test": 60000}}
        (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
        result = run_gitgauge("mine", cwd=repo.root)
        assert result.returncode == 0, result.stderr
        assert len(list((repo.root / ".gitgauge" / "tasks").glob("*.yaml"))) == 2, result.stdout
        yield Mined(repo.root, fixes)


@pytest.fixture
def repo(mined: Mined, tmp_path: Path) -> GitRepo:
    root = tmp_path / "repo"
    shutil.copytree(mined.root, root, symlinks=True)
    return GitRepo(root)


def write_agent(folder: Path, name: str, adapter: str, command: str | None = None) -> Path:
    config: dict[str, str] = {"name": name, "adapter": adapter}
    if command is not None:
        config["command"] = command
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def results(run: Path) -> dict[tuple[str, str, int], dict[str, object]]:
    found = {}
    for path in (run / "results").glob("*/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[(record["config"], record["task"], record["attempt"])] = record
    return found


def report_table(output: str) -> str:
    lines = output[output.index("CONFIG") :].split("\n\n")[0].splitlines()
    # AVG TIME and TOTAL TIME are wall times: the columns two identical runs may differ in (and
    # with them the columns' widths).
    timeless = [re.sub(r"\b\d[\dhm.]*s\b(?: \[[^]]*\])?", "T", line) for line in lines]
    return "\n".join(re.sub(r" {2,}", "  ", re.sub(r"-+", "-", line)) for line in timeless)


SAME = (
    "status",
    "errorKind",
    "diffFiles",
    "diffInsertions",
    "diffDeletions",
    "regressed",
    "sandbox",  # auto: here and on the nodes (this machine), bwrap where it works
)


NOTES_SH = """\
# The harness's overlay: how to fix each task (the agent reads it from its workspace).
if grep -q 'a - b' src/calc.py 2>/dev/null; then
    printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py
fi
if grep -q 'return text$' src/shout.py 2>/dev/null; then
    printf 'def shout(text):\\n    return text.upper()\\n' > src/shout.py
fi
if grep -q '^<<<<<<<' greeting.txt 2>/dev/null; then
    printf 'Good day, WORLD\\n' > greeting.txt
    git add greeting.txt
fi
"""

HARNESSED_AGENT = """\
# Checks where it runs and what it was given; any failed check is an error result.
set -e
if [ {boxed} = yes ]; then
    test "$(cat /proc/1/comm)" = bwrap  # PID 1 of its own namespace: inside bubblewrap
    test ! -e {repo}/gitgauge.yaml      # the user's repository is not there
fi
if git cat-file -e {merge} 2>/dev/null; then exit 4; fi  # nor the recorded merge
grep -qx 'apply the notes' "$CLAUDE_CONFIG_DIR/skills/fixing.md"
test "$(printf %s "$GG_TOLD" | sha256sum | cut -c1-64)" = {told}
. ./NOTES.sh
"""


def add_merge(repo: GitRepo) -> str:
    """A merge whose re-merge conflicts in greeting.txt, resolved by hand, that also renames a
    test file (`outsideConflicts`: laid over every agent's result, so a node needs its files);
    returns its sha."""
    repo.commit("Add greeting", files={"greeting.txt": "hello world\n"})
    repo.git("checkout", "-q", "-b", "formal")
    repo.commit("Greet formally", files={"greeting.txt": "Good day, world\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Greet loudly", files={"greeting.txt": "HELLO WORLD\n"})
    repo.git("merge", "--no-ff", "-q", "-m", "Merge branch 'formal'", "formal", check=False)
    repo.write("greeting.txt", "Good day, WORLD\n")
    repo.git("add", "greeting.txt")
    repo.git("mv", "tests/test_calc.py", "tests/test_sum.py")
    repo.git("commit", "-q", "--no-edit", "--no-verify")
    return repo.git("rev-parse", "HEAD").strip()


def test_fix_and_merge_tasks_with_baselines_and_a_harness_give_the_same_results_as_a_local_run(
    cluster: Cluster, repo: GitRepo, tmp_path: Path
) -> None:
    merge = add_merge(repo)
    mined_merge = run_gitgauge("mine", "--merges", cwd=repo.root)
    assert mined_merge.returncode == 0, mined_merge.stderr
    # A config with a harness: an overlay the agent reads, a configDir (with a login that must
    # not travel), an env value that must not be written; the agent runs in bwrap where it can.
    boxed = nodes_sandboxed()
    told = "told-by-the-config-5a1b"
    (tmp_path / "notes.sh").write_text(NOTES_SH, encoding="utf-8")
    (tmp_path / "claude-home" / "skills").mkdir(parents=True)
    (tmp_path / "claude-home" / "skills" / "fixing.md").write_text("apply the notes\n")
    (tmp_path / "claude-home" / ".credentials.json").write_text(f'{{"token": "{SECRET}"}}')
    agent_sh = tmp_path / "agent.sh"
    agent_sh.write_text(
        HARNESSED_AGENT.format(
            boxed="yes" if boxed else "no",
            repo=repo.root,
            merge=merge,
            told=hashlib.sha256(told.encode()).hexdigest(),
        ),
        encoding="utf-8",
    )
    harnessed = {
        "name": "harnessed",
        "adapter": "script",
        "command": f"sh {agent_sh}",
        "files": {"NOTES.sh": "notes.sh"},
        "configDir": "claude-home",
        "env": {"GG_TOLD": "${GG_TOLD_HERE}"},
    }
    (tmp_path / "harnessed.yaml").write_text(json.dumps(harnessed), encoding="utf-8")
    configs = [
        write_agent(tmp_path, "gold", "gold"),
        write_agent(tmp_path, "noop", "noop"),
        write_agent(tmp_path, "script", "script", "echo '# touched' >> src/calc.py"),
        tmp_path / "harnessed.yaml",
    ]
    flags = [arg for path in configs for arg in ("-c", str(path))]
    env = dict(os.environ, GG_TOLD_HERE=told)
    before = repo.snapshot()
    local = run_gitgauge("run", *flags, cwd=repo.root, env=env)
    assert local.returncode == 0, local.stderr
    remote = run_gitgauge("run", *flags, *ray_flags(cluster), cwd=repo.root, env=env)
    assert remote.returncode == 0, remote.stderr

    local_results = results(run_dir(repo, local.stdout))
    remote_run = run_dir(repo, remote.stdout)
    remote_results = results(remote_run)
    assert len(local_results) == 12  # 4 configs x (2 fix tasks + 1 merge task)
    same = (*SAME, "kind", "exact", "exactTree", "markerFiles", "outsideChanges")
    assert {key: [record[f] for f in same] for key, record in remote_results.items()} == {
        key: [record[f] for f in same] for key, record in local_results.items()
    }
    statuses = statuses_by_config_and_kind(
        (config, r["kind"], r["status"]) for (config, _, _), r in remote_results.items()
    )
    # gold and the harnessed agent resolve every task, the merge exactly; noop none.
    assert statuses == {
        ("gold", "fix"): {"resolved"},
        ("gold", "merge"): {"resolved"},
        ("harnessed", "fix"): {"resolved"},
        ("harnessed", "merge"): {"resolved"},
        ("noop", "fix"): {"unresolved"},
        ("noop", "merge"): {"unresolved"},
        ("script", "fix"): {"unresolved"},
        ("script", "merge"): {"unresolved"},
    }, {key: (r["status"], r["errorMessage"]) for key, r in remote_results.items()}
    exact = {r["config"]: r["exact"] for r in remote_results.values() if r["kind"] == "merge"}
    assert exact == {"gold": True, "harnessed": True, "noop": False, "script": False}
    assert {record["sandbox"] for record in remote_results.values()} == {
        "bwrap" if boxed else "none"
    }
    assert report_table(remote.stdout) == report_table(local.stdout)
    # The nodes decided their sandbox themselves: the manifest keeps the mode asked for.
    manifest = json.loads((remote_run / "run.json").read_text(encoding="utf-8"))
    assert (manifest["sandbox"], manifest["sandboxNetwork"]) == ("auto", True)
    written = [p.read_bytes() for p in remote_run.rglob("*") if p.is_file()]
    assert not [data for data in written if told.encode() in data or SECRET.encode() in data]
    # The logs came home, pair by pair; each node copied a task's history at most once.
    copies: dict[tuple[str, str], int] = {}
    for config, task, _ in remote_results:
        logs = remote_run / "logs" / config / task
        assert (logs / "agent.patch").is_file()
        assert (logs / "test.stdout").is_file()
        node = json.loads((logs / "node.json").read_text(encoding="utf-8"))
        assert node["node"] in cluster.temp
        copies[(node["node"], task)] = copies.get((node["node"], task), 0) + node["historyCopied"]
    assert set(copies.values()) <= {0, 1}
    assert sum(copies.values()) >= 3  # three tasks: each copied on some node
    assert cluster.leftovers() == []
    assert repo.snapshot() == before


def test_a_worker_finds_no_trace_of_the_fix_gets_only_the_named_environment_and_checks_the_agent(
    cluster: Cluster, repo: GitRepo, mined: Mined, tmp_path: Path
) -> None:
    report = tmp_path / "found"
    report.mkdir()
    searched = " ".join(
        str(path) for ip in cluster.temp for path in (cluster.temp[ip], cluster.ray_temp[ip])
    )
    newest_fix = mined.fixes[-1]
    secret_hash = hashlib.sha256(SECRET.encode()).hexdigest()
    command = (
        f'out={report}/"$GITGAUGE_TASK_ID"; : > "$out"; '
        # Plain files anywhere on the node: history copies, workspaces, Ray's spill directory.
        f'grep -rIl {FIX_MARK} {searched} >> "$out" 2>/dev/null; '
        # Every object of the workspace's history, and the fix commits by name.
        f'git cat-file --batch-all-objects --batch | grep -a {FIX_MARK} >> "$out"; '
        f'git cat-file -e {newest_fix} 2>/dev/null && echo {newest_fix} >> "$out"; '
        # Compared by hash: the command itself is saved in run.json.
        f'[ "$(printf %s "$GG_SECRET" | sha256sum | cut -c1-64)" = {secret_hash} ] '
        f'&& echo secret-arrived > {report}/env-"$GITGAUGE_TASK_ID"; '
        f'[ -n "$GG_OTHER" ] && echo other-arrived >> {report}/env-"$GITGAUGE_TASK_ID"; '
        "echo done >> README.md"
    )
    agent = write_agent(tmp_path, "searcher", "script", command)
    (repo.root / "gitgauge.yaml").write_text(
        json.dumps(
            {
                "testCommand": f"{sys.executable} -B run_tests.py",
                "run": {"ray": {"env": ["GG_SECRET"]}},
            }
        ),
        encoding="utf-8",
    )
    # This machine has a claude binary (check() passes here); the nodes have none, and say so.
    claude = tmp_path / "claude"
    # It answers `run`'s one preflight (`claude --version`) and nothing else.
    claude.write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo "2.1.197 (Claude Code)"; exit 0; }\nexit 1\n'
    )
    claude.chmod(0o755)
    claude_agent = write_agent(tmp_path, "claude", "claude-code")
    env = dict(
        os.environ,
        GG_SECRET=SECRET,
        GG_OTHER="not-for-workers",
        GITGAUGE_CLAUDE_BIN=str(claude),
        ANTHROPIC_API_KEY="sk-ant-dummy",  # the preflight's credentials; no request is made
    )
    configs = ["-c", str(agent), "-c", str(claude_agent)]
    # Unsandboxed: the agent searches the whole node (a sandbox would hide it all) and reports.
    unboxed = ["--sandbox", "none"]
    result = run_gitgauge("run", *configs, *unboxed, *ray_flags(cluster), cwd=repo.root, env=env)
    assert result.returncode == 0, result.stderr
    run = run_dir(repo, result.stdout)
    found = results(run)
    assert [r["status"] for (config, _, _), r in found.items() if config == "searcher"] == [
        "unresolved"
    ] * 2
    missing = [r for (config, _, _), r in found.items() if config == "claude"]
    assert [(r["status"], r["errorKind"]) for r in missing] == [("error", "internal")] * 2
    for record in missing:
        assert re.match(r"on node 127\.0\.0\.[23]: .*claude", str(record["errorMessage"]))
    tasks = [path.stem for path in (repo.root / ".gitgauge" / "tasks").glob("*.yaml")]
    for task in tasks:
        assert (report / task).read_text() == "", f"the agent on {task} found the fix"
        assert (report / f"env-{task}").read_text() == "secret-arrived\n"
    written = [p.read_bytes() for p in run.rglob("*") if p.is_file()]
    assert written and not [data for data in written if SECRET.encode() in data]
    assert SECRET not in result.stdout + result.stderr
    assert cluster.leftovers() == []


def test_a_node_lays_the_shipped_harness_never_the_drivers_files_nor_its_credentials(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node side of a pair (`shipped.run_on_node`, in this process: no cluster needed), with
    the config's sources deleted after they were shipped, as on a node that never had them."""
    configs = tmp_path / "configs"
    (configs / "claude-home" / "skills" / "empty").mkdir(parents=True)
    (configs / "claude-home" / "skills" / "fixing.md").write_text("use the notes\n")
    (configs / "claude-home" / ".credentials.json").write_text(f'{{"token": "{SECRET}"}}')
    (configs / "notes.md").write_text("the notes say: add means +\n")
    (configs / "tools").mkdir()
    (configs / "tools" / "hint.sh").write_text("echo hint\n")
    (configs / "tools" / "hint.sh").chmod(0o755)
    # What the agent saw goes into a file of its workspace: the patch comes back with the logs.
    command = (
        '{ cat NOTES.md; ls -A "$CLAUDE_CONFIG_DIR"; ls -A "$CLAUDE_CONFIG_DIR/skills"; '
        'cat "$CLAUDE_CONFIG_DIR/skills/fixing.md"; ./tools/hint.sh; '
        '[ "$GG_TOLD" = "$GG_EXPECTED" ] && echo env-arrived; } > seen.txt'
    )
    config = {
        "name": "harnessed",
        "adapter": "script",
        "command": command,
        "files": {"NOTES.md": "notes.md", "tools": "tools", "README.md": None},
        "configDir": "claude-home",
        "env": {"GG_TOLD": "${GG_SOURCE}", "GG_EXPECTED": SECRET},
    }
    (configs / "harnessed.yaml").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.setenv("GG_SOURCE", SECRET)
    warnings: list[str] = []
    git_repo, run_plan = plan(repo.root, [configs / "harnessed.yaml"], warn=warnings.append)
    (planned,) = run_plan.configs
    task = run_plan.tasks[0]
    shipped = ship_harness(planned.harness)
    # The driver ships what the run recorded, and refuses a source changed since.
    record, _ = fingerprint.build(planned.config, planned.harness.sources)
    assert harness_changes(shipped, record) == []
    (configs / "notes.md").write_text("changed after the run started\n")
    assert harness_changes(ship_harness(planned.harness), record) == ["files: NOTES.md"]
    shutil.rmtree(configs)  # a node has none of the driver's files
    monkeypatch.delenv("GG_SOURCE")
    with node_run(tmp_path) as run_id:
        outcome = run_pair(git_repo, run_id, planned, task, harness=shipped)
        left = [p.read_bytes() for p in node_root(run_id).rglob("*") if p.is_file()]
    assert outcome.result.status == "unresolved", outcome.result
    # The node's own sandbox (auto: bwrap where it works here), the harness laid in all the same.
    assert outcome.result.sandbox == ("bwrap" if probe(os.environ, network=True)[0] else "none")
    patch = outcome.logs["agent.patch"].decode()
    seen = [line[1:] for line in patch.splitlines() if line.startswith("+") and "+++" not in line]
    assert seen == [
        "the notes say: add means +",
        # The agent's copy of the configDir: its folders (the empty one too), no credentials
        # file (the driver's stayed home; this node has no claude login of its own).
        "skills",
        "empty",
        "fixing.md",
        "use the notes",
        "hint",  # tools/ laid with its executable bit
        "env-arrived",
    ]
    assert shipped.config_dir is not None
    assert ".credentials.json" not in shipped.config_dir.files
    # The overlays are taken out again: the diff holds the agent's work only.
    assert "NOTES.md" not in patch and "tools/hint.sh" not in patch and "README.md" not in patch
    assert not [data for data in left if SECRET.encode() in data]
    assert SECRET.encode() not in b"".join(outcome.logs.values())


def test_a_node_without_bwrap_runs_unsandboxed_under_auto_and_errs_under_bwrap(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Each node decides its sandbox (`shipped.run_on_node` in this process, whose bwrap is
    made to be missing through `run.ray.env`, as on a node without bubblewrap)."""
    git_repo, run_plan = plan(repo.root, [write_agent(tmp_path, "noop", "noop")])
    (planned,) = run_plan.configs
    task = run_plan.tasks[0]
    config = load_repo_config(repo.root)
    outcomes = {}
    with node_run(tmp_path) as run_id:
        for mode in ("auto", "bwrap"):
            outcomes[mode] = run_pair(
                git_repo,
                run_id,
                planned,
                task,
                config=config.model_copy(
                    update={"run": config.run.model_copy(update={"sandbox": mode})}
                ),
                node="10.1.2.3",
                env={"GITGAUGE_BWRAP": str(tmp_path / "no-bwrap-here")},
            )
    auto = outcomes["auto"]
    assert (auto.result.status, auto.result.sandbox) == ("unresolved", "none"), auto.result
    (warning,) = auto.warnings
    assert warning.startswith("agents run without a sandbox: bubblewrap is not installed")
    strict = outcomes["bwrap"].result
    assert (strict.status, strict.errorKind, strict.sandbox) == ("error", "internal", None)
    assert str(strict.errorMessage).startswith(
        "on node 10.1.2.3: run.sandbox is bwrap, but bubblewrap is not installed"
    ), strict.errorMessage


def test_what_a_pair_writes_on_a_node_never_reaches_the_next_pair_of_its_task(
    repo: GitRepo, mined: Mined, tmp_path: Path
) -> None:
    """gold stages the fix in its workspace; a later pair of the task on the same node (one node
    history copy, `shipped.run_on_node` in this process) works in a repository of its own."""
    peek = "git cat-file --batch-all-objects --batch | grep -a -c " + FIX_MARK + " > seen.txt; true"
    paths = [write_agent(tmp_path, "gold", "gold"), write_agent(tmp_path, "peek", "script", peek)]
    git_repo, run_plan = plan(repo.root, paths)
    (task,) = [task for task in run_plan.tasks if task.fix == mined.fixes[-1]]
    with node_run(tmp_path) as run_id:
        outcomes = [
            run_pair(git_repo, run_id, planned, task, with_source=planned.adapter.reads_fix)
            for planned in run_plan.configs
        ]
    gold, peeked = outcomes
    assert (gold.result.status, gold.history_copied) == ("resolved", True)
    assert not peeked.history_copied  # the same node copy
    assert "+0" in peeked.logs["agent.patch"].decode().splitlines()


def test_ctrl_c_cancels_the_pairs_and_leaves_nothing_on_the_nodes(
    cluster: Cluster, repo: GitRepo, tmp_path: Path, marks: Path
) -> None:
    agent = write_agent(
        tmp_path, "sleeper", "script", f'echo $$ > {marks}/"$GITGAUGE_TASK_ID"; exec sleep 120'
    )
    # Unsandboxed: the agents write their pids into the test's directory.
    with in_background(
        "run", "-c", str(agent), "--sandbox", "none", *ray_flags(cluster), cwd=repo.root
    ) as child:
        interrupt_once_both_nodes_work(child, marks, lambda mark: int(mark.read_text()))
    assert cluster.leftovers() == []


def test_a_node_with_another_gitgauge_version_is_an_error_before_any_pair(
    cluster: Cluster, repo: GitRepo, tmp_path: Path
) -> None:
    env = driver_of_another_version(tmp_path)
    agent = write_agent(tmp_path, "noop", "noop")
    result = run_gitgauge("run", "-c", str(agent), *ray_flags(cluster), cwd=repo.root, env=env)
    line = version_refusal(result)
    assert re.search(r"Ray node 127\.0\.0\.[23] ", line), line
    assert not list((repo.root / ".gitgauge" / "runs").glob("*/results/*/*.json"))


def test_a_node_dying_mid_run_retries_its_pairs_or_records_executor_lost(
    cluster: Cluster, repo: GitRepo, tmp_path: Path, marks: Path
) -> None:
    # The agent says which node it runs on by its TMPDIR (each node has its own); only on the
    # second node, the one killed while its agent works, is it slow.
    agent = write_agent(
        tmp_path,
        "slow",
        "script",
        f'echo $$ > {marks}/"$(basename "$(dirname "$TMPDIR")")-$GITGAUGE_TASK_ID-$$"; '
        'case "$TMPDIR" in */n2/*) sleep 2;; esac; echo ok >> README.md',
    )
    with in_background(
        "run",
        "-c",
        str(agent),
        "--repeat",
        "2",
        "--sandbox",
        "none",
        *ray_flags(cluster),
        cwd=repo.root,
    ) as child:
        stdout = kill_the_second_node_once_it_works(cluster, child, marks, SECOND_IP)
    run = run_dir(repo, stdout)
    first = results(run)
    assert len(first) == 4, "every pair has a result"
    assert {record["errorKind"] for record in first.values()} <= {None, "executor-lost"}
    resumed = run_gitgauge(
        "run",
        *("--resume", run.name, "--retry-errors", "--sandbox", "none"),
        *ray_flags(cluster),
        cwd=repo.root,
    )
    assert resumed.returncode == 0, resumed.stderr
    final = results(run)
    assert len(final) == 4
    assert [record["status"] for record in final.values()] == ["unresolved"] * 4
    # No pair finished on the second node (killed as its first agent started): the pair it ran
    # was retried on the head, by Ray or by --retry-errors.
    for config, task, attempt in final:
        logs = run / "logs" / config / task
        if attempt > 1:
            logs = logs / f"attempt-{attempt}"
        assert json.loads((logs / "node.json").read_text(encoding="utf-8"))["node"] == HEAD_IP


def test_without_the_extra_ray_is_a_one_line_error_and_other_commands_never_import_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    agent = write_agent(tmp_path, "noop", "noop")
    result = run_gitgauge(
        "run", "-c", str(agent), "--executor", "ray", cwd=repo.root, env=without_ray(tmp_path)
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [NEEDS_THE_EXTRA]
    assert not (repo.root / ".gitgauge" / "runs").exists()
    assert_runs_without_importing_ray(["run", "-c", str(agent)], cwd=repo.root)


def test_worktree_link_is_an_error_with_the_ray_executor(repo: GitRepo, tmp_path: Path) -> None:
    config = {"testCommand": "true", "worktree": {"link": ["node_modules"]}}
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    agent = write_agent(tmp_path, "noop", "noop")
    result = run_gitgauge("run", "-c", str(agent), "--executor", "ray", cwd=repo.root)
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert "worktree.link: node_modules" in line and "setupCommand" in line
    assert "run.ray.link: skip" in line


def test_an_unreachable_address_is_an_error_naming_it(repo: GitRepo, tmp_path: Path) -> None:
    need_ray()
    agent = write_agent(tmp_path, "noop", "noop")
    address = f"127.0.0.9:{free_port('127.0.0.1')}"
    result = run_gitgauge(
        "run", "-c", str(agent), "--executor", "ray", "--ray-address", address, cwd=repo.root
    )
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert f"the Ray cluster at {address} does not answer" in line
