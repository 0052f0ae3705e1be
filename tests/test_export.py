"""`gitgauge export` through the real CLI, on the demo repository mined once per session.

SWE-bench: the file loads with the `swebench` package's own dataset loader (the `export-check`
extra; without it that test skips, and fails with CI=true) and every instance has exactly the
fields of its `SWEbenchInstance`; `patch` and `test_patch` apply with `git apply` at
`base_commit`, the tests fail with `test_patch` alone and pass with both.

Harbor: the `harbor` package needs Python >= 3.12 and brings dozens of services' SDKs, so each
folder is checked with `harbor.models.task.task.Task` when it imports and otherwise against the
documented layout of harbor 0.26.0's task model (the keys of `TaskConfig`, the files `Task`
requires); `tests/test.sh` and `solution/solve.sh` run directly on a copy of the base (no
Docker): reward 0 without the solution, 1 with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import isolate, run_gitgauge

DEMO_TASKS = 3


@pytest.fixture
def demo(demo_repository: tuple[Path, Path]) -> tuple[Path, Path]:
    """The demo repository, built and mined once per session (conftest.py)."""
    return demo_repository


@pytest.fixture
def repo(demo: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate(demo[1], monkeypatch)
    return demo[0]


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def demo_test_command(repo: Path) -> str:
    return str(yaml.safe_load((repo / "gitgauge.yaml").read_text())["testCommand"])


def suite_passes(checkout: Path, command: str) -> bool:
    return subprocess.run(command, shell=True, cwd=checkout, capture_output=True).returncode == 0


# -- SWE-bench ------------------------------------------------------------------------------------


def test_swebench_instances_apply_at_base_and_fail_then_pass(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    exported = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert exported.returncode == 0, exported.stderr
    assert f"wrote {DEMO_TASKS} SWE-bench instances" in exported.stdout

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == DEMO_TASKS
    tasks = {
        t["id"]: t
        for t in (yaml.safe_load(p.read_text()) for p in (repo / ".gitgauge/tasks").iterdir())
    }
    command = demo_test_command(repo)
    for row in rows:
        task = tasks[row["instance_id"].removeprefix("local__sample-")]
        assert row["repo"] == "local/sample"
        assert row["instance_id"] == f"local__sample-{task['id']}"
        assert row["base_commit"] == row["environment_setup_commit"] == task["base"]
        assert row["problem_statement"] == task["prompt"]
        assert json.loads(row["FAIL_TO_PASS"]) == [] and json.loads(row["PASS_TO_PASS"]) == []
        assert row["created_at"].startswith("2024-01-01T")
        assert "tests/" in row["test_patch"] and "tests/" not in row["patch"]

        checkout = tmp_path / task["id"]
        git(repo.parent, "clone", "-q", "--no-checkout", str(repo), str(checkout))
        git(checkout, "checkout", "-q", row["base_commit"])
        for name in ("test_patch", "patch"):
            (tmp_path / name).write_text(row[name], encoding="utf-8")
        assert git(checkout, "apply", "--check", str(tmp_path / "patch")).returncode == 0
        git(checkout, "apply", str(tmp_path / "test_patch"))
        assert not suite_passes(checkout, command), task["id"]
        git(checkout, "apply", str(tmp_path / "patch"))
        assert suite_passes(checkout, command), task["id"]
        # Applied together they give the fix's tree exactly: nothing after the fix, nothing lost.
        git(checkout, "add", "-A")
        assert (
            git(checkout, "diff", "--cached", "--quiet", task["fix"], check=False).returncode == 0
        )


def test_swebench_file_loads_with_the_swebench_loader(repo: Path, tmp_path: Path) -> None:
    if os.environ.get("CI") != "true":
        pytest.importorskip("swebench", reason="pip install -e '.[export-check]'")
    from swebench.harness.utils import load_swebench_dataset
    from swebench.types import SWEbenchInstance

    out = tmp_path / "tasks.jsonl"
    exported = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert exported.returncode == 0, exported.stderr

    instances = load_swebench_dataset(str(out))
    assert len(instances) == DEMO_TASKS
    for instance in instances:
        assert set(instance) == set(SWEbenchInstance.__annotations__)
        assert all(isinstance(value, str) for value in instance.values())


def test_swebench_to_stdout(repo: Path) -> None:
    exported = run_gitgauge("export", "--format", "swebench", cwd=repo)
    assert exported.returncode == 0, exported.stderr
    assert len([json.loads(line) for line in exported.stdout.splitlines()]) == DEMO_TASKS


# -- Harbor ---------------------------------------------------------------------------------------

# harbor 0.26.0, harbor/models/task/config.py: the TaskConfig keys gitgauge writes must exist there.
HARBOR_KEYS = {
    "": {"schema_version", "task", "metadata", "verifier", "agent", "environment", "solution",
         "source", "multi_step_reward_strategy", "steps", "artifacts"},
    "verifier": {"timeout_sec", "env", "user", "environment_mode", "environment", "collect",
                 "network_mode", "allowed_hosts"},
    "agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "environment": {"build_timeout_sec", "docker_image", "os", "cpus", "memory_mb", "storage_mb",
                    "gpus", "gpu_types", "tpu", "mcp_servers", "env", "skills_dir", "healthcheck",
                    "workdir", "allow_internet", "network_mode", "allowed_hosts"},
}  # fmt: skip


def check_harbor_folder(folder: Path) -> None:
    """Harbor's own task model when it imports, else its documented layout and keys."""
    try:
        from harbor.models.task.task import Task as HarborTask  # type: ignore[import-not-found]
    except ImportError:
        tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
        config = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
        assert set(config) <= HARBOR_KEYS[""]
        for section in ("verifier", "agent", "environment"):
            assert set(config[section]) <= HARBOR_KEYS[section], section
        assert isinstance(config["metadata"], dict)
        assert (folder / "instruction.md").read_text(encoding="utf-8").strip()
        assert (folder / "environment" / "Dockerfile").is_file()
        for script in ("tests/test.sh", "solution/solve.sh"):
            assert os.access(folder / script, os.X_OK), script
        return
    task = HarborTask(folder)
    assert task.instruction.strip()
    assert task.config.verifier.timeout_sec > 0


def run_script(script: Path, checkout: Path, reward: Path) -> int:
    env = dict(os.environ, GITGAUGE_REWARD_FILE=str(reward))
    return subprocess.run(
        ["bash", str(script)], cwd=checkout, env=env, capture_output=True, check=False
    ).returncode


def test_harbor_folders_load_and_reward_the_solution_only(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "harbor"
    exported = run_gitgauge(
        "export", "--format", "harbor", "--out", str(out), "--image", "python:3.11", cwd=repo
    )
    assert exported.returncode == 0, exported.stderr
    folders = sorted(out.iterdir())
    assert len(folders) == DEMO_TASKS
    for folder in folders:
        check_harbor_folder(folder)
        task = yaml.safe_load((repo / ".gitgauge/tasks" / f"{folder.name}.yaml").read_text())
        assert (folder / "instruction.md").read_text(encoding="utf-8") == task[
            "prompt"
        ].rstrip() + "\n"
        dockerfile = (folder / "environment/Dockerfile").read_text(encoding="utf-8")
        assert dockerfile.startswith("FROM python:3.11\n")
        # The environment holds the base's files, byte for byte, and no history.
        tree = git(repo, "ls-tree", "-r", "--name-only", task["base"]).stdout.split()
        base_files = folder / "environment/repo"
        found = [p for p in base_files.rglob("*") if p.is_file()]
        repo_files = sorted(str(p.relative_to(base_files)) for p in found)
        assert repo_files == sorted(tree)

        for solved in (False, True):
            checkout = tmp_path / f"{folder.name}-{solved}"
            shutil.copytree(folder / "environment/repo", checkout)
            reward = tmp_path / f"reward-{folder.name}-{solved}.txt"
            if solved:
                assert run_script(folder / "solution/solve.sh", checkout, reward) == 0
            assert run_script(folder / "tests/test.sh", checkout, reward) == 0
            assert reward.read_text().strip() == ("1" if solved else "0"), (folder.name, solved)


# -- bad input ------------------------------------------------------------------------------------


def test_existing_output_is_refused_unless_force(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    refused = run_gitgauge("export", "--format", "swebench", "--out", str(out), cwd=repo)
    assert refused.returncode == 1
    assert f"{out} already exists" in refused.stderr and "--force" in refused.stderr
    assert out.read_text(encoding="utf-8") == "mine\n"

    folder = tmp_path / "taken"
    (folder / "keep").mkdir(parents=True)
    refused = run_gitgauge("export", "--format", "harbor", "--out", str(folder), cwd=repo)
    assert refused.returncode == 1 and (folder / "keep").is_dir()
    forced = run_gitgauge("export", "--format", "harbor", "--out", str(folder), "--force", cwd=repo)
    assert forced.returncode == 0, forced.stderr
    assert not (folder / "keep").exists() and len(list(folder.iterdir())) == DEMO_TASKS
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".gitgauge-export")] == []


def test_harbor_needs_out_and_swebench_takes_no_image(repo: Path) -> None:
    no_out = run_gitgauge("export", "--format", "harbor", cwd=repo)
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    image = run_gitgauge("export", "--format", "swebench", "--image", "x", cwd=repo)
    assert image.returncode == 2 and "--image" in image.stderr


def test_no_tasks_is_an_error(git_repo_with_commit: Path) -> None:
    outcome = run_gitgauge("export", "--format", "swebench", cwd=git_repo_with_commit)
    assert outcome.returncode == 1
    assert "no tasks to export" in outcome.stderr and "gitgauge mine" in outcome.stderr


@pytest.fixture
def git_repo_with_commit(tmp_path: Path) -> Path:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "first")
    return root


def test_a_task_whose_commits_are_gone_is_skipped_with_a_warning(
    repo: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    task_file = sorted((copy / ".gitgauge/tasks").iterdir())[0]
    task = yaml.safe_load(task_file.read_text())
    gone = "deadbeef" * 5
    task_file.write_text(task_file.read_text().replace(task["fix"], gone), encoding="utf-8")
    outcome = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert outcome.returncode == 0, outcome.stderr
    assert f"skipping task {task['id']}: commit {gone} is not in this repository" in outcome.stderr
    assert len(outcome.stdout.splitlines()) == DEMO_TASKS - 1


def test_non_utf8_text_is_skipped_for_swebench_and_kept_for_harbor(
    repo: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "latin1"
    shutil.copytree(repo, copy, symlinks=True)
    task_file = sorted((copy / ".gitgauge/tasks").iterdir())[0]
    task = yaml.safe_load(task_file.read_text())
    # A fix commit whose test file is Latin-1 text, on top of the task's base.
    git(copy, "checkout", "-q", "--detach", task["fix"])
    test_path = next(p for p in task["testFiles"])
    (copy / test_path).write_bytes((copy / test_path).read_bytes() + b"# caf\xe9\n")
    git(copy, "commit", "-qam", "latin-1 comment")
    new_fix = git(copy, "rev-parse", "HEAD").stdout.strip()
    task_file.write_text(task_file.read_text().replace(task["fix"], new_fix), encoding="utf-8")

    swebench = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert swebench.returncode == 0, swebench.stderr
    assert f"skipping task {task['id']}: {test_path} is text that is not UTF-8" in swebench.stderr
    assert len(swebench.stdout.splitlines()) == DEMO_TASKS - 1

    harbor = run_gitgauge("export", "--format", "harbor", "--out", str(tmp_path / "h"), cwd=copy)
    assert harbor.returncode == 0, harbor.stderr
    laid = tmp_path / "h" / task["id"] / "tests/files" / test_path
    assert laid.read_bytes().endswith(b"# caf\xe9\n")


def test_binary_test_fixtures_travel_as_git_binary_patches(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "binary"
    shutil.copytree(repo, copy, symlinks=True)
    task_file = sorted((copy / ".gitgauge/tasks").iterdir())[0]
    task = yaml.safe_load(task_file.read_text())
    git(copy, "checkout", "-q", "--detach", task["fix"])
    fixture = bytes(range(256)) * 4  # NUL bytes and every other byte value
    (copy / "tests/fixtures").mkdir(parents=True, exist_ok=True)
    (copy / "tests/fixtures/blob.bin").write_bytes(fixture)
    git(copy, "add", "tests/fixtures/blob.bin")
    git(copy, "commit", "-qm", "binary fixture")
    new_fix = git(copy, "rev-parse", "HEAD").stdout.strip()
    task_file.write_text(task_file.read_text().replace(task["fix"], new_fix), encoding="utf-8")

    exported = run_gitgauge("export", "--format", "swebench", cwd=copy)
    assert exported.returncode == 0, exported.stderr
    row = next(json.loads(line) for line in exported.stdout.splitlines() if task["id"] in line)
    assert "GIT binary patch" in row["test_patch"]
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(copy), str(checkout))
    git(checkout, "checkout", "-q", task["base"])
    (tmp_path / "test.patch").write_text(row["test_patch"], encoding="utf-8")
    git(checkout, "apply", str(tmp_path / "test.patch"))
    assert (checkout / "tests/fixtures/blob.bin").read_bytes() == fixture


def test_the_checkout_is_untouched(repo: Path, tmp_path: Path) -> None:
    before = git(repo, "status", "--porcelain").stdout
    run_gitgauge("export", "--format", "harbor", "--out", str(tmp_path / "h"), cwd=repo)
    assert git(repo, "status", "--porcelain").stdout == before
