"""`gitgauge ci` played as GitHub Actions plays it: the mined demo repository with a pull request
whose head commit changes CLAUDE.md, the event file and the variables the runner sets, the demo's
offline agent as a `script` agent (it fixes a bug only when CLAUDE.md tells it how) and a
loopback fake of GitHub's REST API. The first check creates one comment, the next updates the
same one (found by its marker among paginated comments) without mining (a cache hit, read in its
own log lines), `--fail-if worse` fails the job when the new CLAUDE.md is the harmful one, a
fork's pull request is refused, and a change outside the harness compares nothing."""

from __future__ import annotations

import importlib.resources
import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from helpers.actions import (
    HELPFUL,
    PR,
    REPOSITORY,
    TOKEN,
    USELESS,
    actions_env,
    ours,
    pull_request,
)
from helpers.cli import run_gitgauge
from helpers.configs import agent_config
from helpers.fakes.github_api import FakeGitHub
from helpers.repos import GitRepo

from gitgauge.ci.verdict import MARKER
from gitgauge.core.errors import ExitCode

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow


def demo_agent(folder: Path, *, seen_env: Path | None = None) -> str:
    """The demo's offline agent as a `script` config (with `seen_env`: it first writes the
    environment it got there)."""
    agent = importlib.resources.files("gitgauge") / "demo_sample" / "agent.py"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    if seen_env is not None:
        command = f"env >> {shlex.quote(str(seen_env))}; {command}"
    return agent_config(folder, "offline", adapter="script", command=command)


def test_the_check_comments_once_then_updates_the_comment_from_the_cache(
    demo: GitRepo, tmp_path: Path
) -> None:
    base, head = pull_request(demo, {}, {"CLAUDE.md": HELPFUL})
    # The working tree's CLAUDE.md is not the head's: each side must come from its commit.
    demo.write("CLAUDE.md", USELESS)
    seen_env = tmp_path / "agent-env.txt"
    config = demo_agent(tmp_path / "configs", seen_env=seen_env)
    with FakeGitHub(REPOSITORY, TOKEN, page_size=2) as fake:
        for n in range(3):  # a reviewer's comments before ours: ours is on the second page
            fake.add_comment(PR, f"comment {n}")
        env = actions_env(tmp_path, base, head, fake.address)

        first = run_gitgauge("ci", "-c", config, cwd=demo.root, env=env)

        assert first.returncode == 0, first.stderr
        assert "harness files changed: CLAUDE.md" in first.stdout
        assert "tasks: cache miss" in first.stdout
        [comment] = ours(fake)
        assert [r.method for r in fake.writes()] == ["POST"]
        assert all(r.authorization == f"Bearer {TOKEN}" for r in fake.requests)
        assert "offline-base" in comment["body"] and "offline-head" in comment["body"]
        assert f"`{base[:12]}`" in comment["body"] and "`CLAUDE.md`" in comment["body"]
        assert f"comment created {comment['html_url']}" in first.stdout
        runs = sorted((demo.root / ".gitgauge" / "runs").iterdir())
        results = [json.loads(p.read_text()) for p in runs[-1].rglob("results/*/*.json")]
        by_side = {(r["config"], r["status"]) for r in results}
        assert by_side == {("offline-base", "unresolved"), ("offline-head", "resolved")}
        # The workflow's token is the comment's alone: no agent (or test run) gets it.
        assert "GITHUB_REPOSITORY=" in seen_env.read_text() and TOKEN not in seen_env.read_text()

        second = run_gitgauge("ci", "-c", config, "--fail-if", "worse", cwd=demo.root, env=env)

        assert second.returncode == 0, second.stderr
        # A cache hit: the tasks come from .gitgauge/tasks, nothing is mined.
        assert "tasks: cache hit" in second.stdout
        assert "cache miss" not in second.stdout and "mined in" not in second.stdout
        assert [r.method for r in fake.writes()] == ["POST", "PATCH"]
        assert fake.writes()[-1].path == f"/repos/{REPOSITORY}/issues/comments/{comment['id']}"
        assert [c["id"] for c in ours(fake)] == [comment["id"]]
        assert "The check passes its gate." in ours(fake)[0]["body"]
        assert f"comment updated {comment['html_url']}" in second.stdout
        listed = [r for r in fake.requests if r.method == "GET"]
        assert any("page=2" in r.path for r in listed)  # the marker was looked for past page 1
        # The comment holds no transcript, log or environment value.
        for written in fake.writes():
            assert TOKEN not in written.body["body"]
            assert "tool_use" not in written.body["body"]


def test_fail_if_worse_fails_the_job_when_the_new_claude_md_is_harmful(
    demo: GitRepo, tmp_path: Path
) -> None:
    base, head = pull_request(demo, {"CLAUDE.md": HELPFUL}, {"CLAUDE.md": USELESS})
    config = demo_agent(tmp_path / "configs")
    with FakeGitHub(REPOSITORY, TOKEN) as fake:
        env = actions_env(tmp_path, base, head, fake.address)

        checked = run_gitgauge("ci", "-c", config, "--fail-if", "worse", cwd=demo.root, env=env)

        assert checked.returncode == ExitCode.GATE_FAILED, (checked.stdout, checked.stderr)
        assert "gate failed: the head is worse" in checked.stderr
        [comment] = ours(fake)  # posted before the job fails, so the reviewer sees why
        assert "**The check fails:** the head is worse" in comment["body"]


def test_a_pull_request_from_a_fork_is_refused_without_the_opt_in(
    demo: GitRepo, tmp_path: Path
) -> None:
    base, head = pull_request(demo, {}, {"CLAUDE.md": HELPFUL})
    config = demo_agent(tmp_path / "configs")
    with FakeGitHub(REPOSITORY, TOKEN) as fake:
        env = actions_env(tmp_path, base, head, fake.address, fork=True)
        runs_before = sorted((demo.root / ".gitgauge" / "runs").glob("*"))

        refused = run_gitgauge("ci", "-c", config, cwd=demo.root, env=env)

        assert refused.returncode == ExitCode.CI_REFUSED
        [line] = refused.stderr.strip().splitlines()
        assert "fork stranger/textkit" in line and "--allow-forks" in line
        assert fake.requests == []
        assert sorted((demo.root / ".gitgauge" / "runs").glob("*")) == runs_before


def test_a_change_outside_the_harness_compares_nothing(demo: GitRepo, tmp_path: Path) -> None:
    base, head = pull_request(demo, {}, {"README.md": "textkit\n"})
    config = demo_agent(tmp_path / "configs")
    env = actions_env(tmp_path, base, head, "http://127.0.0.1:9")  # never asked

    checked = run_gitgauge("ci", "-c", config, cwd=demo.root, env=env)

    assert checked.returncode == 0, checked.stderr
    [line] = checked.stdout.strip().splitlines()
    assert line.startswith("nothing to compare: no harness file (CLAUDE.md, AGENTS.md, .claude/)")


def test_dry_run_prints_the_comment_and_posts_nothing(demo: GitRepo, tmp_path: Path) -> None:
    base, head = pull_request(demo, {}, {".claude/skills/fix/SKILL.md": HELPFUL})
    config = demo_agent(tmp_path / "configs")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GITHUB_")  # outside CI: the refs from the flags
    }

    checked = run_gitgauge(
        "ci", "-c", config, "--base", base, "--head", head, "--dry-run", "--tasks", "2",
        "--repeat", "2", cwd=demo.root, env=env,
    )  # fmt: skip

    assert checked.returncode == 0, checked.stderr
    assert "harness files changed: .claude/skills/fix/SKILL.md" in checked.stdout
    assert MARKER in checked.stdout
    assert "running offline-base and offline-head on 2 of 3 tasks" in checked.stdout
    pairs = [line for line in checked.stdout.splitlines() if line.startswith("offline-")]
    assert len(pairs) == 2 * 2 * 2  # tasks x sides x attempts
    # Both sides ran the same sample.
    assert {line.split()[1] for line in pairs if line.startswith("offline-base")} == {
        line.split()[1] for line in pairs if line.startswith("offline-head")
    }
