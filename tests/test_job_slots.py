"""`GITGAUGE_JOB` under `-j 2`, through the CLI: setupCommand, testCommand and the agent each see
their slot, and two that run at the same time see distinct slots (a barrier waits for both slots:
with one slot for everybody it never opens and the step fails)."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.cli import run_gitgauge
from helpers.repos import GitRepo
from helpers.repos.sample import (
    TEST_COMMAND,
    add_then_fix,
    mine_env,
    sample_root_files,
    write_config,
)


def barrier(step: str) -> str:
    """Record the slot, then wait (at most 60 s) until slots 0 and 1 both reached `step`."""
    mark = f'"$SLOTS/{step}-$GITGAUGE_JOB"'
    return (
        f'echo "$GITGAUGE_JOB" >> "$SLOTS/{step}.txt"; touch {mark}; i=0; '
        f'while [ ! -e "$SLOTS/{step}-0" ] || [ ! -e "$SLOTS/{step}-1" ]; do '
        f"i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.1; done"
    )


def slots(folder: Path, step: str) -> list[str]:
    return sorted(set((folder / f"{step}.txt").read_text().split()))


def test_setup_test_and_agent_get_distinct_slots_under_j2(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    git_repo.commit("Initial layout", files=sample_root_files())
    for name in ("clamp", "negate"):
        add_then_fix(
            git_repo,
            name=name,
            buggy=f"def {name}(x):\n    return None\n",
            fixed=f"def {name}(x):\n    return x\n",
            test=f"from {name} import {name}\n\n\ndef test_it():\n    assert {name}(1) == 1\n",
            subject=f"Fix {name}",
        )
    test_command = f'echo "$GITGAUGE_JOB" >> "$SLOTS/test.txt"; {TEST_COMMAND}'
    write_config(
        git_repo, test_command=test_command, setup_command=barrier("setup"), passed=("SLOTS",)
    )

    mined_slots = tmp_path / "mine-slots"
    mined_slots.mkdir()
    env = mine_env(tmp_path / "journal.jsonl", SLOTS=str(mined_slots))
    mined = run_gitgauge("mine", "-j", "2", cwd=git_repo.root, env=env)
    assert mined.returncode == 0, mined.stdout + mined.stderr
    assert "verified:          2" in mined.stdout, mined.stdout
    assert slots(mined_slots, "setup") == ["0", "1"]
    assert slots(mined_slots, "test") == ["0", "1"]

    agent = tmp_path / "probe.yaml"
    agent.write_text(f"name: probe\nadapter: script\ncommand: {barrier('agent')!r}\n")
    run_slots = tmp_path / "run-slots"
    run_slots.mkdir()
    env = dict(env, SLOTS=str(run_slots))
    # No sandbox: the barrier is a directory both pairs share, which the sandbox forbids.
    ran = run_gitgauge(
        "run", "-j", "2", "--sandbox", "none", "-c", str(agent), cwd=git_repo.root, env=env
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "error" not in ran.stdout.split("\n\n")[0], ran.stdout
    assert slots(run_slots, "setup") == ["0", "1"]
    assert slots(run_slots, "agent") == ["0", "1"]
    assert slots(run_slots, "test") == ["0", "1"]
    assert os.environ.get("GITGAUGE_JOB") is None
