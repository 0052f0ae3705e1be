"""The door to subprocesses: whole process groups die on timeout, output tails, a clean env."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.processes import wait_for_file, wait_until_gone

from gitgauge.core import process


def test_timeout_kills_the_whole_group_even_a_grandchild_holding_stdout(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    # leader shell -> child shell -> grandchild that ignores SIGTERM and keeps stdout open.
    command = (
        f'sh -c \'sh -c "trap \\"\\" TERM; echo \\$\\$ > {pid_file}; exec sleep 300" & wait\'; '
        "echo never"
    )

    result = process.run(command, cwd=tmp_path, timeout_seconds=1)

    assert result.timed_out
    assert result.exit_code is None
    assert not result.ok
    # Output goes to files, not pipes: the open stdout of the grandchild cannot keep us waiting.
    assert result.seconds < 200
    grandchild = int(wait_for_file(pid_file))
    assert wait_until_gone(grandchild), f"grandchild {grandchild} survived the timeout"
    assert "never" not in result.stdout_tail


def test_children_left_behind_by_a_finished_command_are_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "background.pid"

    result = process.run(f"sleep 300 & echo $! > {pid_file}; echo done", cwd=tmp_path)

    assert result.ok
    assert result.stdout_tail == "done\n"
    assert wait_until_gone(int(pid_file.read_text()))


def test_exit_code_and_output(tmp_path: Path) -> None:
    result = process.run("echo out; echo err >&2; exit 3", cwd=tmp_path)

    assert (result.exit_code, result.timed_out, result.ok) == (3, False, False)
    assert result.stdout_tail == "out\n"
    assert result.stderr_tail == "err\n"
    assert result.output_tail() == "out\n\n--- stderr ---\nerr\n"


def test_output_keeps_the_tail_and_the_log_file_keeps_everything(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "stdout.txt"
    script = "import sys; sys.stdout.write('a' * 100000 + 'END'); sys.stderr.write('e' * 5)"

    result = process.run(["python3", "-c", script], cwd=tmp_path, stdout_path=log, tail_bytes=1000)

    assert result.ok
    assert len(result.stdout_tail) == 1000
    assert result.stdout_tail.endswith("aEND")
    assert log.read_text() == "a" * 100000 + "END"
    assert result.stderr_tail == "eeeee"
    assert result.output_tail(12) == "-- stderr ---\neeeee"[-12:]


def test_stdin_text_reaches_the_command(tmp_path: Path) -> None:
    result = process.run("cat", cwd=tmp_path, stdin_text="prompt ✓\n")
    assert result.stdout_tail == "prompt ✓\n"


def test_commands_that_cannot_start(tmp_path: Path) -> None:
    missing_argv = process.run(["gitgauge-no-such-program"], cwd=tmp_path)
    assert missing_argv.exit_code is None
    assert missing_argv.start_error
    assert missing_argv.failed_to_start

    missing_shell = process.run("gitgauge-no-such-program --flag", cwd=tmp_path)
    assert missing_shell.exit_code == 127
    assert missing_shell.failed_to_start

    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    not_executable = process.run("./not-executable.sh", cwd=tmp_path)
    assert not_executable.exit_code == 126
    assert not_executable.failed_to_start

    assert not process.run("exit 1", cwd=tmp_path).failed_to_start


@pytest.fixture
def git_redirections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # What a git hook or `git rebase -x` would leave in gitgauge's environment.
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere" / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "elsewhere" / "index"))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(tmp_path / "elsewhere" / "objects"))
    monkeypatch.setenv("GIT_COMMON_DIR", str(tmp_path / "elsewhere" / ".git"))
    monkeypatch.setenv("OLDPWD", "/somewhere/else")
    monkeypatch.setenv("PWD", "/somewhere/else")
    monkeypatch.setenv("GITGAUGE_KEEP_ME", "kept")


@pytest.mark.usefixtures("git_redirections")
def test_clean_env_drops_git_redirections_and_sets_pwd(tmp_path: Path) -> None:
    env = process.clean_env(cwd=tmp_path, extra={"GITGAUGE_JOB": "3"})

    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        assert name not in env
    assert "GIT_COMMON_DIR" not in env
    assert "OLDPWD" not in env
    assert env["PWD"] == str(tmp_path)
    assert env["GITGAUGE_KEEP_ME"] == "kept"
    assert env["GITGAUGE_JOB"] == "3"
    assert "PWD" not in process.clean_env()


@pytest.mark.usefixtures("git_redirections")
def test_commands_run_with_the_clean_env_by_default(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert process.run(["git", "init", "-q", str(repo)], cwd=tmp_path).ok

    result = process.run(
        'echo "$PWD"; echo "${GIT_DIR-unset}"; git rev-parse --show-toplevel', cwd=repo
    )

    assert result.ok, result.output_tail()
    pwd, git_dir, toplevel = result.stdout_tail.splitlines()
    assert pwd == str(repo)
    assert git_dir == "unset"
    assert Path(toplevel).resolve() == repo.resolve()
