"""A project whose tests live where its pytest `testpaths` says, under names no convention knows,
mined and run through the CLI: the fix's files there are its tests, and an agent may neither
edit them nor add one there."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.configs import agent_config, configs_args
from helpers.repos import GitRepo
from helpers.results import load_result, load_tasks, only_run_dir

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

PYPROJECT = """\
[tool.pytest.ini_options]
testpaths = ["checks"]
python_files = ["*_checks.py"]
pythonpath = ["src"]
"""
CLAMP_BUGGY = "def clamp(x, low, high):\n    return max(low, x)\n"
CLAMP_FIXED = "def clamp(x, low, high):\n    return max(low, min(x, high))\n"
CLAMP_CHECKS = "from clamp import clamp\n\n\ndef test_high():\n    assert clamp(9, 0, 5) == 5\n"


def test_a_testpaths_folder_holds_the_fixs_tests_and_is_protected(
    git_repo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    git_repo.commit(
        "Initial commit",
        files={
            "pyproject.toml": PYPROJECT,
            "src/calc.py": "def add(a, b):\n    return a + b\n",
            "checks/calc_checks.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(1, 2) == 3\n",
        },
    )
    git_repo.commit("Add clamp helper", files={"src/clamp.py": CLAMP_BUGGY})
    fix = git_repo.commit(
        "Fix clamp ignoring the upper bound",
        "clamp(9, 0, 5) returned 9: the upper bound was never applied.",
        files={"src/clamp.py": CLAMP_FIXED, "checks/clamp_checks.py": CLAMP_CHECKS},
    )
    config = {
        "testCommand": f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider",
        "run": {"sandbox": "none"},
    }
    (git_repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    before = git_repo.snapshot()

    mined = run_gitgauge("mine", cwd=git_repo.root, env=dict(os.environ))

    assert mined.returncode == 0, mined.stderr
    tasks = load_tasks(git_repo)
    assert list(tasks) == [fix], mined.stdout
    task = tasks[fix]
    assert task["testFiles"] == ["checks/clamp_checks.py"]
    # The agent fixes clamp, rewrites the check it must pass and adds a check of its own.
    cheat = (
        f"printf %s {shlex.quote(CLAMP_FIXED)} > src/clamp.py && "
        "printf 'def test_high():\\n    pass\\n' > checks/clamp_checks.py && "
        "printf 'def test_mine():\\n    pass\\n' > checks/mine_checks.py"
    )
    configs = tmp_path / "configs"
    gold = agent_config(configs, "gold", adapter="gold")
    script = agent_config(configs, "cheat", adapter="script", command=cheat)

    ran = run_gitgauge("run", *configs_args(gold, script), "--task", task["id"], cwd=git_repo.root)

    assert ran.returncode == 0, ran.stderr
    run_dir = only_run_dir(git_repo)
    assert load_result(run_dir, "gold", task["id"])["status"] == "resolved"
    graded = load_result(run_dir, "cheat", task["id"])
    assert graded["status"] == "resolved", graded
    assert "checks/mine_checks.py" in graded["dropped"]
    assert "a test file" in graded["dropped"]["checks/mine_checks.py"]
    assert git_repo.snapshot() == before
