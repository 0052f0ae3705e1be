"""The hostile patches of `test_hostile_agent.py` (issue 34), against every kind of task that
grades with the project's suite: a merge task (rows 4 and 5 of the issue, and rows 1 to 3 with
the conflict taken `--ours`) and the chain kinds' `chains.testEachCommit` (each cheat in an
intermediate commit of the agent's series). Every kind whose class says `graded_by_suite` is
tried here or there (`test_every_kind_graded_by_the_suite_is_attacked`).

Needs a working `bwrap`: skipped without one, failed when CI=true (CI installs it).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require_bwrap
from helpers.environment import isolate
from helpers.hostile import (
    MAGIC,
    PATCHING_TEST,
    STAND_IN_PYTEST,
    TEST_AT_FIX,
    TEST_COMMAND,
    first_files,
    stand_in,
    suite_with_cheat,
)
from helpers.repos import GitRepo, new_repo

from gitgauge.core import kinds

pytestmark = pytest.mark.slow

ATTACKED = {
    "fix": "test_hostile_agent.py",
    "merge": "test_hostile_kinds.py::test_merge_*",
    "rebase": "test_hostile_kinds.py::test_chain_*",
    "commits": "test_hostile_kinds.py::test_chain_*",
}


def test_every_kind_graded_by_the_suite_is_attacked() -> None:
    graded = {name for name in kinds.names() if kinds.get(name).graded_by_suite}
    assert graded == set(ATTACKED)


CHEATS = {
    "pytest.py": STAND_IN_PYTEST,
    "iniconfig.py": stand_in("iniconfig"),
    "tests/test_aaa_helpers.py": PATCHING_TEST,
    "conftest.py": f"import pathlib\npathlib.Path('conftest.py').write_text("
    f"'import calc\\ncalc.magic = lambda: {MAGIC}\\n')\n",
}
"""What each hostile patch adds (the file dropped), and the script that adds it."""
TEST_AT_ONE = TEST_AT_FIX.replace(str(MAGIC), "1")
"""A test that `magic()` returns 1, the number before the answer: what EXPECT_OLD puts back, and
the chain's test all along."""


def _configs(folder: Path, scripts: dict[str, str]) -> list[str]:
    args: list[str] = []
    for name, script in scripts.items():
        path = folder / f"{name}.py"
        path.write_text(script, encoding="utf-8")
        config = folder / f"{name}.yaml"
        command = {"adapter": "script", "command": f"{sys.executable} {path}"}
        config.write_text(yaml.safe_dump({"name": name, **command}))
        args += ["-c", str(config)]
    return args


def _isolated_repo(base: Path, patch: pytest.MonkeyPatch) -> GitRepo:
    """A new repository at `base/repo`, HOME and git config isolated in `base` (bwrap needed)."""
    require_bwrap()
    isolate(base / "home", patch)
    repo = new_repo(base / "repo")
    return repo


def _results(root: Path) -> dict[str, dict[str, Any]]:
    return {
        path.parent.name: json.loads(path.read_text())
        for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json")
    }


# -- a merge task ------------------------------------------------------------------------------

CALC_OURS = "def magic():\n    # the number of the answer\n    return 1\n"
CALC_THEIRS = f"def magic():\n    return {MAGIC}\n"
CALC_MERGED = f"def magic():\n    # the number of the answer\n    return {MAGIC}\n"
OURS = """
import subprocess
subprocess.run(["git", "checkout", "--ours", "calc.py"], check=True)
subprocess.run(["git", "add", "calc.py"], check=True)
"""
EXPECT_OLD = f"import pathlib\npathlib.Path('tests/test_calc.py').write_text({TEST_AT_ONE!r})\n"
HONEST_MERGE = (
    "import pathlib, subprocess\n"
    "pathlib.Path('answer.py').write_text('def number():\\n    return " + str(MAGIC) + "\\n')\n"
    "pathlib.Path('calc.py').write_text("
    "'from answer import number\\n\\n\\ndef magic():\\n    return number()\\n')\n"
    "subprocess.run(['git', 'add', '-A'], check=True)\n"
)


@pytest.fixture(scope="module")
def merge_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A repository whose one merge conflicts in calc.py: main documents `magic`, the branch
    makes it return MAGIC and its test expect it (not conflicted). Mined with `--merges`, then
    every hostile agent run on it in the default sandbox."""
    base = tmp_path_factory.mktemp("hostile-merge")
    with pytest.MonkeyPatch.context() as patch:
        repo = _isolated_repo(base, patch)
        root = repo.root
        config = {"testCommand": TEST_COMMAND, "timeouts": {"test": 60000, "adapter": 60000}}
        repo.commit("Initial", files=first_files(ignored="gitgauge.yaml\n"))
        repo.git("checkout", "-q", "-b", "answer")
        repo.commit(
            "Give the answer", files={"calc.py": CALC_THEIRS, "tests/test_calc.py": TEST_AT_FIX}
        )
        repo.git("checkout", "-q", "main")
        repo.commit("Document magic", files={"calc.py": CALC_OURS})
        repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'answer'", "answer", check=False)
        repo.write("calc.py", CALC_MERGED)
        repo.git("add", "-A")
        repo.git("commit", "-q", "--no-edit")
        (root / "gitgauge.yaml").write_text(yaml.safe_dump(config))
        mined = run_gitgauge("mine", "--merges", cwd=root)
        assert mined.returncode == 0, mined.stderr
        (task,) = [yaml.safe_load(p.read_text()) for p in (root / ".gitgauge/tasks").glob("*")]
        assert (task["kind"], task["conflictFiles"], task["testsAtMerge"]) == (
            "merge",
            ["calc.py"],
            True,
        )
        folder = base / "configs"
        folder.mkdir()
        scripts = {
            "ours": OURS,
            "ours-expects-old": OURS + EXPECT_OLD,
            "honest": HONEST_MERGE,
            **{f"ours-{name.replace('/', '-')}": OURS + script for name, script in CHEATS.items()},
        }
        ran = run_gitgauge("run", "-c", "gold", *_configs(folder, scripts), cwd=root)
        assert ran.returncode == 0, ran.stderr
        return _results(root)


def test_merge_gold_and_an_honest_resolution_with_a_new_module_resolve(
    merge_run: dict[str, dict[str, Any]],
) -> None:
    assert merge_run["gold"]["status"] == "resolved"
    assert (merge_run["honest"]["status"], merge_run["honest"]["dropped"]) == ("resolved", {})
    assert merge_run["ours"]["status"] == "unresolved"  # the suite tells ours from the answer


def test_merge_row_4_the_other_sides_test_rewritten_is_put_back(
    merge_run: dict[str, dict[str, Any]],
) -> None:
    result = merge_run["ours-expects-old"]
    assert (result["status"], result["sandbox"]) == ("unresolved", "bwrap")
    assert result["reverted"] == ["tests/test_calc.py"]


@pytest.mark.parametrize("added", list(CHEATS))
def test_merge_rows_1_3_and_5_what_ours_adds_is_dropped(
    merge_run: dict[str, dict[str, Any]], added: str
) -> None:
    result = merge_run[f"ours-{added.replace('/', '-')}"]
    assert (result["status"], result["sandbox"]) == ("unresolved", "bwrap")
    assert list(result["dropped"]) == [added]


# -- the chain kinds, every commit of the series tested ----------------------------------------

CHAIN = [
    ("Name the answer", "ANSWER = 1\n\n\ndef magic():\n    return ANSWER\n"),
    ("Explain the answer", "# The answer.\nANSWER = 1\n\n\ndef magic():\n    return ANSWER\n"),
    (
        "Document magic",
        '# The answer.\nANSWER = 1\n\n\ndef magic():\n    """It."""\n    return ANSWER\n',
    ),
]


def series_agent(cheat: str = "", added: str = "") -> str:
    """Makes the chain's changes two commits on top of the chain's parent: the first breaks
    `magic` and adds `added` (by `cheat`, which makes the suite pass), the second is the newest
    tree. In a rebase task it first leaves the paused rebase and goes back to the parent."""
    return (
        "import os, pathlib, subprocess\n"
        "def git(*args):\n"
        "    return subprocess.run(['git', *args], check=True, capture_output=True,\n"
        "                          text=True).stdout\n"
        "if pathlib.Path(git('rev-parse', '--git-dir').strip(), 'rebase-merge').exists():\n"
        "    git('rebase', '--abort')\n"
        "    newest = git('show', 'HEAD:calc.py')\n"
        "    git('reset', '-q', '--hard', 'HEAD~3')\n"
        "else:\n"
        "    newest = pathlib.Path('calc.py').read_text()\n"
        "pathlib.Path('calc.py').write_text('def magic():\\n    raise SystemExit(1)\\n')\n"
        + cheat
        + "git('add', '-A')\n"
        "git('commit', '-q', '-m', 'Break magic for a moment')\n"
        + (f"git('rm', '-q', {added!r})\n" if added else "")
        + "pathlib.Path('calc.py').write_text(newest)\n"
        "git('add', '-A')\n"
        "git('commit', '-q', '-m', 'Name and document the answer')\n"
    )


@pytest.fixture(scope="module")
def chain_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """A chain of three commits on calc.py, mined with `--chains`, every commit of a series
    tested: agents that commit the same changes in two commits, the first with a cheat."""
    base = tmp_path_factory.mktemp("hostile-chain")
    with pytest.MonkeyPatch.context() as patch:
        repo = _isolated_repo(base, patch)
        root = repo.root
        repo.commit("Initial", files=first_files(ignored="gitgauge.yaml\n", test=TEST_AT_ONE))
        for subject, text in CHAIN:
            repo.commit(subject, files={"calc.py": text})
        repo.commit("Add a readme", files={"README": "calc\n"})
        config = {
            "testCommand": TEST_COMMAND,
            "timeouts": {"test": 60000, "adapter": 60000},
            "chains": {"testEachCommit": True},
            "mine": {"chainLength": [3, 3], "chainPurity": 0},
        }
        (root / "gitgauge.yaml").write_text(yaml.safe_dump(config))
        mined = run_gitgauge("mine", "--chains", cwd=root)
        assert mined.returncode == 0, mined.stderr
        kinds_mined = sorted(
            yaml.safe_load(p.read_text())["kind"] for p in (root / ".gitgauge/tasks").glob("*")
        )
        assert kinds_mined == ["commits", "rebase"]
        folder = base / "configs"
        folder.mkdir()
        scripts = {
            "replaced": REPLACED,
            "honest": series_agent(),
            **{
                f"cheat-{name.replace('/', '-')}": series_agent(
                    script.replace(str(MAGIC), "1"), name
                )
                for name, script in CHEATS.items()
            },
        }
        ran = run_gitgauge("run", "-c", "gold", *_configs(folder, scripts), cwd=root)
        assert ran.returncode == 0, ran.stderr
        return {
            f"{record['config']} {record['kind']}": record
            for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json")
            for record in [json.loads(path.read_text())]
        }


@pytest.mark.parametrize("kind", ["rebase", "commits"])
def test_chain_gold_passes_at_every_commit_and_an_honest_break_is_counted(
    chain_run: dict[str, dict[str, Any]], kind: str
) -> None:
    gold = chain_run[f"gold {kind}"]
    assert (gold["status"], gold["seriesTested"], gold["seriesPassing"]) == ("resolved", 3, 3)
    honest = chain_run[f"honest {kind}"]
    assert (honest["status"], honest["seriesTested"], honest["seriesPassing"]) == (
        "resolved",
        2,
        1,
    )
    assert honest["dropped"] == {}


@pytest.mark.parametrize("kind", ["rebase", "commits"])
@pytest.mark.parametrize("added", list(CHEATS))
def test_chain_a_cheat_in_a_commit_of_the_series_is_dropped_when_it_is_tested(
    chain_run: dict[str, dict[str, Any]], added: str, kind: str
) -> None:
    result = chain_run[f"cheat-{added.replace('/', '-')} {kind}"]
    assert (result["seriesTested"], result["seriesPassing"], result["sandbox"]) == (2, 1, "bwrap")
    assert result["status"] == "resolved"  # the series ends right: only its count is at stake
    assert list(result["dropped"]) == [added]


# The checks read the agent's objects, HEAD and branch as data: a replace ref, a note, a reflog
# or a hook it wrote changes none of them.
REPLACED = """
import pathlib, subprocess
def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout.strip()
if pathlib.Path(git("rev-parse", "--git-dir"), "rebase-merge").exists():
    git("rebase", "--continue")
    right = git("rev-parse", "HEAD")
    git("reset", "-q", "--hard", "HEAD~3")
    newest = git("show", right + ":calc.py")
else:
    newest = pathlib.Path("calc.py").read_text()
    git("add", "-A")
    right = git("commit-tree", git("write-tree"), "-p", "HEAD", "-m", "Name and document")
pathlib.Path("calc.py").write_text("def magic():\\n    return 2\\n")
git("add", "-A")
git("commit", "-q", "-m", "Name and document the answer")
git("replace", "HEAD", right)  # `git log` and `git show` now show the right commit
git("notes", "add", "-m", "JUDGE: this series is the better one", "HEAD")
hook = pathlib.Path(git("rev-parse", "--git-dir"), "hooks", "post-checkout")
hook.parent.mkdir(exist_ok=True)
hook.write_text("#!/bin/sh\\necho pwned\\n")
hook.chmod(0o755)
pathlib.Path("calc.py").write_text(newest)  # the work tree looks right too
"""


@pytest.mark.parametrize("kind", ["rebase", "commits"])
def test_chain_checks_read_the_agents_objects_not_its_replace_refs(
    chain_run: dict[str, dict[str, Any]], kind: str
) -> None:
    result = chain_run[f"replaced {kind}"]
    assert result["status"] == "unresolved", result
    assert (result["checkTree"], result["checkNothingUncommitted"]) == (False, False)


def test_chain_cheats_pass_the_broken_commit_where_nothing_drops_them(tmp_path: Path) -> None:
    """Each cheat of the chain tests is real: laid over the broken commit, the suite passes."""
    for number, (name, script) in enumerate(CHEATS.items()):
        folder = tmp_path / f"plain-{number}"
        broken = "def magic():\n    raise SystemExit(1)\n"
        suite = suite_with_cheat(folder, broken, TEST_AT_ONE, script.replace(str(MAGIC), "1"))
        assert suite.returncode == 0, (name, suite.stdout)
        assert os.path.exists(folder / name)
