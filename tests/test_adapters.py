"""The adapter registry, agent config validation, and the script, gold and noop adapters on real
repositories."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.adapters import ADAPTER_MINED_AT, adapter_context
from helpers.cli import run_gitgauge
from helpers.records import fix_task
from helpers.repos import GitRepo

from gitgauge.core.config import load_agent_config
from gitgauge.core.errors import ConfigError
from gitgauge.core.records import Task
from gitgauge.core.schema import AgentConfig
from gitgauge.running.adapters.base import adapter_names, create
from gitgauge.running.harness import prepare

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def make_task(base: str, fix: str, *, prompt: str = "Fix the following bug:\n\nfix: it") -> Task:
    return fix_task(
        base,
        fix,
        "fix: it",
        ["tests/test_calc.py"],
        id=f"{fix[:7]}-fix-it",
        prompt=prompt,
        minedAt=ADAPTER_MINED_AT,
    )


def checkout_copy(repo: GitRepo, commit: str, dest: Path) -> Path:
    """A separate clone at `commit`, standing in for the run's throwaway workspace."""
    subprocess.run(["git", "clone", "-q", str(repo.root), str(dest)], check=True)
    subprocess.run(["git", "checkout", "-q", "--detach", commit], cwd=dest, check=True)
    return dest


def tracked_state(workspace: Path) -> dict[str, str]:
    """Every file in the workspace (outside .git) and its text."""
    return {
        str(path.relative_to(workspace)): path.read_text()
        for path in sorted(workspace.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(workspace).parts
    }


# -- registry and config validation --------------------------------------------------------------


def test_builtin_adapters_are_registered() -> None:
    assert adapter_names() == ["claude-code", "codex", "gold", "noop", "script"]


def test_unknown_adapter_lists_the_valid_ones() -> None:
    config = AgentConfig(name="mine", adapter="claude_code")

    with pytest.raises(ConfigError) as raised:
        create(config, source="configs/mine.yaml")

    message = str(raised.value)
    assert message.startswith("configs/mine.yaml: adapter:")
    assert "'claude_code'" in message
    assert "valid: claude-code, codex, gold, noop, script" in message


@pytest.mark.parametrize("command", [None, "", "   "])
def test_script_without_command_is_a_config_error(command: str | None) -> None:
    config = AgentConfig(name="mine", adapter="script", command=command)

    with pytest.raises(ConfigError, match=r"^my\.yaml: command: the script adapter requires"):
        create(config, source="my.yaml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("adapter: gold\n", "missing required key 'name'"),
        ("name: gold\n", "missing required key 'adapter'"),
        (
            "name: gold\nadapter: gold\nmodle: sonnet\n",
            "unknown key 'modle' (did you mean 'model'?)",
        ),
        ("name: x\nadapter: script\ncommand: [a]\n", "command: expected a string"),
        ("name: x\nadapter: claude-code\nargs: --verbose\n", "args: expected a list"),
        ("name: x\nadapter: claude-code\nargs: [--max-turns, 5]\n", "args.1: expected a string"),
        ("name: ''\nadapter: gold\n", "name: must not be empty"),
        ("- name: x\n", "expected a mapping of keys"),
        ("", "the file is empty"),
    ],
)
def test_agent_config_errors_name_the_file_and_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(ConfigError) as raised:
        load_agent_config(path)

    message = str(raised.value)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_missing_agent_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="agent config file not found"):
        load_agent_config(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("example", "adapter"),
    [
        ("gold.yaml", "gold"),
        ("noop.yaml", "noop"),
        ("claude-sonnet.yaml", "claude-code"),
        ("codex.yaml", "codex"),
        ("my-script.yaml", "script"),
        ("harness/current.yaml", "claude-code"),
        ("harness/with-claude-md.yaml", "claude-code"),
    ],
)
def test_readme_examples_are_valid_configs(example: str, adapter: str) -> None:
    config = load_agent_config(EXAMPLES / example)

    assert config.adapter == adapter
    assert create(config, source=example).name == adapter
    # The worked pair's files and configDir exist where the YAML says (relative to it).
    harness = prepare(config, source=str(EXAMPLES / example), environ={})
    assert all(path is None or path.exists() for path in harness.sources.files.values())


def test_the_commands_in_the_examples_name_where_gitgauge_examples_writes(tmp_path: Path) -> None:
    """`gitgauge examples` writes gitgauge-examples/: every `-c PATH` a shipped example's comment
    gives, run from where `examples` ran, names a file it wrote (not the package's examples/)."""
    written = run_gitgauge("examples", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    named = [
        (path.name, word)
        for path in sorted((tmp_path / "gitgauge-examples").rglob("*.yaml"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("#") and "gitgauge run" in line
        for flag, word in zip(line.split(), line.split()[1:], strict=False)
        if flag == "-c"
    ]
    assert named, "no example comment gives a command"
    assert [(name, word) for name, word in named if not (tmp_path / word).is_file()] == []


# -- script --------------------------------------------------------------------------------------


@pytest.fixture
def script_repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("add calc", files={"src/calc.py": "x = 1\n"})
    return git_repo


def script_adapter(command: str) -> tuple[AgentConfig, str]:
    return AgentConfig(name="my-script", adapter="script", command=command), "my-script.yaml"


def test_script_gets_prompt_and_task_id_and_runs_in_the_workspace(script_repo: GitRepo) -> None:
    head = script_repo.git("rev-parse", "HEAD").strip()
    prompt = 'Fix the following bug:\n\nfix: it\'s "quoted" $HOME `and` more\n'
    task = make_task(head, head, prompt=prompt)
    command = (
        'printf %s "$GITGAUGE_PROMPT" > prompt.txt && printf %s "$GITGAUGE_TASK_ID" > id.txt'
        " && pwd -P > cwd.txt && echo agent-out && echo agent-err >&2"
    )
    config, source = script_adapter(command)
    context = adapter_context(script_repo.root, script_repo.root, task)

    outcome = create(config, source=source).run(context)

    assert outcome.ok, outcome.error_message
    root = script_repo.root
    assert (root / "prompt.txt").read_text() == prompt
    assert (root / "id.txt").read_text() == task.id
    assert Path((root / "cwd.txt").read_text().strip()) == root.resolve()
    assert (
        outcome.usage.cost_usd is None
        and outcome.usage.input_tokens is None
        and outcome.usage.num_turns is None
    )
    assert (context.log_dir / "agent.stdout").read_text() == "agent-out\n"
    assert (context.log_dir / "agent.stderr").read_text() == "agent-err\n"


def test_script_exit_code_is_an_adapter_exit(script_repo: GitRepo) -> None:
    head = script_repo.git("rev-parse", "HEAD").strip()
    config, source = script_adapter("echo 'gave up on it' >&2; exit 3")

    outcome = create(config, source=source).run(
        adapter_context(script_repo.root, script_repo.root, make_task(head, head))
    )

    assert outcome.error_kind == "adapter-exit"
    assert outcome.error_message is not None
    assert "exited 3" in outcome.error_message
    assert "gave up on it" in outcome.error_message


def test_script_timeout_is_an_adapter_timeout(script_repo: GitRepo) -> None:
    head = script_repo.git("rev-parse", "HEAD").strip()
    config, source = script_adapter("sleep 120 & sleep 120")
    context = adapter_context(
        script_repo.root, script_repo.root, make_task(head, head), timeout_seconds=0.5
    )

    outcome = create(config, source=source).run(context)

    assert outcome.error_kind == "adapter-timeout"
    assert outcome.error_message is not None
    assert "killed after 0.5s" in outcome.error_message
    assert outcome.seconds < 120


def test_a_script_that_cannot_start_says_why(script_repo: GitRepo) -> None:
    """A variable of the config's env past the kernel's limit for one string: exec fails, and
    the result says so (it said `command exited None`)."""
    head = script_repo.git("rev-parse", "HEAD").strip()
    config, source = script_adapter("true")
    context = adapter_context(script_repo.root, script_repo.root, make_task(head, head))
    context = replace(context, env={**context.env, "HUGE": "x" * (200 * 1024)})

    outcome = create(config, source=source).run(context)

    assert outcome.error_kind == "adapter-exit"
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("command could not start: Argument list too long")
    assert "None" not in outcome.error_message


def test_a_long_prompt_is_cut_in_the_variable_and_whole_in_the_file(script_repo: GitRepo) -> None:
    head = script_repo.git("rev-parse", "HEAD").strip()
    prompt = "Fix it. " + "é" * (100 * 1024)  # 200 KiB of UTF-8: cut on a character boundary
    config, source = script_adapter(
        'printf %s "$GITGAUGE_PROMPT" > variable.txt && cp "$GITGAUGE_PROMPT_FILE" file.txt'
    )
    warned: list[str] = []
    context = replace(
        adapter_context(script_repo.root, script_repo.root, make_task(head, head, prompt=prompt)),
        warn=warned.append,
    )

    outcome = create(config, source=source).run(context)

    assert outcome.ok, outcome.error_message
    assert (script_repo.root / "file.txt").read_text(encoding="utf-8") == prompt
    variable = (script_repo.root / "variable.txt").read_text(encoding="utf-8")
    kept, marker = variable.split("\n\n[gitgauge:")
    assert prompt.startswith(kept) and len(kept.encode()) <= 120_000
    assert "GITGAUGE_PROMPT_FILE" in marker
    assert len(warned) == 1 and "my-script.yaml" in warned[0], warned


# -- gold and noop -------------------------------------------------------------------------------

BASE_FILES: dict[str, str | bytes | None] = {
    "src/calc.py": "def divide(a, b):\n    return a / b\n",
    "src/legacy.py": "OLD = True\n",
    "src/helpers.py": "def helper():\n    return 'a fairly long body so git detects the rename'\n",
    "tests/test_calc.py": "def test_divide():\n    assert True\n",
    "tests/test_legacy.py": "def test_legacy():\n    assert True\n",
    "README.md": "calc\n",
}
FIX_FILES: dict[str, str | bytes | None] = {
    "src/calc.py": "def divide(a, b):\n    return a / b if b else 0\n",
    "src/legacy.py": None,
    "src/helpers.py": None,
    "src/util/helpers.py": BASE_FILES["src/helpers.py"],
    "src/zero.py": "ZERO = 0\n",
    "tests/test_calc.py": "def test_divide_by_zero():\n    assert True\n",
    "tests/test_legacy.py": None,
    "tests/test_zero.py": "def test_zero():\n    assert True\n",
}


@pytest.fixture
def fixed_repo(git_repo: GitRepo) -> tuple[GitRepo, str, str]:
    base = git_repo.commit("add calc", files=BASE_FILES)
    fix = git_repo.commit("fix: divide by zero", files=FIX_FILES)
    # A later commit must not leak into the workspace: gold reads the fix, not HEAD.
    git_repo.commit("later work", files={"src/calc.py": "LATER = True\n"})
    return git_repo, base, fix


def test_gold_lays_down_the_fix_without_its_tests(
    tmp_path: Path, fixed_repo: tuple[GitRepo, str, str]
) -> None:
    repo, base, fix = fixed_repo
    workspace = checkout_copy(repo, base, tmp_path / "workspace")
    gold = create(AgentConfig(name="gold", adapter="gold"), source="gold.yaml")

    outcome = gold.run(adapter_context(repo.root, workspace, make_task(base, fix)))

    assert outcome.ok
    assert outcome.usage.cost_usd is None
    assert tracked_state(workspace) == {
        "README.md": "calc\n",
        "src/calc.py": FIX_FILES["src/calc.py"],
        "src/util/helpers.py": BASE_FILES["src/helpers.py"],
        "src/zero.py": "ZERO = 0\n",
        # The tests stay as they are at base: scoring overlays the fix's tests itself.
        "tests/test_calc.py": BASE_FILES["tests/test_calc.py"],
        "tests/test_legacy.py": BASE_FILES["tests/test_legacy.py"],
    }


def test_gold_keeps_an_executable_bit(tmp_path: Path, git_repo: GitRepo) -> None:
    base = git_repo.commit("add tool", files={"bin/tool": "#!/bin/sh\necho old\n"})
    (git_repo.root / "bin/tool").chmod(0o644)
    git_repo.write("bin/tool", "#!/bin/sh\necho new\n")
    (git_repo.root / "bin/tool").chmod(0o755)
    fix = git_repo.commit("fix: tool", files={"tests/test_tool.py": "def test(): pass\n"})
    workspace = checkout_copy(git_repo, base, tmp_path / "workspace")
    gold = create(AgentConfig(name="gold", adapter="gold"), source="gold.yaml")

    gold.run(adapter_context(git_repo.root, workspace, make_task(base, fix)))

    tool = workspace / "bin/tool"
    assert tool.read_text() == "#!/bin/sh\necho new\n"
    assert tool.stat().st_mode & 0o111


def test_noop_changes_nothing(tmp_path: Path, fixed_repo: tuple[GitRepo, str, str]) -> None:
    repo, base, fix = fixed_repo
    workspace = checkout_copy(repo, base, tmp_path / "workspace")
    before = tracked_state(workspace)
    noop = create(AgentConfig(name="noop", adapter="noop"), source="noop.yaml")

    outcome = noop.run(adapter_context(repo.root, workspace, make_task(base, fix)))

    assert outcome.ok
    assert tracked_state(workspace) == before
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=workspace, capture_output=True, text=True
    )
    assert status.stdout == ""
