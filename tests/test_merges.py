"""Merge-conflict tasks end to end, through the real CLI: `gitgauge mine --merges` on a history
with merges of each kind, then `gitgauge run` with gold, noop, a script that resolves "ours" and
a cheater that looks for the recorded merge, then `gitgauge report`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import claude_binary, claude_env
from helpers.configs import configs_args, gold_noop_and, write_configs
from helpers.environment import isolated
from helpers.fakes.anthropic_api import serve as serve_anthropic
from helpers.fakes.messages_api import Rule, serve
from helpers.repos import TEST_COMMAND, GitRepo
from helpers.repos.merges import MergeRepo, build_merge_repo
from helpers.results import Watched, watch

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
"""A model the CLI prices, so the pair records a cost."""

OURS = (
    "for p in $(git diff --name-only --diff-filter=U); do "
    "if git cat-file -e :2:$p 2>/dev/null; then git checkout --ours -- $p && git add $p; "
    "else git rm -q $p; fi; done"
)

# Everything a curious agent could try, written to a journal per task; then it gives up.
CHEATER = (
    'out="$MERGE_JOURNAL/$GITGAUGE_TASK_ID.txt"; '
    '{ echo "STATUS"; git status --porcelain=v1; '
    'test -f "$(git rev-parse --git-path MERGE_HEAD)" && echo "MERGE_HEAD set"; '
    'echo "LOG"; git log --all --format=%H; '
    'echo "REFLOG"; git reflog --all --format=%H; '
    'echo "OBJECTS"; git cat-file --batch-all-objects --batch-check; '
    'echo "SHOW"; for s in $MERGE_SHAS; do git show --format=%H --no-patch $s; done; '
    'echo "REFS"; git for-each-ref; } > "$out" 2>&1; exit 0'
)


@dataclass(frozen=True)
class Mined(Watched):
    built: MergeRepo
    tasks: dict[str, dict[str, Any]]
    """scenario -> task record."""
    mine_output: str
    results: dict[tuple[str, str], dict[str, Any]]
    """(config, scenario or "fix") -> result record."""
    report: str
    compare: tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]
    """`compare noop gold` without and with `--kind merge`."""


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Mined:
    base = tmp_path_factory.mktemp("merges")
    with isolated(base):
        built = build_merge_repo(base / "repo")
        root = built.root
        agents = gold_noop_and(ours=OURS, cheater=CHEATER, aborter="git merge --abort; true")
        configs = write_configs(base / "configs", agents)
        watching = watch(base, root, "MERGE_JOURNAL", MERGE_SHAS=" ".join(built.merges.values()))
        env = watching.env
        mine = run_gitgauge("mine", "--merges", cwd=root, env=env)
        assert mine.returncode == 0, mine.stderr
        # No sandbox: the cheater writes its journal outside the workspace, and what this
        # module checks is what git shows a merge workspace (the sandbox has its own tests).
        args = configs_args(*configs.values())
        run = run_gitgauge("run", "--sandbox", "none", *args, cwd=root, env=env)
        assert run.returncode == 0, run.stderr + run.stdout
        report = run_gitgauge("report", cwd=root, env=env)
        assert report.returncode == 0, report.stderr
        mixed = run_gitgauge("compare", "noop", "gold", cwd=root, env=env)
        merge_only = run_gitgauge("compare", "noop", "gold", "--kind", "merge", cwd=root, env=env)
        watched = watching.done()
    by_sha = {sha: scenario for scenario, sha in built.merges.items()}
    tasks: dict[str, dict[str, Any]] = {}
    ids: dict[str, str] = {}
    for path in (root / ".gitgauge" / "tasks").glob("*.yaml"):
        record = yaml.safe_load(path.read_text())
        scenario = by_sha.get(record["fix"], "fix")
        tasks[scenario] = record
        ids[record["id"]] = scenario
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
        record = json.loads(path.read_text())
        results[(record["config"], ids[record["task"]])] = record
    return Mined(
        built=built,
        tasks=tasks,
        mine_output=mine.stdout,
        results=results,
        report=report.stdout,
        compare=(mixed, merge_only),
        **watched,
    )


UNMERGED = {"UU", "UD", "DU", "AA"}
MERGE_TASKS = ("source", "test-file", "modify-delete", "suite-fails")


def test_mine_merges_makes_a_task_of_each_conflicted_merge_and_counts_the_rest(
    mined: Mined,
) -> None:
    assert sorted(mined.tasks) == sorted([*MERGE_TASKS, "fix"])
    assert mined.tasks["fix"]["kind"] == "fix"
    expected = {
        "source": (["src/calc.py"], 1, "easy", True),
        "test-file": (["tests/test_calc.py"], 2, "medium", True),
        "modify-delete": (["src/calc.py", "src/legacy.py"], 2, "hard", True),
        "suite-fails": (["src/calc.py"], 1, "easy", False),
    }
    repo = mined.built.repo
    for scenario, (files, regions, difficulty, tests_pass) in expected.items():
        task = mined.tasks[scenario]
        merge = mined.built.merges[scenario]
        parents = repo.git("rev-parse", f"{merge}^1", f"{merge}^2").split()
        assert task["kind"] == "merge"
        assert (task["base"], task["other"], task["merge"]) == (*parents, merge)
        assert task["conflictFiles"] == files
        assert task["conflictRegions"] == regions
        assert task["difficulty"] == difficulty
        assert task["testsAtMerge"] is tests_pass
        # The prompt states the situation, never the recorded resolution.
        assert parents[1][:12] in task["prompt"] and all(f in task["prompt"] for f in files)
        for content in mined.built.resolutions[scenario].values():
            if content is not None:
                assert content not in task["prompt"]
    out = mined.mine_output
    assert "merge commits:     7" in out
    assert "skipped, octopus merge: 1" in out
    assert "skipped, re-merges without conflicts: 1" in out
    assert "skipped, conflicts only in Markdown or lock files: 1" in out
    assert "merge tasks:       4 (exact match only: 1)" in out


def test_gold_resolves_every_merge_task_exactly_and_noop_none(mined: Mined) -> None:
    for scenario in MERGE_TASKS:
        gold = mined.results[("gold", scenario)]
        assert gold["kind"] == "merge"
        assert (gold["status"], gold["exact"], gold["exactTree"]) == ("resolved", True, True)
        noop = mined.results[("noop", scenario)]
        assert (noop["status"], noop["exact"]) == ("unresolved", False), noop
        assert noop["markerFiles"], noop
        assert noop["diffFiles"] == 0  # measured against the conflicted state, not the base
    # A modify/delete holds no marker; left alone it is still an unmerged path.
    assert "src/legacy.py" in mined.results[("noop", "modify-delete")]["unmergedPaths"]
    # The suite ran on tasks whose merge passed it, and not on the one whose merge failed it.
    assert mined.results[("gold", "source")]["testExitCode"] == 0
    assert mined.results[("gold", "suite-fails")]["testExitCode"] is None
    # The recorded merge also changed the test file beyond the conflict: reported, kept, and
    # recorded on the task as a change only the merge made.
    assert mined.results[("gold", "suite-fails")]["outsideChanges"] == ["tests/test_calc.py"]
    assert {scenario: mined.tasks[scenario]["outsideConflicts"] for scenario in MERGE_TASKS} == {
        "source": [],
        "test-file": [],
        "modify-delete": [],
        "suite-fails": ["tests/test_calc.py"],
    }
    assert mined.results[("gold", "fix")]["status"] == "resolved"


def test_ours_is_resolved_by_the_suite_only_where_ours_is_right_and_exact_nowhere(
    mined: Mined,
) -> None:
    ours = {scenario: mined.results[("ours", scenario)] for scenario in MERGE_TASKS}
    assert not any(result["exact"] for result in ours.values())
    assert all(
        not result["markerFiles"] and not result["unmergedPaths"] for result in ours.values()
    )
    # The test-file conflict: main's tests are a valid resolution, and the suite agrees.
    assert (ours["test-file"]["status"], ours["test-file"]["testExitCode"]) == ("resolved", 0)
    # The other side's tests reject "ours" where it drops the other side's intent.
    for scenario in ("source", "modify-delete"):
        assert (ours[scenario]["status"], ours[scenario]["testExitCode"]) == ("unresolved", 1)
    # Without a passing suite at the merge, no markers is all "resolved" can mean.
    assert ours["suite-fails"]["status"] == "resolved"
    assert ours["suite-fails"]["testExitCode"] is None


def test_an_agent_that_aborts_the_merge_never_resolves_it(mined: Mined) -> None:
    for scenario in MERGE_TASKS:
        result = mined.results[("aborter", scenario)]
        assert (result["status"], result["mergeAbandoned"]) == ("unresolved", True), result
        assert (result["markerFiles"], result["unmergedPaths"]) == ([], [])
    assert mined.results[("gold", "source")]["mergeAbandoned"] is False


def test_the_workspace_is_mid_merge_and_its_history_never_holds_the_recorded_merge(
    mined: Mined,
) -> None:
    repo = mined.built.repo
    for scenario in MERGE_TASKS:
        task = mined.tasks[scenario]
        seen = (mined.journal / f"{task['id']}.txt").read_text()
        status = seen.split("STATUS\n", 1)[1].split("LOG\n", 1)[0]
        for path in task["conflictFiles"]:
            unmerged = [line[3:] for line in status.splitlines() if line[:2] in UNMERGED]
            assert path in unmerged, status
        assert "MERGE_HEAD set" in status
        assert task["base"] in seen and task["other"] in seen  # both parents are readable
        merge = task["merge"]
        tree = repo.git("rev-parse", f"{merge}^{{tree}}").strip()
        before_show, rest = seen.split("SHOW\n", 1)
        show, refs = rest.split("REFS\n", 1)
        for secret in (merge, tree):
            assert secret not in before_show, (scenario, secret)
        assert merge not in refs
        assert merge not in show.splitlines()  # `git show` of it fails: "bad object"
        # No later commit (not the fix task's fix, not the newest commit) is reachable either.
        assert mined.built.fix not in seen
        # The resolved blobs exist nowhere in the copy.
        for path, content in mined.built.resolutions[scenario].items():
            if content is None:
                continue
            hashed = subprocess.run(
                ["git", "hash-object", "--stdin"], input=content, capture_output=True, text=True
            )
            blob = hashed.stdout.strip()
            parents_have = any(
                repo.git("rev-parse", f"{sha}:{path}", check=False).strip() == blob
                for sha in (task["base"], task["other"])
            )
            if not parents_have:
                assert blob not in seen, (scenario, path)


def test_the_report_shows_fix_and_merge_rows_with_an_exact_column(mined: Mined) -> None:
    lines = mined.report.splitlines()
    assert lines[0].split() == [
        "CONFIG", "KIND", "RESOLVED", "EXACT", "ERRORS", "REGRESS", "AVG", "COST", "AVG",
        "TIME", "TOTAL", "TIME", "AVG", "DIFF", "RATE",
    ]  # fmt: skip
    cells = [line.split() for line in lines[2:] if line.strip()]
    rows = {(row[0], row[1]): row for row in cells if row[0] in {"gold", "noop", "ours"}}
    assert rows[("gold", "fix")][2:4] == ["1/1", "-"]
    assert rows[("gold", "merge")][2:4] == ["4/4", "4/4"]
    assert rows[("noop", "merge")][2:4] == ["0/4", "0/4"]
    assert rows[("ours", "merge")][2:4] == ["2/4", "0/4"]


def test_compare_takes_one_kind_at_a_time(mined: Mined) -> None:
    mixed, merge_only = mined.compare
    assert mixed.returncode == 2
    assert "--kind fix or --kind merge" in mixed.stderr
    assert merge_only.returncode == 0, merge_only.stderr
    assert "Compared on the 4 tasks both ran" in merge_only.stdout


def test_the_users_checkout_is_untouched_and_nothing_is_left_behind(mined: Mined) -> None:
    assert mined.after == mined.before
    assert mined.temp_left == []


def test_full_history_merges_with_the_users_merge_drivers_and_rerere_off(
    mined: Mined, tmp_path: Path
) -> None:
    """In `run.history: full` the workspace is a worktree of your repository, whose own merge
    driver would resolve the conflict away and whose rerere could replay a recorded resolution:
    neither may, the agent must face git's own conflict."""
    root = tmp_path / "repo"
    shutil.copytree(mined.built.root, root, symlinks=True)
    shutil.rmtree(root / ".gitgauge" / "runs")
    repo = GitRepo(root)
    repo.git("config", "merge.keepours.driver", "true")
    repo.git("config", "rerere.enabled", "true")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "attributes").write_text("*.py merge=keepours\n")
    (root / "gitgauge.yaml").write_text(f"testCommand: {TEST_COMMAND}\nrun:\n  history: full\n")
    config = tmp_path / "noop.yaml"
    config.write_text("name: noop\nadapter: noop\n")
    task = mined.tasks["source"]
    ran = run_gitgauge("run", "-c", str(config), "--task", task["id"], cwd=root)
    assert ran.returncode == 0, ran.stderr
    (found,) = (root / ".gitgauge" / "runs").glob("*/results/noop/*.json")
    result = json.loads(found.read_text())
    assert result["status"] == "unresolved"
    assert (result["markerFiles"], result["unmergedPaths"]) == (["src/calc.py"], ["src/calc.py"])
    patch = next((root / ".gitgauge" / "runs").glob("*/logs/noop/*/agent.patch"))
    assert patch.read_text() == ""  # noop changed nothing of the conflicted state
    assert not (root / ".git" / "rr-cache").exists()


def test_rewrite_shows_the_model_the_conflict_never_the_resolution(
    mined: Mined, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(mined.built.root, root, symlinks=True)
    task = mined.tasks["source"]
    resolution = mined.built.resolutions["source"]["src/calc.py"]
    assert isinstance(resolution, str)
    with serve_anthropic() as fake:
        fake.answer(lambda request: "Finish merging the informal greeting into calc.")
        env = dict(os.environ, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=fake.base_url)
        env["GITGAUGE_REWRITE_MAX_RETRIES"] = "0"
        done = run_gitgauge("rewrite", "--task", task["id"], cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        (request,) = fake.requests
    text = request.text
    assert "Greet informally" in text and "Greet with a comma" in text  # the two sides
    assert "<<<<<<< " in text and ">>>>>>> " in text  # the conflict, as the agent sees it
    assert 'return "Hi, " + name + "!"' not in text  # the recorded resolution
    assert mined.built.merges["source"] not in text
    assert "in the middle of a merge" in text
    saved = yaml.safe_load((root / ".gitgauge" / "tasks" / f"{task['id']}.yaml").read_text())
    assert saved["prompt"] == "Finish merging the informal greeting into calc."
    assert saved["originalPrompt"] == task["prompt"]


# -- bad input: each a counted skip with its reason, never a crash --


def _merge_with(repo: GitRepo, branch: str, *extra: str) -> str:
    argv = ["git", "merge", "--no-ff", "-q", "-m", f"Merge {branch}", *extra, branch]
    subprocess.run(argv, cwd=repo.root, capture_output=True, check=False)
    for path in repo.git("diff", "--name-only", "--diff-filter=U").split():
        target = repo.root / path
        if target.exists():
            repo.write(path, b"resolved\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-edit", "--no-verify", check=False)
    return repo.git("rev-parse", "HEAD").strip()


def test_binary_rename_rename_unrelated_and_too_many_conflicts_are_counted_skips(
    git_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = git_repo
    many = "".join(f"line {n}\n" + "filler\n" * 6 for n in range(3))
    files: dict[str, str | bytes | None] = {
        "gitgauge.yaml": "testCommand: 'true'\nmine:\n  merges: true\n  maxConflicts: 2\n",
        "logo.bin": b"\x00\x01base",
        "old.txt": "hello there, a file to rename\n",
        "many.txt": many,
    }
    repo.commit("Initial", files=files)
    # binary conflict
    repo.git("checkout", "-q", "-b", "bin")
    repo.commit("Logo B", files={"logo.bin": b"\x00\x01theirs"})
    repo.git("checkout", "-q", "main")
    repo.commit("Logo A", files={"logo.bin": b"\x00\x01ours"})
    _merge_with(repo, "bin")
    # rename/rename
    repo.git("checkout", "-q", "-b", "ren")
    repo.git("mv", "old.txt", "theirs.txt")
    repo.commit("Rename to theirs")
    repo.git("checkout", "-q", "main")
    repo.git("mv", "old.txt", "ours.txt")
    repo.commit("Rename to ours")
    _merge_with(repo, "ren")
    # three conflict regions, above maxConflicts: 2
    repo.git("checkout", "-q", "-b", "lots")
    repo.commit("Theirs", files={"many.txt": many.replace("line", "THEIRS")})
    repo.git("checkout", "-q", "main")
    repo.commit("Ours", files={"many.txt": many.replace("line", "OURS")})
    _merge_with(repo, "lots")
    # unrelated histories
    repo.git("checkout", "-q", "--orphan", "alien")
    repo.git("rm", "-rq", "--cached", ".")
    repo.commit("Alien root", files={"alien.txt": "x\n"})
    repo.git("checkout", "-q", "-f", "main")
    _merge_with(repo, "alien", "--allow-unrelated-histories")

    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    env = dict(os.environ, TMPDIR=str(private))
    mined = run_gitgauge("mine", cwd=repo.root, env=env)  # mine.merges: true in gitgauge.yaml
    assert mined.returncode == 0, mined.stderr
    out = mined.stdout
    assert "skipped, conflict gitgauge cannot re-create: 2" in out, out
    assert "binary file in conflict (logo.bin)" in out
    assert "rename/rename conflict" in out
    assert "skipped, more conflicts than mine.maxConflicts: 1" in out
    assert "3 > 2" in out
    assert "skipped, git cannot re-merge the parents: 1" in out
    assert "unrelated histories" in out
    assert "merge tasks:       0" in out
    assert not list((repo.root / ".gitgauge" / "tasks").glob("*.yaml"))
    assert list(private.iterdir()) == []

    # A shallow clone: the merges' second parents are missing.
    clone = tmp_path / "shallow"
    argv = ["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(clone)]
    subprocess.run(argv, check=True, capture_output=True)
    shutil.copy(repo.root / "gitgauge.yaml", clone / "gitgauge.yaml")
    shallow = run_gitgauge("mine", "--merges", cwd=clone, env=env)
    assert shallow.returncode == 0, shallow.stderr
    assert "skipped, parent not in this clone: 1" in shallow.stdout, shallow.stdout
    assert "git fetch --unshallow" in shallow.stdout


# -- the real claude CLI, against the loopback fake Messages API --
def test_the_real_claude_cli_resolves_a_merge_task_by_writing_the_file(
    mined: Mined, tmp_path: Path
) -> None:
    claude_binary()  # skips locally when missing, fails under CI=true
    task = mined.tasks["source"]
    resolution = mined.built.resolutions["source"]["src/calc.py"]
    assert isinstance(resolution, str)
    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    config = tmp_path / "real.yaml"
    config.write_text(yaml.safe_dump({"name": "real", "adapter": "claude-code", "model": MODEL}))
    with serve() as api:
        # The scripted model acts on the request that states this merge (the other parent's
        # sha is in the task's prompt): it reads src/calc.py, then writes the resolution.
        api.rules = [Rule(needle=task["other"][:12], path="src/calc.py", content=resolution)]
        env = claude_env(api.base_url, tmp_path / "claude-home")
        env["TMPDIR"] = str(private)
        outcome = run_gitgauge(
            "run", "-c", str(config), "--task", task["id"], cwd=mined.built.root, env=env
        )
        assert outcome.returncode == 0, outcome.stderr + outcome.stdout
        assert api.escapes() == [], "the CLI tried to reach another host"
    (found,) = (mined.built.root / ".gitgauge" / "runs").glob("*/results/real/*.json")
    result = json.loads(found.read_text())
    assert result["task"] == task["id"] and result["kind"] == "merge"
    assert (result["status"], result["errorKind"]) == ("resolved", None), result
    assert (result["exact"], result["markerFiles"], result["unmergedPaths"]) == (True, [], [])
    assert result["testExitCode"] == 0
    assert result["costUsd"] > 0
    # The CLI keeps a `claude-<uid>` directory of its own there; gitgauge leaves nothing.
    assert [p.name for p in private.iterdir() if p.name.startswith("gitgauge-")] == []
