"""`gitgauge run` with the REAL claude CLI (npm `@anthropic-ai/claude-code`) through the
`claude-code` adapter, against the loopback fake Messages API of `helpers/fakes/messages_api.py`.

The fake's scripted model writes the fix of the demo's slug task when the request holds that
task's prompt, and changes nothing otherwise. Skipped when the CLI is missing, failed under
`CI=true`. The demo repository is mined once for the module and the CLI runs once per pair, so
the module keeps to a handful of pairs (the CLI takes about a second to start).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import claude_binary, claude_env, for_this_test
from helpers.components import fake_api as fake_api  # the module's one fake
from helpers.configs import agent_config, configs_args
from helpers.demo import BUGGY_PATTERN, FIXED_PATTERN, SLUG_FILE, slug_task
from helpers.fakes.messages_api import (
    CACHE_CREATION_INPUT_TOKENS,
    CACHE_READ_INPUT_TOKENS,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    FakeMessagesApi,
    Rule,
)
from helpers.repos import GitRepo
from helpers.results import load_result

from gitgauge.core.store import config_dir_name

# The real claude CLI: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

MODEL = "claude-sonnet-4-5"
"""A model name the CLI prices (its cost comes from its own table, not from the fake)."""


@pytest.fixture
def api(fake_api: FakeMessagesApi) -> Iterator[FakeMessagesApi]:
    """The module's fake with this test's own rules and request log."""
    with for_this_test(fake_api) as fake:
        yield fake


def fixed_file(repo: GitRepo, task: dict[str, Any]) -> str:
    """The slug module at the task's base with the fix applied: what the model writes."""
    buggy = repo.git("show", f"{task['base']}:{SLUG_FILE}")
    assert BUGGY_PATTERN in buggy
    return buggy.replace(BUGGY_PATTERN, FIXED_PATTERN)


def requests_in(api: FakeMessagesApi, prefix: str) -> dict[str, list[Any]]:
    """The agent-loop requests per working directory under `prefix` (one per pair)."""
    found: dict[str, list[Any]] = {}
    for request in api.agent_requests():
        cwd = request.working_directory
        if cwd is not None and cwd.startswith(prefix):
            found.setdefault(cwd, []).append(request)
    return found


def test_the_real_cli_fixes_a_task_and_its_cost_and_tokens_are_recorded(
    api: FakeMessagesApi, demo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    task = slug_task(demo)
    # From the body of the task's prompt: the model acts only on the pair that was asked it (the
    # subject alone would not do: the CLI shows the model recent commit subjects).
    needle = 'returned "top-tips-for"'
    assert needle in task["prompt"]
    api.rules = [Rule(needle=needle, path=SLUG_FILE, content=fixed_file(demo, task))]
    home = tmp_path / "claude-home"
    env = claude_env(api.base_url, home)
    env["TMPDIR"] = str(private_tmp)
    config = agent_config(tmp_path / "configs", "real", adapter="claude-code", model=MODEL)
    # Two pairs: the slug task, which the model fixes, and one it leaves alone.
    other = next(
        p.stem
        for p in sorted((demo.root / ".gitgauge" / "tasks").glob("*.yaml"))
        if p.stem != task["id"]
    )
    tasks = [task["id"], other]
    for task_id in tasks:
        outcome = run_gitgauge(
            "run", *configs_args(config), "--task", task_id, cwd=demo.root, env=env
        )
        assert outcome.returncode == 0, outcome.stderr
    assert api.escapes() == [], "the CLI tried to reach another host"
    runs = list((demo.root / ".gitgauge" / "runs").iterdir())
    assert len(runs) == 2
    run_dirs = {
        t: next(run for run in runs if any((run / "results" / "real").glob(f"{t}.json")))
        for t in tasks
    }
    results = {t: load_result(run_dirs[t], "real", t) for t in tasks}
    assert {t: (r["status"], r["errorKind"]) for t, r in results.items()} == {
        t: ("resolved" if t == task["id"] else "unresolved", None) for t in tasks
    }, json.dumps(results, indent=1)[:4000]

    # The fixing pair: Read, Write, then the final answer: three turns of fixed usage each.
    fixed = results[task["id"]]
    assert fixed["numTurns"] == 3 and fixed["regressed"] is False
    assert (fixed["inputTokens"], fixed["outputTokens"]) == (3 * INPUT_TOKENS, 3 * OUTPUT_TOKENS)
    assert (fixed["cacheCreationInputTokens"], fixed["cacheReadInputTokens"]) == (
        3 * CACHE_CREATION_INPUT_TOKENS,
        3 * CACHE_READ_INPUT_TOKENS,
    )
    assert (fixed["diffFiles"], fixed["diffInsertions"], fixed["diffDeletions"]) == (1, 1, 1)
    for task_id, result in results.items():
        assert result["costUsd"] > 0
        if task_id != task["id"]:
            assert (result["numTurns"], result["inputTokens"]) == (1, INPUT_TOKENS)
            assert result["diffFiles"] == 0
        # What gitgauge recorded is what the CLI printed (its own pricing of MODEL).
        log = run_dirs[task_id] / "logs" / config_dir_name("real") / task_id / "agent.stdout"
        printed = json.loads(log.read_text(encoding="utf-8").strip().splitlines()[-1])
        assert printed["total_cost_usd"] == result["costUsd"]
        assert printed["usage"]["input_tokens"] == result["inputTokens"]
        assert printed["num_turns"] == result["numTurns"]
        assert printed["permission_denials"] == []  # --permission-mode acceptEdits let it write

    # Each pair ran in its own workspace (gone now), never in the user's checkout, and the
    # task's prompt reached the model whole, as the first user message (stdin, not argv).
    per_pair = requests_in(api, "/")
    assert len(per_pair) == len(tasks)
    prompts = {t: stored_prompt(demo, t) for t in tasks}
    for cwd, requests in per_pair.items():
        assert Path(cwd).resolve() != demo.root.resolve() and not Path(cwd).exists()
        assert {r.body["model"] for r in requests} == {MODEL}  # --model from the config
        first_user = requests[0].body["messages"][0]
        texts = [b.get("text", "") for b in first_user["content"] if isinstance(b, dict)]
        assert sum(1 for p in prompts.values() if p in texts) == 1, texts
    # The CLI kept its state in the isolated HOME, not the developer's.
    assert (home / ".claude").is_dir()


def stored_prompt(repo: GitRepo, task_id: str) -> str:
    """A task's prompt as `gitgauge mine` stored it."""
    path = repo.root / ".gitgauge" / "tasks" / f"{task_id}.yaml"
    prompt: str = yaml.safe_load(path.read_text(encoding="utf-8"))["prompt"]
    return prompt


def usable_strace(tmp_path: Path) -> str | None:
    """strace, when it is installed and allowed to trace here (containers may forbid ptrace)."""
    found = shutil.which("strace")
    if found is None:
        return None
    trial = subprocess.run(
        [found, "-f", "-qq", "-o", str(tmp_path / "trial"), "true"],
        capture_output=True,
        check=False,
    )
    return found if trial.returncode == 0 else None


def test_the_cli_reaches_nothing_but_the_fake(tmp_path: Path, api: FakeMessagesApi) -> None:
    """The environment of `claude_env` keeps the CLI off the network: every connection it opens
    goes to the fake (strace, where available, confirms no other address is even tried)."""
    binary = claude_binary()
    env = claude_env(api.base_url, tmp_path / "home")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    strace = usable_strace(tmp_path)
    trace = str(tmp_path / "trace")
    prefix = [strace, "-f", "-qq", "-e", "trace=connect", "-o", trace] if strace else []
    argv = [*prefix, binary, "-p", "--output-format", "json"]
    done = subprocess.run(
        argv,
        input="Say hello.",
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["is_error"] is False
    assert api.escapes() == []
    assert any(r.is_agent_loop for r in api.requests)
    if strace:
        port = api.base_url.rsplit(":", 1)[1]
        inet = [
            line
            for line in (tmp_path / "trace").read_text().splitlines()
            if "AF_INET" in line and "connect(" in line
        ]
        assert inet, "strace saw no connection at all"
        outside = [line for line in inet if f"htons({port})" not in line or "127.0.0.1" not in line]
        assert outside == [], outside


# -- issue #11: a config's own CLAUDE.md and user-level skills reach the real CLI ---------------

CLAUDE_MD_NEEDLE = "GITGAUGE-HINT-7d1f"
CLAUDE_MD = f"# Project notes\n\n{CLAUDE_MD_NEEDLE}: slugs keep their digits.\n"
SKILL_NEEDLE = "GITGAUGE-SKILL-3b9e"
SKILL_MD = (
    "---\nname: slug-digits\n"
    f"description: {SKILL_NEEDLE} how to keep digits in URL slugs\n---\n\n"
    "Keep 0-9 in the character class of the separator pattern.\n"
)


def test_a_configs_claude_md_and_skills_reach_the_real_cli(
    api: FakeMessagesApi, demo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    task = slug_task(demo)
    fix = fixed_file(demo, task)
    # The model writes the fix only when the overlaid CLAUDE.md's text, or the skill's
    # description, is in what the CLI sends it.
    api.rules = [
        Rule(needle=CLAUDE_MD_NEEDLE, path=SLUG_FILE, content=fix),
        Rule(needle=SKILL_NEEDLE, path=SLUG_FILE, content=fix),
    ]
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "notes.md").write_text(CLAUDE_MD, encoding="utf-8")
    skill = folder / "claude-home" / "skills" / "slug-digits" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL_MD, encoding="utf-8")
    original_config_dir = sorted(p.relative_to(folder) for p in (folder / "claude-home").rglob("*"))
    configs = {
        "bare": agent_config(folder, "bare", adapter="claude-code", model=MODEL),
        "claudemd": agent_config(
            folder, "claudemd", adapter="claude-code", model=MODEL, files={"CLAUDE.md": "notes.md"}
        ),
        "skill": agent_config(
            folder, "skill", adapter="claude-code", model=MODEL, configDir="claude-home"
        ),
    }
    env = claude_env(api.base_url, tmp_path / "home")
    env["TMPDIR"] = str(private_tmp)

    outcome = run_gitgauge(
        "run", *configs_args(*configs.values()), "--task", task["id"], cwd=demo.root, env=env
    )

    assert outcome.returncode == 0, outcome.stderr
    assert api.escapes() == []
    (run_dir,) = (demo.root / ".gitgauge" / "runs").iterdir()
    results = {name: load_result(run_dir, name, task["id"]) for name in configs}
    assert {name: r["status"] for name, r in results.items()} == {
        "bare": "unresolved",
        "claudemd": "resolved",
        "skill": "resolved",
    }, json.dumps(results, indent=1)[:4000]
    for name, result in results.items():
        turns = 1 if name == "bare" else 3
        assert result["costUsd"] > 0, name
        assert (result["numTurns"], result["inputTokens"], result["outputTokens"]) == (
            turns,
            turns * INPUT_TOKENS,
            turns * OUTPUT_TOKENS,
        ), name
    # The overlaid CLAUDE.md is harness, not the agent's work: only the fix is in its diff.
    assert results["claudemd"]["diffFiles"] == 1
    patch = run_dir / "logs" / config_dir_name("claudemd") / task["id"] / "agent.patch"
    assert SLUG_FILE in patch.read_text(encoding="utf-8")
    assert "CLAUDE.md" not in patch.read_text(encoding="utf-8")

    # What reached the model, per pair: the CLAUDE.md's text only for its config, the skill's
    # description only for the config whose configDir holds it.
    seen = {
        cwd: (
            any(CLAUDE_MD_NEEDLE in r.text for r in requests),
            any(SKILL_NEEDLE in r.text for r in requests),
        )
        for cwd, requests in requests_in(api, "/").items()
    }
    assert sorted(seen.values()) == [(False, False), (False, True), (True, False)]
    # The CLI wrote its state (.claude.json, sessions, ...) into a per-pair copy of configDir.
    after = sorted(p.relative_to(folder) for p in (folder / "claude-home").rglob("*"))
    assert after == original_config_dir


RUN_TESTS_NEEDLE = "GITGAUGE-RUN-TESTS-5c2a"


def test_a_harness_that_says_run_the_tests_shows_in_the_transcript_and_in_compare(
    api: FakeMessagesApi, demo: GitRepo, tmp_path: Path, private_tmp: Path
) -> None:
    task = slug_task(demo)
    fix = fixed_file(demo, task)
    test_command = yaml.safe_load((demo.root / "gitgauge.yaml").read_text("utf-8"))["testCommand"]
    # Both configs' model writes the fix; only the one whose CLAUDE.md says so then runs the
    # task's test command through the Bash tool (its rule comes first: its requests hold both).
    api.rules = [
        Rule(needle=RUN_TESTS_NEEDLE, path=SLUG_FILE, content=fix, bash=test_command),
        Rule(needle='returned "top-tips-for"', path=SLUG_FILE, content=fix),
    ]
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "notes.md").write_text(
        f"# Notes\n\n{RUN_TESTS_NEEDLE}: run the tests before you finish.\n", encoding="utf-8"
    )
    # Bash needs a permission in print mode (acceptEdits covers edits only).
    allow = ["--allowedTools", "Bash"]
    plain = agent_config(folder, "plain", adapter="claude-code", model=MODEL, args=allow)
    tested = agent_config(
        folder, "tested", adapter="claude-code", model=MODEL, args=allow,
        files={"CLAUDE.md": "notes.md"},
    )  # fmt: skip
    env = claude_env(api.base_url, tmp_path / "home")
    env["TMPDIR"] = str(private_tmp)

    outcome = run_gitgauge(
        "run", *configs_args(plain, tested), "--task", task["id"], cwd=demo.root, env=env
    )

    assert outcome.returncode == 0, outcome.stderr
    assert api.escapes() == []
    (run_dir,) = (demo.root / ".gitgauge" / "runs").iterdir()
    results = {name: load_result(run_dir, name, task["id"]) for name in ("plain", "tested")}
    assert {n: r["status"] for n, r in results.items()} == {
        "plain": "resolved",
        "tested": "resolved",
    }, json.dumps(results, indent=1)[:4000]
    # The transcripts are saved, and what they say is counted.
    for name in results:
        transcript = run_dir / "logs" / config_dir_name(name) / task["id"] / "transcript.jsonl"
        events = [json.loads(line) for line in transcript.read_text("utf-8").splitlines()]
        assert events[0]["type"] == "system" and events[-1]["type"] == "result"
        bash = [
            block
            for event in events
            if event["type"] == "assistant"
            for block in event["message"]["content"]
            if block.get("type") == "tool_use" and block.get("name") == "Bash"
        ]
        assert [b["input"]["command"] for b in bash] == ([test_command] if name == "tested" else [])
    plain_did, tested_did = results["plain"]["behaviour"], results["tested"]["behaviour"]
    assert (plain_did["testRuns"], tested_did["testRuns"]) == (0, 1)
    assert (plain_did["shellCommands"], tested_did["shellCommands"]) == (0, 1)
    assert plain_did["toolCalls"] == {"Read": 1, "Write": 1}
    assert tested_did["toolCalls"] == {"Read": 1, "Write": 1, "Bash": 1}
    assert plain_did["filesEdited"] == tested_did["filesEdited"] == 1
    assert (plain_did["turns"], tested_did["turns"]) == (3, 4)

    compared = run_gitgauge("compare", "plain", "tested", cwd=demo.root)

    assert compared.returncode == 0, compared.stderr
    assert (
        "Behaviour B vs A: ran the tests in 1 of 1 tasks (A: 0 of 1); median turns 4 (A: 3)"
    ) in compared.stdout, compared.stdout
