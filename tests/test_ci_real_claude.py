"""`gitgauge ci` with the REAL claude CLI (npm `@anthropic-ai/claude-code`) on both sides,
against the loopback fake Messages API, played as GitHub Actions plays it (the event file, the
runner's variables, a loopback fake of GitHub's REST API).

The fake's scripted model fixes the task in front of it (a script that applies the demo's three
recipes, run through the CLI's `Bash` tool) only when what the CLI sends holds the needle of the
helpful CLAUDE.md: the side whose commit has that CLAUDE.md resolves every task, the other
none. The first check creates the comment, the second updates it from the task cache without
mining, and `--fail-if worse` fails the job when the pull request takes the needle away.
Skipped without the CLI, failed under `CI=true`.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.actions import PR, REPOSITORY, TOKEN, USELESS, actions_env, ours, pull_request
from helpers.cli import run_gitgauge
from helpers.components import claude_env, for_this_test
from helpers.components import fake_api as fake_api  # the module's one fake
from helpers.configs import agent_config
from helpers.fakes.github_api import FakeGitHub
from helpers.fakes.messages_api import CommandRule, FakeMessagesApi
from helpers.repos import GitRepo

from gitgauge.core.errors import ExitCode

# The real claude CLI: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
NEEDLE = "GITGAUGE-CI-HINT-4e1a"
HELPFUL = f"# textkit\n\n{NEEDLE}: the bugs are known, apply the team's recipes.\n"
RECIPES = """\
import pathlib
recipes = [
    ("textkit/slug.py", 'r"[^a-z]+"', 'r"[^a-z0-9]+"'),
    ("textkit/pages.py", "return total // per_page", "return (total + per_page - 1) // per_page"),
    ("textkit/parser.py", 'if "=" not in item:',
     'if not item.strip():\\n            continue\\n        if "=" not in item:'),
]
for name, old, new in recipes:
    path = pathlib.Path(name)
    if path.is_file() and old in path.read_text() and new not in path.read_text():
        path.write_text(path.read_text().replace(old, new, 1))
"""


@pytest.fixture
def api(fake_api: FakeMessagesApi, tmp_path: Path) -> Iterator[FakeMessagesApi]:
    script = tmp_path / "recipes.py"
    script.write_text(RECIPES, encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    with for_this_test(fake_api, [CommandRule(needle=NEEDLE, command=command)]) as fake:
        yield fake


def claude_config(folder: Path) -> str:
    # Bash needs a permission in print mode (acceptEdits covers edits only).
    args = ["--allowedTools", "Bash"]
    return agent_config(folder, "claude", adapter="claude-code", model=MODEL, args=args)


def test_the_real_cli_helped_by_the_new_claude_md_gets_one_comment_updated_in_place(
    api: FakeMessagesApi, demo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    base, head = pull_request(demo, {}, {"CLAUDE.md": HELPFUL})
    config = claude_config(tmp_path / "configs")
    with FakeGitHub(REPOSITORY, TOKEN) as github:
        env = actions_env(tmp_path, base, head, github.address)
        env = claude_env(api.base_url, tmp_path / "home", base=env)
        env["TMPDIR"] = str(private_tmp)

        first = run_gitgauge("ci", "-c", config, cwd=demo.root, env=env)

        assert first.returncode == 0, first.stdout + first.stderr
        assert api.escapes() == []
        [comment] = ours(github)
        # 3 of 3 tasks against 0 of 3: the interval excludes 0, exact McNemar's p = 0.25 cannot.
        assert "| resolved | 0/3 | 3/3 |" in comment["body"], comment["body"]
        assert "+100 points [95% CI +21, +100]" in comment["body"], comment["body"]

        second = run_gitgauge("ci", "-c", config, "--fail-if", "worse", cwd=demo.root, env=env)

        assert second.returncode == 0, second.stdout + second.stderr
        assert "tasks: cache hit" in second.stdout and "mined in" not in second.stdout
        assert [c["id"] for c in ours(github)] == [comment["id"]]
        assert [r.method for r in github.writes()] == ["POST", "PATCH"]


def test_the_real_cli_fails_the_gate_when_the_pull_request_takes_the_notes_away(
    api: FakeMessagesApi, demo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    base, head = pull_request(demo, {"CLAUDE.md": HELPFUL}, {"CLAUDE.md": USELESS})
    config = claude_config(tmp_path / "configs")
    with FakeGitHub(REPOSITORY, TOKEN) as github:
        env = actions_env(tmp_path, base, head, github.address)
        env = claude_env(api.base_url, tmp_path / "home", base=env)
        env["TMPDIR"] = str(private_tmp)

        checked = run_gitgauge("ci", "-c", config, "--fail-if", "worse", cwd=demo.root, env=env)

        assert checked.returncode == ExitCode.GATE_FAILED, checked.stdout + checked.stderr
        assert api.escapes() == []
        [comment] = ours(github)
        assert "| resolved | 3/3 | 0/3 |" in comment["body"], comment["body"]
        assert "**The check fails:** the head is worse" in comment["body"]
        assert github.comments[PR] == [comment]
