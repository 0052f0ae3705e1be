"""`gitgauge demo`, the README's first command: build the sample repository, mine it, run the gold
and noop baselines, and print the report — gold resolves every task, noop none."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.demo import DemoRun

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def test_demo_mines_runs_the_baselines_and_prints_the_report(demo_run_once: DemoRun) -> None:
    # The session's one `gitgauge demo` (tests/conftest.py), run with a temporary directory of its
    # own, checked empty below.
    outcome, target = demo_run_once.output, demo_run_once.root

    assert outcome.returncode == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert "$ gitgauge mine" in lines
    # The demo's suite is pytest: every task is verified per test.
    verified = [line for line in lines if line.startswith("verified  ")]
    assert len(verified) == 3 and all("(F2P 1 / P2P " in line for line in verified), verified
    assert any(
        line.startswith("$ gitgauge run -c .gitgauge/demo-configs/gold.yaml") for line in lines
    )
    header = next(index for index, line in enumerate(lines) if line.startswith("CONFIG"))
    assert lines[header].split() == [
        "CONFIG", "RESOLVED", "ERRORS", "REGRESS", "AVG", "COST", "AVG", "TIME", "TOTAL", "TIME",
        "AVG", "DIFF", "RATE",
    ]  # fmt: skip
    gold, noop = lines[header + 2].split(), lines[header + 3].split()
    assert gold[:5] == ["gold", "3/3", "0", "0", "-"]
    assert noop[:5] == ["noop", "0/3", "0", "0", "-"]
    # AVG TIME and AVG DIFF: noop takes no time and changes nothing; a column that does not vary
    # has no interval, and every average its unit. TOTAL TIME between them: whole pairs' wall time.
    assert noop[5] == "0.0s" and noop[6].endswith("s") and noop[7:9] == ["0.0", "lines"]
    # One offline agent, two harnesses: only the one with the overlaid CLAUDE.md finds the fixes,
    # and the CLAUDE.md itself is not counted as the agent's diff.
    agent, with_notes = lines[header + 4].split(), lines[header + 5].split()
    assert agent[:2] == ["agent", "0/3"]
    assert with_notes[:2] == ["agent-with-claude-md", "3/3"]
    # AVG DIFF: the fixes' own lines; gold's diff is the same.
    assert with_notes[with_notes.index("lines") - 1] == "2.0"
    assert gold[gold.index("lines") - 1] == "2.0"
    compare = lines.index("$ gitgauge compare agent agent-with-claude-md")
    assert lines[compare + 4] == "Harness B vs A: + CLAUDE.md (7 lines)"
    assert any(
        line.startswith("agent-with-claude-md resolved 3 more of 3 tasks than agent")
        for line in lines[compare:]
    )
    # The interval excludes 0 and the verdict says "could be chance": one line says why.
    assert (
        "Why both: the exact McNemar test decides whether it could be chance (p = 0.25, not "
        "below 0.05); the interval is shown for the size of the difference."
    ) in lines[compare:]
    # What the agent did differently, from the transcripts the demo agent writes: with the
    # CLAUDE.md it reads the notes and one file and runs the tests; without, it reads every
    # source file and runs nothing.
    behaviour = next(line for line in lines[compare:] if line.startswith("Behaviour B vs A:"))
    assert behaviour.startswith(
        "Behaviour B vs A: ran the tests in 3 of 3 tasks (A: 0 of 3); median turns "
    ), behaviour
    assert "median files read 2 (A: " in behaviour
    assert any(
        line.startswith(
            "Tasks for a verdict: the exact McNemar test reaches p < 0.05 with 80% power at 6 tasks"
        )
        for line in lines[compare:]
    )

    # The report reads the same run back; only the demo's gitgauge.yaml is new in the checkout.
    report = run_gitgauge("report", "--format", "json", cwd=target)
    rows = {row["config"]: row for row in json.loads(report.stdout)}
    assert (rows["gold"]["resolved"], rows["gold"]["tasks"]) == (3, 3)
    assert (rows["noop"]["resolved"], rows["noop"]["tasks"]) == (0, 3)
    assert demo_run_once.temp_left == []
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=target, capture_output=True, text=True, check=True
    )
    assert status.stdout == "?? gitgauge.yaml\n"


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "file.txt").write_text("mine\n", encoding="utf-8")

    outcome = run_gitgauge("demo", str(target), cwd=tmp_path)

    assert outcome.returncode == 1
    assert "not an empty directory" in outcome.stderr
    assert sorted(path.name for path in target.iterdir()) == ["file.txt"]
