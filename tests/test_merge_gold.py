"""Gold is exact on every merge task it can be built for: a conflict in one file, and outside it a
rename, a deletion, an added file, a symlink, an executable bit and a submodule pointer, each
changed by the merge. Gold must come out `exact` and `exactTree` on each (it is the calibration of
both columns), and a merge gitgauge cannot re-create is skipped at mine time with its reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolated
from helpers.repos import GitRepo, new_repo


def calc(word: str, tag: str) -> str:
    """src/calc.py with `greet` saying `word`: both sides of each merge change this one line."""
    return f"def greet(name):\n    return '{word} ' + name  # {tag}\n"


BASE_CALC = calc("Hello", "start")


@dataclass(frozen=True)
class Built:
    root: Path
    merges: dict[str, str]


def _merge(repo: GitRepo, branch: str, resolved: dict[str, str | None]) -> str:
    """Merge `branch` into main, resolve the conflicted files as `resolved`, commit."""
    return repo.merge([branch], f"Merge branch '{branch}'", resolved=resolved, day="2024-03-01")


def _conflict(repo: GitRepo, name: str, other_side: dict[str, str | None]) -> str:
    """A branch `name` that rewords greet (the conflict) and makes `other_side`'s changes; main
    rewords greet too; the merge keeps a third wording and everything of the branch."""
    repo.git("checkout", "-q", "-b", name)
    for path, content in other_side.items():
        if content is None:
            repo.git("rm", "-q", "-r", path)
        elif content.startswith("->"):  # a rename
            repo.git("mv", path, content[2:])
        else:
            repo.write(path, content)
    repo.commit(f"{name}: informal greeting", files={"src/calc.py": calc("Hi", name)})
    repo.git("checkout", "-q", "main")
    repo.commit(f"{name}: formal greeting", files={"src/calc.py": calc("Dear", name)})
    return _merge(repo, name, {"src/calc.py": calc("Hey", name)})


def build(root: Path, submodule_source: Path) -> Built:
    repo = new_repo(root)
    repo.commit(
        "Initial project",
        files={
            "src/calc.py": BASE_CALC,
            "src/old_name.py": "X = 1\n",
            "src/doomed.py": "Y = 2\n",
            "tools/run.sh": "#!/bin/sh\necho run\n",
            "README.md": "# calc\n",
            ".gitignore": "__pycache__/\n",
        },
    )
    merges: dict[str, str] = {}
    merges["rename"] = _conflict(repo, "rename", {"src/old_name.py": "->src/new_name.py"})
    merges["delete"] = _conflict(repo, "delete", {"src/doomed.py": None})
    merges["added"] = _conflict(repo, "added", {"src/brand_new.py": "Z = 3\n"})
    # A symlink and an executable bit, both made on the branch.
    repo.git("checkout", "-q", "-b", "modes")
    (root / "docs").mkdir()
    os.symlink("../README.md", root / "docs" / "README.md")
    (root / "tools" / "run.sh").chmod(0o755)
    repo.commit("modes: informal greeting", files={"src/calc.py": calc("Hi", "modes")})
    repo.git("checkout", "-q", "main")
    repo.commit("modes: formal greeting", files={"src/calc.py": calc("Dear", "modes")})
    merges["modes"] = _merge(repo, "modes", {"src/calc.py": calc("Hey", "modes")})
    # A submodule pointer the branch moves (the submodule is never checked out anywhere).
    first = subprocess.run(
        ["git", "-C", str(submodule_source), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    second = subprocess.run(
        ["git", "-C", str(submodule_source), "rev-parse", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # A checkout of a repository with a submodule holds an empty directory for it.
    (root / "vendor" / "lib").mkdir(parents=True)
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},vendor/lib")
    repo.git("commit", "-q", "-m", "Vendor lib")
    repo.git("checkout", "-q", "-b", "submodule")
    repo.git("update-index", "--cacheinfo", f"160000,{second},vendor/lib")
    repo.git("commit", "-q", "-m", "Move lib")
    repo.commit("submodule: informal greeting", files={"src/calc.py": calc("Hi", "submodule")})
    repo.git("checkout", "-q", "main")
    repo.commit("submodule: formal greeting", files={"src/calc.py": calc("Dear", "submodule")})
    merges["submodule"] = _merge(repo, "submodule", {"src/calc.py": calc("Hey", "submodule")})
    # A merge that moves the pointer itself, which neither side did: gold cannot write it.
    repo.git("checkout", "-q", "-b", "pointer")
    repo.commit("pointer: informal greeting", files={"src/calc.py": calc("Hi", "pointer")})
    repo.git("checkout", "-q", "main")
    repo.commit("pointer: formal greeting", files={"src/calc.py": calc("Dear", "pointer")})
    subprocess.run(
        ["git", "merge", "--no-ff", "-q", "-m", "Merge branch 'pointer'", "pointer"],
        cwd=root, capture_output=True,
    )  # fmt: skip
    repo.write("src/calc.py", calc("Hey", "pointer"))
    repo.git("add", "src/calc.py")
    repo.git("update-index", "--cacheinfo", f"160000,{first},vendor/lib")
    repo.git("commit", "-q", "--no-edit", "--no-verify")
    merges["pointer"] = repo.git("rev-parse", "HEAD").strip()
    (root / "gitgauge.yaml").write_text("testCommand: 'true'\nmine:\n  merges: true\n")
    return Built(root, merges)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Built, dict[str, dict[str, object]]]:
    base = tmp_path_factory.mktemp("merge-gold")
    with isolated(base):
        source = new_repo(base / "lib")
        source.commit("lib one", files={"lib.txt": "1\n"})
        source.commit("lib two", files={"lib.txt": "2\n"})
        built = build(base / "repo", source.root)
        mined = run_gitgauge("mine", "--merges", cwd=built.root)
        assert mined.returncode == 0, mined.stderr
        (base / "mine.out").write_text(mined.stdout)
        gold = base / "gold.yaml"
        gold.write_text("name: gold\nadapter: gold\n")
        done = run_gitgauge("run", "-c", str(gold), cwd=built.root)
        assert done.returncode == 0, done.stderr
    by_merge: dict[str, dict[str, object]] = {}
    for path in (built.root / ".gitgauge" / "runs").glob("*/results/gold/*.json"):
        result = json.loads(path.read_text())
        task = yaml.safe_load(
            (built.root / ".gitgauge" / "tasks" / f"{result['task']}.yaml").read_text()
        )
        by_merge[str(task["merge"])] = result
    assert built.merges["pointer"] not in by_merge  # skipped at mine time: see below
    return built, by_merge


@pytest.mark.parametrize("scenario", ["rename", "delete", "added", "modes", "submodule"])
def test_gold_is_exact_and_exact_tree_on_a_merge_that_also_changes(
    ran: tuple[Built, dict[str, dict[str, object]]], scenario: str
) -> None:
    built, by_merge = ran
    result = by_merge[built.merges[scenario]]
    assert (result["status"], result["exact"], result["exactTree"]) == (
        "resolved",
        True,
        True,
    ), result


def test_a_merge_gold_cannot_re_create_is_skipped_at_mine_time_with_its_reason(
    ran: tuple[Built, dict[str, dict[str, object]]],
) -> None:
    built, _ = ran
    said = (built.root.parent / "mine.out").read_text()
    assert "the merge itself sets submodule vendor/lib" in said, said
    tasks = [yaml.safe_load(p.read_text()) for p in (built.root / ".gitgauge" / "tasks").glob("*")]
    assert built.merges["pointer"] not in {task["merge"] for task in tasks}
    assert len(tasks) == 5
    # What a side did is git's merge's, not the recorded merge's own: nothing outside.
    assert [task["outsideConflicts"] for task in tasks] == [[]] * 5
