"""Linked dependencies that point back into the checkout: a real `pip install -e` (src and flat
layouts) into a linked `.venv`, and a real npm workspace in a linked `node_modules`. Without the
redirection every worktree imports the checkout's (fixed) code: a genuine fix is rejected as
"passes before the fix" and every agent is scored on the checkout, not on its own work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require
from helpers.environment import isolated
from helpers.repos import GitRepo, new_repo
from helpers.repos.sample import leftovers, mine_env

from gitgauge.core import links

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

BUILD = '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
SRC_PYPROJECT = BUILD + '[project]\nname = "srcpkg"\nversion = "0.1"\n'
FLAT_PYPROJECT = (
    BUILD
    + '[project]\nname = "flatpkg"\nversion = "0.1"\n[tool.setuptools]\npackages = ["flatpkg"]\n'
)
ROOT_PYPROJECT = (
    BUILD + '[project]\nname = "calc"\nversion = "0.1"\n[tool.setuptools]\npy-modules = ["calc"]\n'
)
# Run as a script from tests/: sys.path[0] is tests/, so the packages come from wherever the
# environment says (the editable install, or gitgauge's redirection).
CHECK_SRC = "import srcpkg\nassert srcpkg.double(5) == 10, srcpkg.__file__\n"
CHECK_FLAT = "import flatpkg\nassert flatpkg.half(10) == 5, flatpkg.__file__\n"
TEST_COMMAND = "for f in tests/check_*.py; do .venv/bin/python $f || exit 1; done"
CHECK_JS = """\
const a = require("@demo/a");
if (a.triple(2) !== 6) { console.error("triple"); process.exit(1); }
console.log("ok");
"""


def _write_config(repo: GitRepo, test_command: str, link: list[str]) -> None:
    config = {"testCommand": test_command, "worktree": {"link": link}}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def editable_project(
    root: Path,
    ignored: str,
    commits: dict[str, dict[str, str | bytes | None]],
    projects: tuple[str, ...] = (".",),
) -> GitRepo:
    """A repository at `root` with a commit per entry of `commits` (subject -> its files), the
    first also adding a check that checks nothing and a .gitignore of `ignored`; its `projects`
    (folders) installed by a real `pip install -e` into a linked `.venv` (no network: the build
    backend is the test environment's setuptools)."""
    repo = new_repo(root)
    (subject, files), *fixes = commits.items()
    check_base = {"tests/check_base.py": "print('nothing checked yet')\n"}
    repo.commit(subject, files={".gitignore": ignored, **files, **check_base})
    for subject, fixed in fixes:
        repo.commit(subject, files=fixed)
    venv = repo.root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    editable = [arg for project in projects for arg in ("-e", str(repo.root / project))]
    subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
            "--no-index", "--prefix", str(venv), *editable,
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    _write_config(repo, TEST_COMMAND, [".venv"])
    return repo


def gold_and_noop_rows(repo: GitRepo, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`gitgauge run` with the examples' gold and noop configs, then the report's rows by
    config."""
    examples = Path(__file__).parents[1] / "examples"
    ran = run_gitgauge(
        "run", "-c", str(examples / "gold.yaml"), "-c", str(examples / "noop.yaml"),
        cwd=repo.root, env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    report = run_gitgauge("report", "--format", "json", cwd=repo.root, env=env)
    return {row["config"]: row for row in json.loads(report.stdout)}


@pytest.fixture(scope="module")
def python_project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """src/srcpkg (src layout) and flat/flatpkg (flat layout), each with a bug fixed later."""
    base = tmp_path_factory.mktemp("editable")
    with isolated(base):
        return editable_project(
            base / "repo",
            ".venv/\n*.egg-info/\n__pycache__/\ngitgauge.yaml\n",
            {
                "Add the packages": {
                    "pyproject.toml": SRC_PYPROJECT,
                    "src/srcpkg/__init__.py": "def double(x):\n    return x + 2\n",
                    "flat/pyproject.toml": FLAT_PYPROJECT,
                    "flat/flatpkg/__init__.py": "def half(x):\n    return x - 2\n",
                },
                # One fix per layout: each is verified only if its own redirection works.
                "Fix srcpkg.double": {
                    "src/srcpkg/__init__.py": "def double(x):\n    return 2 * x\n",
                    "tests/check_src.py": CHECK_SRC,
                },
                "Fix flatpkg.half": {
                    "flat/flatpkg/__init__.py": "def half(x):\n    return x // 2\n",
                    "tests/check_flat.py": CHECK_FLAT,
                },
            },
            (".", "flat"),
        )


def test_the_editable_install_points_into_the_checkout(python_project: GitRepo) -> None:
    site = next((python_project.root / ".venv").glob("lib/python*/site-packages"))
    names = sorted(p.name for p in site.iterdir())
    assert "__editable__.srcpkg-0.1.pth" in names  # a path line: <checkout>/src
    assert "__editable___flatpkg_0_1_finder.py" in names  # a finder: MAPPING to <checkout>/flat
    found = links.inspect(python_project.root, [".venv"])
    assert sorted(found.python_paths) == ["flat", "src"]


def test_a_fix_is_verified_and_gold_noop_score_100_0(
    python_project: GitRepo, tmp_path: Path
) -> None:
    repo = python_project
    env = mine_env(tmp_path / "journal.jsonl")
    mined = run_gitgauge("mine", cwd=repo.root, env=env)
    assert mined.returncode == 0, mined.stdout + mined.stderr
    assert "verified:          2" in mined.stdout, mined.stdout
    assert "imports from your checkout (src); each worktree uses its own copy" in mined.stderr
    assert "__editable___flatpkg_0_1_finder.py imports from your checkout (flat)" in mined.stderr
    assert mined.stderr.count("imports from your checkout (src)") == 1  # said once

    rows = gold_and_noop_rows(repo, env)
    assert (rows["gold"]["resolved"], rows["noop"]["resolved"]) == (2, 0)
    assert leftovers(tmp_path / "journal.jsonl") == []
    shutil.rmtree(repo.root / ".gitgauge")


def test_an_import_path_git_does_not_track_stops_with_the_file_and_the_fix(
    python_project: GitRepo, tmp_path: Path
) -> None:
    repo = python_project
    site = next((repo.root / ".venv").glob("lib/python*/site-packages"))
    (repo.root / "build" / "lib").mkdir(parents=True)
    stray = site / "zz_built.pth"
    stray.write_text(f"{repo.root / 'build' / 'lib'}\n", encoding="utf-8")
    before = repo.snapshot()
    try:
        mined = run_gitgauge("mine", cwd=repo.root, env=mine_env(tmp_path / "journal.jsonl"))
        after = repo.snapshot()
    finally:
        stray.unlink()
        shutil.rmtree(repo.root / "build")
    assert mined.returncode == 1
    assert mined.stderr.startswith(
        f"gitgauge: error: worktree.link: {site.relative_to(repo.root)}/zz_built.pth imports "
        "from your checkout (build/lib), which git does not track"
    ), mined.stderr
    assert "install into the worktree with setupCommand" in mined.stderr
    assert not (tmp_path / "journal.jsonl").exists()  # nothing was verified
    assert leftovers(tmp_path / "journal.jsonl") == []
    assert after == before


@pytest.fixture(scope="module")
def npm_workspace(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    require(bool(shutil.which("node") and shutil.which("npm")), "node and npm")
    base = tmp_path_factory.mktemp("npm")
    with isolated(base):
        repo = new_repo(base / "repo")
        package = {"name": "@demo/a", "version": "1.0.0", "main": "index.js"}
        repo.commit(
            "Add package a",
            files={
                ".gitignore": "node_modules/\ngitgauge.yaml\n",
                "package.json": json.dumps(
                    {"name": "root", "private": True, "workspaces": ["packages/*"]}
                ),
                "packages/a/package.json": json.dumps(package),
                "packages/a/index.js": "exports.triple = (x) => x + 3;\n",
            },
        )
        repo.commit(
            "Fix triple",
            files={
                "packages/a/index.js": "exports.triple = (x) => x * 3;\n",
                "tests/check.js": CHECK_JS,
            },
        )
        subprocess.run(
            ["npm", "install", "--offline", "--no-audit", "--no-fund"],
            cwd=repo.root,
            check=True,
            capture_output=True,
            env=dict(os.environ, npm_config_cache=str(base / "npm-cache")),
        )
        _write_config(repo, "node tests/check.js", ["node_modules"])
        return repo


def test_npm_workspace_links_lead_into_each_worktree(
    npm_workspace: GitRepo, tmp_path: Path
) -> None:
    repo = npm_workspace
    assert os.readlink(repo.root / "node_modules" / "@demo" / "a") == "../../packages/a"
    env = mine_env(tmp_path / "journal.jsonl")
    mined = run_gitgauge("mine", cwd=repo.root, env=env)
    assert mined.returncode == 0, mined.stdout + mined.stderr
    assert "verified:          1" in mined.stdout, mined.stdout
    assert "node_modules/@demo/a links to your checkout (packages/a)" in mined.stderr

    rows = gold_and_noop_rows(repo, env)
    assert (rows["gold"]["resolved"], rows["noop"]["resolved"]) == (1, 0)
    # The user's node_modules is untouched: still the checkout's link, nothing deleted through it.
    assert os.readlink(repo.root / "node_modules" / "@demo" / "a") == "../../packages/a"
    assert (repo.root / "packages" / "a" / "index.js").exists()
    assert leftovers(tmp_path / "journal.jsonl") == []


def test_shadow_node_modules_keeps_other_entries_and_relative_bin_links(
    npm_workspace: GitRepo, tmp_path: Path
) -> None:
    source = npm_workspace.root
    worktree = tmp_path / "wt"
    (worktree / "packages" / "a").mkdir(parents=True)
    (source / "node_modules" / "left-pad").mkdir()
    bin_dir = source / "node_modules" / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "demo-a").symlink_to("../@demo/a/cli.js")
    try:
        assert links.link_into(source, worktree, "node_modules")
    finally:
        shutil.rmtree(source / "node_modules" / "left-pad")
        (bin_dir / "demo-a").unlink()
    shadow = worktree / "node_modules"
    assert not shadow.is_symlink()
    assert (shadow / "@demo" / "a").resolve() == (worktree / "packages" / "a").resolve()
    assert (shadow / "left-pad").resolve() == (source / "node_modules" / "left-pad").resolve()
    assert os.readlink(shadow / ".bin" / "demo-a") == "../@demo/a/cli.js"
    assert (shadow / ".package-lock.json").resolve().parent == (source / "node_modules").resolve()


def test_other_shapes_of_editable_installs_are_found(tmp_path: Path) -> None:
    """`setup.py develop` egg-links, `flit install --symlink`, hatchling's path `.pth`, and a
    venv that lives outside the checkout and is symlinked in."""
    checkout = tmp_path / "checkout"
    for package in ("src/eggpkg", "lib/flitpkg", "hatch/src/hatchpkg"):
        (checkout / package).mkdir(parents=True)
        (checkout / package / "__init__.py").write_text("")
    outside = tmp_path / "venvs" / "project"
    site = outside / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "eggpkg.egg-link").write_text(f"{checkout / 'src'}\n.\n")
    (site / "flitpkg").symlink_to(checkout / "lib" / "flitpkg")
    (site / "_hatchpkg.pth").write_text(f"{checkout / 'hatch' / 'src'}\n")
    (site / "unrelated.pth").write_text(f"{tmp_path / 'elsewhere'}\n# a comment\n")
    (checkout / ".venv").symlink_to(outside)

    found = links.inspect(checkout, [".venv"])

    assert sorted(found.python_paths) == ["hatch/src", "lib", "src"]
    env = links.python_env(found, tmp_path / "wt", inherited="/kept")
    assert env["PYTHONPATH"].split(os.pathsep)[-1] == "/kept"
    assert env["PYTHONPATH"].split(os.pathsep)[0].startswith(str(tmp_path / "wt"))


def test_a_flat_layout_at_the_repository_root_is_redirected_to_each_worktree(
    tmp_path: Path,
) -> None:
    """`calc.py` next to `pyproject.toml`, installed editable into a linked `.venv`: the import
    root is the repository's root, which git tracks (`:(top).` matched nothing on git 2.39 and
    the install was refused as "git does not track")."""
    repo = editable_project(
        tmp_path / "repo",
        ".venv/\n*.egg-info/\n__pycache__/\nbuild/\ngitgauge.yaml\n",
        {
            "Add calc": {
                "pyproject.toml": ROOT_PYPROJECT,
                "calc.py": "def half(x):\n    return x - 2\n",
            },
            "Fix calc.half": {
                "calc.py": "def half(x):\n    return x // 2\n",
                "tests/check_calc.py": "import calc\nassert calc.half(10) == 5, calc.__file__\n",
            },
        },
    )
    assert links.inspect(repo.root, [".venv"]).python_paths == [""]

    mined = run_gitgauge("mine", cwd=repo.root, env=mine_env(tmp_path / "journal.jsonl"))

    assert "does not track" not in mined.stderr, mined.stderr
    assert mined.returncode == 0, mined.stdout + mined.stderr
    assert "imports from your checkout (.); each worktree uses its own copy" in mined.stderr
    assert "verified:          1" in mined.stdout, mined.stdout
