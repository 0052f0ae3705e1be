"""Faults: interrupts, hard kills, concurrent writers, and workspaces that must not leak the fix."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import GITGAUGE, in_background, run_gitgauge, start_in_background
from helpers.processes import wait_for_file, wait_until_gone
from helpers.repos import GitRepo, new_repo

from gitgauge.core.git import Repository, fingerprint
from gitgauge.running.workspace import HistoryCopies, HistoryMode, TaskWorkspaces

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def _temp_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("gitgauge-*"))


def _slow_repo(repo: GitRepo, *, fixes: int = 3, sleep: float = 30.0) -> list[str]:
    """A repository whose suite sleeps (so a command can be interrupted mid-verification).

    check.py passes when value.txt says "good"; each fix adds a test file that requires it.
    """
    repo.commit(
        "Initial commit",
        files={
            "check.py": (
                "import os, pathlib, sys, time, subprocess\n"
                f"child = subprocess.Popen(['sleep', '{sleep}'])\n"  # a child that must die with us
                # Its pid, for the test to check (and end) exactly the processes it caused.
                "if os.environ.get('CHILD_PIDS'):\n"
                "    open(os.environ['CHILD_PIDS'], 'a').write(f'{child.pid}\\n')\n"
                f"time.sleep(float(pathlib.Path('delay.txt').read_text()))\n"
                "tests = list(pathlib.Path('tests').glob('*.txt'))\n"
                "ok = all(pathlib.Path('value.txt').read_text().strip() == 'good' for _ in tests)\n"
                "sys.exit(0 if ok else 1)\n"
            ),
            "delay.txt": f"{sleep}\n",
            "value.txt": "good\n",
        },
    )
    shas = []
    for index in range(fixes):
        repo.commit(f"Break thing {index}", files={"value.txt": "bad\n"})
        shas.append(
            repo.commit(
                f"fix: thing {index} is broken",
                files={"value.txt": "good\n", f"tests/t{index}.txt": "requires good\n"},
            )
        )
    # No sandbox: the suite reports its children's pids in a file outside its checkout (these
    # tests are about process groups and cleanup; tests/test_sandbox.py covers the sandbox).
    (repo.root / "gitgauge.yaml").write_text(
        'testCommand: "python3 check.py"\nrun:\n  sandbox: none\nenv:\n  CHILD_PIDS: null\n',
        "utf-8",
    )
    (repo.root / ".gitgauge").mkdir()
    (repo.root / ".gitgauge" / ".gitignore").write_text("*\n", "utf-8")
    return shas


def _child_pids(pid_file: Path) -> list[int]:
    """The pids of the sleeping children the suite started (see `_slow_repo`)."""
    if not pid_file.exists():
        return []
    return [int(line) for line in pid_file.read_text().split()]


def _checkouts(temp: Path) -> list[Path]:
    """gitgauge's checkouts in a temporary directory (`core.checkout`)."""
    return sorted(temp.glob("gitgauge-co-*"))


def _wait_for_checkout(temp: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _checkouts(temp):
            return
        time.sleep(0.1)
    raise AssertionError("gitgauge never created a checkout")


def _private_tmp(repo: GitRepo) -> Path:
    """A private temporary directory: the machine's /tmp is shared with other gitgauge processes."""
    private = repo.root.parent / "tmp"
    private.mkdir(exist_ok=True)
    return private


def _no_worktrees(repo: GitRepo) -> bool:
    """gitgauge never registers a worktree in the user's repository: its checkouts have a git
    directory of their own."""
    return repo.git("worktree", "list").count("\n") == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_during_mine_cleans_up_and_exits_130(
    git_repo: GitRepo, sig: signal.Signals
) -> None:
    _slow_repo(git_repo)
    private_tmp = _private_tmp(git_repo)
    before = git_repo.snapshot()
    pid_file = git_repo.root.parent / "child-pids.txt"
    child = start_in_background(
        "mine",
        "-j",
        "2",
        cwd=git_repo.root,
        env=dict(os.environ, CHILD_PIDS=str(pid_file), TMPDIR=str(private_tmp)),
    )
    _wait_for_checkout(private_tmp)
    time.sleep(0.5)
    child.send_signal(sig)
    # A second Ctrl-C while cleaning up must not leave a worktree behind either.
    time.sleep(0.05)
    child.send_signal(sig)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert "interrupted" in err and "gitgauge mine" in err
    assert git_repo.snapshot() == before
    assert list(private_tmp.iterdir()) == []
    # The suite's sleeping child processes died with the test command.
    started = _child_pids(pid_file)
    assert started, "the suite never started its child"
    assert [pid for pid in started if not wait_until_gone(pid)] == []


def test_ctrl_c_during_the_suite_says_nothing_about_its_report(git_repo: GitRepo) -> None:
    """The suite killed by gitgauge's own Ctrl-C wrote no JUnit report, and that is no news:
    the warning ("testCommand wrote no JUnit XML report") is for suites that ran."""
    _slow_repo(git_repo, fixes=1)
    pid_file = git_repo.root.parent / "child-pids.txt"
    with in_background(
        "mine", cwd=git_repo.root, env=dict(os.environ, CHILD_PIDS=str(pid_file))
    ) as child:
        wait_for_file(pid_file)  # the suite runs
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130, (out, err)
    assert "JUnit" not in err and "fall back to the exit code" not in err, err
    assert "interrupted" in err


def test_hard_kill_kills_the_suite_and_leaves_checkouts_that_the_next_command_removes(
    git_repo: GitRepo,
) -> None:
    """SIGKILL runs no handler of gitgauge's: its watchdog, which sees gitgauge's end of a pipe
    close, kills the suite's process group (the test command and the child it started)."""
    _slow_repo(git_repo, fixes=1)
    pid_file = git_repo.root.parent / "child-pids.txt"
    private_tmp = _private_tmp(git_repo)
    env = dict(os.environ, CHILD_PIDS=str(pid_file), TMPDIR=str(private_tmp))
    child = start_in_background("mine", cwd=git_repo.root, env=env, output=False)
    _wait_for_checkout(private_tmp)
    try:
        started = [int(pid) for pid in wait_for_file(pid_file).split()]
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert [pid for pid in started if not wait_until_gone(pid, seconds=10)] == []
    finally:
        for pid in _child_pids(pid_file):  # never leave them sleeping, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
    assert _checkouts(private_tmp)
    assert _no_worktrees(git_repo)

    (git_repo.root / "delay.txt").write_text("0\n")  # unused by HEAD's checkouts; just a file
    result = run_gitgauge("mine", "--dry-run", cwd=git_repo.root, env=env)
    assert result.returncode == 0, result.stderr
    assert "stale" in result.stderr
    assert _checkouts(private_tmp) == []
    assert _no_worktrees(git_repo)


def test_leftovers_of_a_live_gitgauge_or_of_another_repository_stay(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    """The stale sweep removes only what a *dead* gitgauge left for *this* repository."""
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(private_tmp), CHILD_PIDS=str(tmp_path / "pids.txt"))
    other = new_repo(tmp_path / "other")
    _slow_repo(other, fixes=1)
    _slow_repo(git_repo, fixes=1)
    (git_repo.root / "delay.txt").write_text("0\n")
    # A live gitgauge in another repository, with its worktree in the same temporary directory.
    live = start_in_background("mine", cwd=other.root, env=env, output=False)
    try:
        _wait_for_checkout(private_tmp)
        others = sorted(private_tmp.iterdir())
        ours = fingerprint(Repository(git_repo.root).root)
        theirs = fingerprint(Repository(other.root).root)
        # Leftovers that claim this repository (of a live process, of a dead one) and another
        # repository (of a dead process).
        dead = subprocess.Popen(["true"])
        dead.wait()
        for name, pid, repository in (
            ("gitgauge-wt-live", live.pid, ours),
            ("gitgauge-wt-dead", dead.pid, ours),
            ("gitgauge-wt-theirs", dead.pid, theirs),
        ):
            (private_tmp / name).mkdir()
            owner = {"pid": pid, "host": repository, "repository": repository, "links": []}
            (private_tmp / name / "owner.json").write_text(json.dumps(owner))

        result = run_gitgauge("mine", "--dry-run", cwd=git_repo.root, env=env)

        assert result.returncode == 0, result.stderr
        assert "removed 1 stale gitgauge temporary director(ies)" in result.stderr
        assert not (private_tmp / "gitgauge-wt-dead").exists()
        assert (private_tmp / "gitgauge-wt-live").exists()
        assert (private_tmp / "gitgauge-wt-theirs").exists()
        assert all(path.exists() for path in others)
        assert _checkouts(private_tmp)
    finally:
        live.send_signal(signal.SIGTERM)
        live.wait(timeout=60)
        for pid in _child_pids(tmp_path / "pids.txt"):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
    assert live.returncode == 130
    assert _checkouts(private_tmp) == []
    assert _no_worktrees(other)


def test_second_writer_fails_at_once_naming_the_holder(git_repo: GitRepo) -> None:
    _slow_repo(git_repo, fixes=1)
    private_tmp = _private_tmp(git_repo)
    child = start_in_background(
        "mine", cwd=git_repo.root, env=dict(os.environ, TMPDIR=str(private_tmp)), output=False
    )
    try:
        _wait_for_checkout(private_tmp)
        result = run_gitgauge("mine", cwd=git_repo.root)
        assert result.returncode == 1
        assert f"pid {child.pid}" in result.stderr
        assert "--wait" in result.stderr
        # Readers need no lock.
        assert run_gitgauge("report", cwd=git_repo.root).returncode == 0
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)


def test_run_and_rewrite_take_the_lock_and_wait_waits_for_the_holder(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    _slow_repo(git_repo, fixes=1)
    noop = tmp_path / "noop.yaml"
    noop.write_text("name: noop\nadapter: noop\n", encoding="utf-8")
    # A backend is chosen before the lock: an API key that is never used (nothing to rewrite).
    env = dict(os.environ, ANTHROPIC_API_KEY="unused", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    private_tmp = _private_tmp(git_repo)
    holder = start_in_background(
        "mine", cwd=git_repo.root, env=dict(env, TMPDIR=str(private_tmp)), output=False
    )
    waiters: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        _wait_for_checkout(private_tmp)
        for command in (["run", "-c", str(noop)], ["rewrite"]):
            result = run_gitgauge(*command, cwd=git_repo.root, env=env)
            assert result.returncode == 1, (command, result.stderr)
            assert f"pid {holder.pid} (gitgauge mine)" in result.stderr, result.stderr
            assert "--wait" in result.stderr

        for command in (["rewrite", "--wait"], ["run", "--wait", "-c", str(noop)]):
            err = tmp_path / f"{command[0]}.stderr"
            with open(err, "wb") as stderr:
                waiters.append(
                    (
                        subprocess.Popen(
                            [*GITGAUGE, *command], cwd=git_repo.root, env=env,
                            stdout=subprocess.DEVNULL, stderr=stderr,
                        ),
                        err,
                    )
                )  # fmt: skip
        for waiter, err in waiters:
            deadline = time.monotonic() + 60
            while b"waiting for the other gitgauge command" not in err.read_bytes():
                assert waiter.poll() is None, err.read_text()
                assert time.monotonic() < deadline, "never said it waits"
                time.sleep(0.05)
        time.sleep(1.0)
        assert [waiter.poll() for waiter, _ in waiters] == [None, None]  # still waiting
    finally:
        holder.send_signal(signal.SIGINT)
        holder.wait(timeout=60)
    # The holder is gone: both waiters get the lock in turn and do their work.
    rewrite, run = (waiter.wait(timeout=120) for waiter, _ in waiters)
    assert rewrite == 0, waiters[0][1].read_text()
    assert "is in use by another gitgauge command" not in waiters[1][1].read_text()
    assert "no tasks" in waiters[1][1].read_text() and run == 1  # interrupted: nothing mined


# -- workspaces that do not leak the fix -----------------------------------------------------

SECRET_SUBJECT = "fix: the secret answer is forty-two"


def _repo_with_secret_fix(repo: GitRepo) -> tuple[str, str]:
    repo.commit("Initial commit", files={"app.py": "ANSWER = 41\n"})
    base = repo.commit("Add a helper", files={"helper.py": "X = 1\n"})
    fix = repo.commit(
        SECRET_SUBJECT,
        files={"app.py": "ANSWER = 42\n", "tests/test_secret_answer.py": "assert True\n"},
    )
    repo.commit("Later work", files={"more.py": "Y = 2\n"})
    repo.git("tag", "v1", fix)
    repo.git("stash", "list")
    return base, fix


CHEAT = r"""
set -u
{
  git log --all --format='%H %s'
  git reflog --all
  git rev-list --all
  git cat-file --batch-all-objects --batch-check
  git stash list
  git for-each-ref
  git worktree list
  cat .git
  git cat-file --batch-all-objects --batch | tr -d '\0'
  for d in .. ../.. ; do grep -rIa "forty-two" "$d" 2>/dev/null | head -5; done
  find .. ../.. -name 'test_secret_answer*' 2>/dev/null
} > "$CHEAT_OUT" 2>&1
"""


@pytest.fixture
def own_temp_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """gitgauge's temporary directory apart from pytest's, where the user's repository lives:
    the cheat may then search every directory above the workspace up to the temp root. (Above
    that lies the rest of the machine, which no container-free tool can hide: see Limitations.)"""
    root = Path(tempfile.mkdtemp(prefix="gg-temp-root-", dir="/tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("history", ["isolated", "full"])
def test_cheating_agent_cannot_find_the_fix_in_an_isolated_workspace(
    git_repo: GitRepo, tmp_path: Path, history: HistoryMode, own_temp_root: Path
) -> None:
    base, fix = _repo_with_secret_fix(git_repo)
    repo = Repository(git_repo.root)
    out = tmp_path / "cheat.txt"
    warnings: list[str] = []
    with TaskWorkspaces(
        repo,
        base,
        history=history,
        link=[],
        warn=warnings.append,
    ) as prepared:
        with prepared.workspace() as opened:
            workspace = opened.path
            assert workspace.parent.parent == own_temp_root
            env = dict(os.environ, CHEAT_OUT=str(out))
            subprocess.run(["sh", "-c", CHEAT], cwd=workspace, env=env, check=False)
            # History up to base stays available.
            log = subprocess.run(
                ["git", "log", "--format=%s"], cwd=workspace, capture_output=True, text=True
            ).stdout
            assert "Add a helper" in log and "Initial commit" in log
            blame = subprocess.run(
                ["git", "blame", "app.py"], cwd=workspace, capture_output=True, text=True
            )
            assert blame.returncode == 0
    found = out.read_text(errors="replace")
    leaked = fix in found or "forty-two" in found or "test_secret_answer" in found
    if history == "isolated":
        assert not leaked, found
    else:
        assert leaked  # proves the search can find the fix when it is reachable
    assert not list(own_temp_root.iterdir())  # nothing left behind


@contextlib.contextmanager
def _isolated_workspace(git_repo: GitRepo) -> Iterator[tuple[Path, str, str]]:
    """A workspace of `_repo_with_secret_fix` with isolated history: (its path, base, fix)."""
    base, fix = _repo_with_secret_fix(git_repo)
    repo = Repository(git_repo.root)
    with TaskWorkspaces(repo, base, history="isolated", link=[], warn=print) as prepared:
        with prepared.workspace() as opened:
            yield opened.path, base, fix


def test_isolated_history_copy_holds_only_history_up_to_base(git_repo: GitRepo) -> None:
    with _isolated_workspace(git_repo) as (workspace, base, fix):
        listed = subprocess.run(
            ["git", "rev-list", "--all"], cwd=workspace, capture_output=True, text=True
        ).stdout.split()
        expected = git_repo.git("rev-list", base).split()
        assert sorted(listed) == sorted(expected)
        assert fix not in listed
        pointer = (workspace / ".git").read_text()
        assert str(git_repo.root) not in pointer


def test_owner_files_do_not_name_the_users_repository(git_repo: GitRepo) -> None:
    with _isolated_workspace(git_repo) as (workspace, _, _):
        for owner in workspace.parent.glob("*.json"):
            text = owner.read_text()
            assert str(git_repo.root) not in text
            assert json.loads(text)["pid"] == os.getpid()


def test_history_copies_of_a_run_chain_without_reaching_past_their_base(
    git_repo: GitRepo, own_temp_root: Path
) -> None:
    """Seven tasks on one line of history: each copy packs only the commits since the previous
    base and borrows the rest, git never complains about nested alternates, and no copy reaches
    a commit after its own base."""
    git_repo.commit("Initial commit", files={"app.py": "v = 0\n"})
    bases = []
    for index in range(1, 8):
        bases.append(git_repo.commit(f"Change {index}", files={"app.py": f"v = {index}\n"}))
    repo = Repository(git_repo.root)
    with HistoryCopies(repo) as copies:
        made = [copies.get(base) for base in bases]
        assert made[-1].borrowed == tuple(made[:-1])
        assert copies.get(bases[2]) is made[2]  # made once
        for index, base in enumerate(bases):
            with TaskWorkspaces(
                repo, base, history="isolated", link=[], warn=print, copies=copies
            ) as prepared:
                with prepared.workspace() as opened:
                    workspace = opened.path
                    listed = subprocess.run(
                        ["git", "rev-list", "--all"],
                        cwd=workspace,
                        capture_output=True,
                        text=True,
                    )
                    assert listed.stderr == ""  # no "nesting too deep"
                    assert sorted(listed.stdout.split()) == sorted(
                        git_repo.git("rev-list", base).split()
                    )
                    objects = subprocess.run(
                        ["git", "cat-file", "--batch-all-objects", "--batch-check"],
                        cwd=workspace,
                        capture_output=True,
                        text=True,
                    ).stdout
                    for later in bases[index + 1 :]:
                        assert later not in objects
        # Each copy's own pack holds only its increment: one commit, tree and blob.
        own = subprocess.run(
            ["git", "count-objects", "-v"], cwd=made[-1].root, capture_output=True, text=True
        ).stdout
        assert "in-pack: 3" in own
    assert not list(own_temp_root.iterdir())


def _bwrap_with_tmpfs_size() -> str:
    """A bwrap that can mount a tmpfs of a given size (`--size`, bubblewrap >= 0.7): how a test
    gets a small full filesystem without root. Skipped without one, failed when CI=true."""
    from gitgauge.core.sandbox import probe

    binary, reason = probe(os.environ, network=True)
    if binary is not None:
        shown = subprocess.run([binary, "--help"], capture_output=True, text=True)
        if "--size" not in shown.stdout + shown.stderr:
            binary, reason = None, f"{binary} has no --size (bubblewrap >= 0.7 has)"
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"this test needs bwrap with --size in CI: {reason}")
        pytest.skip(reason)
    return binary


def test_a_full_tmpdir_keeps_gits_error_text(git_repo: GitRepo, tmp_path: Path) -> None:
    """gitgauge's worktrees live in TMPDIR; when it fills up, git fails with a reason that went
    to an output file in the same full TMPDIR and was lost (`failed: exit 128`). Now git's words
    arrive, and gitgauge says which file system is full (git names only the file)."""
    bwrap = _bwrap_with_tmpfs_size()
    git_repo.commit("Add the data", files={"data.txt": os.urandom(96 * 1024).hex(), "v.txt": "1"})
    git_repo.commit("fix: v is wrong", files={"v.txt": "2", "tests/t.txt": "needs 2"})
    (git_repo.root / "gitgauge.yaml").write_text('testCommand: "true"\n', encoding="utf-8")
    full = tmp_path / "full-tmp"
    full.mkdir()
    # A 64 KiB tmpfs as TMPDIR, for gitgauge only (its own mount namespace): the checkout of the
    # 192 KiB data file cannot fit.
    boxed = [bwrap, "--dev-bind", "/", "/", "--size", str(64 * 1024), "--tmpfs", str(full), "--"]

    result = subprocess.run(
        [*boxed, "env", f"TMPDIR={full}", *GITGAUGE, "mine"],
        cwd=git_repo.root,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1, (result.stdout, result.stderr)
    # git's own words (its parallel checkout quotes the name)
    assert re.search(r"unable to write file '?data\.txt'?", result.stderr), result.stderr
    assert f"No space left on device: TMPDIR ({full}) is full" in result.stderr, result.stderr
