"""`gitgauge run` under faults: interrupt and resume (also with --repeat), retried errors, parallel
pairs, agents that try to read the fix or leave their workspace, and the environment agents get."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge, start_in_background
from helpers.configs import agent_config, configs_args
from helpers.demo import write_gitgauge_yaml
from helpers.repos import GitRepo

from gitgauge.core.errors import ExitCode
from gitgauge.core.paths import is_test_file

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

# Sleeps until a flag file exists, then changes nothing: an agent to interrupt.
SLEEPY = 'while [ ! -e "{flag}" ]; do sleep 0.1; done'


def _results(repo: GitRepo) -> dict[tuple[str, str, int], dict[str, object]]:
    found = {}
    for path in (repo.root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[(data["config"], data["task"], data["attempt"])] = data
    return found


def _report(repo: GitRepo) -> list[dict[str, object]]:
    outcome = run_gitgauge("report", "--format", "json", cwd=repo.root)
    assert outcome.returncode == 0, outcome.stderr
    rows: list[dict[str, object]] = json.loads(outcome.stdout)
    for row in rows:  # times (and their intervals) differ between runs; everything else must not
        timed: tuple[str, ...] = ("avgAdapterSeconds", "totalWallSeconds", "totalSetupSeconds")
        timed += ("totalAgentSeconds", "totalGradingSeconds")
        for key in [key for key in row if key.startswith(timed)]:
            row.pop(key)
        row.pop("run", None)
    return rows


def _wait_for(condition: object, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def test_an_interrupted_run_resumes_to_the_report_of_an_uninterrupted_one(
    demo: GitRepo, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    folder = tmp_path / "configs"
    gold = agent_config(folder, "gold", adapter="gold")
    sleepy = agent_config(folder, "sleepy", adapter="script", command=SLEEPY.format(flag=flag))

    child = start_in_background("run", *configs_args(gold, sleepy), cwd=demo.root)
    _wait_for(lambda: any(key[0] == "gold" for key in _results(demo)))
    time.sleep(0.5)  # sleepy is now waiting on its flag
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert "gitgauge run --resume" in err
    finished = _results(demo)
    assert [key[0] for key in finished] == ["gold"]  # what finished is on disk, and parses
    assert "gitgauge-wt-" not in demo.git("worktree", "list")

    # A config file that changed since is refused, naming it.
    original = Path(sleepy).read_text(encoding="utf-8")
    Path(sleepy).write_text(original + "model: other\n", encoding="utf-8")
    refused = run_gitgauge("run", "--resume", cwd=demo.root)
    assert refused.returncode == 1 and sleepy in refused.stderr and "changed" in refused.stderr
    Path(sleepy).write_text(original, encoding="utf-8")

    flag.touch()
    resumed = run_gitgauge("run", "--resume", cwd=demo.root)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming run" in resumed.stdout
    assert len(list((demo.root / ".gitgauge" / "runs").iterdir())) == 1
    after_resume = _report(demo)

    # The same configs, uninterrupted, in a new run: the same report.
    fresh = run_gitgauge("run", *configs_args(gold, sleepy), cwd=demo.root)
    assert fresh.returncode == 0, fresh.stderr
    assert _report(demo) == after_resume
    assert [(row["config"], row["resolved"], row["tasks"]) for row in after_resume] == [
        ("gold", 3, 3),
        ("sleepy", 0, 3),
    ]


def test_resume_retries_errored_pairs_only_when_asked(demo: GitRepo, tmp_path: Path) -> None:
    flag = tmp_path / "healthy"
    flaky = agent_config(
        tmp_path / "configs",
        "flaky",
        adapter="script",
        command=f'[ -e "{flag}" ] || {{ echo down >&2; exit 3; }}',
    )
    first = run_gitgauge("run", "-c", flaky, cwd=demo.root)
    # Its 3 pairs all failed alike: the config is stopped (exit 3), none was left to start.
    assert first.returncode == ExitCode.CONFIG_STOPPED, first.stderr
    assert "; 0 of its pairs were not started. Fix it, then" in first.stderr
    assert {r["status"] for r in _results(demo).values()} == {"error"}

    flag.touch()
    plain = run_gitgauge("run", "--resume", cwd=demo.root)
    assert plain.returncode == 0
    assert {r["status"] for r in _results(demo).values()} == {"error"}  # finished pairs stay

    retried = run_gitgauge("run", "--resume", "--retry-errors", cwd=demo.root)
    assert retried.returncode == 0, retried.stderr
    assert {r["status"] for r in _results(demo).values()} == {"unresolved"}


def test_two_jobs_give_the_results_of_one(demo: GitRepo, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    configs = configs_args(
        agent_config(folder, "gold", adapter="gold"), agent_config(folder, "noop", adapter="noop")
    )
    serial = run_gitgauge("run", *configs, "-j", "1", cwd=demo.root)
    serial_report = _report(demo)
    parallel = run_gitgauge("run", *configs, "-j", "2", cwd=demo.root)
    assert serial.returncode == 0 and parallel.returncode == 0, parallel.stderr
    assert _report(demo) == serial_report

    def pair_lines(text: str) -> list[str]:  # "config  task  status ..." without the time
        return [line.split("  time")[0] for line in text.splitlines() if "  cost " in line]

    assert pair_lines(parallel.stdout) == pair_lines(serial.stdout)


CHEAT = r"""
{
  git log --all --format='%H %s'
  git reflog --all
  git rev-list --all
  git cat-file --batch-all-objects --batch | tr -d '\0'
  git stash list
  cat .git
  grep -rIa "$GITGAUGE_TASK_ID" .. ../.. 2>/dev/null | head -3
} > "$CHEAT_OUT.$GITGAUGE_TASK_ID" 2>&1
"""


@pytest.mark.parametrize("history", ["isolated", "full"])
def test_a_cheating_agent_reads_nothing_of_the_fix_unless_history_is_full(
    demo: GitRepo, tmp_path: Path, history: str
) -> None:
    write_gitgauge_yaml(demo.root, history=history)
    out = tmp_path / "cheat"
    script = tmp_path / "cheat.sh"
    script.write_text(CHEAT, encoding="utf-8")
    cheat = agent_config(tmp_path / "configs", "cheat", adapter="script", command=f"sh {script}")
    gold = agent_config(tmp_path / "configs", "gold", adapter="gold")
    env = dict(os.environ, CHEAT_OUT=str(out))
    # gold works on each task first and stages the fix's files in its workspace: the cheat that
    # follows must not find those objects either.
    outcome = run_gitgauge("run", "-c", gold, "-c", cheat, "-j", "1", cwd=demo.root, env=env)
    assert outcome.returncode == 0, outcome.stderr
    leaks = []
    for path in (demo.root / ".gitgauge" / "tasks").glob("*.yaml"):
        task = yaml.safe_load(path.read_text(encoding="utf-8"))
        found = Path(f"{out}.{task['id']}").read_text(encoding="utf-8", errors="replace")
        # Each task's own fix: its sha, its subject, the blobs of its changed source files.
        assert task["base"] in found  # history up to base is there
        changed = demo.git("diff", "--name-only", task["base"], task["fix"]).split()
        fixed_blobs = [
            demo.git("rev-parse", f"{task['fix']}:{name}").strip()
            for name in changed
            if not is_test_file(name)
            and name in demo.git("ls-tree", "-r", "--name-only", task["fix"])
        ]
        assert fixed_blobs
        if task["fix"] in found or task["subject"] in found:
            leaks.append(task["id"])
        elif any(blob in found for blob in fixed_blobs):
            leaks.append(f"{task['id']} (gold's staged fix)")
    if history == "isolated":
        assert leaks == []
    else:
        assert len(leaks) == 3, "the search must find every fix when history is full"


def test_an_agent_that_changes_the_users_checkout_is_an_error_and_nothing_is_undone(
    demo: GitRepo, tmp_path: Path
) -> None:
    escape = agent_config(
        tmp_path / "configs",
        "escape",
        adapter="script",
        command='echo "mine now" > "$USER_CHECKOUT/escaped.txt"',
    )
    env = dict(os.environ, USER_CHECKOUT=str(demo.root))
    outcome = run_gitgauge("run", "-c", escape, cwd=demo.root, env=env)
    assert outcome.returncode == 0, outcome.stderr
    assert "changed while escape worked" in outcome.stderr
    results = _results(demo)
    assert {r["errorKind"] for r in results.values()} == {"escaped-workspace"}
    assert (demo.root / "escaped.txt").read_text() == "mine now\n"  # not silently undone


def test_agents_get_a_clean_environment(demo: GitRepo, tmp_path: Path) -> None:
    seen = tmp_path / "env.json"
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import json, os, sys\n"
        "keys = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'OLDPWD', 'PWD', 'HOME']\n"
        "json.dump({k: os.environ.get(k) for k in keys} | {'cwd': os.getcwd()},"
        " open(sys.argv[1], 'w'))\n",
        encoding="utf-8",
    )
    config = agent_config(
        tmp_path / "configs", "probe", adapter="script", command=f"{sys.executable} {probe} {seen}"
    )
    task_id = sorted(p.stem for p in (demo.root / ".gitgauge" / "tasks").glob("*.yaml"))[0]
    env = dict(
        os.environ,
        GIT_INDEX_FILE=str(demo.root / ".git" / "index"),
        OLDPWD=str(demo.root),
        PWD=str(demo.root),
    )
    outcome = run_gitgauge("run", "-c", config, "--task", task_id, cwd=demo.root, env=env)
    assert outcome.returncode == 0, outcome.stderr
    agent_env = json.loads(seen.read_text(encoding="utf-8"))
    assert agent_env["GIT_DIR"] is None and agent_env["GIT_WORK_TREE"] is None
    assert agent_env["GIT_INDEX_FILE"] is None
    assert agent_env["OLDPWD"] is None
    assert agent_env["PWD"] == agent_env["cwd"] != str(demo.root)
    assert agent_env["HOME"] == os.environ["HOME"]


# -- run --repeat N end to end: attempt files, fresh workspaces, PASS@N/PASS^N, --resume --------
# Counts its attempts per task outside the workspace; applies the real fix on the first attempt
# only. A marker left in the workspace by an earlier attempt would make it fail loudly.
COIN = (
    '[ -e .attempt-marker ] && { echo "workspace reused" >&2; exit 3; }; touch .attempt-marker; '
    'n=$(cat "$COUNTS/$GITGAUGE_TASK_ID" 2>/dev/null || echo 0); n=$((n+1)); '
    'echo $n > "$COUNTS/$GITGAUGE_TASK_ID"; echo "$GITGAUGE_TASK_ID $n" >> "$COUNTS/log"; '
    '[ "$n" = 1 ] && cp -R "$FIXES/$GITGAUGE_TASK_ID/." .; true'
)


def _export_fixes(repo: GitRepo, folder: Path) -> list[str]:
    """The non-test files of each task's fix, as they are at the fix (the gold patch, by hand)."""
    ids = []
    for path in sorted((repo.root / ".gitgauge" / "tasks").glob("*.yaml")):
        task = yaml.safe_load(path.read_text(encoding="utf-8"))
        ids.append(task["id"])
        changed = repo.git("diff", "--name-only", task["base"], task["fix"]).split()
        for name in changed:
            if is_test_file(name):
                continue
            target = folder / task["id"] / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(
                subprocess.run(
                    ["git", "show", f"{task['fix']}:{name}"],
                    cwd=repo.root, capture_output=True, check=True,
                ).stdout
            )  # fmt: skip
    return ids


def _rows(repo: GitRepo) -> dict[str, dict[str, object]]:
    report = run_gitgauge("report", "--format", "json", cwd=repo.root)
    assert report.returncode == 0, report.stderr
    return {str(row["config"]): row for row in json.loads(report.stdout)}


def test_repeat_resume_and_pass_at_n(demo: GitRepo, tmp_path: Path) -> None:
    counts, fixes = tmp_path / "counts", tmp_path / "fixes"
    counts.mkdir()
    task_ids = _export_fixes(demo, fixes)
    assert len(task_ids) == 3
    folder = tmp_path / "configs"
    coin = agent_config(folder, "coin", adapter="script", command=COIN)
    env = {**os.environ, "COUNTS": str(counts), "FIXES": str(fixes)}

    ran = run_gitgauge("run", "--repeat", "2", *configs_args(coin), cwd=demo.root, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr

    (run_dir,) = (demo.root / ".gitgauge" / "runs").iterdir()
    for config in ("coin",):
        names = sorted(p.name for p in (run_dir / "results" / config).iterdir())
        assert names == sorted(
            [f"{task}.json" for task in task_ids] + [f"{task}.attempt-2.json" for task in task_ids]
        )
        for task in task_ids:
            second = json.loads(
                (run_dir / "results" / config / f"{task}.attempt-2.json").read_text()
            )
            assert (second["attempt"], second["task"]) == (2, task)
            assert (run_dir / "logs" / config / task / "attempt-2").is_dir()
    statuses = {
        (p.parent.name, p.name): json.loads(p.read_text())["status"]
        for p in (run_dir / "results").glob("*/*.json")
    }
    coin_first = {s for (c, n), s in statuses.items() if c == "coin" and "attempt" not in n}
    coin_second = {s for (c, n), s in statuses.items() if c == "coin" and "attempt-2" in n}
    # No "workspace reused" error: each attempt had a fresh workspace.
    assert (coin_first, coin_second) == ({"resolved"}, {"unresolved"})

    rows = _rows(demo)
    assert (rows["coin"]["k"], rows["coin"]["passAtK"], rows["coin"]["passHatK"]) == (2, 1.0, 0.0)
    assert rows["coin"]["resolveRate"] == 0.5
    assert (rows["coin"]["resolved"], rows["coin"]["attempts"]) == (3, 6)
    table = run_gitgauge("report", cwd=demo.root).stdout
    assert "PASS@2" in table and "PASS^2" in table

    # Lose one attempt (as a crash would): --resume runs exactly that attempt, as attempt 2.
    lost = run_dir / "results" / "coin" / f"{task_ids[0]}.attempt-2.json"
    lost.unlink()
    log_before = (counts / "log").read_text().splitlines()
    resumed = run_gitgauge("run", "--resume", cwd=demo.root, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (counts / "log").read_text().splitlines() == [*log_before, f"{task_ids[0]} 3"]
    again = json.loads(lost.read_text())
    assert (again["attempt"], again["status"]) == (2, "unresolved")
    assert len(list((demo.root / ".gitgauge" / "runs").iterdir())) == 1
    assert _rows(demo)["coin"]["passHatK"] == 0.0
