"""Scoring an agent's work in a real throwaway worktree: diff size (new files in, linked paths
out), protected files reverted or deleted, and the resolved / regressed test runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.files import write_files
from helpers.records import fix_task
from helpers.repos import GitRepo
from helpers.workspace import agent_workspace, graded

from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import UserCommands
from gitgauge.kinds.fix.grade import grade
from gitgauge.running.scoring import diffstat
from gitgauge.running.scoring.protect import WorkspaceEscape

LINK = [".venv"]
APP = "def answer():\n    return 41\n\n\ndef name():\n    return 'app'\n"
TEST_APP = "from app import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"


def no_warnings(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


@pytest.fixture
def base_repo(git_repo: GitRepo) -> GitRepo:
    # `.venv/` is ignored, yet the symlink that links it into a worktree is not a directory to
    # git: only an explicit exclusion keeps it out of the diff.
    git_repo.commit(
        "initial",
        files={
            ".gitignore": ".venv/\n",
            "app.py": APP,
            "notes.txt": "one\ntwo\nthree\n",
            "old_name.py": "x = 1\ny = 2\n",
            "pytest.ini": "[pytest]\ntestpaths = tests\n",
            "tests/test_app.py": TEST_APP,
            "tests/test_other.py": "def test_other():\n    pass\n",
        },
    )
    (git_repo.root / ".venv" / "lib").mkdir(parents=True)
    (git_repo.root / ".venv" / "lib" / "site.py").write_text("# installed\n", encoding="utf-8")
    return git_repo


def head(repo: GitRepo) -> str:
    return repo.git("rev-parse", "HEAD").strip()


def test_diff_counts_every_change_against_base_but_not_linked_paths(
    base_repo: GitRepo, tmp_path: Path
) -> None:
    base = head(base_repo)
    with agent_workspace(base_repo.root, base, link=LINK) as opened:
        workspace = opened.path
        assert (workspace / ".venv").is_symlink()
        (workspace / "app.py").write_text(APP.replace("41", "42"), encoding="utf-8")  # +1 -1
        (workspace / "helper.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")  # +3
        (workspace / "notes.txt").unlink()  # -3
        (workspace / "logo.png").write_bytes(b"\x89PNG\x00\x01\x02")  # binary: a file, no lines
        (workspace / "old_name.py").rename(workspace / "new_name.py")  # a rename: no lines
        # Through the link, into the user's real .venv: not the agent's diff.
        (workspace / ".venv" / "lib" / "agent.py").write_text("1\n2\n", encoding="utf-8")

        opened.checkout.read_agent_tree(base)
        diff = opened.checkout.diff(base)
        written = opened.checkout.write_patch(base, tmp_path / "agent.patch", limit_bytes=10**6)
        stat, patch = diffstat.diff_stat(diff), (tmp_path / "agent.patch").read_text()
        assert written == len(patch.encode())

    by_path = {change.path: change for change in stat.changes}
    assert sorted(by_path) == ["app.py", "helper.py", "logo.png", "new_name.py", "notes.txt"]
    assert (stat.files, stat.insertions, stat.deletions) == (5, 4, 4)
    assert by_path["logo.png"].binary
    assert by_path["new_name.py"].old_path == "old_name.py"
    assert "GIT binary patch" in patch and "+++ b/helper.py" in patch
    assert ".venv" not in patch
    # The user's checkout did not get the agent's files staged or written.
    assert base_repo.git("status", "--porcelain") == ""
    assert not (base_repo.root / "helper.py").exists()


def test_an_untouched_workspace_has_an_empty_diff(base_repo: GitRepo, tmp_path: Path) -> None:
    base = head(base_repo)
    with agent_workspace(base_repo.root, base, link=LINK) as opened:
        opened.checkout.read_agent_tree(base)
        diff = opened.checkout.diff(base)
        written = opened.checkout.write_patch(base, tmp_path / "agent.patch", limit_bytes=10**6)
        stat, patch = diffstat.diff_stat(diff), (tmp_path / "agent.patch").read_text()
        assert written == len(patch.encode())

    assert (stat.files, stat.insertions, stat.deletions) == (0, 0, 0)
    assert patch == ""


def test_protected_edits_are_reverted_and_new_test_infra_deleted(base_repo: GitRepo) -> None:
    base = head(base_repo)
    with agent_workspace(base_repo.root, base, link=LINK) as opened:
        workspace = opened.path
        edits = {
            "app.py": APP.replace("41", "42"),  # the real fix: kept
            "tests/test_app.py": "def test_answer():\n    pass\n",  # weakened test: reverted
            "pytest.ini": "[pytest]\naddopts = -k nothing\n",  # test infra: reverted
            "conftest.py": "collect_ignore_glob = ['*']\n",  # new infra: deleted
            "tests/conftest.py": "import pytest\n",  # new infra: deleted
            "requirements-dev.txt": "pytest-skip\n",  # new infra: deleted
            "tests/test_new.py": "def test_new():\n    pass\n",  # the agent's own test: dropped
            "helpers.py": "def helper():\n    return 42\n",  # new project code: kept
        }
        for path, text in edits.items():
            (workspace / path).write_text(text, encoding="utf-8")
        (workspace / "tests" / "test_other.py").unlink()  # deleted test: restored

        protection = graded(opened, base)

        assert protection.reverted == ["pytest.ini", "tests/test_app.py", "tests/test_other.py"]
        assert sorted(protection.dropped) == [
            "conftest.py",
            "requirements-dev.txt",
            "tests/conftest.py",
            "tests/test_new.py",
        ]
        assert protection.dropped["conftest.py"].startswith("configuration of pytest")
        assert protection.dropped["tests/test_new.py"].startswith("a test file")
        assert protection.kept == ["helpers.py"]
        assert (workspace / "tests" / "test_app.py").read_text(encoding="utf-8") == TEST_APP
        assert (workspace / "pytest.ini").read_text(encoding="utf-8").endswith("= tests\n")
        assert (workspace / "tests" / "test_other.py").exists()
        for path in protection.dropped:
            assert not (workspace / path).exists()
        assert (workspace / "helpers.py").exists()
        assert "42" in (workspace / "app.py").read_text(encoding="utf-8")


def test_a_symlinked_test_directory_is_never_written_through(
    base_repo: GitRepo, tmp_path: Path
) -> None:
    outside = write_files(tmp_path / "outside", {"test_app.py": "precious\n"})
    base = head(base_repo)
    with agent_workspace(base_repo.root, base, link=LINK) as opened:
        workspace = opened.path
        for path in (workspace / "tests").iterdir():
            path.unlink()
        (workspace / "tests").rmdir()
        (workspace / "tests").symlink_to(outside)

        protection = graded(opened, base)

        # Putting the test files back replaced the agent's link by the real directory.
        assert protection.reverted == ["tests/test_app.py", "tests/test_other.py"]
        assert not (workspace / "tests").is_symlink()
        assert (workspace / "tests" / "test_app.py").read_text(encoding="utf-8") == TEST_APP

    assert (outside / "test_app.py").read_text(encoding="utf-8") == "precious\n"
    assert sorted(p.name for p in outside.iterdir()) == ["test_app.py"]


# -- grade -----------------------------------------------------------------------------------------

# The suite passes when value.txt equals tests/expected.txt. The fix changes both to 42, so its
# test file expects 42 while the base's own test file still expects 41.
CHECK = 'test "$(cat value.txt)" = "$(cat tests/expected.txt)"'


@pytest.fixture
def graded_task(git_repo: GitRepo) -> Task:
    base = git_repo.commit(
        "initial", files={"value.txt": "41\n", "tests/expected.txt": "41\n", "other.txt": "1\n"}
    )
    fix = git_repo.commit("fix: value", files={"value.txt": "42\n", "tests/expected.txt": "42\n"})
    return fix_task(
        base, fix, "fix: value", ["tests/expected.txt"], id="fix-value", baseSuitePasses=True
    )


def run_grade(
    root: Path, task: Task, value: str | None, tmp_path: Path
) -> tuple[bool, bool | None]:
    repo = Repository(root)
    config = RepoConfig(testCommand=CHECK)
    with agent_workspace(root, task.base) as opened:
        workspace = opened.path
        if value is not None:
            (workspace / "value.txt").write_text(value, encoding="utf-8")
        graded(opened, task.base)
        verdict = grade(repo, task, workspace, UserCommands(config), env={"PATH": "/usr/bin:/bin"},
                        log_dir=tmp_path / "logs")  # fmt: skip
    assert (tmp_path / "logs" / "test.stdout").exists()
    return verdict.resolved, verdict.regressed


def test_grade_resolved_when_the_fix_tests_pass(
    git_repo: GitRepo, graded_task: Task, tmp_path: Path
) -> None:
    # Passing the fix's tests breaks the base's own expectation: the suite-level check says so.
    assert run_grade(git_repo.root, graded_task, "42\n", tmp_path) == (True, True)


def test_grade_unresolved_without_regression_when_nothing_changed(
    git_repo: GitRepo, graded_task: Task, tmp_path: Path
) -> None:
    assert run_grade(git_repo.root, graded_task, None, tmp_path) == (False, False)


@pytest.mark.parametrize("base_suite_passes", [False, None])
def test_regression_is_unknown_when_the_base_suite_did_not_pass(
    git_repo: GitRepo, graded_task: Task, tmp_path: Path, base_suite_passes: bool | None
) -> None:
    task = graded_task.model_copy(update={"baseSuitePasses": base_suite_passes})

    assert run_grade(git_repo.root, task, "42\n", tmp_path) == (True, None)
    assert not (tmp_path / "logs" / "base-test.stdout").exists()


def test_test_files_are_never_laid_through_a_symlink_of_the_agents_tree(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    """The fix adds its tests in a new directory; the agent put a symlink there. One that leads
    out of the repository is dropped before grading (not the agent's code); one inside it
    stays, and laying the tests would write wherever it points: an escape, not a verdict."""
    outside = tmp_path / "outside"
    outside.mkdir()
    base = git_repo.commit("initial", files={"value.txt": "41\n", "pkg/mod.py": "x = 1\n"})
    fix = git_repo.commit(
        "fix: value", files={"value.txt": "42\n", "pkg/checks/expected.txt": "42\n"}
    )
    task = fix_task(base, fix, "fix: value", ["pkg/checks/expected.txt"], id="fix-value")
    repo = Repository(git_repo.root)
    commands = UserCommands(RepoConfig(testCommand=CHECK))
    with agent_workspace(git_repo.root, base) as opened:
        (opened.path / "pkg" / "checks").symlink_to(outside)
        protection = graded(opened, base)
        assert protection.dropped == {
            "pkg/checks": f"a symlink that leads out of the repository ({outside})"
        }
        assert not (opened.path / "pkg" / "checks").exists()
    with agent_workspace(git_repo.root, base) as opened:
        (opened.path / "pkg" / "elsewhere").mkdir()
        (opened.path / "pkg" / "checks").symlink_to("elsewhere")
        assert graded(opened, base).kept == ["pkg/checks"]
        with pytest.raises(WorkspaceEscape, match="pkg/checks is a symlink"):
            grade(repo, task, opened.path, commands, env={}, log_dir=tmp_path / "logs")
    assert list(outside.iterdir()) == []
