"""`gitgauge mine --executor ray` on a real Ray cluster (the two loopback nodes of
`test_executor_ray`'s fixture, started once for this module): the same tasks as a local mine,
byte for byte apart from the time they were mined, the same remembered verdicts, and the faults
(a version mismatch stops before any work; a node lost mid-candidate is an error, not a verdict).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers.cli import in_background, run_gitgauge
from helpers.pytest_project import CALC_TEST, CLAMP, first_files
from helpers.ray_cluster import (
    NEEDS_THE_EXTRA,
    Cluster,
    assert_runs_without_importing_ray,
    driver_of_another_version,
    interrupt_once_both_nodes_work,
    kill_the_second_node_once_it_works,
    ray_flags,
    version_refusal,
    without_ray,
)
from helpers.ray_cluster import cluster as cluster  # the module's one cluster
from helpers.ray_cluster import marks as marks
from helpers.repos import GitRepo, new_repo
from helpers.repos.chains import build_chain_repo
from helpers.repos.merges import build_merge_repo

import gitgauge
from gitgauge.core.config import load_repo_config
from gitgauge.core.git import Repository
from gitgauge.mining.mine import MineEvents, MineSummary, find_candidates
from gitgauge.mining.verify import Verdict

# Addresses of its own: test_executor_ray and test_executor_ray_kinds run their clusters beside it.
RAY_NODE_IPS = ("127.0.0.6", "127.0.0.7")
NODE = "(?:" + "|".join(re.escape(ip) for ip in RAY_NODE_IPS) + ")"
"""Either node, in a message's pattern."""

# A real two-node Ray cluster: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SLUG_TEST = "from slug import slug\n\n\ndef test_slug():\n    assert slug('A B') == 'a-b'\n"
VERSION_TEST = """\
import subprocess



def test_version_is_the_projects():
    described = subprocess.run(
        ["git", "describe", "--tags", "--abbrev=0"], capture_output=True, text=True
    ).stdout.strip()
    assert described == "v1.0"
"""
TIMED_FIELD = re.compile(r"^minedAt: .*$", re.MULTILINE)


def build(root: Path) -> GitRepo:
    """A pytest project: two real fixes (per-test lists, one with a body), a fix whose test
    passed before it, one whose suite fails at the fix, a test that reads the project's tag."""
    repo = new_repo(root)
    repo.commit("Initial commit", files=first_files({"tests/test_version.py": VERSION_TEST}))
    repo.git("tag", "-a", "v1.0", "-m", "release 1.0")
    repo.commit("Add clamp", files={"src/clamp.py": "def clamp(x, low, high):\n    return x\n"})
    repo.commit(
        "Fix clamp ignoring its bounds",
        "clamp(9, 0, 5) returned 9: it never looked at low and high.",
        files={"src/clamp.py": CLAMP.fixed, "tests/test_clamp.py": CLAMP.test},
    )
    repo.commit("Add slug", files={"src/slug.py": "def slug(t):\n    return t.replace(' ', '-')\n"})
    repo.commit(
        "Fix slug keeping capitals",
        files={
            "src/slug.py": "def slug(t):\n    return t.lower().replace(' ', '-')\n",
            "tests/test_slug.py": SLUG_TEST,
        },
    )
    repo.commit(
        "Fix add for zero",  # its test passes before the fix: rejected
        files={
            "src/calc.py": "def add(a, b):\n    return b + a\n",
            "tests/test_add_more.py": "from calc import add\n\n\ndef test_zero():\n"
            "    assert add(0, 0) == 0\n",
        },
    )
    repo.commit(
        "Fix calc rounding",  # breaks its own test: fails at the fix
        files={
            "src/calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": CALC_TEST + "\n\ndef test_neg():\n    assert add(-1, 1) == 0\n",
        },
    )
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    config = {"testCommand": command, "timeouts": {"test": 60000}}
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    return repo


def task_files(root: Path) -> dict[str, str]:
    """Each task file, its mining time left out."""
    return {
        path.name: TIMED_FIELD.sub("minedAt: T", path.read_text(encoding="utf-8"))
        for path in sorted((root / ".gitgauge" / "tasks").glob("*.yaml"))
    }


def judged(root: Path) -> dict[str, dict[str, object]]:
    found = {}
    for path in (root / ".gitgauge").rglob("judged/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        record.pop("judgedAt")
        found[path.name] = record
    return found


def test_a_ray_mine_saves_the_same_tasks_and_verdicts_as_a_local_mine(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    local = build(tmp_path / "local")
    remote = GitRepo(tmp_path / "remote")
    shutil.copytree(local.root, remote.root, symlinks=True)
    mined_here = run_gitgauge("mine", cwd=local.root)
    assert mined_here.returncode == 0, mined_here.stderr
    mined_there = run_gitgauge("mine", *ray_flags(cluster), cwd=remote.root)
    assert mined_there.returncode == 0, mined_there.stderr

    tasks = task_files(remote.root)
    assert tasks == task_files(local.root)
    assert len(tasks) == 2, mined_there.stdout
    clamp = next(text for name, text in tasks.items() if "clamp" in name)
    assert "tests.test_clamp::test_clamp_high" in clamp
    # Its pass-to-pass tests include the one that reads the project's tag: the tag was there.
    assert "passToPass: 3\nfailingBoth: []\n" in clamp
    assert judged(remote.root) == judged(local.root)
    assert len(judged(remote.root)) == 4
    summary = mined_there.stdout[mined_there.stdout.index("commits scanned") :]
    local_summary = mined_here.stdout[mined_here.stdout.index("commits scanned") :]
    assert summary.replace(str(remote.root), "R") == local_summary.replace(str(local.root), "R")
    # Nothing is left on the nodes.
    assert cluster.leftovers() == []

    # A later local mine, and --explain, see what a local mine would have left.
    again = run_gitgauge("mine", cwd=remote.root)
    assert again.returncode == 0, again.stderr
    assert "already mined:   2" in again.stdout and "judged before:   2" in again.stdout
    assert "verifying" not in again.stdout
    head = remote.git("rev-parse", "HEAD").strip()
    explained = run_gitgauge("mine", "--explain", head, cwd=remote.root)
    assert explained.returncode == 0, explained.stderr
    assert "fails at the fix" in explained.stdout
    assert "passes before the fix" in mined_there.stdout


def test_mine_executor_ray_in_gitgauge_yaml_and_worktree_link(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    repo = build(tmp_path / "repo")
    config = json.loads((repo.root / "gitgauge.yaml").read_text(encoding="utf-8"))
    config["mine"] = {"executor": "ray"}
    config["run"] = {"ray": {"address": cluster.address}}
    config["worktree"] = {"link": ["deps"]}
    (repo.root / "deps").mkdir()
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    refused = run_gitgauge("mine", cwd=repo.root)
    assert refused.returncode == 1
    (line,) = refused.stderr.strip().splitlines()
    assert "worktree.link: deps" in line and "run.ray.link: skip" in line
    config["run"]["ray"]["link"] = "skip"
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    mined = run_gitgauge("mine", cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    tasks = task_files(repo.root)
    assert len(tasks) == 2, mined.stdout
    # No address in gitgauge.yaml nor on the command line: RAY_ADDRESS names the cluster.
    del config["run"]["ray"]["address"]
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    shutil.rmtree(repo.root / ".gitgauge")
    by_env = run_gitgauge("mine", cwd=repo.root, env={**os.environ, "RAY_ADDRESS": cluster.address})
    assert by_env.returncode == 0, by_env.stderr
    assert task_files(repo.root) == tasks
    local = run_gitgauge("mine", "--executor", "local", "--ray-address", "x:1", cwd=repo.root)
    assert local.returncode == 2
    assert "--ray-address goes with --executor ray" in local.stderr


def test_without_the_extra_mine_executor_ray_is_a_one_line_error_and_a_local_mine_never_imports_it(
    tmp_path: Path,
) -> None:
    repo = build(tmp_path / "repo")
    result = run_gitgauge("mine", "--executor", "ray", cwd=repo.root, env=without_ray(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [NEEDS_THE_EXTRA]
    assert not (repo.root / ".gitgauge" / "tasks").exists()
    assert_runs_without_importing_ray(["mine"], cwd=repo.root)
    assert len(task_files(repo.root)) == 2


def test_a_node_with_another_gitgauge_version_stops_the_mine_before_any_work(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    repo = build(tmp_path / "repo")
    env = driver_of_another_version(tmp_path)
    result = run_gitgauge("mine", *ray_flags(cluster), cwd=repo.root, env=env)
    version_refusal(result)
    assert "verifying" not in result.stdout and "commits scanned" not in result.stdout
    assert not (repo.root / ".gitgauge" / "tasks").exists()


KILL_THE_RAY_WORKER = """\
    # Kill the Ray worker running this suite (an ancestor of this process), every time.
    pid = os.getppid()
    while pid > 1:
        command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
        if command.startswith(b"ray::") or b"default_worker.py" in command:
            os.kill(pid, signal.SIGKILL)
            break
        pid = int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
"""
"""The body of a suite's `if`, on the nodes (their workspaces are gitgauge-ray-*) only."""
KILLER_SUITE = (
    "import os, pathlib, signal, sys\n"
    'fixed = pathlib.Path("src/mod.py").read_text()\n'
    'if "gitgauge-ray-" in os.getcwd() and fixed == "fixed killer\\n":\n'
    + KILL_THE_RAY_WORKER
    + 'sys.exit(0 if "fixed" in fixed else 1)\n'
)


def test_a_job_from_another_gitgauge_version_is_refused_on_the_node_naming_both(
    tmp_path: Path,
) -> None:
    """A node that joins after the start check (which compared every node's version) still
    refuses work from another gitgauge: the candidate is an error, its pack never unpacked."""
    from gitgauge.core.git import Commit
    from gitgauge.mining.node import NodeRequest, run_on_node, verify_fix

    repo = build(tmp_path / "repo")
    commit = next(find_candidates(Repository(repo.root), load_repo_config(repo.root), last=10,
                                  summary=MineSummary())).commit  # fmt: skip
    assert isinstance(commit, Commit)
    request = NodeRequest(
        work=verify_fix,
        payload=commit,
        commit=commit,
        config=load_repo_config(repo.root),
        version="0.0.1",
    )

    def no_pack() -> bytes:
        raise AssertionError("the pack was asked for")

    outcome = run_on_node(request, no_pack, root=tmp_path / "node", node="10.0.0.9")
    assert outcome.value is None
    assert outcome.error == (
        f"gitgauge {gitgauge.__version__} on node 10.0.0.9, 0.0.1 on the driver: install the "
        "same version on the cluster"
    )
    assert not (tmp_path / "node").exists()


def assert_lost_twice(stdout: str, subject: str) -> None:
    """`mine` said the one candidate `subject` is an error, not a verdict: its Ray worker was
    lost on a node, and again after the one retry."""
    pattern = rf"^error +\S+ {re.escape(subject)} +\[(.*)\]$"
    (error,) = re.findall(pattern, stdout, re.MULTILINE)
    assert re.fullmatch(
        rf"its Ray worker was lost on node {NODE} and again on node {NODE} "
        r"\(\w+\), also after 1 retry: not judged, `gitgauge mine` verifies it again",
        error,
    ), error
    assert "errors:            1 (no verdict" in stdout


def fix_history(repo: GitRepo, suite: str, names: list[str]) -> None:
    repo.commit("Initial", files={"suite.py": suite, "src/mod.py": "buggy\n"})
    for name in names:
        repo.commit(f"Add {name}", files={f"src/{name}.py": "buggy\n"})
        repo.commit(
            f"Fix {name}", files={"src/mod.py": f"fixed {name}\n", f"tests/test_{name}.py": "x\n"}
        )
        repo.commit(f"Break {name}", files={"src/mod.py": "buggy\n"})
    config = {
        "testCommand": f"{sys.executable} -B suite.py",
        "mine": {"reruns": 0},
        "run": {"sandbox": "none"},  # the suites look at their processes and the test's files
    }
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")


def test_a_candidate_whose_worker_dies_twice_is_an_error_naming_its_node_not_a_verdict(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    repo = new_repo(tmp_path / "repo")
    fix_history(repo, KILLER_SUITE, ["killer", "plain"])
    mined = run_gitgauge("mine", *ray_flags(cluster), cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    assert_lost_twice(mined.stdout, "Fix killer")
    assert "rejected:          0" in mined.stdout
    assert [path.name for path in (repo.root / ".gitgauge" / "tasks").glob("*.yaml")] == [
        next(p.name for p in (repo.root / ".gitgauge" / "tasks").glob("*plain*"))
    ]
    # Not remembered: the next mine (here, locally) verifies it, and it is a task.
    again = run_gitgauge("mine", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert re.search(r"^verified +\S+ Fix killer", again.stdout, re.MULTILINE), again.stdout
    assert cluster.leftovers() == []


STUCK_SUITE = """\
import os, pathlib, time
(pathlib.Path({marks!r}) / str(os.getpid())).write_text("")
time.sleep(120)
"""


def test_ctrl_c_cancels_the_candidates_and_leaves_nothing_on_the_nodes(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
    marks: Path,
) -> None:
    repo = new_repo(tmp_path / "repo")
    fix_history(repo, STUCK_SUITE.format(marks=str(marks)), ["one", "two", "three"])
    with in_background("mine", *ray_flags(cluster), cwd=repo.root) as child:
        interrupt_once_both_nodes_work(child, marks, lambda mark: int(mark.name))
    assert cluster.leftovers() == []
    assert not (repo.root / ".gitgauge" / "judged").exists()


def test_the_driver_pulls_candidates_only_as_the_cluster_has_room_for_them(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Memory stays flat: a candidate's request and history pack are made when it is submitted,
    and at most a window (twice what the cluster runs at once) is in flight."""
    from gitgauge.mining.remote import RemoteVerifier
    from gitgauge.running.executors.ray_mine import RayCandidatePool

    repo = new_repo(tmp_path / "repo")
    fix_history(repo, KILLER_SUITE, [f"thing{number}" for number in range(7)])
    repository = Repository(repo.root)
    config = load_repo_config(repo.root)
    candidates = list(find_candidates(repository, config, last=100, summary=MineSummary()))
    assert len(candidates) == 7
    pulled: list[str] = []
    verdicts: list[object] = []
    pool = RayCandidatePool.connect(config, address=cluster.address)
    try:
        window = pool.window()
        verifier = RemoteVerifier(repository, config, pool, lambda message: None)
        events = MineEvents(on_start=lambda commit: pulled.append(commit.sha))
        for verdict in verifier(candidates, events):
            assert len(pulled) - len(verdicts) <= window
            verdicts.append(verdict)
    finally:
        pool.close()
    assert window == 4  # two nodes of one CPU, a CPU per candidate
    assert sorted(pulled) == sorted(candidate.commit.sha for candidate in candidates)
    assert all(isinstance(verdict, Verdict) and verdict.task for verdict in verdicts), verdicts
    assert cluster.leftovers() == []


def test_merge_and_chain_candidates_run_their_suites_on_the_cluster_with_the_same_tasks(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    """`--merges` and `--chains` through Ray: each merge's suite run at the merge, and each
    chain's at its newest commit, happen on the nodes (each with the history up to that commit),
    and the task files are those of a local mine, byte for byte apart from their mining time."""
    merges = build_merge_repo(tmp_path / "merges-local").repo
    chains = build_chain_repo(tmp_path / "chains-local").repo
    for local, option in ((merges, "--merges"), (chains, "--chains")):
        remote = GitRepo(local.root.parent / local.root.name.replace("local", "remote"))
        shutil.copytree(local.root, remote.root, symlinks=True)
        mined_here = run_gitgauge("mine", option, cwd=local.root)
        assert mined_here.returncode == 0, mined_here.stderr
        mined_there = run_gitgauge("mine", option, *ray_flags(cluster), cwd=remote.root)
        assert mined_there.returncode == 0, mined_there.stderr
        tasks = task_files(remote.root)
        assert tasks == task_files(local.root), option
        summary = mined_there.stdout[mined_there.stdout.index("commits scanned") :]
        local_summary = mined_here.stdout[mined_here.stdout.index("commits scanned") :]
        assert summary.replace(str(remote.root), "R") == local_summary.replace(str(local.root), "R")
        assert "errors:" not in summary
    # What the suites decided came from the nodes: the merge whose suite fails there is an
    # exact-match-only task, and the chains' newest commits pass theirs.
    merge_tasks = task_files(merges.root.parent / "merges-remote")
    assert sum("kind: merge" in text for text in merge_tasks.values()) == 4, merge_tasks
    assert sum("testsAtMerge: false" in text for text in merge_tasks.values()) == 1
    chain_tasks = task_files(chains.root.parent / "chains-remote")
    assert len(chain_tasks) == 6, chain_tasks
    assert all("testsAtNewest: true" in text for text in chain_tasks.values())
    assert cluster.leftovers() == []


MERGE_KILLER_SUITE = (
    """\
import os, pathlib, signal, subprocess, sys
subject = subprocess.run(
    ["git", "log", "-1", "--format=%s"], capture_output=True, text=True
).stdout.strip()
if "gitgauge-ray-" in os.getcwd() and subject == "Merge branch 'greeting'":
"""
    + KILL_THE_RAY_WORKER
    + "sys.exit(0)\n"
)


def test_a_merge_whose_worker_dies_twice_is_an_error_naming_its_node_not_a_task(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
) -> None:
    built = build_merge_repo(tmp_path / "repo")
    repo = built.repo
    # Outside the history, which has no such suite (the loopback nodes share this file system).
    suite = tmp_path / "suite.py"
    suite.write_text(MERGE_KILLER_SUITE, encoding="utf-8")
    config = {"testCommand": f"{sys.executable} -B {suite}", "run": {"sandbox": "none"}}
    (repo.root / "gitgauge.yaml").write_text(json.dumps(config), encoding="utf-8")
    mined = run_gitgauge("mine", "--merges", *ray_flags(cluster), cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    assert_lost_twice(mined.stdout, "Merge branch 'greeting'")
    saved = [path.read_text() for path in (repo.root / ".gitgauge" / "tasks").glob("*.yaml")]
    assert len(saved) == 3 and not any(built.merges["source"] in text for text in saved)
    # The next mine (here, locally) makes the task.
    again = run_gitgauge("mine", "--merges", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert re.search(r"^verified +\S+ Merge branch 'greeting'", again.stdout, re.MULTILINE)
    assert cluster.leftovers() == []


SLEEPY_SUITE = """\
import os, pathlib, sys, time

marks = pathlib.Path({marks!r})
node = "n2" if "/n2/" in os.getcwd() else "n1"  # each node has a TMPDIR of its own
(marks / f"{{node}}-{{os.getpid()}}").write_text(os.getcwd())
# Only the second node's suite is slow: the test kills that node while its suite runs.
time.sleep(3 if node == "n2" else 0)
sys.exit(0 if "fixed" in pathlib.Path("src/mod.py").read_text() else 1)
"""


def test_a_node_lost_mid_candidate_is_retried_then_an_error_naming_it_never_a_verdict(
    cluster: Cluster,  # noqa: F811
    tmp_path: Path,
    marks: Path,
) -> None:
    """Both nodes work on a candidate each; the second node is killed: its candidate runs again
    on the head (once), and whatever the head could not finish is an error, not remembered."""
    repo = new_repo(tmp_path / "repo")
    fix_history(repo, SLEEPY_SUITE.format(marks=str(marks)), ["thing0", "thing1", "thing2"])
    with in_background("mine", *ray_flags(cluster), cwd=repo.root) as child:
        stdout = kill_the_second_node_once_it_works(cluster, child, marks, RAY_NODE_IPS[1])
    # Each candidate ends verified or as an error (retried on the head, or lost again): never
    # rejected for the lost node.
    assert "rejected:          0" in stdout, stdout
    verified = len(list((repo.root / ".gitgauge" / "tasks").glob("*.yaml")))
    errors = re.findall(r"^error +\S+ .*\[(.*)\]$", stdout, re.MULTILINE)
    assert verified + len(errors) == 3, stdout
    for message in errors:
        assert f"lost on node {RAY_NODE_IPS[1]}" in message, message
    # What was verified is remembered; an error is not.
    assert len(list((repo.root / ".gitgauge").rglob("judged/*.json"))) == verified
