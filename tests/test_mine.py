"""`gitgauge mine` end to end: a sample project whose history holds one commit for each rule of
"How mining works", mined once through the real CLI; the tests read what it did.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_gitgauge, start_in_background
from helpers.environment import isolated
from helpers.processes import pid_alive, wait_for_file, wait_until_gone
from helpers.repos import RELEASE_BRANCHES, GitRepo, new_repo, pick_to_release_branches
from helpers.repos.sample import (
    BROKEN_RUN_TESTS_SH,
    BROKEN_SETUP_PY,
    DEPS_MARKER,
    RUN_TESTS_SH,
    SETUP_COMMAND,
    SETUP_PY,
    TEST_COMMAND,
    Fix,
    OneLineFix,
    checkout_state,
    leftovers,
    mine_env,
    sample_root_files,
    write_config,
)
from helpers.results import load_tasks, read_journal, summary

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

TITLE_ONLY_BODY = "abcdefghij klmnopqrst\nuvwxyzabcd efghijklm"  # 39 non-whitespace characters
RICH_BODY = "abcdefghij klmnopqrst\n\nuvwxyzabcd efghijklmn"  # 40
HOSTILE_SUBJECT = "Fix \"quote\": closing mark # lost {when} [empty] & *ref — ünïcödé 수정 'x'"
HOSTILE_BODY = (
    "Steps: call `quote('')`\n"
    "# not a comment\n"
    "  indented: yes\n"
    "- list-like\n"
    "{braces}: [and] \"double\" 'single'\n"
    "---\n"
    "...\n"
    "ünïcödé ✓ 버그 %s %(x)s \\n"
)
TEST_TIMEOUT_MS = 3000
CLAMP = OneLineFix(
    "clamp(x, lo, hi)", "max(lo, x)", "min(hi, max(lo, x))", "upper", "clamp(15, 0, 10) == 10"
)
NEGATE = OneLineFix("negate(x)", "x", "-x", "sign", "negate(3) == -3")
DOUBLE = OneLineFix("double(x)", "x + x + 1", "x + x", "double", "double(2) == 4")
TOTAL = OneLineFix("total(xs)", "xs[0] + total(xs[1:])", "sum(xs)", "empty", "total([]) == 0")
QUOTE = OneLineFix("quote(s)", "'\"' + s", "'\"' + s + '\"'", "empty", "quote('') == '\"\"'")


@dataclass
class Mined:
    repo: GitRepo
    shas: dict[str, str]
    stdout: str
    stderr: str
    exit_code: int
    journal: list[dict[str, Any]]
    tasks: dict[str, dict[str, Any]]
    before: dict[str, str]
    after: dict[str, str]
    started: datetime
    finished: datetime
    hooks_ran: str
    child_pid_file: Path
    temp_dir: Path
    temp_left: list[str]

    @property
    def summary(self) -> dict[str, str]:
        return summary(self.stdout)

    def runs_at(self, sha: str) -> list[dict[str, Any]]:
        return [run for run in self.journal if run["head"] == sha]


def build_history(repo: GitRepo, child_pid_file: Path) -> dict[str, str]:
    shas: dict[str, str] = {}
    shas["root"] = repo.commit("Initial layout", files=sample_root_files())

    shas["rich"] = CLAMP.commit(
        repo,
        "fix(clamp): respect the upper bound",
        "clamp(15, 0, 10) returned 15: the upper bound was never applied.\n\n"
        "Cap the value with min(hi, ...).",
    ).fix
    shas["title-only-39"] = NEGATE.commit(
        repo, "Fix negate returning its input", TITLE_ONLY_BODY
    ).fix
    shas["rich-40"] = DOUBLE.commit(repo, "bugfix: double adds one too many", RICH_BODY).fix

    # The parent's suite with the fix's test hangs: that counts as failing (baseTimedOut).
    repo.commit(
        "Add find_index helper",
        files={
            "src/search.py": (
                "def find_index(items, wanted):\n"
                "    i = 0\n"
                "    while True:\n"
                "        if i < len(items) and items[i] == wanted:\n"
                "            return i\n"
                "        if i < len(items):\n"
                "            i += 1\n"
            ),
            "tests/test_search.py": (
                "from search import find_index\n\n\n"
                "def test_found():\n    assert find_index([4, 5], 5) == 1\n"
            ),
        },
    )
    shas["parent-times-out"] = repo.commit(
        "Fix find_index hanging when the item is missing",
        files={
            "src/search.py": (
                "def find_index(items, wanted):\n"
                "    return items.index(wanted) if wanted in items else -1\n"
            ),
            "tests/test_search.py": (
                "from search import find_index\n\n\n"
                "def test_found():\n    assert find_index([4, 5], 5) == 1\n\n\n"
                "def test_missing():\n    assert find_index([4], 5) == -1\n"
            ),
        },
    )

    # The parent's own suite already fails: baseSuitePasses is false.
    repo.commit(
        "Add parity helper",
        files={
            "src/parity.py": "def is_even(n):\n    return n % 2 == 1\n",
            "tests/test_parity.py": (
                "from parity import is_even\n\n\ndef test_two():\n    assert is_even(2)\n"
            ),
        },
    )
    shas["base-suite-fails"] = repo.commit(
        "Fix is_even",
        files={
            "src/parity.py": "def is_even(n):\n    return n % 2 == 0\n",
            "tests/test_parity.py": (
                "from parity import is_even\n\n\ndef test_two():\n    assert is_even(2)\n\n\n"
                "def test_three():\n    assert not is_even(3)\n"
            ),
        },
    )

    # The fix deletes one test file, renames another and adds a third.
    shas["layout-base"] = repo.commit(
        "Add initials helper",
        files={
            "src/initials.py": (
                "def initials(name):\n    return ''.join(w[0] for w in name.split(' '))\n"
            ),
            "tests/test_legacy.py": (
                "from initials import initials\n\n\n"
                "def test_single():\n    assert initials('Ada') == 'A'\n"
            ),
            "tests/test_before_rename.py": (
                "from initials import initials\n\n\n"
                "def test_two_words():\n    assert initials('Ada Lovelace') == 'AL'\n"
            ),
        },
    )
    shas["layout"] = repo.commit(
        "Fix crash in initials on double spaces",
        files={
            "src/initials.py": (
                "def initials(name):\n    return ''.join(w[0] for w in name.split())\n"
            ),
            "tests/test_legacy.py": None,
            "tests/test_before_rename.py": None,
            "tests/test_after_rename.py": (
                "from initials import initials\n\n\n"
                "def test_two_words():\n    assert initials('Ada Lovelace') == 'AL'\n"
            ),
            "tests/test_initials_spaces.py": (
                "from initials import initials\n\n\n"
                "def test_double_space():\n    assert initials('Ada  Lovelace') == 'AL'\n"
            ),
        },
    )

    # Rejections, one per reason.
    repo.commit(
        "Add greeting",
        files={
            "src/greet.py": "def greet(name):\n    return 'Hello, ' + name\n",
            "tests/test_greet.py": (
                "from greet import greet\n\n\ndef test_greet():\n"
                "    assert greet('Ada') == 'Hello, Ada'\n"
            ),
        },
    )
    shas["passes-before"] = repo.commit(
        "Fix greeting for empty names",
        files={
            "src/greet.py": (
                "def greet(name):\n    '''Greet by name.'''\n    return 'Hello, ' + name\n"
            ),
            "tests/test_greet.py": (
                "from greet import greet\n\n\ndef test_greet():\n"
                "    assert greet('Ada') == 'Hello, Ada'\n\n\n"
                "def test_empty():\n    assert greet('') == 'Hello, '\n"
            ),
        },
    )
    shas["fails-at-fix"] = repo.commit(
        "fix: wrap long lines",
        files={
            "src/wrap.py": "def wrap(text, width):\n    return [text]\n",
            "tests/test_wrap.py": (
                "from wrap import wrap\n\n\n"
                "def test_wrap():\n    assert wrap('abcd', 2) == ['ab', 'cd']\n"
            ),
        },
    )
    repo.commit(
        "Implement wrap properly",
        files={
            "src/wrap.py": (
                "def wrap(text, width):\n"
                "    return [text[i:i + width] for i in range(0, len(text), width)]\n"
            )
        },
    )
    shas["setup-fails"] = repo.commit(
        "hotfix: faster setup",
        files={
            "setup_check.py": BROKEN_SETUP_PY,
            "src/speed.py": "SPEED = 2\n",
            "tests/test_speed.py": "from speed import SPEED\n\n\ndef test_speed():\n"
            "    assert SPEED == 2\n",
        },
    )
    repo.commit("Restore the setup step", files={"setup_check.py": SETUP_PY})
    # At the fix the suite hangs, and its child would outlive a kill of the runner alone.
    shas["times-out-at-fix"] = repo.commit(
        "Fix spinner hang",
        files={
            "src/spinner.py": "SPIN = True\n",
            "tests/test_spinner.py": (
                "import subprocess\nimport sys\nimport time\n\n\n"
                "def test_spinner():\n"
                "    child = subprocess.Popen(\n"
                "        [sys.executable, '-c', 'import time; time.sleep(600)']\n"
                "    )\n"
                f"    with open({str(child_pid_file)!r}, 'w') as handle:\n"
                "        handle.write(str(child.pid))\n"
                "    time.sleep(600)\n"
            ),
        },
    )
    repo.commit("Remove the spinner check", files={"tests/test_spinner.py": None})
    shas["cannot-start"] = repo.commit(
        "Fix the runner script",
        files={
            "run_tests.sh": BROKEN_RUN_TESTS_SH,
            "src/runner_note.py": "NOTE = 1\n",
            "tests/test_runner_note.py": "def test_note():\n    pass\n",
        },
    )
    repo.commit("Restore the runner script", files={"run_tests.sh": RUN_TESTS_SH})

    # Genuine fail-to-pass changes that the rules keep out.
    repo.commit("Add absval helper", files={"src/absval.py": "def absval(x):\n    return x\n"})
    absval_test = "from absval import absval\n\n\ndef test_abs():\n    assert absval(-2) == 2\n"
    shas["chore"] = repo.commit(
        "chore: fix lint in absval",
        files={
            "src/absval.py": "def absval(x):\n    return -x if x < 0 else x\n",
            "tests/test_absval.py": absval_test,
        },
    )
    shas["fixture-prefix-debug"] = repo.commit(
        "Add fixture for prefix debug output",
        files={
            "src/prefix.py": "PREFIX = '>'\n",
            "tests/test_prefix.py": "def test_prefix():\n    pass\n",
        },
    )
    shas["docs-only"] = repo.commit(
        "Fix typo in the README",
        files={"README.md": "# the sample\n", "tests/test_calc.py": "# typo fixed\n"},
    )
    shas["source-only"] = repo.commit(
        "Fix rounding without a test", files={"src/calc.py": "def add(a, b):\n    return b + a\n"}
    )
    # Restore tests/test_calc.py (the commit above cleared it) without a candidate subject.
    repo.commit(
        "Bring back the calc test",
        files={"tests/test_calc.py": sample_root_files()["tests/test_calc.py"]},
    )

    # A merge whose subject has bug words: merges are never candidates.
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("Add usage notes", files={"docs/usage.txt": "usage\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Add changelog", files={"CHANGES.txt": "changes\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "Merge topic: fix the docs bug", "topic")
    shas["merge"] = repo.git("rev-parse", "HEAD").strip()

    shas["korean"] = TOTAL.commit(repo, "합계 버그 수정").fix
    hostile: Fix = QUOTE.commit(repo, HOSTILE_SUBJECT, HOSTILE_BODY)
    shas["hostile-parent"] = hostile.bug
    shas["hostile"] = hostile.fix  # HEAD
    return shas


def make_users_checkout_busy(repo: GitRepo) -> None:
    """A stash, staged and unstaged changes and untracked files: none of it may change."""
    repo.write("README.md", "# stashed work\n")
    repo.git("stash", "push", "-q", "-m", "work in progress")
    repo.write("src/calc.py", "def add(a, b):\n    return a + b  # unstaged\n")
    repo.write("notes.txt", "staged\n")
    repo.git("add", "notes.txt")
    repo.write("scratch/untracked.txt", "untracked\n")


def install_hooks(repo: GitRepo, marker: Path) -> None:
    for name in ("post-checkout", "reference-transaction", "post-index-change"):
        hook = repo.root / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\n", encoding="utf-8")
        hook.chmod(0o755)
    # The hooks work: git runs them for an ordinary checkout in the user's repository.
    repo.git("checkout", "-q", "--detach", "HEAD")
    repo.git("checkout", "-q", "main")
    assert "post-checkout" in marker.read_text(encoding="utf-8")
    marker.unlink()


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Mined:
    base = tmp_path_factory.mktemp("mine")
    with isolated(base):
        repo = new_repo(base / "repo")
        child_pid_file = base / "spinner-child.pid"
        shas = build_history(repo, child_pid_file)
        write_config(repo, link=["deps", "vendor/cache"], test_timeout_ms=TEST_TIMEOUT_MS)
        make_users_checkout_busy(repo)
        before = checkout_state(repo)
        hook_marker = base / "hooks-ran.txt"
        install_hooks(repo, hook_marker)
        journal = base / "journal.jsonl"
        started = datetime.now(timezone.utc)

        result = run_gitgauge("mine", cwd=repo.root, env=mine_env(journal))

        finished = datetime.now(timezone.utc)
        # Read now: the snapshot below runs `git status`, which runs the user's hooks itself.
        hooks_ran = hook_marker.read_text() if hook_marker.exists() else ""
        return Mined(
            repo=repo,
            shas=shas,
            stdout=result.stdout,
            stderr=result.stderr,
            exit_code=result.returncode,
            journal=read_journal(journal),
            tasks=load_tasks(repo),
            before=before,
            after=checkout_state(repo),
            started=started,
            finished=finished,
            hooks_ran=hooks_ran,
            child_pid_file=child_pid_file,
            temp_dir=journal.parent / "tmp",
            temp_left=leftovers(journal),
        )


VERIFIED: tuple[str, ...] = ("rich", "title-only-39", "rich-40", "parent-times-out")
VERIFIED += ("base-suite-fails", "layout", "korean", "hostile")
REJECTED = {
    "passes-before": "passes before the fix",
    "fails-at-fix": "fails at the fix",
    "setup-fails": "setup failed",
    "times-out-at-fix": "timed out",
    "cannot-start": "test command failed to start",
}
NOT_CANDIDATES = ("chore", "fixture-prefix-debug", "docs-only", "source-only", "merge", "root")


def commit_message(repo: GitRepo, sha: str) -> tuple[str, str]:
    subject = repo.git("log", "-1", "--format=%s", sha).rstrip("\n")
    body = repo.git("log", "-1", "--format=%b", sha).strip()
    return subject, body


# -- outcome ---------------------------------------------------------------------------------------


def test_mine_succeeds(mined: Mined) -> None:
    assert mined.exit_code == 0, mined.stderr


def test_exactly_the_genuine_fixes_become_tasks(mined: Mined) -> None:
    assert set(mined.tasks) == {mined.shas[name] for name in VERIFIED}


def test_summary_counts(mined: Mined) -> None:
    counts = mined.summary
    total_commits = int(mined.repo.git("rev-list", "--count", "HEAD").strip())
    assert counts["commits scanned"] == str(total_commits)
    assert counts["not considered"] == "1 merge commit, 1 root commit"
    assert counts["candidates"] == str(len(VERIFIED) + len(REJECTED))
    assert counts["skipped (title-only)"] == "0"
    assert counts["verified"] == "8 (rich: 3, title-only: 5)"
    assert counts["rejected"] == str(len(REJECTED))
    for reason in REJECTED.values():
        assert counts[reason] == "1", reason


def test_one_progress_line_per_candidate_with_its_outcome(mined: Mined) -> None:
    lines = mined.stdout.split("\n\n")[0].splitlines()
    for name in VERIFIED:
        task = mined.tasks[mined.shas[name]]
        assert any(
            line.startswith(f"verified  {mined.shas[name][:8]} ") and task["id"] in line
            for line in lines
        ), name
    for name, reason in REJECTED.items():
        assert any(
            line.startswith(f"rejected  {mined.shas[name][:8]} ") and reason in line
            for line in lines
        ), name
    assert len(lines) == len(VERIFIED) + len(REJECTED)


def test_candidates_that_the_rules_keep_out_are_never_checked_out(mined: Mined) -> None:
    checked_out = {run["head"] for run in mined.journal}
    for name in NOT_CANDIDATES:
        assert mined.shas[name] not in checked_out, name
    assert not any(mined.shas[name][:8] in mined.stdout for name in NOT_CANDIDATES)


# -- the task file ---------------------------------------------------------------------------------


def test_task_file_of_a_rich_fix(mined: Mined) -> None:
    fix = mined.shas["rich"]
    task = mined.tasks[fix]
    parent = mined.repo.git("rev-parse", f"{fix}^").strip()
    subject, body = commit_message(mined.repo, fix)

    assert task["_file"] == f"{task['id']}.yaml"
    assert task["id"] == f"{fix[:8]}-fix-clamp-respect-the-upper-bound"
    assert (task["base"], task["fix"]) == (parent, fix)
    assert re.fullmatch(r"[0-9a-f]{40}", task["base"])
    assert task["subject"] == subject == "fix(clamp): respect the upper bound"
    assert task["prompt"] == f"Fix the following bug:\n\n{subject}\n\n{body}"
    assert task["testFiles"] == ["tests/test_clamp.py"]
    assert task["promptQuality"] == "rich"
    assert task["baseSuitePasses"] is True
    assert task["baseTimedOut"] is False
    assert task["schemaVersion"] == 1
    assert task["testCommand"] == TEST_COMMAND
    assert task["setupCommand"] == SETUP_COMMAND
    mined_at = datetime.fromisoformat(task["minedAt"])
    assert mined_at.utcoffset() == timedelta(0)
    assert mined.started - timedelta(seconds=1) <= mined_at <= mined.finished
    issue_fields = {"id", "base", "fix", "subject", "prompt", "testFiles", "promptQuality"}
    issue_fields |= {"baseSuitePasses", "minedAt", "schemaVersion"}
    assert issue_fields <= set(task)


def test_prompt_quality_boundary_and_prompt_without_body(mined: Mined) -> None:
    title_only = mined.tasks[mined.shas["title-only-39"]]
    assert title_only["promptQuality"] == "title-only"
    assert title_only["prompt"] == (
        f"Fix the following bug:\n\nFix negate returning its input\n\n{TITLE_ONLY_BODY}"
    )
    assert mined.tasks[mined.shas["rich-40"]]["promptQuality"] == "rich"

    no_body = mined.tasks[mined.shas["base-suite-fails"]]
    assert no_body["prompt"] == "Fix the following bug:\n\nFix is_even"
    assert no_body["promptQuality"] == "title-only"


def test_fix_that_adds_its_test_file(mined: Mined) -> None:
    assert mined.tasks[mined.shas["rich-40"]]["testFiles"] == ["tests/test_double.py"]


def test_timeout_at_the_parent_counts_as_failing(mined: Mined) -> None:
    task = mined.tasks[mined.shas["parent-times-out"]]
    assert task["baseTimedOut"] is True
    assert task["baseSuitePasses"] is True  # the parent's own tests do not reach the hang
    assert "timed out at the parent" in mined.stdout


def test_base_suite_that_already_fails(mined: Mined) -> None:
    assert mined.tasks[mined.shas["base-suite-fails"]]["baseSuitePasses"] is False


def test_subject_without_ascii_words_gets_the_short_sha_as_id(mined: Mined) -> None:
    fix = mined.shas["korean"]
    task = mined.tasks[fix]
    assert task["id"] == fix[:8]
    assert task["subject"] == "합계 버그 수정"


def test_yaml_hostile_subject_and_body_round_trip_exactly(mined: Mined) -> None:
    fix = mined.shas["hostile"]
    task = mined.tasks[fix]
    subject, body = commit_message(mined.repo, fix)
    assert subject == HOSTILE_SUBJECT
    assert task["subject"] == HOSTILE_SUBJECT
    assert task["body"] == body
    assert task["prompt"] == f"Fix the following bug:\n\n{HOSTILE_SUBJECT}\n\n{body}"
    assert re.fullmatch(r"[0-9a-f]{8}-[a-z0-9]+(-[a-z0-9]+)*", task["id"])
    assert task["id"].startswith(f"{fix[:8]}-fix-quote-closing-mark-lost-when-empty")
    # Readable for a reviewer: non-ASCII text is written as itself, not escaped.
    text = (mined.repo.root / ".gitgauge" / "tasks" / task["_file"]).read_text(encoding="utf-8")
    assert "ünïcödé" in text and "수정" in text


# -- how verification ran --------------------------------------------------------------------------


def test_linked_directories_are_usable_and_a_missing_one_is_a_warning(mined: Mined) -> None:
    assert mined.journal
    for run in mined.journal:
        assert run["depsIsLink"] is True
        assert run["deps"] == DEPS_MARKER
    # Once, not once per worktree.
    assert mined.stderr.count("vendor/cache") == 1, mined.stderr
    assert "Traceback" not in mined.stderr
    # Removing a worktree never reaches through a link into the user's directory.
    assert (mined.repo.root / "deps" / "marker.txt").read_text() == DEPS_MARKER


def test_setup_runs_before_each_test_run(mined: Mined) -> None:
    assert all(run["setupDone"] for run in mined.journal)


def test_worktrees_live_in_temporary_directories_outside_the_repository(mined: Mined) -> None:
    temp_root = mined.temp_dir.resolve()
    for run in mined.journal:
        cwd = Path(run["cwd"]).resolve()
        assert not cwd.is_relative_to(mined.repo.root.resolve())
        assert cwd.is_relative_to(temp_root)
        assert any(part.startswith("gitgauge-co-") for part in cwd.parts)


def test_each_verified_fix_runs_at_the_fix_then_twice_at_the_parent(mined: Mined) -> None:
    for name in VERIFIED:
        fix = mined.shas[name]
        base = mined.tasks[fix]["base"]
        assert len(mined.runs_at(fix)) == 1, name
        assert len(mined.runs_at(base)) == 2, name


def test_overlay_reproduces_added_deleted_and_renamed_test_files(mined: Mined) -> None:
    fix, base = mined.shas["layout"], mined.shas["layout-base"]
    assert sorted(mined.tasks[fix]["testFiles"]) == [
        "tests/test_after_rename.py",
        "tests/test_before_rename.py",
        "tests/test_initials_spaces.py",
        "tests/test_legacy.py",
    ]
    [at_fix] = mined.runs_at(fix)
    with_fix_tests, own_suite = mined.runs_at(base)
    # At the parent with the fix's tests laid over: exactly the fix's test files.
    assert with_fix_tests["tests"] == at_fix["tests"]
    assert "tests/test_legacy.py" not in with_fix_tests["tests"]
    assert "tests/test_before_rename.py" not in with_fix_tests["tests"]
    # Then the parent's own tests, exactly as committed.
    committed = mined.repo.git("ls-tree", "-r", "--name-only", base, "tests").split()
    assert own_suite["tests"] == sorted(committed)


def test_a_hanging_suite_and_its_children_are_killed(mined: Mined) -> None:
    child = int(mined.child_pid_file.read_text())
    assert wait_until_gone(child), f"the test command's child {child} outlived its timeout"
    assert not pid_alive(child)


def test_rejected_candidates_leave_no_task(mined: Mined) -> None:
    for name in REJECTED:
        assert mined.shas[name] not in mined.tasks


# -- the user's checkout ---------------------------------------------------------------------------


def test_the_users_checkout_is_unchanged(mined: Mined) -> None:
    assert mined.after == mined.before
    assert "work in progress" in mined.after["stash"]
    assert "notes.txt" in mined.after["index"]


def test_no_worktree_or_temporary_directory_is_left_behind(mined: Mined) -> None:
    assert mined.temp_left == []
    assert mined.repo.git("worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (mined.repo.root / ".git" / "worktrees").exists() or not any(
        (mined.repo.root / ".git" / "worktrees").iterdir()
    )


def test_the_repositorys_git_hooks_never_run(mined: Mined) -> None:
    assert mined.hooks_ran == ""


# -- mining again ----------------------------------------------------------------------------------


def test_mining_again_reports_already_mined_and_verifies_nothing(mined: Mined) -> None:
    journal = mined.repo.root.parent / "again.jsonl"
    with isolated(mined.repo.root.parent):
        result = run_gitgauge("mine", "--last", "2", cwd=mined.repo.root, env=mine_env(journal))

    assert result.returncode == 0, result.stderr
    assert read_journal(journal) == []
    counts = summary(result.stdout)
    assert counts["commits scanned"] == "2"
    assert counts["candidates"] == "1"
    assert counts["already mined"] == "1"
    assert counts["verified"].startswith("0")
    assert f"{mined.shas['hostile'][:8]}" in result.stdout
    assert "already mined" in result.stdout.split("\n\n")[0]
    assert load_tasks(mined.repo) == mined.tasks
    assert leftovers(journal) == []


def test_mining_everything_again_verifies_no_saved_task_and_exits_0(mined: Mined) -> None:
    journal = mined.repo.root.parent / "again-all.jsonl"
    with isolated(mined.repo.root.parent):
        result = run_gitgauge("mine", cwd=mined.repo.root, env=mine_env(journal))

    assert result.returncode == 0, result.stderr
    assert summary(result.stdout)["already mined"] == str(len(VERIFIED))
    checked_out = {run["head"] for run in read_journal(journal)}
    for name in VERIFIED:
        task = mined.tasks[mined.shas[name]]
        assert not {task["fix"], task["base"]} & checked_out, name
    assert load_tasks(mined.repo) == mined.tasks
    assert leftovers(journal) == []


# -- smaller histories -----------------------------------------------------------------------------


@pytest.fixture
def sample(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("Initial layout", files=sample_root_files())
    return git_repo


def test_require_body_skips_title_only_candidates_before_verifying(
    sample: GitRepo, tmp_path: Path
) -> None:
    title_only = NEGATE.commit(sample, "Fix negate", "Short.").fix
    rich = DOUBLE.commit(sample, "Fix double", RICH_BODY).fix
    write_config(sample)
    journal = tmp_path / "journal.jsonl"

    first = run_gitgauge("mine", "--require-body", cwd=sample.root, env=mine_env(journal))

    assert first.returncode == 0, first.stderr
    counts = summary(first.stdout)
    assert counts["candidates"] == "2"
    assert counts["skipped (title-only)"] == "1"
    assert counts["verified"] == "1 (rich: 1, title-only: 0)"
    assert counts["rejected"] == "0"
    assert set(load_tasks(sample)) == {rich}
    assert title_only not in {run["head"] for run in read_journal(journal)}

    runs_before = len(read_journal(journal))
    second = run_gitgauge("mine", cwd=sample.root, env=mine_env(journal))

    assert second.returncode == 0, second.stderr
    counts = summary(second.stdout)
    assert counts["already mined"] == "1"
    assert counts["verified"] == "1 (rich: 0, title-only: 1)"
    assert set(load_tasks(sample)) == {rich, title_only}
    # Only the title-only fix was verified this time: three runs, none at the rich fix.
    new_runs = read_journal(journal)[runs_before:]
    assert len(new_runs) == 3
    assert rich not in {run["head"] for run in new_runs}
    assert leftovers(journal) == []


def test_nothing_verified_is_still_success_and_last_limits_the_scan(
    sample: GitRepo, tmp_path: Path
) -> None:
    sample.commit(
        "Add greeting",
        files={
            "src/greet.py": "def greet(name):\n    return 'Hello, ' + name\n",
            "tests/test_greet.py": "from greet import greet\n\n\ndef test_greet():\n"
            "    assert greet('Ada') == 'Hello, Ada'\n",
        },
    )
    sample.commit(
        "Fix greeting docs",
        files={
            "src/greet.py": "def greet(name):\n    '''Greet.'''\n    return 'Hello, ' + name\n",
            "tests/test_greet.py": "from greet import greet\n\n\ndef test_greet():\n"
            "    assert greet('Bob') == 'Hello, Bob'\n",
        },
    )
    sample.commit("Add notes", files={"NOTES.txt": "notes\n"})
    write_config(sample, last=1)
    journal = tmp_path / "journal.jsonl"

    from_config = run_gitgauge("mine", cwd=sample.root, env=mine_env(journal))

    assert from_config.returncode == 0, from_config.stderr
    assert summary(from_config.stdout)["commits scanned"] == "1"
    assert summary(from_config.stdout)["candidates"] == "0"
    assert read_journal(journal) == []

    wider = run_gitgauge("mine", "--last", "3", cwd=sample.root, env=mine_env(journal))

    assert wider.returncode == 0, wider.stderr
    counts = summary(wider.stdout)
    assert counts["commits scanned"] == "3"
    assert "not considered" not in counts  # the root commit is the 4th: not scanned
    assert counts["candidates"] == "1"
    assert counts["verified"].startswith("0 ")
    assert counts["passes before the fix"] == "1"
    assert load_tasks(sample) == {}
    assert leftovers(journal) == []


def test_a_test_command_that_never_starts_stops_mining_after_three_in_a_row(
    sample: GitRepo, tmp_path: Path
) -> None:
    for name in ("one", "two", "three", "four"):
        sample.commit(
            f"Fix {name}",
            files={
                f"src/{name}.py": "X = 1\n",
                f"tests/test_{name}.py": "def test_x():\n    pass\n",
            },
        )
    write_config(sample, test_command="gitgauge-no-such-test-runner --all")

    result = run_gitgauge("mine", cwd=sample.root, env=mine_env(tmp_path / "journal.jsonl"))

    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("gitgauge: error")]
    assert len(errors) == 1
    assert "testCommand" in errors[0]
    assert "gitgauge-no-such-test-runner" in errors[0]
    # Newest first: the oldest candidate is never tried.
    assert [line.split()[3] for line in result.stdout.splitlines() if line.strip()] == [
        "four",
        "three",
        "two",
    ]


def test_mine_outside_a_repository_and_without_history(tmp_path: Path, git_repo: GitRepo) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    result = run_gitgauge("mine", cwd=outside)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1

    write_config(git_repo)
    empty = run_gitgauge("mine", cwd=git_repo.root)
    assert empty.returncode == 1
    assert "no commits" in empty.stderr


def test_an_interrupted_mine_leaves_the_checkout_and_temp_directory_clean(
    sample: GitRepo, tmp_path: Path
) -> None:
    started = tmp_path / "suite-started.pid"
    sample.commit(
        "Fix slow suite",
        files={
            "src/slow.py": "SLOW = True\n",
            "tests/test_slow.py": (
                "import os\nimport time\n\n\ndef test_slow():\n"
                f"    with open({str(started)!r}, 'w') as handle:\n"
                "        handle.write(str(os.getpid()))\n"
                "    time.sleep(600)\n"
            ),
        },
    )
    write_config(sample)
    make_users_checkout_busy(sample)
    before = checkout_state(sample)
    journal = tmp_path / "journal.jsonl"

    with start_in_background("mine", cwd=sample.root, env=mine_env(journal)) as mine:
        suite = int(wait_for_file(started))
        mine.send_signal(signal.SIGINT)
        _, stderr = mine.communicate(timeout=120)

    assert mine.returncode == 130, stderr
    assert wait_until_gone(suite)
    assert leftovers(journal) == []
    assert checkout_state(sample) == before
    assert load_tasks(sample) == {}


def test_users_log_encoding_does_not_change_the_subject(sample: GitRepo, tmp_path: Path) -> None:
    fix = NEGATE.commit(sample, "Fix café crash").fix
    sample.git("config", "i18n.logOutputEncoding", "ISO-8859-1")
    write_config(sample)

    result = run_gitgauge("mine", cwd=sample.root, env=mine_env(tmp_path / "journal.jsonl"))

    assert result.returncode == 0, result.stderr
    assert load_tasks(sample)[fix]["subject"] == "Fix café crash"


def test_one_fix_cherry_picked_to_two_release_branches_is_one_task(
    sample: GitRepo, tmp_path: Path
) -> None:
    """The same patch on main and on two release lines (each with its own changelog line) is one
    bug: the newest is verified, the others are listed as its duplicates and never checked out."""
    clamp = CLAMP.sources
    sample.commit("Add clamp helper", files={"src/clamp.py": clamp["buggy"]})
    for branch in RELEASE_BRANCHES:
        sample.git("branch", branch)
    fix_files: dict[str, str | bytes | None] = {
        "src/clamp.py": clamp["fixed"],
        "tests/test_clamp.py": clamp["test"],
    }
    sample.commit("Add notes", files={"NOTES.txt": "notes\n"})
    picks = {"main": sample.commit("Fix clamp upper bound", files=fix_files)}
    picks.update(pick_to_release_branches(sample, "Fix clamp upper bound", fix_files))
    write_config(sample)
    journal = tmp_path / "journal.jsonl"

    result = run_gitgauge("mine", cwd=sample.root, env=mine_env(journal))

    assert result.returncode == 0, result.stderr
    assert list(load_tasks(sample)) == [picks["release-2"]]
    kept = load_tasks(sample)[picks["release-2"]]["id"]
    for branch in ("main", "release-1"):
        assert f"skipped   {picks[branch][:8]} Fix clamp upper bound  [duplicate of {kept}]" in (
            result.stdout
        )
        assert f"    {picks[branch][:8]} duplicate of {kept}" in result.stdout
        assert picks[branch] not in {run["head"] for run in read_journal(journal)}
    assert summary(result.stdout)["duplicates"] == "2 (the same patch as a kept candidate)"

    explained = run_gitgauge("mine", "--explain", picks["main"], cwd=sample.root)
    assert explained.returncode == 0, explained.stderr
    assert f"verdict  a candidate; duplicate of {kept} (the same patch)" in explained.stdout
    again = run_gitgauge("mine", cwd=sample.root, env=mine_env(journal))
    assert again.returncode == 0, again.stderr
    assert list(load_tasks(sample)) == [picks["release-2"]]  # still one: kept is already mined
