"""The additions rule (`running/scoring/additions.py`): what an agent adds is kept only when it is
ordinary project code. Each rule with a case it drops and a near miss it keeps, and the stand-in
rule asked of a real interpreter (`core/importable.py`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitgauge.core.importable import ImportProbe, Interpreter, interpreters
from gitgauge.running.scoring.additions import (
    Added,
    dropped_by_rule,
    module_names,
    shadow_reasons,
)
from gitgauge.running.scoring.additions import test_directories as directories_of_tests

START = [
    "README.md",
    "setup.py",
    "calc/__init__.py",
    "calc/core.py",
    "calc/test_core.py",  # a test beside the source: calc/ is not a test directory
    "src/app/__init__.py",
    "src/app/main.py",
    "checks/__init__.py",
    "checks/login_check.py",  # a test by the project's own pattern
    "checks/data/users.json",
    "scripts/release.sh",
]
PATTERNS = ["checks/*_check.py"]


def why(path: str, *, mode: str = "100644", target: str | None = None) -> str | None:
    dropped = dropped_by_rule(
        [Added(path, mode, target)], start_files=START, patterns=PATTERNS, test_files=[]
    )
    return dropped.get(path)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("tests/test_new.py", "a test file"),
        ("calc/test_extra.py", "a test file"),  # by name, beside the source
        ("checks/signup_check.py", "a test file"),  # the project's own pattern
        # Under a directory whose own files are tests: no pattern names it, the rule does.
        ("checks/helpers.py", "under checks/, where the suite collects tests"),
        ("checks/deep/er/anything.py", "under checks/, where the suite collects tests"),
        ("conftest.py", "configuration of pytest"),
        ("calc/.babelrc", "configuration of jest"),
        ("build.rs", "configuration of cargo"),
        (".envrc", "a hidden file"),
        ("calc/.hidden/module.py", "in .hidden/"),
        ("calc/settings.toml", "a configuration file (.toml)"),
        ("calc/app.conf.js", "a configuration file"),
        ("web/webpack.config.mjs", "a configuration file"),
        ("Rakefile", "not source code, at the repository root"),
        ("phpunit.xml", "not source code, at the repository root"),
        ("node_modules/left-pad/index.js", "under node_modules/"),
        ("src/vendor/lib/x.go", "under vendor/"),
        ("lib/site-packages/pytest.py", "under site-packages/"),
    ],
)
def test_what_is_not_the_agents_code_is_dropped(path: str, reason: str) -> None:
    found = why(path)
    assert found is not None and found.startswith(reason), found


@pytest.mark.parametrize(
    "path",
    [
        "calc/helpers.py",  # new source beside a test: calc/ holds source
        "calc/data/table.json",  # data the code reads
        "helpers.py",  # source at the root
        "src/app/routes.py",
        "scripts/deploy.sh",
        "docs/guide.md",  # not at the root: no tool looks for its config there
        "calc/config_loader.py",  # `config` in a name is not a configuration file
    ],
)
def test_ordinary_project_code_is_kept(path: str) -> None:
    assert why(path) is None


def test_symlinks_that_lead_out_are_dropped_and_inner_ones_kept() -> None:
    link = "120000"
    assert why("calc/up", mode=link, target="/etc/passwd") is not None
    assert why("calc/up", mode=link, target="../../outside") is not None
    assert why("calc/side", mode=link, target="../src/app") is None
    assert why("calc/here", mode=link, target="./core.py") is None


def test_a_directory_of_tests_is_one_whose_own_files_are_all_tests() -> None:
    assert directories_of_tests(START, patterns=PATTERNS) == {"checks"}
    # One source file among them and it is the project's code, not its tests.
    assert directories_of_tests([*START, "checks/tool.py"], patterns=PATTERNS) == set()


def test_module_names_are_the_new_top_level_names_at_any_import_root() -> None:
    tree = [*START, "json.py", "pluggy/__init__.py", "src/yaml.py", "calc/typing.py"]
    added = ["json.py", "pluggy/__init__.py", "src/yaml.py", "calc/typing.py", "scripts/os.py"]
    names = module_names(added, start_files=START, tree_files=[*tree, "scripts/os.py"])
    # calc/ is a package: calc/typing.py is calc.typing and stands in for nothing.
    assert names == {
        "json": ["json.py"],
        "pluggy": ["pluggy/__init__.py"],
        "yaml": ["src/yaml.py"],
        "os": ["scripts/os.py"],
    }
    # A package the agent emptied of its marker is an import root again.
    bare = [path for path in tree if path != "calc/__init__.py"]
    assert module_names(["calc/typing.py"], start_files=START, tree_files=bare) == {
        "typing": ["calc/typing.py"]
    }


def test_the_interpreter_says_which_names_it_imports_from_elsewhere(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc_helpers.py").write_text("x = 1\n")
    found = interpreters(f"{sys.executable} -m pytest", env=os.environ, cwd=project)
    assert found[0] == Interpreter(sys.executable, True)
    env = {**os.environ, "PYTHONPATH": str(project)}
    names = ["json", "pytest", "pluggy", "calc_helpers", "no_such_module_anywhere"]
    shadowed = ImportProbe().shadowed(names, interpreters=found, env=env, hidden=[project])
    assert shadowed["json"].startswith("the standard library")
    assert "site-packages" in shadowed["pytest"] and "site-packages" in shadowed["pluggy"]
    # The project's own module (on PYTHONPATH) and a name nobody has are free for the agent.
    assert "calc_helpers" not in shadowed and "no_such_module_anywhere" not in shadowed
    reasons = shadow_reasons({"pluggy": ["pluggy/__init__.py"]}, shadowed)
    assert reasons["pluggy/__init__.py"].startswith("stands in for the module `pluggy`")


def test_interpreters_come_from_the_command_and_the_scripts_it_runs(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    runner = bin_dir / "runtests"
    runner.write_text(f"#!{sys.executable}\nprint(1)\n")
    runner.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    named = [each.path for each in interpreters("runtests -q", env=env, cwd=tmp_path) if each.named]
    assert named == [sys.executable]
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    relative = interpreters("PYTHONPATH=src .venv/bin/python -m pytest", env=env, cwd=tmp_path)
    assert relative[0] == Interpreter(str(venv / "python"), True)


def test_an_interpreter_of_the_command_that_cannot_answer_protects_every_name(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "python3"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    probe = ImportProbe()
    names = ["anything"]
    named = probe.shadowed(
        names, interpreters=[Interpreter(str(broken), True)], env=os.environ, hidden=[]
    )
    assert named["anything"].startswith("an unknown place")
    fallback = ImportProbe().shadowed(
        names, interpreters=[Interpreter(str(broken), False)], env=os.environ, hidden=[]
    )
    assert fallback == {}
