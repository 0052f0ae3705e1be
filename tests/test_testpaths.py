"""The test-folder conventions of pytest's own layout (`testing/` at the root) and of a project's
pytest `testpaths`, read from the files pytest reads, in its order, into `tests.patterns`: what
mining calls the fix's tests, protection reverts and the additions rule drops."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitgauge.core import testpaths
from gitgauge.core.config import load_repo_config
from gitgauge.core.paths import is_protected, is_test_file
from gitgauge.mining.classify import path_rule
from gitgauge.running.scoring.additions import Added, dropped_by_rule


@pytest.mark.parametrize(
    ("path", "counter_example"),
    [
        ("testing/test_assertion.py", "src/_pytest/testing.py"),
        ("testing/python/approx.py", "src/numpy/testing/utils.py"),  # a library's `testing`
        ("testing/example_scripts/conftest_usageerror/x.txt", "testing.py"),
    ],
)
def test_a_testing_folder_at_the_root_holds_tests(path: str, counter_example: str) -> None:
    assert is_test_file(path) and is_protected(path)
    assert not is_test_file(counter_example)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pytest.ini": "[pytest]\ntestpaths = checks\n    more/checks\n"},
            ("checks", "more/checks"),
        ),
        ({"pytest.ini": "[other]\n", "tox.ini": "[pytest]\ntestpaths = checks\n"}, ()),
        ({".pytest.ini": "[pytest]\ntestpaths = 'odd name'\n"}, ("odd name",)),
        ({"pytest.toml": '[pytest]\ntestpaths = ["checks"]\n'}, ("checks",)),
        (
            {"pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["checks", "qa"]\n'},
            ("checks", "qa"),
        ),
        ({"pyproject.toml": '[tool.pytest]\ntestpaths = ["checks"]\n'}, ("checks",)),
        # A pyproject.toml without pytest's table is passed over, as pytest passes over it.
        (
            {"pyproject.toml": "[project]\nname = 'x'\n", "tox.ini": "[pytest]\ntestpaths=qa\n"},
            ("qa",),
        ),
        ({"tox.ini": "[tox]\n", "setup.cfg": "[tool:pytest]\ntestpaths = checks\n"}, ("checks",)),
        ({"setup.cfg": "[metadata]\nname = x\n"}, ()),
        ({"pyproject.toml": "not = [toml"}, ()),
        ({}, ()),
    ],
)
def test_testpaths_come_from_the_file_pytest_reads(
    files: dict[str, str], expected: tuple[str, ...]
) -> None:
    assert testpaths.pytest_testpaths(files.get) == expected


def test_testpaths_folders_become_patterns_unless_the_rules_know_them(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests testing ./checks/ src/pkg/tests ../out /abs . $HOME checks\n",
        encoding="utf-8",
    )
    assert testpaths.testpaths_patterns(tmp_path) == ("checks/*",)


def test_the_loaded_config_carries_them_to_mining_protection_and_the_additions_rule(
    tmp_path: Path,
) -> None:
    (tmp_path / "gitgauge.yaml").write_text(
        "testCommand: pytest\ntests:\n  patterns: ['qa/*']\n", encoding="utf-8"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["checks"]\npython_files = ["*_checks.py"]\n',
        encoding="utf-8",
    )
    patterns = load_repo_config(tmp_path).tests.patterns
    assert patterns == ["qa/*", "checks/*"]
    # Mining: a fix that changes src/ and checks/ touches tests and source.
    assert path_rule(["src/calc.py", "checks/calc_checks.py"], patterns=patterns) == (
        "tests-and-source"
    )
    assert path_rule(["src/calc.py", "src/calc_checks.py"], patterns=patterns) == "no test file"
    # Protection and the additions rule: an agent's new file there is a test, dropped.
    assert is_protected("checks/calc_checks.py", patterns=patterns)
    added = [Added("checks/new_checks.py", "100644"), Added("src/helper.py", "100644")]
    dropped = dropped_by_rule(added, start_files=["src/calc.py"], patterns=patterns)
    assert list(dropped) == ["checks/new_checks.py"]
    assert "a test file" in dropped["checks/new_checks.py"]


def test_a_config_without_testpaths_is_what_gitgauge_yaml_says(tmp_path: Path) -> None:
    (tmp_path / "gitgauge.yaml").write_text("testCommand: pytest\n", encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n", encoding="utf-8")
    assert load_repo_config(tmp_path).tests.patterns == []
