"""`gitgauge run` end to end through the CLI, on the demo repository mined by `gitgauge mine`:
the script, gold, noop and claude-code (fake) adapters, protected files, errors as data,
regressions, result and log files, and a user's checkout left as it was."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.configs import agent_config, configs_args
from helpers.demo import (
    BUGGY_PATTERN,
    FIXED_PATTERN,
    SLUG_FILE,
    checkout_state,
    slug_task,
    write_gitgauge_yaml,
)
from helpers.fakes.claude import fake_claude_env, read_records
from helpers.repos import GitRepo
from helpers.results import load_result, only_run_dir, runs_in_order

from gitgauge.core.store import config_dir_name
from gitgauge.demo import demo_test_command

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def report_rows(repo: GitRepo) -> dict[str, dict[str, Any]]:
    outcome = run_gitgauge("report", "--format", "json", cwd=repo.root)
    assert outcome.returncode == 0, outcome.stderr
    return {row["config"]: row for row in json.loads(outcome.stdout)}


# -- noop and script -------------------------------------------------------------------------------

FIXER = f"""\
import json, os, pathlib, sys
path = pathlib.Path("{SLUG_FILE}")
path.write_text(path.read_text().replace({BUGGY_PATTERN!r}, {FIXED_PATTERN!r}))
seen = {{"prompt": os.environ["GITGAUGE_PROMPT"], "task": os.environ["GITGAUGE_TASK_ID"],
        "cwd": os.getcwd(), "venv": os.path.islink(".venv")}}
pathlib.Path(sys.argv[1]).write_text(json.dumps(seen))
"""


def test_script_and_noop_end_to_end(demo: GitRepo, tmp_path: Path) -> None:
    write_gitgauge_yaml(demo.root, link=(".venv",))
    (demo.root / ".venv").mkdir()
    (demo.root / ".venv" / "marker").write_text("installed\n", encoding="utf-8")
    fixer = tmp_path / "fixer.py"
    fixer.write_text(FIXER, encoding="utf-8")
    seen = tmp_path / "seen.json"
    folder = tmp_path / "configs"
    noop = agent_config(folder, "noop (baseline)", adapter="noop")
    script = agent_config(
        folder, "fixer", adapter="script", command=f"{sys.executable} {fixer} {seen}"
    )
    task = slug_task(demo)
    before = checkout_state(demo)

    outcome = run_gitgauge("run", *configs_args(noop, script), "--task", task["id"], cwd=demo.root)

    assert outcome.returncode == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert lines[0].startswith(f"noop (baseline)  {task['id']}  unresolved  cost -")
    assert lines[0].endswith("diff 0 files +0 -0")
    assert lines[1].startswith(f"fixer  {task['id']}  resolved  cost -")
    assert lines[1].endswith("diff 1 file +1 -1")
    assert any(line.startswith("CONFIG") and "AVG DIFF" in line for line in lines)

    run_dir = only_run_dir(demo)
    fixed = load_result(run_dir, "fixer", task["id"])
    assert fixed["status"] == "resolved"
    assert (fixed["diffFiles"], fixed["diffInsertions"], fixed["diffDeletions"]) == (1, 1, 1)
    assert fixed["regressed"] is False
    assert fixed["costUsd"] is None and fixed["inputTokens"] is None
    assert fixed["testExitCode"] == 0 and "passed" in fixed["testOutputTail"]
    # A name that is no safe directory name gets a slug directory; the result keeps the name.
    assert load_result(run_dir, "noop (baseline)", task["id"])["config"] == "noop (baseline)"
    assert config_dir_name("noop (baseline)") != "noop (baseline)"

    patch = (run_dir / "logs" / "fixer" / task["id"] / "agent.patch").read_text(encoding="utf-8")
    assert f"+++ b/{SLUG_FILE}" in patch and ".venv" not in patch
    assert (run_dir / "logs" / "fixer" / task["id"] / "test.stdout").exists()
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert manifest["tasks"] == [task["id"]]
    assert [config["name"] for config in manifest["configs"]] == ["noop (baseline)", "fixer"]
    assert manifest["configFiles"] == [noop, script]
    assert manifest["finishedAt"] is not None and manifest["timeouts"]["adapter"] == 60000

    agent_saw = json.loads(seen.read_text(encoding="utf-8"))
    assert agent_saw["prompt"] == task["prompt"] and agent_saw["task"] == task["id"]
    assert agent_saw["venv"] is True  # the link was there for the agent...
    assert Path(agent_saw["cwd"]).resolve() != demo.root.resolve()
    assert not Path(agent_saw["cwd"]).exists()  # ...and the workspace is gone
    assert checkout_state(demo) == before

    rows = report_rows(demo)
    assert [(name, row["resolved"], row["tasks"]) for name, row in rows.items()] == [
        ("noop (baseline)", 0, 1),
        ("fixer", 1, 1),
    ]
    assert rows["fixer"]["avgDiff"] == 2.0 and rows["fixer"]["regressed"] == 0
    assert "were mined with" not in outcome.stderr  # the commands the tasks were proved with


def test_a_run_under_other_commands_than_the_tasks_were_mined_with_warns_once(
    demo: GitRepo, tmp_path: Path
) -> None:
    mined_with = demo_test_command(sys.executable)
    write_gitgauge_yaml(demo.root, setup="true")
    config = demo.root / "gitgauge.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(json.dumps(mined_with), json.dumps(f"true && {mined_with}")))
    noop = agent_config(tmp_path / "configs", "noop", adapter="noop")

    outcome = run_gitgauge("run", "-c", noop, cwd=demo.root)

    assert outcome.returncode == 0, outcome.stderr
    warnings = [line for line in outcome.stderr.splitlines() if "were mined with" in line]
    assert len(warnings) == 1, outcome.stderr
    assert f"3 of 3 tasks were mined with testCommand {mined_with!r}" in warnings[0]
    assert f"gitgauge.yaml has {f'true && {mined_with}'!r}" in warnings[0]
    assert (
        "3 of 3 tasks were mined with setupCommand None, gitgauge.yaml has 'true'" in (warnings[0])
    )


def test_a_failing_setup_and_a_crashing_agent_are_errors_and_the_run_goes_on(
    demo: GitRepo, tmp_path: Path
) -> None:
    task = slug_task(demo)
    folder = tmp_path / "configs"
    crashes = agent_config(folder, "crashes", adapter="script", command="echo boom >&2; exit 5")
    # A file where the tests directory was: the fix's tests cannot be laid over it.
    mangles = agent_config(folder, "mangles", adapter="script", command="rm -r tests; echo > tests")
    gold = agent_config(folder, "gold", adapter="gold")

    crashed = run_gitgauge(
        "run", *configs_args(crashes, mangles, gold), "--task", task["id"], cwd=demo.root
    )
    write_gitgauge_yaml(demo.root, setup="echo no network >&2; exit 3")
    no_setup = run_gitgauge("run", *configs_args(gold), "--task", task["id"], cwd=demo.root)

    assert crashed.returncode == 0, crashed.stderr
    assert no_setup.returncode == 0, no_setup.stderr
    assert "error (adapter-exit)" in crashed.stdout and "boom" in crashed.stdout
    assert "error (setup)" in no_setup.stdout and "no network" in no_setup.stdout
    runs = runs_in_order(demo.root)
    crash_result = load_result(runs[0], "crashes", task["id"])
    assert (
        crash_result["errorKind"] == "adapter-exit" and "exited 5" in crash_result["errorMessage"]
    )
    mangled = load_result(runs[0], "mangles", task["id"])
    # A file where `tests/` was: protection puts the test files back in the graded tree (the
    # agent's file goes), so the pair is graded, and did not fix anything.
    assert (mangled["status"], mangled["errorKind"]) == ("unresolved", None)
    assert mangled["reverted"] and all(p.startswith("tests/") for p in mangled["reverted"])
    assert mangled["diffFiles"] >= 3
    assert load_result(runs[0], "gold", task["id"])["status"] == "resolved"
    setup_result = load_result(runs[1], "gold", task["id"])
    assert (setup_result["status"], setup_result["errorKind"]) == ("error", "setup")
    assert setup_result["adapterSeconds"] is None and setup_result["diffFiles"] is None
    # The latest run of "gold" is the failed setup; "crashes" still shows its own run.
    rows = report_rows(demo)
    assert (rows["gold"]["resolved"], rows["gold"]["errors"], rows["gold"]["run"]) == (
        0,
        1,
        runs[1].name,
    )
    assert (rows["crashes"]["resolved"], rows["crashes"]["errors"]) == (0, 1)
    assert rows["crashes"]["avgDiff"] is None


# -- claude-code through the fake claude ----------------------------------------------------------

SKIP_EVERYTHING = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.skip)\n"
)
USAGE = {
    "input_tokens": 1000,
    "output_tokens": 200,
    "cache_creation_input_tokens": 30,
    "cache_read_input_tokens": 40,
}
SCENARIO_CASES: dict[str, dict[str, Any]] = {
    "right": {
        "replace": {SLUG_FILE: [[BUGGY_PATTERN, FIXED_PATTERN]]},
        "cost": 0.25,
        "usage": USAGE,
        "num_turns": 3,
    },
    # Slugs stop being lower-cased: the fix's tests fail, and so does the base's own suite.
    "wrong": {"replace": {SLUG_FILE: [["text.lower()", "text"]]}, "cost": 0.75},
    # Weakens a test, points pytest elsewhere, and adds a conftest.py that skips everything.
    "cheat": {
        "files": {
            "tests/test_slug.py": "def test_nothing():\n    pass\n",
            "conftest.py": SKIP_EVERYTHING,
        },
        "replace": {"pytest.ini": [["testpaths = tests", "testpaths = nowhere"]]},
    },
    "crash": {"crash": True},
    "malformed": {"raw_stdout": '{"type": "result", "total_cost_usd": '},
    "iserror": {"is_error": True, "subtype": "error_max_turns", "cost": 0.05},
    "slow": {"sleep": 60},
}


def test_claude_code_configs_scored_end_to_end(demo: GitRepo, tmp_path: Path) -> None:
    # Short enough for "slow" to time out, long enough for the fake to finish everywhere else.
    write_gitgauge_yaml(demo.root, adapter_ms=3000)
    scenario = {
        "cases": [{"match": {"model": name}, **case} for name, case in SCENARIO_CASES.items()]
    }
    env = {**os.environ, **fake_claude_env(tmp_path, scenario)}
    folder = tmp_path / "configs"
    paths = [
        agent_config(folder, name, adapter="claude-code", model=name) for name in SCENARIO_CASES
    ]
    task = slug_task(demo)
    before = checkout_state(demo)

    outcome = run_gitgauge(
        "run", *configs_args(*paths), "--task", task["id"], cwd=demo.root, env=env
    )

    assert outcome.returncode == 0, outcome.stderr
    run_dir = only_run_dir(demo)
    results = {name: load_result(run_dir, name, task["id"]) for name in SCENARIO_CASES}
    assert {name: (r["status"], r["errorKind"]) for name, r in results.items()} == {
        "right": ("resolved", None),
        "wrong": ("unresolved", None),
        "cheat": ("unresolved", None),
        "crash": ("error", "adapter-exit"),
        "malformed": ("error", "adapter-output"),
        "iserror": ("error", "adapter-output"),
        "slow": ("error", "adapter-timeout"),
    }
    right = results["right"]
    assert (right["costUsd"], right["inputTokens"], right["outputTokens"]) == (0.25, 1000, 200)
    assert (right["cacheCreationInputTokens"], right["cacheReadInputTokens"]) == (30, 40)
    assert right["numTurns"] == 3 and right["regressed"] is False
    assert (right["diffFiles"], right["diffInsertions"], right["diffDeletions"]) == (1, 1, 1)
    assert results["wrong"]["regressed"] is True
    assert results["cheat"]["reverted"] == ["pytest.ini", "tests/test_slug.py"]
    assert list(results["cheat"]["dropped"]) == ["conftest.py"]
    assert results["cheat"]["diffFiles"] == 3  # measured before the revert: the agent's diff
    assert results["iserror"]["costUsd"] == 0.05
    assert "error_max_turns" in results["iserror"]["errorMessage"]

    records = read_records(env)
    assert len(records) == len(SCENARIO_CASES)
    for record in records:
        assert record["stdin"] == task["prompt"]
        assert task["prompt"] not in record["argv"] and "Fix the following bug:" not in str(
            record["argv"]
        )
        assert Path(record["cwd"]).resolve() != demo.root.resolve()
        assert not Path(record["cwd"]).exists()
    assert checkout_state(demo) == before

    rows = report_rows(demo)
    assert rows["right"]["avgCostUsd"] == 0.25 and rows["right"]["resolved"] == 1
    assert (rows["wrong"]["regressed"], rows["wrong"]["resolved"]) == (1, 0)
    assert rows["slow"]["errors"] == 1 and rows["slow"]["regressed"] is None
    assert rows["malformed"]["avgCostUsd"] is None
    table = run_gitgauge("report", cwd=demo.root).stdout
    wrong_row = next(line for line in table.splitlines() if line.startswith("wrong "))
    assert wrong_row.split()[:5] == ["wrong", "0/1", "0", "1", "$0.7500"]


# -- a pytest config file the agent adds -----------------------------------------------------------

PASS_EVERYTHING = """\
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome, report.longrepr = "passed", None
    return report
"""
TOML_CHEAT = '[pytest]\ntestpaths = ["tests"]\npythonpath = ["."]\naddopts = ["-p", "cheatplug"]\n'
# pytest reads pytest.toml and .pytest.toml before the demo's pytest.ini; .pytest.ini only after
# it, so that agent deletes pytest.ini too.
PYTEST_CONFIG_CHEATS = {
    "pytest.toml": ({"pytest.toml": TOML_CHEAT}, []),
    ".pytest.toml": ({".pytest.toml": TOML_CHEAT}, []),
    ".pytest.ini": (
        {".pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\naddopts = -p cheatplug\n"},
        ["pytest.ini"],
    ),
}


@pytest.mark.parametrize("config_name", list(PYTEST_CONFIG_CHEATS))
def test_a_new_pytest_config_that_passes_every_test_is_deleted(
    demo: GitRepo, tmp_path: Path, config_name: str
) -> None:
    written, removed = PYTEST_CONFIG_CHEATS[config_name]
    cheat = tmp_path / "cheat.py"
    cheat.write_text(
        "import pathlib\n"
        f"pathlib.Path('cheatplug.py').write_text({PASS_EVERYTHING!r})\n"
        + "".join(
            f"pathlib.Path({name!r}).write_text({text!r})\n" for name, text in written.items()
        )
        + "".join(f"pathlib.Path({name!r}).unlink()\n" for name in removed),
        encoding="utf-8",
    )
    config = agent_config(
        tmp_path / "configs", "cheat", adapter="script", command=f"{sys.executable} {cheat}"
    )
    task = slug_task(demo)

    outcome = run_gitgauge("run", "-c", config, "--task", task["id"], cwd=demo.root)

    assert outcome.returncode == 0, outcome.stderr
    result = load_result(only_run_dir(demo), "cheat", task["id"])
    assert result["status"] == "unresolved", result
    assert list(result["dropped"]) == [config_name]
    assert result["reverted"] == removed
    assert result["failToPassFailed"], result  # the plugin did not load: the tests really ran


# -- validation before any work -------------------------------------------------------------------


def test_configs_and_task_are_validated_before_any_work(demo: GitRepo, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    gold = agent_config(folder, "gold", adapter="gold")
    baseline = agent_config(folder, "baseline", adapter="gold")
    twin = str(folder / "twin.yaml")
    Path(twin).write_text("name: baseline\nadapter: noop\n", encoding="utf-8")
    unknown = agent_config(folder, "mystery", adapter="mystery")
    no_command = agent_config(folder, "bare", adapter="script")
    claude = agent_config(folder, "claude", adapter="claude-code")
    missing_claude = {**os.environ, "GITGAUGE_CLAUDE_BIN": str(tmp_path / "no-claude")}

    unknown_task = run_gitgauge("run", "-c", gold, "--task", "deadbeef-nope", cwd=demo.root)
    duplicate = run_gitgauge("run", *configs_args(baseline, twin), cwd=demo.root)
    bad_adapter = run_gitgauge("run", *configs_args(gold, unknown), cwd=demo.root)
    bad_script = run_gitgauge("run", *configs_args(gold, no_command), cwd=demo.root)
    no_claude = run_gitgauge("run", *configs_args(gold, claude), cwd=demo.root, env=missing_claude)
    no_config = run_gitgauge("run", cwd=demo.root)

    assert unknown_task.returncode == 1
    assert "deadbeef-nope" in unknown_task.stderr and slug_task(demo)["id"] in unknown_task.stderr
    assert duplicate.returncode == 1 and "twin.yaml" in duplicate.stderr
    assert "baseline.yaml" in duplicate.stderr
    assert bad_adapter.returncode == 1
    assert "mystery" in bad_adapter.stderr and "claude-code" in bad_adapter.stderr
    assert "noop" in bad_adapter.stderr and "script" in bad_adapter.stderr
    assert bad_script.returncode == 1 and "command" in bad_script.stderr
    assert no_claude.returncode == 1 and "GITGAUGE_CLAUDE_BIN" in no_claude.stderr
    assert no_config.returncode == 2
    assert not (demo.root / ".gitgauge" / "runs").exists()
