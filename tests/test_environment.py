"""What a suite's environment holds and what stored files never hold (`core/environment.py`),
text made safe for a terminal (`core/text.py`), and the rest of issue 34 that needs no run: a
patch's bound, the baselines' reserved names, paths git must read back."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitgauge.core import process
from gitgauge.core.config import load_agent_config
from gitgauge.core.environment import Masker, for_suite, is_secret_name
from gitgauge.core.errors import ConfigError
from gitgauge.core.git.owned import alternates_line, alternates_variable
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import UserCommands
from gitgauge.core.text import visible

GITGAUGES = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp/x",
    "VIRTUAL_ENV": "/home/me/.venv",
    "PYTHONPATH": "src",
    "PYTEST_ADDOPTS": "-q",
    "GITGAUGE_JOB": "0",
    "ANTHROPIC_API_KEY": "sk-ant-secret-value",
    "GITHUB_TOKEN": "ghp_secret_value",
    "NODE_AUTH_TOKEN": "npm_secret_value",
    "DATABASE_URL": "postgres://me:pw@db/app",
    "EDITOR": "vim",
    "SSH_AUTH_SOCK": "/run/agent.sock",
}


def test_the_suite_gets_the_allowlist_and_no_secret() -> None:
    built = for_suite(GITGAUGES)
    assert sorted(built.env) == [
        "GITGAUGE_JOB",
        "HOME",
        "LANG",
        "LC_ALL",
        "PATH",
        "PYTEST_ADDOPTS",
        "PYTHONPATH",
        "TMPDIR",
        "VIRTUAL_ENV",
    ]
    # A passed family does not pass a secret: NODE_* holds NODE_AUTH_TOKEN.
    assert built.withheld == [
        "ANTHROPIC_API_KEY",
        "DATABASE_URL",
        "EDITOR",
        "GITHUB_TOKEN",
        "NODE_AUTH_TOKEN",
        "SSH_AUTH_SOCK",
    ]


def test_what_a_config_names_reaches_the_suite_even_when_it_looks_secret() -> None:
    built = for_suite(GITGAUGES, named={"GITHUB_TOKEN": "", "DATABASE_URL": "sqlite://"})
    assert built.env["GITHUB_TOKEN"] == "" and built.env["DATABASE_URL"] == "sqlite://"
    assert "GITHUB_TOKEN" not in built.withheld


def test_the_projects_env_passes_names_sets_values_and_wins_over_an_agent_configs() -> None:
    config = RepoConfig(
        testCommand="true",
        env={"DATABASE_URL": None, "APP_MODE": "test-${EDITOR}", "MISSING": None},
    )
    commands = UserCommands(config, environ=GITGAUGES, agent_env={"APP_MODE": "agent"})
    env = commands.suite_environment(GITGAUGES).env
    assert env["DATABASE_URL"] == GITGAUGES["DATABASE_URL"]
    assert env["APP_MODE"] == "test-vim"
    assert "MISSING" not in env  # null passes a variable only when it is set
    with pytest.raises(ConfigError, match=r"gitgauge.yaml: env: X: \$\{NOPE\} is not set"):
        UserCommands(RepoConfig(testCommand="true", env={"X": "${NOPE}"}), environ={})


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "gh_token", "DB_PASSWORD", "AWS_SECRET"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


def test_masking_streams_a_file_and_finds_a_value_cut_by_a_read(tmp_path: Path) -> None:
    masker = Masker([{"MY_TOKEN": "sk-abcdef123456", "OTHER_KEY": "zzzzzzzz", "SHORT_KEY": "ab"}])
    data = (b"x" * 13 + b"sk-abcdef123456" + b"y" * 7 + b"zzzzzzzz" + b" ab ") * 200
    expected = data.replace(b"sk-abcdef123456", b"[masked $MY_TOKEN]").replace(
        b"zzzzzzzz", b"[masked $OTHER_KEY]"
    )
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "test.stdout"
    for chunk in (1, 3, 7, 16, 4096):
        log.write_bytes(data)
        assert masker.file(log, chunk_bytes=chunk)
        assert log.read_bytes() == expected, chunk
    assert sorted((tmp_path / "logs").iterdir()) == [log]  # no temporary file left
    assert masker.values({"a": ["x sk-abcdef123456"], "b": 1}) == {
        "a": ["x [masked $MY_TOKEN]"],
        "b": 1,
    }


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=40))
def test_masking_a_file_equals_masking_it_whole(data: bytes, chunk: int) -> None:
    masker = Masker([{"A_KEY": "abcabd", "B_TOKEN": "bcabda"}])
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "log"
        log.write_bytes(data)
        masker.file(log, chunk_bytes=chunk)
        whole = data
        for value, replacement in (
            (b"abcabd", b"[masked $A_KEY]"),
            (b"bcabda", b"[masked $B_TOKEN]"),
        ):
            whole = whole.replace(value, replacement)
        assert log.read_bytes() == whole


def test_control_characters_are_made_visible_and_newlines_kept() -> None:
    text = "a\x1b]52;c;cHduZWQ=\x07b\x1b[2J\r\n\tc \u202e d \x9b"
    assert visible(text) == "a\\x1b]52;c;cHduZWQ=\\x07b\\x1b[2J\\x0d\n\tc \\u202e d \\u009b"
    assert visible("plain é 日本\n") == "plain é 日本\n"


def test_a_command_whose_stdout_passes_its_limit_is_killed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    endless = [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"]
    result = process.run(endless, cwd=tmp_path, stdout_path=out, stdout_limit_bytes=1_000_000)
    assert result.output_exceeded and result.exit_code is None
    assert out.stat().st_size <= 1_000_001  # cut at the limit, not at the disk's end
    small = process.run(["echo", "hi"], cwd=tmp_path, stdout_limit_bytes=10)
    assert (small.ok, small.output_exceeded) == (True, False)


@pytest.mark.parametrize("name", ["gold", "noop", "Gold", "NOOP"])
def test_a_config_file_may_not_take_a_baselines_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / "impostor.yaml"
    path.write_text(f"name: {name}\nadapter: script\ncommand: 'true'\n")
    with pytest.raises(ConfigError, match=rf"{path}: name: '{name}' is reserved"):
        load_agent_config(path)
    baseline = tmp_path / "gold.yaml"
    baseline.write_text("name: gold\nadapter: gold\n")  # the baseline itself, as a file
    assert load_agent_config(baseline).adapter == "gold"


@pytest.mark.parametrize(
    "folder", ["plain", "with space", "new\nline", 'quote"and\\slash', "été", "colon:s", "#hash"]
)
def test_git_reads_every_object_store_path_gitgauge_writes(tmp_path: Path, folder: str) -> None:
    store_repo = tmp_path / folder / "store"
    store_repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "--bare", str(store_repo)], check=True)
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            input=b"kept\n",
            cwd=store_repo,
            env={**os.environ, "GIT_DIR": str(store_repo)},
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    reader = tmp_path / "reader.git"
    subprocess.run(["git", "init", "-q", "--bare", str(reader)], check=True)
    objects = store_repo / "objects"
    (reader / "objects" / "info" / "alternates").write_text(f"{alternates_line(objects)}\n")
    shown = subprocess.run(
        ["git", "--git-dir", str(reader), "cat-file", "-p", blob], capture_output=True, text=True
    )
    assert shown.stdout == "kept\n", shown.stderr
    (reader / "objects" / "info" / "alternates").unlink()
    through_env = subprocess.run(
        ["git", "--git-dir", str(reader), "cat-file", "-p", blob],
        env={**os.environ, "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates_variable([objects])},
        capture_output=True,
        text=True,
    )
    assert through_env.stdout == "kept\n", through_env.stderr
