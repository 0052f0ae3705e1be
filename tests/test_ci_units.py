"""The parts of `gitgauge ci` a unit can show: the GitHub door against a loopback fake of the
REST API (a sticky comment created, then found past the first page and updated; GitHub's
refusals said in one line with what to do), the seeded task sample, the pull request read from
an event file, and the workflow `init --ci github` writes being the one docs/guide/ci.md shows."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from helpers.fakes.github_api import FakeGitHub
from helpers.records import fix_task

from gitgauge.ci.actions import ci_context, read_event
from gitgauge.ci.github import GitHub, GitHubError, post_sticky
from gitgauge.ci.tasks import sample
from gitgauge.ci.verdict import MARKER
from gitgauge.ci.workflow import AGENT, WORKFLOW
from gitgauge.core.errors import UsageError

REPOSITORY = "acme/widgets"
TOKEN = "ghs_unit-token"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "guide" / "ci.md"


def test_the_sticky_comment_is_created_then_found_on_a_later_page_and_updated() -> None:
    with FakeGitHub(REPOSITORY, TOKEN, page_size=2) as fake:
        github = GitHub(fake.address, REPOSITORY, TOKEN)
        for n in range(3):
            fake.add_comment(12, f"review {n}")

        how, made = post_sticky(github, 12, f"{MARKER}\nfirst", marker=MARKER)
        for n in range(2):  # ours is now on page 2 of 3
            fake.add_comment(12, f"later {n}")
        again, updated = post_sticky(github, 12, f"{MARKER}\nsecond", marker=MARKER)

    assert (how, again) == ("created", "updated")
    assert updated.id == made.id
    bodies = [c["body"] for c in fake.comments[12]]
    assert bodies.count(f"{MARKER}\nsecond") == 1 and f"{MARKER}\nfirst" not in bodies
    assert [r.method for r in fake.writes()] == ["POST", "PATCH"]
    assert sum(1 for r in fake.requests if "page=2" in r.path) >= 1


def test_githubs_refusals_are_one_line_that_says_what_to_do() -> None:
    with FakeGitHub(REPOSITORY, TOKEN) as fake:
        wrong_token = GitHub(fake.address, REPOSITORY, "ghs_other")
        with pytest.raises(GitHubError, match=r"401 \(Bad credentials\); GITHUB_TOKEN"):
            wrong_token.comments(1)
        elsewhere = GitHub(fake.address, "acme/other", TOKEN)
        with pytest.raises(GitHubError, match="404 .*GITHUB_REPOSITORY"):
            elsewhere.create_comment(1, "x")
        address = fake.address
    with pytest.raises(GitHubError, match="unreachable .*GITHUB_API_URL") as raised:
        GitHub(address, REPOSITORY, TOKEN).comments(1)
    assert "\n" not in str(raised.value)


def test_the_sample_is_seeded_stable_and_grows_without_reshuffling() -> None:
    tasks = [fix_task("a" * 40, "b" * 40, f"fix {n}", [], id=f"{n:08x}-fix-{n}") for n in range(20)]
    shuffled = random.Random(3).sample(tasks, len(tasks))

    chosen = [task.id for task in sample(tasks, 5)]

    assert chosen == [task.id for task in sample(shuffled, 5)] == sorted(chosen)
    more = [*tasks, fix_task("c" * 40, "d" * 40, "fix new", [], id="ffffffff-fix-new")]
    grown = {task.id for task in sample(more, 6)}
    assert set(chosen) <= grown
    assert [task.id for task in sample(tasks, None)] == [task.id for task in tasks]


def test_the_event_says_the_refs_the_number_and_a_fork(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    pull = {
        "number": 4,
        "base": {"sha": "1" * 40, "ref": "main", "repo": {"full_name": REPOSITORY}},
        "head": {"sha": "2" * 40, "ref": "topic", "repo": {"full_name": "Stranger/Widgets"}},
    }
    event.write_text(json.dumps({"number": 4, "pull_request": pull}), encoding="utf-8")

    context = ci_context(
        {"GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": REPOSITORY},
        base=None,
        head=None,
        pull=None,
    )

    assert (context.base, context.head) == ("1" * 40, "2" * 40)
    assert context.pull_request is not None and context.pull_request.from_fork
    assert context.api_url == "https://api.github.com"
    # A push event has no pull request; outside CI the flags name the refs.
    event.write_text(json.dumps({"ref": "refs/heads/main"}), encoding="utf-8")
    assert read_event(event) is None
    with pytest.raises(UsageError, match="--base REF"):
        ci_context({}, base=None, head="HEAD", pull=None)
    event.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="GITHUB_EVENT_PATH .*not a JSON event file"):
        ci_context({"GITHUB_EVENT_PATH": str(event)}, base="a", head="b", pull=None)


def test_the_docs_show_the_workflow_and_agent_config_init_writes() -> None:
    page = DOCS.read_text(encoding="utf-8")
    assert f"```yaml\n{WORKFLOW}```" in page
    assert f"```yaml\n{AGENT}```" in page
