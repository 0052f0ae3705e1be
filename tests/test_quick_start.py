"""The README's Quick start, followed literally on a src/-layout repository with three real fixes:
its commands (read from the README) in order, with no file edited by hand (`gitgauge init` works
out the src layout's `PYTHONPATH=src`), reach verified tasks that gold resolves and noop does not.
The same mined repository then serves the first hour's other edges: `--task` by the sha `mine`
prints, a file named like a built-in config winning over it, `gitgauge examples`, and why `mine`
found few tasks.

One repository and one pass through the Quick start per module (mining is the expensive part).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolate
from helpers.repos import GitRepo, new_repo

from gitgauge.core.errors import TaskError
from gitgauge.core.task_ids import resolve_task_id

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[1] / "README.md"

CALC = """\
def add(a, b):
    return a + b


def clamp(x, low, high):
    return max(low, min(x, low))


def mean(values):
    return sum(values) / (len(values) - 1)


def last(items):
    return items[-2]
"""
FIXES = (
    (
        "Fix clamp returning the lower bound",
        "min(x, low)",
        "min(x, high)",
        "clamp",
        "assert clamp(5, 0, 10) == 5",
    ),
    (
        "Fix off-by-one in mean",
        "(len(values) - 1)",
        "len(values)",
        "mean",
        "assert mean([2, 4]) == 3",
    ),
    (
        "Fix last returning the second-to-last item",
        "items[-2]",
        "items[-1]",
        "last",
        "assert last([1, 2, 3]) == 3",
    ),
)


def quick_start() -> tuple[list[str], list[str]]:
    """The README's Quick start: the commands of its shell blocks (comments dropped)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Quick start\n")
    end = re.compile(r"(?m)^##+ ").search(text, start + 1)  # the next heading
    section = text[start : end.start() if end else len(text)]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    commands = [
        line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line
    ]
    return commands[:2], commands[2:]


@dataclass
class Walk:
    repo: GitRepo
    env: dict[str, str]
    outputs: dict[str, subprocess.CompletedProcess[str]]
    shas: list[str]


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Walk:
    base = tmp_path_factory.mktemp("quick-start")
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        # `python` in testCommand is the first on PATH: the one running these tests (it has pytest).
        patch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        # Output goes to a pipe, as in CI: the status comes as a line after this much silence.
        # Short enough that one candidate's two real suite runs (each a Python start and a pytest
        # import) always outlast it, on however fast a machine.
        patch.setenv("GITGAUGE_HEARTBEAT_SECONDS", "0.1")
        env = dict(os.environ)
    root = base / "your-repo"
    repo = new_repo(root)
    repo.commit(
        "Initial calculator",
        files={
            "src/calc/__init__.py": CALC,
            "tests/test_calc.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
            ),
        },
    )
    repo.commit("Tidy the README", files={"README.md": "# calc\n"})  # no bug word
    repo.commit("feat: document add", files={"README.md": "# calc\n\n`add(a, b)`\n"})
    shas = []
    for subject, old, new, name, check in FIXES:
        code = (root / "src/calc/__init__.py").read_text(encoding="utf-8").replace(old, new)
        test = f"from calc import {name}\n\n\ndef test_{name}():\n    {check}\n"
        shas.append(
            repo.commit(
                subject, files={"src/calc/__init__.py": code, f"tests/test_{name}.py": test}
            )
        )

    setup, commands = quick_start()
    assert setup == ["pip install .", "cd your-repo"]  # this venv has gitgauge; cwd is the repo
    outputs: dict[str, subprocess.CompletedProcess[str]] = {}
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "gitgauge", command
        outputs[argv[1]] = result = run_gitgauge(*argv[1:], cwd=root, env=env)
        assert result.returncode == 0, f"{command}:\n{result.stdout}\n{result.stderr}"
    return Walk(repo=repo, env=env, outputs=outputs, shas=shas)


def test_the_quick_start_reaches_verified_tasks(walk: Walk) -> None:
    assert list(walk.outputs) == ["init", "doctor", "mine", "run", "report", "examples"]
    # No edit: init found the src layout (and the python first on PATH, which has pytest).
    config = yaml.safe_load((walk.repo.root / "gitgauge.yaml").read_text(encoding="utf-8"))
    assert config["testCommand"].startswith("PYTHONPATH=src "), config
    assert config["testCommand"].endswith(" -m pytest -q"), config
    assert "src/ layout (src/calc/)" in walk.outputs["init"].stdout
    assert (
        walk.outputs["doctor"].stdout.rstrip().endswith("doctor: `gitgauge mine` should work here")
    )
    mined = walk.outputs["mine"].stdout
    for sha, (subject, *_) in zip(walk.shas, FIXES, strict=True):
        assert re.search(rf"(?m)^verified  {sha[:8]} {subject}  -> {sha[:8]}-", mined), mined
    assert re.search(r"(?m)^verified: +3 ", mined), mined
    tasks = sorted(path.stem for path in (walk.repo.root / ".gitgauge/tasks").glob("*.yaml"))
    assert [task[:8] for task in tasks] == sorted(sha[:8] for sha in walk.shas)

    # `-c gold -c noop` need no file: gold resolves every task, noop none.
    report = walk.outputs["report"].stdout.splitlines()
    rows = {
        line.split()[0]: line.split()[1] for line in report if line.startswith(("gold", "noop"))
    }
    assert rows == {"gold": "3/3", "noop": "0/3"}


def test_mine_says_why_it_found_few_tasks_and_what_to_try(walk: Walk) -> None:
    lines = walk.outputs["mine"].stdout.splitlines()
    assert lines[-2:] == [
        "only 3 tasks: 1 of 6 subjects has no bug word; 1 has a non-fix type (feat:, chore:, ...).",
        "  try: (all 6 commits of HEAD were scanned); your house fix types in mine.fixTypes "
        "(`BUG:` -> fixTypes: [BUG]); `gitgauge mine --explain SHA` for a commit you expected.",
    ]


def test_off_a_terminal_progress_comes_as_lines_counted_from_one(walk: Walk) -> None:
    mined = walk.outputs["mine"].stdout
    # The first candidate's two suite runs take longer than the 0.1-second beat.
    assert re.search(r"(?m)^\[1/3\] verifying [0-9a-f]{8} Fix .* \(still at it, \d+ s\)$", mined)
    counted = re.findall(
        r"(?m)^\[(\d+)/(\d+)\] (?:verifying|running) ", mined + walk.outputs["run"].stdout
    )
    assert counted and all(1 <= int(k) <= int(n) for k, n in counted), counted
    assert {n for _, n in counted} <= {"3", "6"}  # 3 candidates; 2 configs x 3 tasks


def test_examples_writes_the_shipped_configs_and_keeps_existing_files(walk: Walk) -> None:
    target = walk.repo.root / "gitgauge-examples"
    shipped = resources.files("gitgauge.examples")
    for name in ("gold.yaml", "noop.yaml", "harness/current.yaml", "harness/with-claude-md.yaml"):
        assert (target / name).read_bytes() == shipped.joinpath(name).read_bytes(), name
    again = run_gitgauge("examples", cwd=walk.repo.root, env=walk.env)
    assert again.returncode == 0, again.stderr
    assert "kept existing gitgauge-examples/gold.yaml" in again.stdout.splitlines()


def test_task_takes_the_sha_mine_prints_and_a_file_named_gold_wins(walk: Walk) -> None:
    sha = walk.shas[1][:8]
    # A file named like a built-in config is the config (here: a noop under gold's name).
    (walk.repo.root / "gold").write_text("name: gold-file\nadapter: noop\n", encoding="utf-8")
    try:
        result = run_gitgauge("run", "-c", "gold", "--task", sha, cwd=walk.repo.root, env=walk.env)
    finally:
        (walk.repo.root / "gold").unlink()
    assert result.returncode == 0, result.stderr
    assert re.search(rf"(?m)^gold-file  {sha}-fix-off-by-one-in-mean  unresolved ", result.stdout)

    unknown = run_gitgauge(
        "run", "-c", "gold", "--task", "0000000z", cwd=walk.repo.root, env=walk.env
    )
    assert unknown.returncode == 1
    assert "0000000z" in unknown.stderr


def test_an_ambiguous_start_of_an_id_lists_the_candidates() -> None:
    ids = ["ab12cd34-fix-one", "ab12ef56-fix-two", "cd000000-fix-three"]
    assert resolve_task_id("cd", ids) == "cd000000-fix-three"
    assert resolve_task_id("ab12cd34-fix-one", ids) == "ab12cd34-fix-one"
    assert resolve_task_id("ef", ids) is None
    with pytest.raises(TaskError) as error:
        resolve_task_id("ab12", ids)
    assert str(error.value) == (
        "task 'ab12' is ambiguous: 2 tasks start with it (ab12cd34-fix-one, ab12ef56-fix-two); "
        "give more of the id"
    )
