"""GitHub Actions as its runner sets up a `pull_request` job, for `gitgauge ci`: a pull request's
commits (a base on main, a head on a branch, HEAD at the head as actions/checkout leaves it), the
event file and the variables the runner sets, and the check's own comment among the fake
GitHub's (`fakes.github_api`)."""

from __future__ import annotations

import importlib.resources
import json
import os
from pathlib import Path
from typing import Any

from gitgauge.ci.verdict import MARKER
from helpers.fakes.github_api import FakeGitHub
from helpers.repos import GitRepo

REPOSITORY = "acme/textkit"
TOKEN = "ghs_fake-workflow-token"
PR = 7
HELPFUL = (importlib.resources.files("gitgauge") / "demo_sample" / "CLAUDE.md").read_text("utf-8")
"""The demo's CLAUDE.md: its offline agent fixes each task with it, none without it."""
USELESS = "# textkit\n\nBe careful out there.\n"


def pull_request(
    repo: GitRepo, base_files: dict[str, str | None], head_files: dict[str, str | None]
) -> tuple[str, str]:
    """A base commit on main and the pull request's head commit on a branch; HEAD at the head,
    as actions/checkout leaves it."""
    base = repo.commit("docs: the agent notes", files=base_files) if base_files else None
    base = base or repo.git("rev-parse", "HEAD").strip()
    repo.git("checkout", "-q", "-b", "change-notes")
    head = repo.commit("docs: new agent notes", files=head_files)
    return base, head


def actions_env(
    tmp_path: Path, base: str, head: str, api: str, *, fork: bool = False
) -> dict[str, str]:
    """The event file and the variables GitHub Actions sets for a pull_request job."""
    head_repo = "stranger/textkit" if fork else REPOSITORY
    event = {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "base": {"ref": "main", "sha": base, "repo": {"full_name": REPOSITORY}},
            "head": {"ref": "change-notes", "sha": head, "repo": {"full_name": head_repo}},
        },
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return {
        **os.environ,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_BASE_REF": "main",
        "GITHUB_HEAD_REF": "change-notes",
        "GITHUB_SHA": head,
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": api,
        "GITHUB_TOKEN": TOKEN,
    }


def ours(fake: FakeGitHub) -> list[dict[str, Any]]:
    """The check's comments on the pull request (those holding its marker)."""
    return [c for c in fake.comments.get(PR, []) if MARKER in c["body"]]
