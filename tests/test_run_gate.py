"""What `gitgauge run` lets start, through the real CLI on the mined demo: a config whose agent
is not logged in is stopped after its first 3 pairs while the other finishes (exit 3);
`--resume --retry-errors` runs exactly the errored pairs again and keeps their first records;
`--max-cost` stops a run of a fake agent of known cost where the budget says, `--resume`
finishes it, and `--estimate` prices what is left."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.configs import agent_config, configs_args
from helpers.demo import slug_task
from helpers.demo_runs import fake_claude_configs, results_of, run_slug_task
from helpers.fakes.claude import NOT_LOGGED_IN, fake_claude_env, models_called, read_records
from helpers.records import result
from helpers.repos import GitRepo
from helpers.results import only_run_dir

from gitgauge.core.errors import ExitCode
from gitgauge.core.store import StoredRun, config_dir_name
from gitgauge.running.estimate import known_pairs

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def test_a_config_that_is_not_logged_in_stops_after_three_pairs_and_the_other_finishes(
    demo: GitRepo, tmp_path: Path
) -> None:
    scenario = {
        "cases": [
            {"match": {"model": "broken"}, **NOT_LOGGED_IN},
            {"match": {"model": "fine"}, "cost": 0.01, "steps": [{"text": "nothing to do"}]},
        ]
    }
    env, configs = fake_claude_configs(tmp_path, scenario, "broken", "fine")
    task = slug_task(demo)

    # One task, 5 attempts per config, one pair at a time: broken's first 3 fail alike.
    outcome = run_slug_task(demo, configs, "--repeat", "5", "-j", "1", env=env)

    assert outcome.returncode == int(ExitCode.CONFIG_STOPPED) == 3, outcome.stderr
    last = outcome.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "gitgauge: error: config broken stopped after its first 3 pairs failed alike: claude: "
        "Not logged in: run `claude /login`, or set ANTHROPIC_API_KEY"
    ), outcome.stderr
    assert "; 2 of its pairs were not started. Fix it, then `gitgauge run --resume" in last
    assert "--retry-errors" in last
    run_dir = only_run_dir(demo)
    stopped = results_of(run_dir, "broken")
    assert [(r["status"], r["errorKind"], r["errorCause"]) for r in stopped] == [
        ("error", "adapter-exit", "not-logged-in")
    ] * 3
    # The reason first, not a JSON fragment; no request was made, so no cost.
    assert all(str(r["errorMessage"]).startswith("claude: Not logged in") for r in stopped)
    assert all(r["costUsd"] is None for r in stopped)
    assert [r["status"] for r in results_of(run_dir, "fine")] == ["unresolved"] * 5
    # Every pair's wall time, by phase beside the whole (setup, agent, grading).
    for r in results_of(run_dir, "fine"):
        phases = [r["setupSeconds"], r["agentSeconds"], r["gradingSeconds"]]
        assert all(isinstance(p, float) and p >= 0 for p in phases), r
        assert sum(phases) <= r["wallSeconds"] + 0.01
    models = models_called(env)
    assert models.count("broken") == 3 and models.count("fine") == 5
    # The report still printed, with `-` for the cost nobody reported.
    rows = [line.split() for line in outcome.stdout.splitlines()]
    assert ["broken", "0/3", "3", "-", "-"] in [row[:5] for row in rows], outcome.stdout
    assert any(
        line.startswith(f"broken  {task['id']}  error (adapter-exit)  cost -")
        for line in outcome.stdout.splitlines()
    ), outcome.stdout

    # compare refuses a verdict on a side that is all errors, and says why.
    compared = run_gitgauge("compare", "fine", "broken", cwd=demo.root)
    assert compared.returncode == 1
    assert "No verdict: every pair of broken is an error (claude: Not logged in" in compared.stdout


FLAKY = """\
import os, pathlib, sys
task = os.environ["GITGAUGE_TASK_ID"]
with open(sys.argv[1], "a") as log:
    log.write(task + "\\n")
if "slug" in task and not pathlib.Path(sys.argv[2]).exists():
    print("service unavailable", file=sys.stderr)
    sys.exit(7)
"""


def test_retry_errors_runs_only_the_errored_pairs_and_keeps_their_first_records(
    demo: GitRepo, tmp_path: Path
) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(FLAKY, encoding="utf-8")
    calls, outage_over = tmp_path / "calls.log", tmp_path / "outage-over"
    command = f"python {script} {calls} {outage_over}"
    config = agent_config(tmp_path / "configs", "flaky", adapter="script", command=command)
    task = slug_task(demo)

    first = run_gitgauge("run", *configs_args(config), cwd=demo.root)
    assert first.returncode == 0, first.stderr
    run_dir = only_run_dir(demo)
    before = {r["task"]: r for r in results_of(run_dir, "flaky")}
    assert len(before) == 3
    assert [t for t, r in before.items() if r["status"] == "error"] == [task["id"]]
    assert len(calls.read_text(encoding="utf-8").splitlines()) == 3

    outage_over.touch()
    again = run_gitgauge("run", "--resume", run_dir.name, "--retry-errors", cwd=demo.root)

    assert again.returncode == 0, again.stderr
    assert calls.read_text(encoding="utf-8").splitlines()[3:] == [task["id"]]
    assert "ran 1 errored pair again" in again.stdout
    after = {r["task"]: r for r in results_of(run_dir, "flaky")}
    retried = after.pop(task["id"])
    assert (retried["status"], retried["earlierErrors"]) == ("unresolved", 1)
    # The other pairs were not run again: their records are the same, byte for byte.
    assert after == {t: r for t, r in before.items() if t != task["id"]}
    kept = run_dir / "logs" / config_dir_name("flaky") / task["id"] / "errored-1"
    first_record = json.loads((kept / "result.json").read_text(encoding="utf-8"))
    assert first_record == before[task["id"]]
    assert "service unavailable" in (kept / "agent.stderr").read_text(encoding="utf-8")
    # A result file in the log folder is not a result: report counts the new one only.
    report = json.loads(run_gitgauge("report", "--format", "json", cwd=demo.root).stdout)
    assert [(row["config"], row["errors"], row["tasks"]) for row in report] == [("flaky", 0, 3)]


def test_max_cost_stops_where_the_budget_says_and_resume_finishes(
    demo: GitRepo, tmp_path: Path
) -> None:
    env, configs = fake_claude_configs(tmp_path, {"cost": 0.1, "steps": [{"text": "ok"}]}, "paid")

    # $0.25 at $0.10 a pair: the first pair starts (nothing known yet), the second fits
    # ($0.10 + $0.10), the third would not ($0.20 + $0.10 > $0.25).
    capped = run_slug_task(demo, configs, "--repeat", "5", "-j", "1", "--max-cost", "0.25", env=env)

    assert capped.returncode == 0, capped.stderr
    run_dir = only_run_dir(demo)
    assert len(results_of(run_dir, "paid")) == 2
    assert len(read_records(env)) == 2
    assert (
        "budget reached: $0.2000 spent of --max-cost $0.25, $0.1000 per pair expected; 3 pairs "
        f"not started: `gitgauge run --resume {run_dir.name} --max-cost USD` continues"
    ) in capped.stdout

    estimate = run_gitgauge("run", "--resume", run_dir.name, "--estimate", cwd=demo.root, env=env)
    assert estimate.returncode == 0, estimate.stderr
    assert "estimate of the 3 pairs still to run:" in estimate.stdout
    assert "expected: about $0.30" in estimate.stdout
    assert len(read_records(env)) == 2  # an estimate from known pairs runs nothing

    finished = run_gitgauge(
        "run", "--resume", run_dir.name, "--max-cost", "1", cwd=demo.root, env=env
    )

    assert finished.returncode == 0, finished.stderr
    assert len(results_of(run_dir, "paid")) == 5
    assert "budget: $0.3000 spent of --max-cost $1.00" in finished.stdout


def test_estimate_without_an_earlier_run_samples_three_pairs(demo: GitRepo, tmp_path: Path) -> None:
    env, configs = fake_claude_configs(tmp_path, {"cost": 0.05, "steps": [{"text": "ok"}]}, "new")

    outcome = run_slug_task(demo, configs, "--repeat", "5", "--estimate", env=env)

    assert outcome.returncode == 0, outcome.stderr
    assert "no pair of new is known yet: running 3 of its pairs first" in outcome.stdout
    assert len(read_records(env)) == 3
    assert "estimate of the 2 pairs still to run:" in outcome.stdout
    assert "expected: about $0.10" in outcome.stdout
    assert "gitgauge run --resume" in outcome.stdout


def test_an_adapter_without_credentials_or_a_working_binary_is_refused_before_any_pair(
    demo: GitRepo, tmp_path: Path
) -> None:
    env = {**os.environ, **fake_claude_env(tmp_path, {"cost": 0.1})}
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        env.pop(name, None)
    env.pop("CLAUDE_CONFIG_DIR", None)
    env["HOME"] = str(tmp_path / "empty-home")
    (tmp_path / "empty-home").mkdir()
    config = agent_config(tmp_path / "configs", "nologin", adapter="claude-code", model="m")

    refused = run_gitgauge("run", *configs_args(config), cwd=demo.root, env=env)

    assert refused.returncode == 1
    assert "Not logged in: run `claude /login`, or set ANTHROPIC_API_KEY" in refused.stderr
    assert read_records(env) == []  # no pair started, no request made
    assert not (demo.root / ".gitgauge" / "runs").exists() or not any(
        (demo.root / ".gitgauge" / "runs").iterdir()
    )

    broken_binary = tmp_path / "claude-broken"
    broken_binary.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 9\n", encoding="utf-8")
    broken_binary.chmod(0o755)
    env.update(ANTHROPIC_API_KEY="sk-ant-dummy", GITGAUGE_CLAUDE_BIN=str(broken_binary))

    refused = run_gitgauge("run", *configs_args(config), cwd=demo.root, env=env)

    assert refused.returncode == 1
    assert "nologin" in refused.stderr and "cannot start" in refused.stderr, refused.stderr


def test_an_estimate_with_a_mode_is_based_on_pairs_of_that_mode_only() -> None:
    # A fixture answered as text costs no agent session: with --mode agent, the latest run's
    # text-mode pairs are no basis, an earlier agent-mode run's (and modeless kinds') are.
    earlier, latest = "20240101T000000Z-aaaaaa", "20240102T000000Z-bbbbbb"
    runs = [
        StoredRun(earlier, None, [result("c", "t1", "resolved", earlier, mode="agent")]),
        StoredRun(latest, None, [result("c", "t1", "resolved", latest, mode="text")]),
    ]
    assert known_pairs(runs, "c", run_id=None) == ("run " + latest, runs[1].results)
    assert known_pairs(runs, "c", run_id=None, mode="agent") == ("run " + earlier, runs[0].results)
    fix = StoredRun(latest, None, [result("c", "t2", "resolved", latest)])
    assert known_pairs([fix], "c", run_id=None, mode="text") == ("run " + latest, fix.results)
