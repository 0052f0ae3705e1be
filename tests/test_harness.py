"""Harness configurations through the CLI (`files`, `configDir`, `env`, `prompt`), with the script
adapter on the mined demo repository: what reaches the agent, what stays out of the score, what
is recorded (and what never is), `--resume` and `gitgauge compare` on a changed harness, and every
bad input with its message."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.configs import agent_config, configs_args
from helpers.demo import FIXED_PATTERN, SLUG_FILE, checkout_state, slug_task, write_gitgauge_yaml
from helpers.fakes.claude import fake_claude_env, read_record
from helpers.files import write_files
from helpers.repos import GitRepo
from helpers.results import load_result, only_run_dir

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SECRET = "s3cr3t-value-for-the-harness-test"
LOGIN = "login-token-that-must-stay-private"

OBSERVER = """\
import json, os, pathlib, sys
here = pathlib.Path(".")
claude = pathlib.Path(".claude")
seen = {
    "claude_md": pathlib.Path("CLAUDE.md").read_text(),
    "skill": (claude / "skills/fix/SKILL.md").read_text(),
    "shared": (claude / "skills/fix/shared.md").read_text(),
    "links": [str(p) for p in claude.rglob("*") if p.is_symlink()],
    "readme": pathlib.Path("README.md").exists(),
    "token": os.environ.get("API_TOKEN"),
    "literal": os.environ.get("LITERAL"),
    "prompt": os.environ["GITGAUGE_PROMPT"],
}
pathlib.Path(sys.argv[1]).write_text(json.dumps(seen))
# The agent edits its own harness too; none of it may count as its work.
pathlib.Path("CLAUDE.md").write_text(seen["claude_md"] + "notes the agent added\\n")
(claude / "skills/fix/extra.md").write_text("a file the agent added\\n")
slug = pathlib.Path("textkit/slug.py")
slug.write_text(slug.read_text().replace('r"[^a-z]+"', 'r"[^a-z0-9]+"'))
"""


def harness_sources(folder: Path) -> None:
    write_files(
        folder,
        {
            "notes/CLAUDE.md": "Keep digits in slugs.\n",
            "skills/fix/SKILL.md": "---\nname: fix\n---\nRun the tests.\n",
            "shared.md": "shared text\n",
        },
    )
    (folder / "skills" / "fix" / "shared.md").symlink_to(folder / "shared.md")


def test_the_harness_reaches_the_agent_and_stays_out_of_the_score(
    demo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "configs"
    harness_sources(folder)
    observer = tmp_path / "observer.py"
    observer.write_text(OBSERVER, encoding="utf-8")
    seen_file = tmp_path / "seen.json"
    config = agent_config(
        folder,
        "harnessed",
        adapter="script",
        command=f"{sys.executable} {observer} {seen_file}",
        files={"CLAUDE.md": "notes/CLAUDE.md", ".claude/skills": "skills", "README.md": None},
        env={"API_TOKEN": "${GG_TEST_SECRET}", "LITERAL": "a$$b"},
        prompt="Task {taskId}:\n{prompt}\n{{braces}}",
    )
    monkeypatch.setenv("GG_TEST_SECRET", SECRET)
    task = slug_task(demo)
    before = checkout_state(demo)

    outcome = run_gitgauge("run", "-c", config, "--task", task["id"], cwd=demo.root)

    assert outcome.returncode == 0, outcome.stderr
    seen = json.loads(seen_file.read_text(encoding="utf-8"))
    assert seen["claude_md"] == "Keep digits in slugs.\n"
    assert seen["skill"].endswith("Run the tests.\n")
    assert seen["shared"] == "shared text\n"
    assert seen["links"] == []  # sources are copied as content, never linked
    assert seen["readme"] is False  # `README.md: null` removes the repository's own
    assert (seen["token"], seen["literal"]) == (SECRET, "a$b")
    assert seen["prompt"] == f"Task {task['id']}:\n{task['prompt']}\n{{braces}}"

    run_dir = only_run_dir(demo)
    result = load_result(run_dir, "harnessed", task["id"])
    assert result["status"] == "resolved"
    # Only the fix counts: not the overlay, the agent's edits of it, or README's removal.
    assert (result["diffFiles"], result["diffInsertions"], result["diffDeletions"]) == (1, 1, 1)
    patch = (run_dir / "logs" / "harnessed" / task["id"] / "agent.patch").read_text("utf-8")
    assert "textkit/slug.py" in patch
    for overlaid in ("CLAUDE.md", ".claude", "README.md"):
        assert overlaid not in patch

    # The sources are as they were; the user's checkout too.
    assert (folder / "notes" / "CLAUDE.md").read_text("utf-8") == "Keep digits in slugs.\n"
    assert not (folder / "skills" / "fix" / "extra.md").exists()
    assert checkout_state(demo) == before

    # Env values never reach the run's files (names only); the snapshot holds the overlay.
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    manifest = json.loads((run_dir / "run.json").read_text("utf-8"))
    assert manifest["configs"][0]["env"] == {"API_TOKEN": "***", "LITERAL": "***"}
    harness = run_dir / "harness" / "harnessed"
    assert (harness / "files" / "CLAUDE.md").read_text("utf-8") == "Keep digits in slugs.\n"
    assert (harness / "files" / ".claude/skills/fix/SKILL.md").is_file()
    recorded = json.loads((harness / "harness.json").read_text("utf-8"))
    assert recorded["files"]["README.md"] is None
    assert sorted(recorded["env"]) == ["API_TOKEN", "LITERAL"]
    assert manifest["harness"]["harnessed"] == recorded["fingerprint"]


FIXED_SLUG = (
    "import re\n\n\ndef slugify(text):\n"
    f'    return re.sub({FIXED_PATTERN}, "-", text.lower()).strip("-")\n'
)

# A CLAUDE.md that is also a shell script: it tells the agent to make the tests pass by editing
# them and by skipping everything.
GAMING_NOTES = """\
printf 'def test_keeps_digits():\\n    pass\\n' > tests/test_slug.py
printf 'import pytest\\ncollect_ignore_glob = ["*.py"]\\n' > conftest.py
"""


def test_a_harness_cannot_make_a_task_pass(demo: GitRepo, tmp_path: Path) -> None:
    folder = write_files(
        tmp_path / "configs", {"fixed_slug.py": FIXED_SLUG, "GAMING.md": GAMING_NOTES}
    )
    # The overlay itself is the fix: it is put back to base before the tests run.
    overlay_fix = agent_config(
        folder, "overlay-fix", adapter="script", command="true", files={SLUG_FILE: "fixed_slug.py"}
    )
    # The agent does what its CLAUDE.md says: edit the test, add a conftest that skips all.
    told = agent_config(
        folder, "told", adapter="script", command="sh CLAUDE.md", files={"CLAUDE.md": "GAMING.md"}
    )
    task = slug_task(demo)

    outcome = run_gitgauge(
        "run", *configs_args(overlay_fix, told), "--task", task["id"], cwd=demo.root
    )

    assert outcome.returncode == 0, outcome.stderr
    run_dir = only_run_dir(demo)
    overlaid = load_result(run_dir, "overlay-fix", task["id"])
    assert (overlaid["status"], overlaid["diffFiles"]) == ("unresolved", 0)
    gamed = load_result(run_dir, "told", task["id"])
    assert gamed["status"] == "unresolved"
    assert (gamed["reverted"], list(gamed["dropped"])) == (["tests/test_slug.py"], ["conftest.py"])


def test_claude_code_gets_the_rendered_prompt_the_env_and_its_config_dir(
    demo: GitRepo, tmp_path: Path
) -> None:
    folder = write_files(
        tmp_path / "configs",
        {"claude-home/settings.json": "{}\n", "CLAUDE.md": "Keep digits.\n"},
    )
    fake = fake_claude_env(tmp_path, {"cost": 0.5})
    env = {**os.environ, **fake, "GG_TOKENS": "8000"}
    config = agent_config(
        folder,
        "claude",
        adapter="claude-code",
        files={"CLAUDE.md": "CLAUDE.md"},
        configDir="claude-home",
        env={"MAX_THINKING_TOKENS": "${GG_TOKENS}"},
        prompt="{prompt}\n\n(task {taskId})",
    )
    task = slug_task(demo)

    outcome = run_gitgauge("run", "-c", config, "--task", task["id"], cwd=demo.root, env=env)

    assert outcome.returncode == 0, outcome.stderr
    record = read_record(fake)
    assert record["stdin"] == f"{task['prompt']}\n\n(task {task['id']})"
    assert record["env"]["MAX_THINKING_TOKENS"] == "8000"
    copy = Path(record["env"]["CLAUDE_CONFIG_DIR"])
    assert copy != folder / "claude-home" and not copy.exists()
    assert load_result(only_run_dir(demo), "claude", task["id"])["costUsd"] == 0.5


CONFIG_DIR_AGENT = """\
import json, os, pathlib, sys, uuid
home = pathlib.Path(os.environ["CLAUDE_CONFIG_DIR"])
seen = {
    "dir": str(home),
    "cwd": os.getcwd(),
    "files": sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file()),
    "login": (home / ".credentials.json").read_text(),
}
(home / "settings.json").write_text("{}")
(home / "history.jsonl").write_text("agent was here")
pathlib.Path(sys.argv[1], uuid.uuid4().hex + ".json").write_text(json.dumps(seen))
"""


def test_config_dir_is_a_fresh_copy_per_pair(demo: GitRepo, tmp_path: Path) -> None:
    folder = tmp_path / "configs"
    home_dir = write_files(
        folder / "claude-home",
        {"skills/fix/SKILL.md": "Run the tests.\n", "settings.json": '{"model": "opus"}\n'},
    )
    login = tmp_path / "home" / ".claude" / ".credentials.json"  # the user's claude.ai login
    login.parent.mkdir(parents=True)
    login.write_text(json.dumps({"token": LOGIN}), encoding="utf-8")
    agent = tmp_path / "agent.py"
    agent.write_text(CONFIG_DIR_AGENT, encoding="utf-8")
    seen_dir = tmp_path / "seen"
    seen_dir.mkdir()
    config = agent_config(
        folder,
        "with-config-dir",
        adapter="script",
        command=f"{sys.executable} {agent} {seen_dir}",
        configDir="claude-home",
    )
    task = slug_task(demo)

    outcome = run_gitgauge(
        "run", "-c", config, "--task", task["id"], "--repeat", "2", cwd=demo.root
    )

    assert outcome.returncode == 0, outcome.stderr
    seen = [json.loads(path.read_text("utf-8")) for path in seen_dir.iterdir()]
    assert len(seen) == 2
    assert seen[0]["dir"] != seen[1]["dir"]  # one copy per pair
    for pair in seen:
        assert pair["files"] == [".credentials.json", "settings.json", "skills/fix/SKILL.md"]
        assert LOGIN in pair["login"]
        assert not Path(pair["dir"]).is_relative_to(pair["cwd"])  # outside the workspace
        assert not Path(pair["dir"]).exists()  # removed after the pair
    # The original is untouched, and the login never reaches the run's files.
    assert sorted(p.name for p in home_dir.iterdir()) == ["settings.json", "skills"]
    assert (home_dir / "settings.json").read_text("utf-8") == '{"model": "opus"}\n'
    run_dir = only_run_dir(demo)
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert LOGIN.encode() not in path.read_bytes(), path
    snapshot = run_dir / "harness" / "with-config-dir" / "configDir"
    assert sorted(str(p.relative_to(snapshot)) for p in snapshot.rglob("*") if p.is_file()) == [
        "settings.json",
        "skills/fix/SKILL.md",
    ]


def test_compare_says_what_differs_and_resume_refuses_a_changed_harness(
    demo: GitRepo, tmp_path: Path
) -> None:
    notes = {"notes-a.md": "one\ntwo\nthree\n", "notes-b.md": "one\nTWO\nthree\nfour\n"}
    folder = write_files(tmp_path / "configs", notes)
    notes_b = folder / "notes-b.md"
    current = agent_config(
        folder, "current", adapter="script", command="true", model="sonnet",
        files={"CLAUDE.md": "notes-a.md"},
    )  # fmt: skip
    tuned = {
        "adapter": "script",
        "command": "true",
        "model": "opus",
        "args": ["--max-turns", "30"],
        "files": {"CLAUDE.md": "notes-b.md"},
        "env": {"MAX_THINKING_TOKENS": "8000"},
    }
    candidate = agent_config(folder, "candidate", **tuned)
    task = slug_task(demo)
    ran = run_gitgauge(
        "run", *configs_args(current, candidate), "--task", task["id"], cwd=demo.root
    )
    assert ran.returncode == 0, ran.stderr

    compared = run_gitgauge("compare", "current", "candidate", cwd=demo.root)

    assert compared.returncode == 0, compared.stderr
    lines = compared.stdout.splitlines()
    assert lines[3] == (
        "Harness B vs A: CLAUDE.md: +2 −1 lines; model sonnet → opus; args + --max-turns 30; "
        "env + MAX_THINKING_TOKENS"
    )
    itself = run_gitgauge("compare", "current", "current", cwd=demo.root)
    assert "Harness B vs A: same harness" in itself.stdout.splitlines()
    as_json = run_gitgauge("compare", "current", "candidate", "--format", "json", cwd=demo.root)
    assert json.loads(as_json.stdout)["harness"] == lines[3].removeprefix("Harness B vs A: ")

    # Resuming after an overlaid file changed would mix two harnesses under one name.
    notes_b.write_text("something else\n", encoding="utf-8")
    refused = run_gitgauge("run", "--resume", "latest", cwd=demo.root)
    assert refused.returncode == 1
    assert f"{candidate}: changed since run" in refused.stderr
    assert "(CLAUDE.md (files) changed)" in refused.stderr
    notes_b.write_text(notes["notes-b.md"], encoding="utf-8")
    Path(candidate).write_text(
        yaml.safe_dump({"name": "candidate", **tuned, "env": {"MAX_THINKING_TOKENS": "9000"}}),
        encoding="utf-8",
    )
    refused = run_gitgauge("run", "--resume", "latest", cwd=demo.root)
    assert refused.returncode == 1
    assert "(env MAX_THINKING_TOKENS)" in refused.stderr
    Path(candidate).write_text(yaml.safe_dump({"name": "candidate", **tuned}), encoding="utf-8")
    resumed = run_gitgauge("run", "--resume", "latest", cwd=demo.root)
    assert resumed.returncode == 0, resumed.stderr

    # A run made before harnesses were recorded still resumes and compares, without the line.
    run_dir = only_run_dir(demo)
    shutil.rmtree(run_dir / "harness")
    manifest = json.loads((run_dir / "run.json").read_text("utf-8"))
    del manifest["harness"]
    (run_dir / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert run_gitgauge("run", "--resume", "latest", cwd=demo.root).returncode == 0
    old = run_gitgauge("compare", "current", "candidate", cwd=demo.root)
    assert old.returncode == 0, old.stderr
    assert not any(line.startswith("Harness") for line in old.stdout.splitlines())


BAD_HARNESSES: list[tuple[dict[str, Any], str]] = [
    (
        {"files": {"/etc/CLAUDE.md": "CLAUDE.md"}},
        "files: '/etc/CLAUDE.md': must be a path relative",
    ),
    ({"files": {"../CLAUDE.md": "CLAUDE.md"}}, "files: '../CLAUDE.md': escapes the workspace"),
    ({"files": {".git/hooks/x": "CLAUDE.md"}}, "files: '.git/hooks/x': is inside .git"),
    (
        {"files": {"tests/test_slug.py": "CLAUDE.md"}},
        "files: 'tests/test_slug.py': tests/test_slug.py is a protected test",
    ),
    (
        {"files": {".claude": "with-conftest"}},
        "files: '.claude': .claude/conftest.py is a protected",
    ),
    ({"files": {"tests": None}}, "files: 'tests': tests is a protected"),
    ({"files": {"CLAUDE.md": "missing.md"}}, "files: CLAUDE.md: source 'missing.md' not found"),
    ({"configDir": "CLAUDE.md"}, "configDir: 'CLAUDE.md' is not a directory"),
    (
        {"adapter": "gold", "configDir": "with-conftest"},
        "configDir: the gold adapter runs no agent",
    ),
    (
        {"adapter": "codex", "configDir": "with-conftest"},
        "configDir: the codex adapter runs no agent that reads it; remove the key (configDir is "
        "for claude-code and script; for codex, lay AGENTS.md with files:",
    ),
    (
        {"env": {"TOKEN": "${GG_SURELY_UNSET}"}},
        "env: TOKEN: ${GG_SURELY_UNSET} is not set in gitgauge's environment",
    ),
    ({"prompt": "Fix the bug."}, "prompt: the template must contain {prompt}"),
    ({"prompt": "{prompt} in {repo}"}, "prompt: unknown field {repo}"),
]


def test_a_harness_may_not_write_into_a_linked_directory(mined_demo: Path, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(mined_demo, root, symlinks=True)
    write_gitgauge_yaml(root, link=(".venv",))
    (root / ".venv").mkdir()
    (tmp_path / "notes.md").write_text("notes\n", encoding="utf-8")
    config = agent_config(tmp_path, "linked", adapter="noop", files={".venv/CLAUDE.md": "notes.md"})

    outcome = run_gitgauge("run", "-c", config, cwd=root)

    assert outcome.returncode == 1
    assert f"{config}: files: '.venv/CLAUDE.md' overlaps worktree.link '.venv'" in outcome.stderr
    assert not (root / ".gitgauge" / "runs").exists()
    assert list((root / ".venv").iterdir()) == []


@pytest.mark.parametrize(("fields", "message"), BAD_HARNESSES)
def test_a_bad_harness_is_refused_before_any_work(
    mined_demo: Path, tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    folder = write_files(
        tmp_path / "configs", {"with-conftest/conftest.py": "", "CLAUDE.md": "notes\n"}
    )
    config = agent_config(folder, "bad", **{"adapter": "script", "command": "true", **fields})
    runs = mined_demo / ".gitgauge" / "runs"
    before = sorted(runs.iterdir()) if runs.exists() else []

    outcome = run_gitgauge("run", "-c", config, cwd=mined_demo)

    assert outcome.returncode == 1
    assert outcome.stderr.count("\n") == 1, outcome.stderr
    assert f"{config}: {message}" in outcome.stderr
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before
