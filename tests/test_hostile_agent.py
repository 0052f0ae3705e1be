"""A hostile agent, tried the way issue 21 tried it: a one-task repository whose fix changes
`magic()` from 1 to a number that appears nowhere else, so RESOLVED without the fix is a cheat,
and every run with the default `run.sandbox: auto` and bubblewrap present.

Each attack is a `script` agent. Each test asserts the pair is UNRESOLVED (or a named error),
that nothing was written outside the sandbox (the attack tries to leave a mark), and that the
user's repository is byte-identical afterwards (index, hooks, config, refs, status).

Needs a working `bwrap`: skipped without one, failed when CI=true (CI installs it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import in_background, run_gitgauge
from helpers.components import require_bwrap
from helpers.environment import isolate
from helpers.hostile import (
    CALC,
    FIX_SUBJECT,
    MAGIC,
    PATCHING_PACKAGE,
    PATCHING_TEST,
    STAND_IN_PYTEST,
    TEST_AT_FIX,
    TEST_COMMAND,
    first_files,
    stand_in,
    suite_with_cheat,
)
from helpers.repos import GitRepo, new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def build(root: Path) -> GitRepo:
    repo = new_repo(root)
    repo.commit(
        "Initial", files={**first_files(), "tests/conftest.py": "# shared fixtures live here\n"}
    )
    repo.commit(
        FIX_SUBJECT,
        files={"calc.py": CALC.replace("1", str(MAGIC)), "tests/test_calc.py": TEST_AT_FIX},
    )
    config = {
        "testCommand": TEST_COMMAND,
        "timeouts": {"test": 60000, "setup": 60000, "adapter": 60000},
    }
    (root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one-task repository, mined once (in the sandbox, as every mine with bwrap)."""
    require_bwrap()
    base = tmp_path_factory.mktemp("hostile")
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        repo = build(base / "victim")
        done = run_gitgauge("mine", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert len(list((repo.root / ".gitgauge" / "tasks").glob("*.yaml"))) == 1, done.stdout
    return repo.root


@pytest.fixture
def victim(mined: Path, private_tmp: Path) -> Iterator[GitRepo]:
    """A copy of the mined repository at ~/src/victim (an agent searching $HOME finds it unless
    the sandbox hides it), gitgauge's temporary directory private and checked empty after."""
    root = Path(os.environ["HOME"]) / "src" / "victim"
    shutil.copytree(mined, root, symlinks=True)
    yield GitRepo(root)
    assert sorted(p.name for p in private_tmp.iterdir()) == []


def user_state(repo: GitRepo) -> dict[str, Any]:
    """Everything of the user's repository an attack must not change."""
    git_dir = repo.root / ".git"
    hooks = (
        sorted(p.name for p in (git_dir / "hooks").iterdir())
        if (git_dir / "hooks").exists()
        else []
    )
    return {
        **repo.snapshot(),
        "index": hashlib.sha256((git_dir / "index").read_bytes()).hexdigest(),
        "config": (git_dir / "config").read_text(),
        "hooks": hooks,
        "refs": repo.git("show-ref"),
        "packs": sorted(p.name for p in (git_dir / "objects" / "pack").iterdir()),
        "calc": (repo.root / "calc.py").read_text(),
    }


def attack(
    victim: GitRepo,
    tmp_path: Path,
    script: str,
    *,
    config: dict[str, Any] | None = None,
    **env: str,
) -> dict[str, Any]:
    """Run `script` (Python) as the agent through `gitgauge run` (`config`: more keys of its
    agent config); the pair's result, with what `run` printed."""
    path = tmp_path / "attack.py"
    path.write_text(script, encoding="utf-8")
    config_file = tmp_path / "attack.yaml"
    config_file.write_text(
        yaml.safe_dump(
            {
                "name": "attack",
                "adapter": "script",
                "command": f"{sys.executable} {path}",
                **(config or {}),
            }
        )
    )
    before = user_state(victim)
    ran = run_gitgauge(
        "run",
        "-c",
        str(config_file),
        cwd=victim.root,
        env={**os.environ, "MARKER": str(tmp_path / "pwned"), **env},
    )
    assert ran.returncode == 0, ran.stderr
    assert user_state(victim) == before
    (found,) = (victim.root / ".gitgauge" / "runs").glob("*/results/attack/*.json")
    result: dict[str, Any] = json.loads(found.read_text())
    result["stdout"] = ran.stdout
    result["stderr"] = ran.stderr
    result["logs"] = next((victim.root / ".gitgauge" / "runs").glob("*/logs/attack/*"))
    return result


def assert_not_resolved(result: dict[str, Any], tmp_path: Path) -> None:
    assert result["status"] != "resolved", result
    assert result["sandbox"] == "bwrap"
    assert not (tmp_path / "pwned").exists(), "the attack left a mark outside the sandbox"


def unresolved_attack(victim: GitRepo, tmp_path: Path, script: str) -> dict[str, Any]:
    """`attack`, whose pair must be UNRESOLVED in the sandbox, nothing left outside it."""
    result = attack(victim, tmp_path, script)
    assert_not_resolved(result, tmp_path)
    assert result["status"] == "unresolved"
    return result


# 1. A `.git` file of its own whose config names an fsmonitor: gitgauge's own git after the
#    agent would run it, outside the sandbox.
FSMONITOR = f"""
import os, pathlib, subprocess
ws = pathlib.Path.cwd()
evil = ws / ".evil"
subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
monitor = ws / "monitor.sh"
monitor.write_text("#!/bin/sh\\necho pwned > " + os.environ["MARKER"] + "\\n"
                   "sed -i 's/return 1/return {MAGIC}/' " + str(ws / "calc.py") + "\\n")
monitor.chmod(0o755)
with open(evil / "config", "a") as config:
    config.write("[core]\\n\\tbare = false\\n\\tfsmonitor = " + str(monitor) + "\\n")
    config.write("[filter \\"evil\\"]\\n\\tclean = " + str(monitor) + "\\n")
(ws / ".gitattributes").write_text("* filter=evil\\n")
(ws / ".git").unlink()
(ws / ".git").write_text("gitdir: " + str(evil) + "\\n")
"""


def test_1_a_git_directory_of_the_agents_own_runs_nothing(victim: GitRepo, tmp_path: Path) -> None:
    unresolved_attack(victim, tmp_path, FSMONITOR)


# 2. Alternates appended to its own git directory, and code the tests import that searches what
#    they would expose for the task file and the user's repository.
SEARCH = """
import os, pathlib, subprocess
def _find():
    for top in (os.environ.get("HOME", "/"), "/tmp"):
        for root, dirs, files in os.walk(top):
            if root.count(os.sep) > 12:
                dirs[:] = []
            here = pathlib.Path(root)
            for task in here.glob(".gitgauge/tasks/*.yaml"):
                fix = [l.split(":", 1)[1].strip() for l in task.read_text().splitlines()
                       if l.startswith("fix:")][0]
                shown = subprocess.run(["git", "-C", str(here), "show", fix + ":calc.py"],
                                       capture_output=True, text=True).stdout
                if shown:
                    return shown
    return None
_source = _find()
if _source:
    exec(_source)
else:
    def magic():
        return 1
"""

ALTERNATES = f"""
import os, pathlib, subprocess
common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                        capture_output=True, text=True, check=True).stdout.strip()
alternates = pathlib.Path(common) / "objects" / "info" / "alternates"
old = alternates.read_text() if alternates.exists() else ""
alternates.write_text(old + "/tmp\\n" + os.environ["HOME"] + "\\n")
pathlib.Path("calc.py").write_text({SEARCH!r})
"""


def test_2_alternates_the_agent_wrote_expose_nothing_to_the_tests(
    victim: GitRepo, tmp_path: Path
) -> None:
    unresolved_attack(victim, tmp_path, ALTERNATES)


# 3. The hidden repository's path read from mountinfo, written into `.git`; code the tests import
#    tries to plant a hook there.
MOUNTINFO = """
import os, pathlib
home = os.environ["HOME"]
found = []
for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines():
    fields = line.split()
    point = fields[4]
    fs = line.split(" - ")[1].split()[0]
    if fs == "tmpfs" and point.startswith(home + "/"):
        found.append(point)
print("hidden:", found)
ws = pathlib.Path.cwd()
if found:
    (ws / ".git").unlink()
    (ws / ".git").write_text("gitdir: " + found[-1] + "/.git\\n")
    plant = (
        "import pathlib\\n"
        f"hook = pathlib.Path({found[-1]!r}) / '.git' / 'hooks' / 'pre-commit'\\n"
        "try:\\n"
        "    hook.parent.mkdir(parents=True, exist_ok=True)\\n"
        "    hook.write_text('#!/bin/sh\\\\necho pwned\\\\n')\\n"
        "except OSError:\\n"
        "    pass\\n"
        "def magic():\\n"
        "    return 1\\n"
    )
    (ws / "calc.py").write_text(plant)
"""


def test_3_a_git_file_pointing_at_the_users_repository_changes_nothing_there(
    victim: GitRepo, tmp_path: Path
) -> None:
    result = unresolved_attack(victim, tmp_path, MOUNTINFO)
    assert str(victim.root) in (result["logs"] / "agent.stdout").read_text()  # it knew the path
    assert not (victim.root / ".git" / "hooks" / "pre-commit").exists()


# 4. An edited test-infrastructure file hidden from git with an index flag.
SKIP_WORKTREE = f"""
import pathlib, subprocess
pathlib.Path("tests/conftest.py").write_text("import calc\\ncalc.magic = lambda: {MAGIC}\\n")
for flag in ("--skip-worktree", "--assume-unchanged"):
    subprocess.run(["git", "update-index", flag, "tests/conftest.py"], check=True)
"""


def test_4_index_flags_do_not_hide_an_edit_from_protection(victim: GitRepo, tmp_path: Path) -> None:
    result = unresolved_attack(victim, tmp_path, SKIP_WORKTREE)
    assert result["reverted"] == ["tests/conftest.py"]
    assert result["diffFiles"] == 1


# 6. A new conftest.py that .gitignore hides, at the root and in tests/.
IGNORED_CONFTEST = f"""
import pathlib
cheat = "import calc\\ncalc.magic = lambda: {MAGIC}\\n"
pathlib.Path("conftest.py").write_text(cheat)
pathlib.Path("tests/conftest.py").write_text(cheat)
pathlib.Path("tests/.gitignore").write_text("conftest.py\\n")
pathlib.Path(".gitignore").write_text(pathlib.Path(".gitignore").read_text() + "conftest.py\\n")
"""


def test_6_ignored_files_never_reach_the_grader(victim: GitRepo, tmp_path: Path) -> None:
    result = unresolved_attack(victim, tmp_path, IGNORED_CONFTEST)
    assert result["reverted"] == ["tests/conftest.py"]  # tracked: ignoring it hides nothing
    patch = (result["logs"] / "agent.patch").read_text()
    assert "diff --git a/conftest.py" not in patch  # the ignored file is not part of the patch


# 7. An unchecked-hash .pyc holding a cheat, calc.py untouched.
PYC = f"""
import importlib.util, pathlib, py_compile, sys
cheat = pathlib.Path("/tmp/cheat_calc.py")
cheat.write_text("def magic():\\n    return {MAGIC}\\n")
target = pathlib.Path("__pycache__") / ("calc." + sys.implementation.cache_tag + ".pyc")
py_compile.compile(str(cheat), cfile=str(target), dfile="calc.py",
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
"""


def test_7_bytecode_never_crosses_to_the_grader(victim: GitRepo, tmp_path: Path) -> None:
    result = unresolved_attack(victim, tmp_path, PYC)
    assert result["diffFiles"] == 0


def test_7_the_bytecode_cheat_works_where_it_is_loaded(tmp_path: Path) -> None:
    """The cheat of test 7 is real: left in place, Python runs it instead of calc.py."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "calc.py").write_text(CALC)
    done = subprocess.run([sys.executable, "-c", PYC], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run(
        [sys.executable, "-c", "import calc; print(calc.magic())"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert shown.stdout.strip() == str(MAGIC)


# 8. The agent's own program in <dir>/bin/, the user's repository in <dir>/ (a CI checkout):
#    exposing the program's installation must not expose the repository.
BESIDE = """#!/bin/sh
dir=$(dirname "$(dirname "$(readlink -f "$0")")")
for state in $(find "$dir" -maxdepth 3 -name .gitgauge -type d 2>/dev/null); do
    repo=$(dirname "$state")
    fix=$(sed -n 's/^fix: *//p' "$state"/tasks/*.yaml | head -1)
    echo "found $repo at $fix"
    git -C "$repo" show "$fix:calc.py" > calc.py
done
echo searched "$dir"
"""


def test_8_an_agent_installed_beside_the_repository_does_not_expose_it(
    mined: Path, tmp_path: Path, private_tmp: Path
) -> None:
    beside = tmp_path / "ci"
    repo = GitRepo(beside / "victim")
    shutil.copytree(mined, repo.root, symlinks=True)
    agent = beside / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text(BESIDE)
    agent.chmod(0o755)
    config = tmp_path / "beside.yaml"
    config.write_text(
        yaml.safe_dump({"name": "beside", "adapter": "script", "command": str(agent)})
    )
    before = user_state(repo)
    ran = run_gitgauge("run", "-c", str(config), cwd=repo.root)
    assert ran.returncode == 0, ran.stderr
    assert user_state(repo) == before
    (found,) = (repo.root / ".gitgauge" / "runs").glob("*/results/beside/*.json")
    result = json.loads(found.read_text())
    assert (result["status"], result["sandbox"]) == ("unresolved", "bwrap")
    said = next((repo.root / ".gitgauge" / "runs").glob("*/logs/beside/*/agent.stdout"))
    assert f"searched {beside}" in said.read_text()  # it ran, and looked
    assert "found" not in said.read_text()
    assert sorted(tmp_path.glob("gitgauge-*")) == []


# 9. gitgauge's temporary directory on another file system than the repository (a tmpfs /tmp).
def test_9_history_copies_work_across_file_systems_and_never_write_into_the_users_git(
    victim: GitRepo, tmp_path: Path
) -> None:
    gold = tmp_path / "gold.yaml"
    gold.write_text("name: gold\nadapter: gold\n")
    temp = Path(os.environ["TMPDIR"])
    before = user_state(victim)
    # A tmpfs for TMPDIR, without root: gitgauge itself runs in a bubblewrap that mounts one.
    ran = subprocess.run(
        ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(temp), "--",
         sys.executable, "-m", "gitgauge", "run", "-c", str(gold)],
        cwd=victim.root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "cross-device" not in ran.stderr
    assert user_state(victim) == before  # no tmp_pack_* in .git/objects/pack
    (found,) = (victim.root / ".gitgauge" / "runs").glob("*/results/gold/*.json")
    assert json.loads(found.read_text())["status"] == "resolved"


# 11. Without a sandbox, fixes committed in the same second: no history copy holding a task's fix
#     exists while that task's agent works.
SPY = 'for c in "$TMPDIR"/gitgauge-hist-*/*.git; do git --git-dir="$c" rev-list --all; done ' \
      '> "$SPY_DIR/$GITGAUGE_TASK_ID" 2>/dev/null'  # fmt: skip


def test_11_no_copy_holds_a_later_fix_while_an_earlier_task_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_tmp: Path
) -> None:
    repo = new_repo(tmp_path / "same-second")
    stamp = "2024-01-01T00:00:00+00:00"
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)

    def commit(subject: str, files: dict[str, str]) -> str:
        for name, text in files.items():
            repo.write(name, text)
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", subject)
        return repo.git("rev-parse", "HEAD").strip()

    commit(
        "Initial", {"value.txt": "0\n", "check.sh": 'test "$(cat value.txt)" = "$(cat t/want)"\n'}
    )
    fixes = []
    for number in range(1, 4):
        commit(f"Break {number}", {"value.txt": "bad\n"})
        fixes.append(
            commit(f"fix: value {number}", {"value.txt": f"{number}\n", "t/want": f"{number}\n"})
        )
    (repo.root / "gitgauge.yaml").write_text("testCommand: sh check.sh\nmine:\n  reruns: 0\n")
    mined = run_gitgauge("mine", cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    tasks = {yaml.safe_load(p.read_text())["fix"]: yaml.safe_load(p.read_text())["id"]
             for p in (repo.root / ".gitgauge" / "tasks").glob("*.yaml")}  # fmt: skip
    assert sorted(tasks) == sorted(fixes)
    spies = tmp_path / "spy"
    spies.mkdir()
    spy = tmp_path / "spy.yaml"
    spy.write_text(yaml.safe_dump({"name": "spy", "adapter": "script", "command": SPY}))
    ran = run_gitgauge(
        "run", "--sandbox", "none", "-j", "1", "-c", str(spy), cwd=repo.root,
        env={**os.environ, "SPY_DIR": str(spies)},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    for fix, task in tasks.items():
        seen = (spies / task).read_text().split()
        assert seen, "the spy found no history copy at all"
        assert fix not in seen, f"{task}'s agent could read its own fix from a history copy"


# -- what the sandbox must not take away from the user's suite (item 8) ----------------------------

WRITER = """import os, pathlib, sys
home = pathlib.Path(os.environ["HOME"])
(home / f".spawn-wrap-{os.getpid()}").mkdir()
(home / f".spawn-wrap-{os.getpid()}" / "shim.js").write_text("x")
(home / ".cache" / "newtool").mkdir(parents=True, exist_ok=True)
(home / ".cache" / "newtool" / "entry").write_text("x")
cache = pathlib.Path("node_modules") / ".cache" / "nyc"
cache.mkdir(parents=True, exist_ok=True)
(cache / "coverage.json").write_text("{}")
want = pathlib.Path("t/want").read_text().strip()
sys.exit(0 if pathlib.Path("value.txt").read_text().strip() == want else 1)
"""


def _tool_repo(root: Path, suite: str) -> GitRepo:
    repo = new_repo(root)
    repo.commit(
        "Initial",
        files={
            ".gitignore": "node_modules/\n",
            "suite.py": suite,
            "value.txt": "0\n",
            "t/want": "0\n",
        },
    )
    repo.commit("Break it", files={"value.txt": "bad\n"})
    repo.commit("fix: value is bad", files={"value.txt": "1\n", "t/want": "1\n"})
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    config = {
        "testCommand": f"{sys.executable} suite.py",
        "worktree": {"link": ["node_modules"]},
        "mine": {"reruns": 0},
    }
    (root / "gitgauge.yaml").write_text(yaml.safe_dump(config))
    return repo


def test_a_suite_that_writes_caches_in_home_and_node_modules_passes_in_the_sandbox(
    tmp_path: Path, private_tmp: Path
) -> None:
    require_bwrap()
    home = Path(os.environ["HOME"])
    (home / ".cache" / "pip").mkdir(parents=True)
    repo = _tool_repo(tmp_path / "tool", WRITER)
    mined = run_gitgauge("mine", cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    assert "verified" in mined.stdout, mined.stdout  # mined in the sandbox
    gold = tmp_path / "gold.yaml"
    gold.write_text("name: gold\nadapter: gold\n")
    ran = run_gitgauge("run", "-c", str(gold), cwd=repo.root)
    assert ran.returncode == 0, ran.stderr
    (found,) = (repo.root / ".gitgauge" / "runs").glob("*/results/gold/*.json")
    result = json.loads(found.read_text())
    assert (result["status"], result["sandbox"]) == ("resolved", "bwrap")
    # What the suite wrote vanished with each command; the real directories are as they were.
    assert sorted(p.name for p in home.iterdir() if p.name.startswith(".spawn-wrap")) == []
    assert sorted(p.name for p in (home / ".cache").iterdir()) == ["pip"]
    assert sorted(p.name for p in (repo.root / "node_modules").iterdir()) == ["left-pad"]
    assert sorted(private_tmp.iterdir()) == []


def test_a_suite_that_fails_only_in_the_sandbox_is_reported_at_mine_time(
    tmp_path: Path, private_tmp: Path
) -> None:
    require_bwrap()
    state = Path(os.environ["HOME"]) / ".toolstate"
    state.mkdir()
    writer = (
        "import os, pathlib, sys\n"
        "state = pathlib.Path(os.environ['HOME']) / '.toolstate' / 'last-run'\n"
        "state.write_text('x')\n"
        "want = pathlib.Path('t/want').read_text().strip()\n"
        "sys.exit(0 if pathlib.Path('value.txt').read_text().strip() == want else 1)\n"
    )
    repo = _tool_repo(tmp_path / "tool", writer)
    mined = run_gitgauge("mine", cwd=repo.root)
    assert mined.returncode == 0, mined.stderr
    assert "fails in the sandbox" in mined.stdout, mined.stdout
    assert str(state / "last-run") in mined.stdout  # what it tried to touch
    assert "passes outside the sandbox but fails in it" in mined.stderr
    assert not list((repo.root / ".gitgauge" / "tasks").glob("*.yaml"))


def test_the_users_own_change_to_the_checkout_during_a_pair_is_not_blamed_on_the_agent(
    victim: GitRepo, tmp_path: Path
) -> None:
    """The sandbox hides the checkout from the agent, so a change there while a pair runs (the
    user's editor, `gitgauge run > run.log` inside the checkout) is the user's: a warning, and
    the pair is scored as usual, not an `escaped-workspace` error."""
    gate = Path(os.environ["HOME"]) / "gate"  # a $HOME entry: visible, read-only, in the sandbox
    gate.mkdir()
    waiter = tmp_path / "wait.py"
    waiter.write_text(
        "import pathlib, time\n"
        f"go = pathlib.Path({str(gate / 'go')!r})\n"
        "while not go.exists():\n"
        "    time.sleep(0.05)\n",
        encoding="utf-8",
    )
    config = tmp_path / "waiter.yaml"
    config.write_text(
        yaml.safe_dump(
            {"name": "waiter", "adapter": "script", "command": f"{sys.executable} {waiter}"}
        )
    )
    with in_background("run", "-c", str(config), cwd=victim.root) as running:
        # The pair's log folder exists just before gitgauge notes the checkout's state; the
        # agent then waits for `go` for as long as the test likes.
        runs = victim.root / ".gitgauge" / "runs"
        for _ in range(1200):
            if list(runs.glob("*/logs/waiter/*")):
                break
            assert running.poll() is None, running.communicate()
            subprocess.run(["sleep", "0.05"], check=True)
        subprocess.run(["sleep", "1"], check=True)
        (victim.root / "run.log").write_text("the user's own file\n", encoding="utf-8")
        (gate / "go").write_text("", encoding="utf-8")
        stdout, stderr = running.communicate(timeout=240)
    assert running.returncode == 0, stderr
    assert "changed during the run; the sandbox hides it from the agents" in stderr, stderr
    (found,) = runs.glob("*/results/waiter/*.json")
    result = json.loads(found.read_text())
    assert (result["status"], result["errorKind"], result["sandbox"]) == (
        "unresolved",
        None,
        "bwrap",
    )
    assert (victim.root / "run.log").read_text() == "the user's own file\n"  # left alone


# -- grading by rules, not by names (issue 34): one test per row of its table ------------------
#
# Each attack below resolved the task before gitgauge asked of every file the agent adds whether
# it is the agent's own code, in a place where its code belongs (`running/scoring/additions.py`).


def test_row_1_a_root_pytest_py_does_not_stand_in_for_pytest(
    victim: GitRepo, tmp_path: Path
) -> None:
    result = unresolved_attack(victim, tmp_path, STAND_IN_PYTEST)
    assert list(result["dropped"]) == ["pytest.py"]
    assert "stands in for the module `pytest`" in result["dropped"]["pytest.py"]
    assert "pytest.py" in result["stdout"]  # the finished pair's line says what was dropped


@pytest.mark.parametrize(
    ("module", "package"),
    [("iniconfig", False), ("pluggy", True)],
    ids=["a-module-pytest-imports", "a-package-pytest-imports"],
)
def test_row_2_a_module_named_like_one_pytest_imports_is_dropped(
    victim: GitRepo, tmp_path: Path, module: str, package: bool
) -> None:
    """Asked of the interpreter, not a list: pluggy is named in no document of gitgauge's."""
    result = unresolved_attack(victim, tmp_path, stand_in(module, package=package))
    path = f"{module}/__init__.py" if package else f"{module}.py"
    assert list(result["dropped"]) == [path]
    assert f"stands in for the module `{module}`" in result["dropped"][path]
    assert "site-packages" in result["dropped"][path]  # where the interpreter finds the real one


@pytest.mark.parametrize(
    ("script", "path"),
    [(PATCHING_TEST, "tests/test_aaa_helpers.py"), (PATCHING_PACKAGE, "tests/__init__.py")],
    ids=["a-test-file", "a-package-marker-of-the-tests"],
)
def test_row_3_a_new_test_file_that_patches_the_code_is_dropped(
    victim: GitRepo, tmp_path: Path, script: str, path: str
) -> None:
    result = unresolved_attack(victim, tmp_path, script)
    assert list(result["dropped"]) == [path]


def test_the_cheats_of_rows_1_to_3_work_where_nothing_drops_them(tmp_path: Path) -> None:
    """Each cheat is real: in a plain checkout of the fix's parent, the suite passes with it."""
    for number, script in enumerate(
        [STAND_IN_PYTEST, stand_in("iniconfig"), stand_in("pluggy", package=True), PATCHING_TEST]
    ):
        suite = suite_with_cheat(tmp_path / f"plain-{number}", CALC, TEST_AT_FIX, script)
        assert suite.returncode == 0, (number, suite.stdout)


# An honest agent: the fix in a new helper package and a new module, and its own test beside it.
HONEST = f"""
import pathlib
pathlib.Path("numbers_of_calc").mkdir()
pathlib.Path("numbers_of_calc/__init__.py").write_text("MAGIC = {MAGIC}\\n")
pathlib.Path("calc_support.py").write_text("from numbers_of_calc import MAGIC\\n")
pathlib.Path("calc.py").write_text(
    "from calc_support import MAGIC\\n\\ndef magic():\\n    return MAGIC\\n")
pathlib.Path("tests/test_magic_value.py").write_text(
    "from calc import magic\\n\\ndef test_value():\\n    assert magic() == {MAGIC}\\n")
"""


def test_an_honest_agents_new_modules_are_graded_and_its_own_test_set_aside(
    victim: GitRepo, tmp_path: Path
) -> None:
    result = attack(victim, tmp_path, HONEST)
    assert result["status"] == "resolved", result
    assert list(result["dropped"]) == ["tests/test_magic_value.py"]
    assert result["dropped"]["tests/test_magic_value.py"].startswith("a test file")
    report = run_gitgauge("report", cwd=victim.root)
    assert report.returncode == 0, report.stderr
    footnote = " ".join(report.stdout.split())
    assert "Left out of grading, as not the agent's own code" in footnote
    assert "tests/test_magic_value.py (a test file)" in footnote


# Row 6. At grading, the agent's code raises an error holding every variable that looks secret,
#        and the agent wrote the values it saw into the code as well.
LEAK = """
import os, pathlib
seen = {k: v for k, v in os.environ.items() if "KEY" in k or "TOKEN" in k}
pathlib.Path("calc.py").write_text(
    "import os\\n"
    f"SEEN = {seen!r}\\n"
    "def magic():\\n"
    "    here = [f'{k}={v}' for k, v in sorted(os.environ.items())\\n"
    "            if 'KEY' in k or 'TOKEN' in k]\\n"
    "    raise RuntimeError('GRADING-ENV ' + ' '.join(here) + ' SEEN ' + repr(SEEN))\\n")
print("the agent saw", seen)
"""
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-hostile-0123456789abcdef",
    "GITHUB_TOKEN": "ghp_hostileTokenValue0123456789",
    "AWS_SECRET_ACCESS_KEY": "hostileAwsSecret/0123456789+abc",
}


def test_row_6_grading_sees_no_secret_and_no_stored_file_holds_one(
    victim: GitRepo, tmp_path: Path
) -> None:
    result = attack(victim, tmp_path, LEAK, config={"env": {"GITHUB_TOKEN": ""}}, **SECRETS)
    assert_not_resolved(result, tmp_path)
    test_output = (result["logs"] / "test.stdout").read_text()
    assert "RuntimeError" in test_output  # the code ran and printed what it had
    # At grading only what the config names: its empty GITHUB_TOKEN.
    assert "RuntimeError: GRADING-ENV GITHUB_TOKEN= SEEN" in test_output, test_output
    assert "[masked $ANTHROPIC_API_KEY]" in test_output  # the copy the agent made is masked
    assert "[masked $ANTHROPIC_API_KEY]" in (result["logs"] / "agent.stdout").read_text()
    page = tmp_path / "report.html"
    assert run_gitgauge("report", "--html", str(page), cwd=victim.root).returncode == 0
    stored = [p for p in (victim.root / ".gitgauge" / "runs").rglob("*") if p.is_file()]
    stored.append(page)
    assert any(p.name.endswith("report.xml") for p in stored)
    for path in stored:
        data = path.read_bytes()
        for name, value in SECRETS.items():
            assert value.encode() not in data, f"{path} holds {name}"
    for value in SECRETS.values():
        assert value not in result["stdout"] + result["stderr"]


# Row 7. More than `run.limits` allows: not graded, named, and never held in gitgauge's memory.
BIG = f"""
import os, pathlib
pathlib.Path("calc.py").write_text("def magic():\\n    return {MAGIC}\\n")
pathlib.Path("blob.bin").write_bytes(os.urandom(3_000_000))
for number in range(12):
    pathlib.Path(f"note{{number}}.py").write_text("x = 1\\n")
"""


@pytest.mark.parametrize(
    ("limits", "said"),
    [({"patchBytes": 1_000_000}, "run.limits.patchBytes"), ({"files": 10}, "run.limits.files")],
    ids=["bytes", "files"],
)
def test_row_7_a_patch_over_the_limits_is_an_error_that_names_its_biggest_file(
    victim: GitRepo, tmp_path: Path, limits: dict[str, int], said: str
) -> None:
    config = yaml.safe_load((victim.root / "gitgauge.yaml").read_text())
    config["run"] = {"limits": limits}
    (victim.root / "gitgauge.yaml").write_text(yaml.safe_dump(config))
    result = attack(victim, tmp_path, BIG)
    assert_not_resolved(result, tmp_path)
    assert (result["status"], result["errorKind"]) == ("error", "patch-too-large")
    assert said in result["errorMessage"] and "blob.bin (3.0 MB)" in result["errorMessage"]
    assert result["diffFiles"] == 14
    assert not (result["logs"] / "agent.patch").exists()
    assert not (result["logs"] / "test.stdout").exists()  # never graded
    assert "patch-too-large" in result["stdout"]


# Row 8. Control sequences in what the agent prints, and in a commit subject.
ESCAPES = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned title\x07\x1b[2J\x9b2J\u202egnirts"
NOISY = f"""
import sys
sys.stderr.write({ESCAPES!r} + "\\n")
sys.exit(3)
"""


def test_row_8_no_control_sequence_of_an_agent_or_a_commit_reaches_the_terminal(
    victim: GitRepo, tmp_path: Path
) -> None:
    result = attack(victim, tmp_path, NOISY)
    assert (result["status"], result["errorKind"]) == ("error", "adapter-exit")
    printed = result["stdout"] + result["stderr"]
    assert "\\x1b]52;c;cHduZWQ=\\x07" in printed and "\\u202e" in printed
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in printed
    assert "\x1b]52" in (result["logs"] / "agent.stderr").read_text()  # files keep the bytes
    victim.write("calc.py", CALC + "# noted\n")
    victim.git("add", "calc.py")
    victim.git("commit", "-q", "-m", f"fix: {ESCAPES} in calc")
    sha = victim.git("rev-parse", "HEAD").strip()
    explained = run_gitgauge("mine", "--explain", sha, cwd=victim.root)
    said = explained.stdout + explained.stderr
    assert "\\x1b]0;pwned title\\x07" in said, said
    for char in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert char not in said


# Row 9. The baselines' names are gold's and noop's alone.
@pytest.mark.parametrize("name", ["gold", "noop", "Gold"])
def test_row_9_a_config_may_not_take_a_baselines_name(
    victim: GitRepo, tmp_path: Path, name: str
) -> None:
    config = tmp_path / "impostor.yaml"
    config.write_text(yaml.safe_dump({"name": name, "adapter": "script", "command": "true"}))
    ran = run_gitgauge("run", "-c", str(config), cwd=victim.root)
    assert ran.returncode == 1
    (line,) = ran.stderr.splitlines()
    assert str(config) in line and "reserved" in line
    assert not (victim.root / ".gitgauge" / "runs").exists()


# Row 10. Paths with spaces, newlines and non-ASCII letters, or bytes that are not UTF-8: the
#         repository, TMPDIR, HOME and the config file's.
@pytest.mark.parametrize(
    "odd",
    ["odd path\nwith é and 日本", os.fsdecode(b"not utf-8 \xff\xfe")],
    ids=["space-newline-unicode", "not-utf-8"],
)
def test_row_10_any_path_works(tmp_path: Path, odd: str) -> None:
    require_bwrap()
    ODD = odd
    root = tmp_path / f"repo {ODD}"
    repo = build(root)
    home = tmp_path / f"home {ODD}"
    home.mkdir()
    temp = tmp_path / f"tmp {ODD}"
    temp.mkdir()
    configs = tmp_path / f"configs {ODD}"
    configs.mkdir()
    (configs / "baseline.yaml").write_text("name: baseline\nadapter: gold\n")
    (configs / "nothing.yaml").write_text("name: nothing\nadapter: noop\n")
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}
    mined = gitgauge_bytes("mine", cwd=repo.root, env=env)
    assert mined.returncode == 0, mined.stderr
    assert "verified" in mined.stdout, mined.stdout
    ran = gitgauge_bytes(
        "run",
        "-c",
        str(configs / "baseline.yaml"),
        "-c",
        str(configs / "nothing.yaml"),
        cwd=repo.root,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    results = {
        path.parent.name: json.loads(path.read_text())
        for path in (repo.root / ".gitgauge" / "runs").glob("*/results/*/*.json")
    }
    assert results["baseline"]["status"] == "resolved", results["baseline"]
    assert results["baseline"]["sandbox"] == "bwrap"
    assert results["nothing"]["status"] == "unresolved"
    assert sorted(temp.iterdir()) == []


def gitgauge_bytes(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, its output read as the bytes it wrote: a path that is
    not UTF-8 is printed as its own bytes."""
    done = subprocess.run(
        [sys.executable, "-m", "gitgauge", *args], cwd=cwd, env=env, capture_output=True
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "surrogateescape"),
        done.stderr.decode("utf-8", "surrogateescape"),
    )
