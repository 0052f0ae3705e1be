"""Issue 37's "done when": projects this repository does not contain, built offline from small
fixtures with a history holding a real bug fix, reach verified tasks through `gitgauge init`,
`gitgauge doctor` and `gitgauge mine` with no file edited by hand, and gold resolves every one
(noop none): a Python src layout with its `.venv` inside the repository and activated; a flat
Python project whose test dependencies are only in an extra or a requirements file (`init
--env`); a mocha project whose `npm test` would run a missing eslint first; a tape project whose
test script pipes into a missing TAP formatter.

The test dependency `ggwords` is a wheel written by the test (`helpers.wheels`), found offline
through `PIP_FIND_LINKS`: no interpreter of this machine has it, so a suite that passes ran in the
environment `init` chose. pytest itself comes from the configured registry, as CI's does.
mocha and tape come from `$GITGAUGE_JS_RUNNERS` (`.ci/run` installs them; under `CI=true` their
absence fails these tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolated
from helpers.js_words import MOCHA_EXTRA, MOCHA_WORDS, commit_words, js_runners, linked_repo
from helpers.repos import GitRepo, new_repo
from helpers.results import load_tasks
from helpers.wheels import write_wheel

# End to end: the real CLI, pip, node's runners; `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

WORDS_MODULE = "def split(text):\n    return text.split()\n"

MEAN_BUGGY = "def mean(values):\n    return sum(values) / (len(values) - 1)\n"
MEAN_FIXED = "def mean(values):\n    return sum(values) / len(values)\n"
COUNT_BUGGY = "import ggwords\n\n\ndef count(text):\n    return len(text.split(' '))\n"
COUNT_FIXED = "import ggwords\n\n\ndef count(text):\n    return len(ggwords.split(text))\n"

TAPE_TEST = """\
const test = require('tape');
const { count } = require('../src/words.js');
test('counts words', (t) => { t.equal(count('a b'), 2); t.end(); });
EXTRA"""
TAPE_EXTRA = "test('ignores extra spaces', (t) => { t.equal(count(' a  b '), 2); t.end(); });\n"


@dataclass
class Walked:
    repo: GitRepo
    outputs: dict[str, subprocess.CompletedProcess[str]]
    fix: str

    @property
    def config(self) -> dict[str, Any]:
        text = (self.repo.root / "gitgauge.yaml").read_text(encoding="utf-8")
        loaded: dict[str, Any] = yaml.safe_load(text)
        return loaded


def walk(repo: GitRepo, env: dict[str, str], fix: str, *init_args: str) -> Walked:
    """init, doctor, mine, then gold and noop: each must succeed, with no file edited."""
    outputs = {}
    steps = [("init", *init_args), ("doctor",), ("mine",), ("run", "-c", "gold", "-c", "noop")]
    for step in steps:
        result = run_gitgauge(*step, cwd=repo.root, env=env)
        outputs[step[0]] = result
        assert result.returncode == 0, f"{step}:\n{result.stdout}\n{result.stderr}"
    return Walked(repo, outputs, fix)


def assert_verified_and_gold_resolves(walked: Walked) -> None:
    assert walked.outputs["doctor"].stdout.rstrip().endswith("`gitgauge mine` should work here")
    tasks = load_tasks(walked.repo)
    assert list(tasks) == [walked.fix], walked.outputs["mine"].stdout
    task = tasks[walked.fix]
    assert task["failToPass"], task
    found: dict[str, str] = {}
    for path in (walked.repo.root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[record["config"]] = record["status"]
    assert found == {"gold": "resolved", "noop": "unresolved"}


def base_env(base: Path) -> dict[str, str]:
    private = base / "tmp"
    private.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(private))
    env.pop("VIRTUAL_ENV", None)  # each test says which environment is active, if any
    return env


def with_wheelhouse(env: dict[str, str], wheels: Path) -> dict[str, str]:
    """pip (and uv) also look in `wheels`, where `ggwords` is; the registry for the rest."""
    links = " ".join(filter(None, [env.get("PIP_FIND_LINKS", ""), str(wheels)]))
    return dict(env, PIP_FIND_LINKS=links, UV_FIND_LINKS=str(wheels))


def test_a_src_layout_with_its_activated_venv_inside_the_repository(tmp_path: Path) -> None:
    with isolated(tmp_path):
        env = with_wheelhouse(base_env(tmp_path), tmp_path / "wheels")
        write_wheel(tmp_path / "wheels", "ggwords", "1.0", WORDS_MODULE)
        repo = new_repo(tmp_path / "stats")
        repo.commit(
            "Initial statistics",
            files={
                ".gitignore": ".venv/\n",
                "pyproject.toml": (
                    '[project]\nname = "stats"\nversion = "0.1"\n\n'
                    '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
                ),
                "src/stats/__init__.py": MEAN_BUGGY,
                "tests/test_words.py": (
                    "import ggwords\n\n\ndef test_split():\n    assert ggwords.split('a b') == "
                    "['a', 'b']\n"
                ),
            },
        )
        fix = repo.commit(
            "Fix off-by-one in mean",
            files={
                "src/stats/__init__.py": MEAN_FIXED,
                "tests/test_mean.py": (
                    "from stats import mean\n\n\ndef test_mean():\n    assert mean([2, 4]) == 3\n"
                ),
            },
        )
        venv = repo.root / ".venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = [str(venv / "bin/python"), "-m", "pip", "install", "-q", "pytest", "ggwords"]
        subprocess.run(install, check=True, env=env)
        # As `. .venv/bin/activate` leaves it: the sandbox hides this python from the suite.
        env = dict(env, VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}")

        walked = walk(repo, env, fix)

    assert walked.config["testCommand"] == "PYTHONPATH=src .venv/bin/python -m pytest -q"
    assert walked.config["worktree"] == {"link": [".venv"]}
    assert walked.config["timeouts"]["test"] >= 60_000
    said = walked.outputs["init"].stdout
    assert (
        "testCommand: PYTHONPATH=src .venv/bin/python -m pytest -q  (pyproject.toml "
        "[tool.pytest.ini_options]; src/ layout (src/stats/)"
    ) in said
    assert "the activated virtualenv ($VIRTUAL_ENV)" in said
    assert "worktree.link: [.venv]  (.venv is inside the repository" in said
    assert_verified_and_gold_resolves(walked)


@pytest.mark.parametrize("declared_in", ["extra", "requirements"])
def test_test_dependencies_only_declared_get_an_environment_of_their_own(
    tmp_path: Path, declared_in: str
) -> None:
    with isolated(tmp_path):
        env = with_wheelhouse(base_env(tmp_path), tmp_path / "wheels")
        write_wheel(tmp_path / "wheels", "ggwords", "1.0", WORDS_MODULE)
        repo = new_repo(tmp_path / "counter")
        project = '[project]\nname = "counter"\nversion = "0.1"\nrequires-python = ">=3.8"\n'
        declared = {"requirements-test.txt": "pytest\nggwords\n"}
        if declared_in == "extra":
            declared = {}
            project += '\n[project.optional-dependencies]\ntest = ["pytest", "ggwords"]\n'
        repo.commit(
            "Initial counter",
            files={
                "pyproject.toml": project,
                **declared,
                "counter.py": COUNT_BUGGY,
                "tests/test_counter.py": (
                    "from counter import count\n\n\ndef test_one():\n    assert count('a') == 1\n"
                ),
            },
        )
        fix = repo.commit(
            "Fix count with extra spaces",
            files={
                "counter.py": COUNT_FIXED,
                "tests/test_spaces.py": (
                    "from counter import count\n\n\ndef test_spaces():\n"
                    "    assert count(' a  b ') == 2\n"
                ),
            },
        )

        walked = walk(repo, env, fix, "--env")

    assert walked.config["testCommand"] == ".gitgauge/env/bin/python -m pytest -q"
    assert walked.config["worktree"] == {"link": [".gitgauge/env"]}
    said = walked.outputs["init"].stdout
    source = (
        "pyproject.toml [project.optional-dependencies] test"
        if declared_in == "extra"
        else "-r requirements-test.txt (requirements-test.txt)"
    )
    assert source in said
    assert "meets requires-python >=3.8 (pyproject.toml [project])" in said
    assert "flat layout" in said
    # The environment is git-ignored with the rest of .gitgauge/: nothing new to commit.
    assert repo.git("status", "--porcelain").splitlines() == ["?? gitgauge.yaml"]
    assert_verified_and_gold_resolves(walked)


def js_project(tmp_path: Path, package: dict[str, Any], test: tuple[str, str, str]) -> Walked:
    modules = js_runners("node")
    with isolated(tmp_path):
        env = dict(base_env(tmp_path), npm_config_offline="true")
        repo = linked_repo(tmp_path / "words", modules)
        package_json = {"package.json": json.dumps(package, indent=2) + "\n"}
        fix = commit_words(repo, "Initial words", package_json, test)
        return walk(repo, env, fix)


def test_a_mocha_project_runs_mocha_alone_with_its_xunit_reporter(tmp_path: Path) -> None:
    package = {
        "name": "words",
        "private": True,
        # eslint is not installed: `npm test` would fail before any test ran.
        "scripts": {"pretest": "eslint .", "test": "mocha --reporter dot test/"},
        "devDependencies": {"mocha": "11.7.5"},
    }
    walked = js_project(tmp_path, package, ("test/words.spec.js", MOCHA_WORDS, MOCHA_EXTRA))

    assert walked.config["testCommand"] == (
        "node_modules/.bin/mocha test/ --reporter xunit "
        '--reporter-options output="$GITGAUGE_JUNIT_XML"'
    )
    assert walked.config["worktree"] == {"link": ["node_modules"]}
    said = walked.outputs["init"].stdout
    assert "package manager: npm  (no lock file: npm)" in said
    assert "(not `npm test`, which also runs pretest `eslint .`)" in said
    assert "2 tests ran, 2 passed (JUnit XML)" in said
    assert load_tasks(walked.repo)[walked.fix]["failToPass"] == ["count::ignores extra spaces"]
    assert_verified_and_gold_resolves(walked)


def test_a_tape_project_runs_tape_alone_and_its_tap_is_read(tmp_path: Path) -> None:
    package = {
        "name": "words",
        "private": True,
        # tap-spec is not installed: the whole script would fail after the tests.
        "scripts": {"test": "tape 'test/*.js' | tap-spec"},
        "devDependencies": {"tape": "5.10.2"},
    }
    walked = js_project(tmp_path, package, ("test/words.js", TAPE_TEST, TAPE_EXTRA))

    assert walked.config["testCommand"] == "node_modules/.bin/tape 'test/*.js'"
    said = walked.outputs["init"].stdout
    assert "per-test reports: TAP on stdout, read with nothing to configure" in said
    assert "2 tests ran, 2 passed (TAP on stdout)" in said
    assert load_tasks(walked.repo)[walked.fix]["failToPass"] == ["ignores extra spaces"]
    assert_verified_and_gold_resolves(walked)


def python_repo(tmp_path: Path, files: dict[str, str] | None = None) -> GitRepo:
    repo = new_repo(tmp_path / "project")
    repo.commit(
        "Initial",
        files=files
        or {"calc.py": "ONE = 1\n", "tests/test_calc.py": "def test_one():\n    pass\n"},
    )
    return repo


def test_detect_shows_the_change_and_writes_nothing_and_write_applies_it(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with isolated(tmp_path):
        repo = python_repo(tmp_path)
        config = repo.root / "gitgauge.yaml"
        mine = "# ours\ntestCommand: make check\nmine:\n  last: 50  # our history is short\n"
        config.write_text(mine, encoding="utf-8")

        kept = run_gitgauge("init", cwd=repo.root, env=env)
        detected = run_gitgauge("init", "--detect", cwd=repo.root, env=env)
        unchanged = config.read_text(encoding="utf-8")
        applied = run_gitgauge("init", "--write", cwd=repo.root, env=env)
        again = run_gitgauge("init", "--detect", cwd=repo.root, env=env)
        written = config.read_text(encoding="utf-8")
        config.write_text("testCommand: [\n", encoding="utf-8")
        broken = run_gitgauge("init", "--write", cwd=repo.root, env=env)

    assert kept.returncode == 0, kept.stderr
    assert "gitgauge.yaml is kept: `gitgauge init --detect` shows what detection would change" in (
        kept.stdout
    )
    assert detected.returncode == 0, detected.stderr
    assert unchanged == mine
    lines = detected.stdout.splitlines()
    assert "--- gitgauge.yaml (now)" in lines
    assert "-testCommand: make check" in lines
    assert any(line.startswith("+testCommand: '") for line in lines), lines
    assert lines[-1] == "nothing written (--detect): `gitgauge init --write` applies it"
    assert applied.returncode == 0, applied.stderr
    assert f"updated {repo.root / 'gitgauge.yaml'}" in applied.stdout
    assert written.startswith("# ours\ntestCommand: '")
    assert "  last: 50  # our history is short\n" in written
    assert yaml.safe_load(written)["timeouts"]["test"] >= 60_000
    assert again.stdout.splitlines()[-1] == (
        "gitgauge.yaml already holds what detection found: nothing to change"
    )
    assert broken.returncode == 1
    assert broken.stderr.startswith(f"gitgauge: error: {config}: invalid YAML at line 2")
    assert len(broken.stderr.strip().splitlines()) == 1
    assert config.read_text(encoding="utf-8") == "testCommand: [\n"


def test_a_project_init_cannot_read_gets_the_template_and_what_it_looked_for(
    tmp_path: Path,
) -> None:
    env = base_env(tmp_path)
    template = Path(__file__).parents[1] / ".gitgauge-template" / "gitgauge.yaml"
    with isolated(tmp_path):
        plain = new_repo(tmp_path / "plain")
        plain.commit("Initial", files={"README.md": "# notes\n"})
        broken = new_repo(tmp_path / "broken")
        broken.commit("Initial", files={"package.json": '{"scripts": {"test": "mocha"\n'})
        said = {
            repo.root.name: run_gitgauge("init", cwd=repo.root, env=env) for repo in (plain, broken)
        }

    for name, result in said.items():
        assert result.returncode == 0, result.stderr
        written = (tmp_path / name / "gitgauge.yaml").read_text(encoding="utf-8")
        assert written == template.read_text(encoding="utf-8")
        looked = [line for line in result.stdout.splitlines() if line.startswith("init: ")]
        assert len(looked) == 1, result.stdout
        assert "looked for pytest's configuration" in looked[0]
    assert "a package.json with a test script running mocha" in said["plain"].stdout
    assert "package.json is not valid JSON (line 2: " in said["broken"].stdout


def test_init_env_that_cannot_make_an_environment_is_a_one_line_error(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    empty = tmp_path / "wheels"
    empty.mkdir()
    offline = dict(env, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty))
    offline.pop("PIP_EXTRA_INDEX_URL", None)
    tests = {"tests/test_calc.py": "def test_one():\n    pass\n"}
    with isolated(tmp_path):
        plain = new_repo(tmp_path / "plain")
        plain.commit("Initial", files={"README.md": "# notes\n"})
        too_new = python_repo(
            tmp_path / "new",
            {"pyproject.toml": '[project]\nname = "x"\nrequires-python = ">=3.99"\n', **tests},
        )
        missing = python_repo(
            tmp_path / "missing", {"requirements-test.txt": "ggnothere==1.0\n", **tests}
        )
        said = {
            "plain": run_gitgauge("init", "--env", cwd=plain.root, env=env),
            "too new": run_gitgauge("init", "--env", cwd=too_new.root, env=env),
            "missing": run_gitgauge("init", "--env", cwd=missing.root, env=offline),
        }

    for name, result in said.items():
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (name, lines)
    assert said["plain"].stderr.startswith(
        "gitgauge: error: init --env: found no test suite to configure: looked for "
    )
    assert (
        "requires-python >=3.99 (pyproject.toml [project]): no python on PATH meets it"
        in said["too new"].stderr
    )
    assert "installing into .gitgauge/env failed (exit 1): " in said["missing"].stderr
    assert "No matching distribution found for " in said["missing"].stderr
    for repo in (plain, too_new, missing):
        assert not (repo.root / "gitgauge.yaml").exists()
