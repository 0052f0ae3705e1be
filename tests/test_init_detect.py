"""What `gitgauge init` reads from a project's files, each rule with the file it names: the Python
runner, layout and interpreter; the JavaScript package manager, runner, the command that runs
only the tests and its per-test reporting (as docs/guide/per-test-verdicts.md gives it); what a
project declares for `init --env`; the file written and the change proposed to an existing one;
the timeout from a measured run. Real files in a temporary directory; the end-to-end walks
through the CLI are in tests/test_init_projects.py."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from gitgauge.core.config import parse_config_text
from gitgauge.core.schema import RepoConfig
from gitgauge.init.commandline import commands, words
from gitgauge.init.declared import declared, satisfies
from gitgauge.init.detect import detect, settings_of
from gitgauge.init.files import ProjectFiles
from gitgauge.init.javascript import detect_javascript
from gitgauge.init.measure import suite_timeout_ms
from gitgauge.init.python import detect_python
from gitgauge.init.records import Detected, Settings, Unreadable
from gitgauge.init.render import REWRITTEN, propose, render_new
from gitgauge.init.template import template_text

PYTHON_DIR = str(Path(sys.executable).parent)
ENV = {"PATH": f"{PYTHON_DIR}{os.pathsep}{os.environ.get('PATH', '')}"}
TEST = "def test_one():\n    assert True\n"


def project(root: Path, files: dict[str, str]) -> ProjectFiles:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return ProjectFiles(root, tuple(sorted(files)))


def python(root: Path, files: dict[str, str], env: dict[str, str] | None = None) -> Detected:
    found = detect_python(project(root, files), env=env or ENV)
    assert found is not None
    return found


def choice(found: Detected, key: str) -> str:
    return next(c.line() for c in found.choices if c.key == key)


# -- Python ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "source"),
    [
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\n"},
            "pyproject.toml [tool.pytest.ini_options]",
        ),
        ({"pytest.ini": "[pytest]\n"}, "pytest (pytest.ini)"),
        ({"setup.cfg": "[tool:pytest]\naddopts = -q\n"}, "setup.cfg [tool:pytest]"),
        ({"tox.ini": "[pytest]\n"}, "tox.ini [pytest]"),
        ({"tests/conftest.py": ""}, "pytest (tests/conftest.py)"),
        ({"tests/test_a.py": "import pytest\n" + TEST}, "pytest (tests/test_a.py imports pytest)"),
        (
            {"tests/test_a.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n"},
            "unittest (tests/test_a.py imports unittest), run through pytest",
        ),
        ({"a_test.py": TEST}, "pytest (test files such as a_test.py: pytest's default names)"),
    ],
)
def test_the_runner_comes_from_the_file_that_says_so(
    tmp_path: Path, files: dict[str, str], source: str
) -> None:
    found = python(
        tmp_path, {**files, "tests/test_x.py": TEST} if "tests/" not in str(files) else files
    )
    assert source in choice(found, "testCommand")
    assert found.test_command.endswith(" -m pytest -q")


def test_no_python_test_is_nothing_to_detect(tmp_path: Path) -> None:
    assert detect_python(project(tmp_path, {"pyproject.toml": "[project]\n"}), env=ENV) is None


def test_a_src_layout_gets_pythonpath_src_unless_pytest_sets_it(tmp_path: Path) -> None:
    files = {"src/calc/__init__.py": "", "tests/test_calc.py": TEST}
    found = python(tmp_path / "a", files)
    assert found.test_command.startswith("PYTHONPATH=src ")
    assert "src/ layout (src/calc/)" in choice(found, "testCommand")

    configured = {**files, "pytest.ini": "[pytest]\npythonpath = src\n"}
    found = python(tmp_path / "b", configured)
    assert not found.test_command.startswith("PYTHONPATH")
    assert "on sys.path through pytest's pythonpath" in choice(found, "testCommand")

    flat = python(tmp_path / "c", {"calc/__init__.py": "", "tests/test_calc.py": TEST})
    assert not flat.test_command.startswith("PYTHONPATH")
    assert "flat layout (calc/ at the root)" in choice(flat, "testCommand")


def fake_venv(where: Path) -> None:
    """A directory with `bin/python` that runs this interpreter (it has pytest)."""
    (where / "bin").mkdir(parents=True)
    (where / "bin" / "python").symlink_to(sys.executable)


def test_the_interpreter_activated_then_in_the_repository_then_on_path(tmp_path: Path) -> None:
    files = {"tests/test_x.py": TEST}
    outside = tmp_path / "elsewhere-venv"
    fake_venv(outside)
    found = python(tmp_path / "a", files, {**ENV, "VIRTUAL_ENV": str(outside)})
    assert found.test_command == f"{outside}/bin/python -m pytest -q"
    assert found.link == ()

    inside = tmp_path / "b"
    fake_venv(inside / ".venv")
    found = python(inside, files, {**ENV, "VIRTUAL_ENV": str(inside / ".venv")})
    assert found.test_command == ".venv/bin/python -m pytest -q"
    assert found.link == (".venv",)
    assert "the activated virtualenv ($VIRTUAL_ENV)" in choice(found, "testCommand")
    assert "which the sandbox hides" in choice(found, "worktree.link")

    not_active = tmp_path / "c"
    fake_venv(not_active / "venv")
    found = python(not_active, files)
    assert (found.test_command, found.link) == ("venv/bin/python -m pytest -q", ("venv",))
    assert "venv in the repository" in choice(found, "testCommand")

    found = python(tmp_path / "d", files)
    assert found.test_command in ("python -m pytest -q", "python3 -m pytest -q")
    assert "no virtualenv ($VIRTUAL_ENV, .venv, venv)" in choice(found, "testCommand")
    assert found.notes == ()  # this interpreter has pytest


def test_an_interpreter_without_pytest_gets_a_note(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (venv / "bin" / "python").chmod(0o755)
    found = python(tmp_path, {"tests/test_x.py": TEST})
    assert found.notes == (
        ".venv/bin/python cannot import pytest: install the project's test dependencies there, "
        "or run `gitgauge init --env` for an environment of their own",
    )


# -- JavaScript -----------------------------------------------------------------------------


def js(root: Path, package: dict[str, object], files: dict[str, str] | None = None) -> Detected:
    found = detect_javascript(
        project(root, {"package.json": json.dumps(package), **(files or {})}), env=ENV
    )
    assert isinstance(found, Detected), found
    return found


MOCHA_REPORTS = '--reporter xunit --reporter-options output="$GITGAUGE_JUNIT_XML"'


@pytest.mark.parametrize(
    ("script", "dependencies", "command"),
    [
        ("mocha", {"mocha": "1"}, f"node_modules/.bin/mocha {MOCHA_REPORTS}"),
        (
            "eslint . && mocha -R spec --timeout 5000 'test/**/*.js' && npm audit",
            {"mocha": "1"},
            f"node_modules/.bin/mocha --timeout 5000 'test/**/*.js' {MOCHA_REPORTS}",
        ),
        (
            "cross-env NODE_ENV=test nyc --silent mocha --watch test/",
            {"mocha": "1"},
            f"NODE_ENV=test node_modules/.bin/mocha test/ {MOCHA_REPORTS}",
        ),
        ("tape test/*.js | tap-spec", {"tape": "5"}, "node_modules/.bin/tape test/*.js"),
        (
            "vitest --coverage",
            {"vitest": "1"},
            "node_modules/.bin/vitest run --coverage --reporter=default --reporter=junit "
            '--outputFile.junit="$GITGAUGE_JUNIT_XML"',
        ),
        (
            "jest --ci",
            {"jest": "29", "jest-junit": "16"},
            'JEST_JUNIT_OUTPUT_FILE="$GITGAUGE_JUNIT_XML" node_modules/.bin/jest --ci '
            "--reporters=default --reporters=jest-junit",
        ),
        ("jest --watchAll", {"jest": "29"}, "node_modules/.bin/jest"),
        ("ava --verbose", {"ava": "6"}, "node_modules/.bin/ava --verbose --tap"),
        (None, {"tape": "5"}, "node_modules/.bin/tape 'test/*.js'"),
    ],
)
def test_the_runner_alone_with_its_per_test_reporting(
    tmp_path: Path, script: str | None, dependencies: dict[str, str], command: str
) -> None:
    package: dict[str, object] = {"devDependencies": dependencies}
    if script is not None:
        package["scripts"] = {"test": script}
    found = js(tmp_path, package, {"test/a.js": ""})
    assert found.test_command == command
    assert found.link == ("node_modules",)


def test_jest_without_jest_junit_says_how_to_get_reports(tmp_path: Path) -> None:
    found = js(tmp_path, {"scripts": {"test": "jest"}, "devDependencies": {"jest": "29"}})
    assert "none: jest writes JUnit XML through jest-junit" in choice(found, "per-test reports")


def test_scripts_are_followed_and_pre_and_post_scripts_named(tmp_path: Path) -> None:
    scripts = {
        "pretest": "eslint .",
        "test": "npm run lint && npm run test:unit",
        "test:unit": "mocha test/unit",
        "posttest": "npm audit",
    }
    found = js(tmp_path, {"scripts": scripts})
    assert found.test_command == f"node_modules/.bin/mocha test/unit {MOCHA_REPORTS}"
    line = choice(found, "testCommand")
    assert "package.json scripts.test:unit: `mocha test/unit`" in line
    assert "(not `npm test`, which also runs pretest `eslint .` and posttest `npm audit`)" in line


def test_node_test_runner_reports_junit_from_20_13_else_tap(tmp_path: Path) -> None:
    found = js(tmp_path, {"scripts": {"test": "node --test --test-reporter=spec test/"}})
    assert found.test_command.startswith("node --test test/")
    report = choice(found, "per-test reports")
    if "junit" in found.test_command:
        assert found.test_command.endswith(
            '--test-reporter=junit --test-reporter-destination="$GITGAUGE_JUNIT_XML"'
        )
        assert "node's junit reporter" in report
    else:  # no node here, or one before 20.13: its TAP is read
        assert "TAP on stdout" in report


@pytest.mark.parametrize(
    ("lock", "manager"),
    [
        ("package-lock.json", "npm"),
        ("yarn.lock", "yarn"),
        ("pnpm-lock.yaml", "pnpm"),
        ("bun.lockb", "bun"),
    ],
)
def test_the_package_manager_comes_from_the_lock_file(
    tmp_path: Path, lock: str, manager: str
) -> None:
    found = js(tmp_path, {"scripts": {"test": "tape t.js"}}, {lock: ""})
    assert choice(found, "package manager") == f"package manager: {manager}  ({lock})"
    assert found.package_manager == manager
    assert any(f"run `{manager}" in note for note in found.notes)  # no node_modules yet


def test_a_package_json_without_a_runner_or_not_json_is_unreadable(tmp_path: Path) -> None:
    plain = project(tmp_path / "a", {"package.json": '{"scripts": {"test": "make check"}}'})
    found = detect_javascript(plain, env=ENV)
    assert isinstance(found, Unreadable)
    assert found.looked_for.startswith("package.json has no test script running mocha, jest")

    broken = project(tmp_path / "b", {"package.json": '{"scripts": '})
    found = detect(broken, env=ENV)
    assert isinstance(found, Unreadable)
    assert "package.json is not valid JSON (line 1: " in found.looked_for
    assert "looked for pytest's configuration" in found.looked_for


def test_a_python_suite_wins_and_names_the_javascript_one(tmp_path: Path) -> None:
    files = {"tests/test_x.py": TEST, "package.json": '{"scripts": {"test": "tape t.js"}}'}
    found = detect(project(tmp_path, files), env=ENV)
    assert isinstance(found, Detected) and found.ecosystem == "python"
    assert found.also == (
        "package.json's suite too: testCommand 'node_modules/.bin/tape t.js' runs it",
    )


def test_commands_split_at_unquoted_operators_and_keep_quotes() -> None:
    script = "eslint . && tape 'a && b/*.js' | tap-spec; echo \"x | y\" || true"
    assert commands(script) == [
        "eslint .",
        "tape 'a && b/*.js'",
        "tap-spec",
        'echo "x | y"',
        "true",
    ]
    assert [(w.raw, w.value) for w in words("FOO=1 tape 'a b/*.js'")] == [
        ("FOO=1", "FOO=1"),
        ("tape", "tape"),
        ("'a b/*.js'", "a b/*.js"),
    ]


# -- what init --env installs ------------------------------------------------------------------


def test_declared_requirements_with_their_sources(tmp_path: Path) -> None:
    pyproject = """\
[project]
name = "My_Lib"
requires-python = ">=3.9"
dependencies = ["attrs"]

[project.optional-dependencies]
test = ["pytest-cov", "my-lib[fast]"]
fast = ["orjson"]
docs = ["sphinx"]

[dependency-groups]
lint = ["ruff"]
dev = [{include-group = "lint"}, "hypothesis"]
"""
    files = {
        "pyproject.toml": pyproject,
        "requirements-dev.txt": "",
        "requirements/test.txt": "",
        "docs/requirements.txt": "",
        "requirements-docs.txt": "",
        "tox.ini": (
            "[testenv]\ndeps =\n    -r{toxinidir}/requirements-dev.txt\n    mock\n    {posargs}\n"
        ),
        "noxfile.py": (
            "def tests(session):\n    session.install('-r', 'requirements/test.txt', 'freezegun')\n"
        ),
    }
    found = declared(project(tmp_path, files))
    assert (found.requires_python, found.requires_source) == (">=3.9", "pyproject.toml [project]")
    listed = [(r.text, r.source) for r in found.requirements]
    assert listed == [
        ("attrs", "pyproject.toml [project] dependencies"),
        ("pytest-cov", "pyproject.toml [project.optional-dependencies] test"),
        ("orjson", "pyproject.toml [project.optional-dependencies] test"),
        ("ruff", "pyproject.toml [dependency-groups] dev"),
        ("hypothesis", "pyproject.toml [dependency-groups] dev"),
        ("requirements-dev.txt", "requirements-dev.txt"),
        ("requirements/test.txt", "requirements/test.txt"),
        ("mock", "tox.ini [testenv] deps"),
        ("freezegun", "noxfile.py session.install"),
        ("pytest", "gitgauge runs the suite with pytest"),
    ]
    assert found.install_args()[:2] == ["attrs", "pytest-cov"]
    assert "-r" in found.install_args()


def test_setup_cfg_declares_too_and_a_named_pytest_is_not_added_again(tmp_path: Path) -> None:
    setup = (
        "[options]\npython_requires = >=3.8\ninstall_requires =\n    six\n"
        "[options.extras_require]\ntests =\n    pytest>=7\n"
    )
    found = declared(project(tmp_path, {"setup.cfg": setup}))
    assert found.requires_python == ">=3.8"
    assert [r.text for r in found.requirements] == ["six", "pytest>=7"]


@pytest.mark.parametrize(
    ("version", "specifier", "meets"),
    [
        ((3, 11, 7), ">=3.9", True),
        ((3, 11, 7), ">=3.12", False),
        ((3, 11, 7), ">=3.8,<3.11", False),
        ((3, 11, 7), "~=3.10", True),
        ((3, 11, 7), "~=3.11.8", False),
        ((3, 11, 7), "==3.11.*", True),
        ((3, 11, 7), "!=3.11.*", False),
        ((3, 11, 7), ">= 3.7, != 3.9.*", True),
        ((3, 11, 7), "something odd", True),
    ],
)
def test_requires_python(version: tuple[int, ...], specifier: str, meets: bool) -> None:
    assert satisfies(version, specifier) is meets


# -- the file written, and the change proposed -------------------------------------------------

SETTINGS = Settings(
    'node_modules/.bin/mocha --reporter xunit --reporter-options output="$GITGAUGE_JUNIT_XML"',
    ("node_modules",),
    60_000,
    {"testCommand": "package.json scripts.test", "worktree": "linked", "timeouts": "measured"},
)


def test_the_written_file_sets_the_detected_keys_and_comments_every_other() -> None:
    text = render_new(SETTINGS)
    config = parse_config_text(text, RepoConfig, source="gitgauge.yaml")
    assert config.testCommand == SETTINGS.test_command
    assert config.worktree.link == ["node_modules"]
    assert config.timeouts.test == 60_000
    assert yaml.safe_load(text) == SETTINGS.values()  # everything else commented out
    assert "# package.json scripts.test\ntestCommand: 'node_modules/.bin/mocha" in text
    assert "# mine:\n#   # How many recent commits" in text
    assert "# testCommand:" not in text and "# timeouts:" not in text
    assert "docs/reference/config.md in gitgauge's own repository, not this one" in text


def test_the_template_or_an_empty_file_becomes_the_detected_file() -> None:
    assert propose(template_text("gitgauge.yaml"), SETTINGS) == render_new(SETTINGS)
    assert propose("# only comments\n", SETTINGS) == render_new(SETTINGS)


def test_a_hand_written_file_is_edited_in_place() -> None:
    existing = (
        "# our suite\n"
        "testCommand: npm test   # slow: eslint first\n"
        "mine:\n  last: 50\n"
        "worktree:\n  # our cache too\n  link:\n    - .cache\n"
    )
    proposed = propose(existing, SETTINGS)
    assert yaml.safe_load(proposed) == {
        "testCommand": SETTINGS.test_command,
        "mine": {"last": 50},
        "worktree": {"link": [".cache", "node_modules"]},
        "timeouts": {"test": 60_000},
    }
    assert proposed.startswith("# our suite\ntestCommand: 'node_modules/.bin/mocha")
    assert "  # our cache too\n  link: [.cache, node_modules]\n" in proposed
    assert proposed.endswith("# measured\ntimeouts:\n  test: 60000\n")
    assert propose(proposed, SETTINGS) == proposed  # nothing left to change


def test_a_section_in_flow_style_is_rewritten_with_its_values_kept() -> None:
    existing = "testCommand: npm test\nworktree: {link: [.cache]}\nmine: {last: 50}\n"
    proposed = propose(existing, SETTINGS)
    assert proposed.startswith(REWRITTEN)
    assert yaml.safe_load(proposed)["worktree"] == {"link": [".cache", "node_modules"]}
    assert yaml.safe_load(proposed)["mine"] == {"last": 50}


def test_a_file_init_wrote_gets_the_new_sources_above_the_keys_it_changes() -> None:
    first = render_new(SETTINGS)
    later = Settings(
        ".venv/bin/python -m pytest -q", (".venv",), 90_000, {"testCommand": "pytest.ini; .venv"}
    )
    proposed = propose(first, later)
    assert "# pytest.ini; .venv\ntestCommand: '.venv/bin/python -m pytest -q'\n" in proposed
    assert "package.json scripts.test" not in proposed
    assert yaml.safe_load(proposed)["worktree"] == {"link": ["node_modules", ".venv"]}


def test_settings_carry_each_keys_source_as_its_comment(tmp_path: Path) -> None:
    found = js(tmp_path, {"scripts": {"test": "tape t.js"}})
    settings = settings_of(found)
    assert settings.comments["testCommand"].startswith("package.json scripts.test: `tape t.js`")
    assert settings.comments["testCommand"].endswith(
        "; per-test reports: TAP on stdout, read with nothing to configure"
    )
    assert settings.comments["worktree"].startswith("the repository's node_modules")


@pytest.mark.parametrize(
    ("seconds", "milliseconds"),
    [(0.2, 60_000), (5.9, 60_000), (6.01, 70_000), (100, 1_000_000), (10**6, 86_400_000)],
)
def test_the_test_timeout_is_ten_times_the_run_at_least_a_minute(
    seconds: float, milliseconds: int
) -> None:
    assert suite_timeout_ms(seconds) == milliseconds
