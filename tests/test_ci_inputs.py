"""`gitgauge ci` and `gitgauge init --ci` on input they cannot use, through the real CLI in a
repository built for the test: each a one-line error naming the flag, the variable or the key
and what to do, before anything runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.configs import agent_config
from helpers.repos import GitRepo

from gitgauge.ci.workflow import AGENT_PATH, WORKFLOW, WORKFLOW_PATH
from gitgauge.core.errors import ExitCode

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def outside_ci() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}


def changed_notes(repo: GitRepo) -> None:
    repo.commit("docs: notes", files={"CLAUDE.md": "old\n", "README.md": "x\n"})
    repo.commit("docs: new notes", files={"CLAUDE.md": "new\n"})


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_ci_without_a_pull_request_or_a_token_names_what_to_set(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    changed_notes(git_repo)
    config = agent_config(tmp_path, "noop", adapter="noop")
    env = outside_ci()
    refs = ("--base", "HEAD~1", "--head", "HEAD")

    no_pull = run_gitgauge("ci", "-c", config, *refs, cwd=git_repo.root, env=env)

    assert no_pull.returncode == ExitCode.USAGE
    assert "no pull request to comment on" in one_line(no_pull.stderr)
    assert "--dry-run" in no_pull.stderr
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 3}}), encoding="utf-8")
    env |= {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "acme/widgets"}
    no_token = run_gitgauge("ci", "-c", config, *refs, cwd=git_repo.root, env=env)
    assert no_token.returncode == ExitCode.USAGE
    assert "GITHUB_TOKEN is not set" in one_line(no_token.stderr)
    env["GITHUB_EVENT_PATH"] = str(tmp_path / "missing.json")
    no_event = run_gitgauge("ci", "-c", config, *refs, cwd=git_repo.root, env=env)
    assert no_event.returncode == ExitCode.USAGE
    assert "GITHUB_EVENT_PATH" in one_line(no_event.stderr)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--base", "no-such-ref", "--head", "HEAD"], "--base 'no-such-ref' is not a commit"),
        (["--base", "HEAD~1"], "no head to compare: pass --head REF"),
        (["--base", "HEAD~1", "--head", "HEAD", "--min-rate", "60"], "--min-rate is a resolve"),
        (["--base", "HEAD~1", "--head", "HEAD", "--tasks", "0"], "--tasks must be a positive"),
        (["--base", "HEAD~1", "--head", "HEAD", "--repeat", "0"], "--repeat must be a positive"),
        (["--base", "HEAD~1", "--head", "HEAD", "--links", "ftp://x"], "--links takes an http"),
    ],
)
def test_ci_flags_it_cannot_use(
    git_repo: GitRepo, tmp_path: Path, flags: list[str], said: str
) -> None:
    changed_notes(git_repo)
    config = agent_config(tmp_path, "noop", adapter="noop")

    checked = run_gitgauge(
        "ci", "-c", config, "--dry-run", *flags, cwd=git_repo.root, env=outside_ci()
    )

    assert checked.returncode == ExitCode.USAGE, checked.stderr
    assert said in one_line(checked.stderr)


def test_ci_harness_files_that_are_no_path_or_that_files_already_overlays(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    changed_notes(git_repo)
    (tmp_path / "notes.md").write_text("mine\n", encoding="utf-8")
    outside = agent_config(tmp_path, "outside", adapter="noop", harnessFiles=["../CLAUDE.md"])
    overlaid = agent_config(tmp_path, "both", adapter="noop", files={"CLAUDE.md": "notes.md"})
    refs = ("--base", "HEAD~1", "--head", "HEAD", "--dry-run")

    bad_path = run_gitgauge("ci", "-c", outside, *refs, cwd=git_repo.root, env=outside_ci())
    overlap = run_gitgauge("ci", "-c", overlaid, *refs, cwd=git_repo.root, env=outside_ci())

    assert bad_path.returncode == ExitCode.ERROR
    assert "harnessFiles: '../CLAUDE.md' is not a path inside" in one_line(bad_path.stderr)
    assert overlap.returncode == ExitCode.ERROR
    assert "files: 'CLAUDE.md' overlays the harness path" in one_line(overlap.stderr)


def test_init_ci_github_writes_the_workflow_once(git_repo: GitRepo) -> None:
    git_repo.commit("first", files={"README.md": "x\n"})

    written = run_gitgauge("init", "--ci", "github", cwd=git_repo.root)
    again = run_gitgauge("init", "--ci", "github", cwd=git_repo.root)
    other = run_gitgauge("init", "--ci", "gitlab", cwd=git_repo.root)

    assert written.returncode == 0, written.stderr
    assert (git_repo.root / WORKFLOW_PATH).read_text(encoding="utf-8") == WORKFLOW
    assert (git_repo.root / AGENT_PATH).is_file()
    assert not (git_repo.root / "gitgauge.yaml").exists()  # --ci writes the workflow only
    assert again.returncode == 0 and "kept existing" in again.stdout
    assert other.returncode == ExitCode.USAGE
    assert "--ci takes github, got 'gitlab'" in one_line(other.stderr)
