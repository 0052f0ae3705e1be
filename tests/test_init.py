"""`gitgauge init`: both files at the repository root, from anywhere in it, never overwritten."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo

from gitgauge.core.config import parse_config_text
from gitgauge.core.schema import RepoConfig

TEMPLATE_DIR = Path(__file__).parents[1] / ".gitgauge-template"
KEYS: tuple[str, ...] = ("testCommand", "setupCommand", "mine", "last", "timeouts", "test")
KEYS += ("setup", "adapter", "worktree", "link", "run", "history")


def test_init_from_a_subdirectory_writes_both_files_at_the_root(git_repo: GitRepo) -> None:
    subdirectory = git_repo.root / "src" / "deep"
    subdirectory.mkdir(parents=True)

    result = run_gitgauge("init", cwd=subdirectory)

    assert result.returncode == 0, result.stderr
    config = git_repo.root / "gitgauge.yaml"
    ignore = git_repo.root / ".gitgauge" / ".gitignore"
    assert config.read_text(encoding="utf-8") == (TEMPLATE_DIR / "gitgauge.yaml").read_text(
        encoding="utf-8"
    )
    assert ignore.read_text(encoding="utf-8") == (TEMPLATE_DIR / "gitignore").read_text(
        encoding="utf-8"
    )
    assert sorted(p.name for p in subdirectory.iterdir()) == []
    assert f"created {config}" in result.stdout
    assert f"created {ignore}" in result.stdout


def test_the_config_documents_every_key_and_needs_only_test_command(git_repo: GitRepo) -> None:
    assert run_gitgauge("init", cwd=git_repo.root).returncode == 0
    text = (git_repo.root / "gitgauge.yaml").read_text(encoding="utf-8")

    for key in KEYS:
        assert f"{key}:" in text, key
    for key, default in (("test", "300000"), ("setup", "600000"), ("adapter", "900000")):
        assert f"{key}: {default}" in text, key
    # Every key is commented out: a fresh file sets nothing, so defaults apply...
    assert yaml.safe_load(text) is None
    # ...and uncommenting the documented lines gives a valid config with the defaults.
    # Every key line (after the header, which ends at the first blank line), at any depth.
    header, keys = text.split("\n\n", 1)
    uncommented = header + "\n\n" + re.sub(r"(?m)^# ((?:  )*[A-Za-z_]+:)", r"\1", keys)
    config = parse_config_text(uncommented, RepoConfig, source="gitgauge.yaml")
    assert config.testCommand
    assert config.mine.last == 200
    assert (config.timeouts.test, config.timeouts.setup, config.timeouts.adapter) == (
        300_000,
        600_000,
        900_000,
    )
    assert config.worktree.link


def test_gitignore_keeps_everything_under_the_state_directory_untracked(
    git_repo: GitRepo,
) -> None:
    assert run_gitgauge("init", cwd=git_repo.root).returncode == 0
    for path in (".gitgauge/tasks/abc.yaml", ".gitgauge/runs/r1/run.json"):
        git_repo.write(path, "x")

    status = git_repo.git("status", "--porcelain", "--untracked-files=all")

    assert status.splitlines() == ["?? gitgauge.yaml"]


def test_init_never_overwrites_and_says_which_it_kept(git_repo: GitRepo) -> None:
    config = git_repo.root / "gitgauge.yaml"
    config.write_text('testCommand: "make check"\n', encoding="utf-8")

    first = run_gitgauge("init", cwd=git_repo.root)

    assert first.returncode == 0, first.stderr
    assert config.read_text(encoding="utf-8") == 'testCommand: "make check"\n'
    assert f"kept existing {config}" in first.stdout
    ignore = git_repo.root / ".gitgauge" / ".gitignore"
    assert f"created {ignore}" in first.stdout
    ignore.write_text("# mine\n", encoding="utf-8")

    second = run_gitgauge("init", cwd=git_repo.root)

    assert second.returncode == 0
    assert "created" not in second.stdout
    assert f"kept existing {config}" in second.stdout
    assert f"kept existing {ignore}" in second.stdout
    assert ignore.read_text(encoding="utf-8") == "# mine\n"


def test_init_outside_a_git_repository_is_a_one_line_error(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()

    result = run_gitgauge("init", cwd=outside)

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "not inside a git repository" in lines[0]
    assert list(outside.iterdir()) == []
