"""`gitgauge doctor` on repositories built to fail each of its checks, asserting the line it
prints for each: a wrong command, a src layout without its path, no tests collected, a conftest
that crashes pytest, a command that fails after its tests all passed (and what mine would spend
per candidate), an activated `.venv` inside the repository that the sandbox hides, linked
editable installs, tests that import the worktree, no bubblewrap, claude absent or not logged in.
`tests/test_doctor_probe.py` has `doctor -c CONFIG --probe`.

One small src-layout project (a real pytest suite) per module; each test changes only its
gitgauge.yaml (or adds a directory) in a copy of it, then runs the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require, require_bwrap
from helpers.environment import isolate
from helpers.repos import GitRepo, new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

CALC = "def add(a, b):\n    return a + b\n"
TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_add_zero():\n    assert add(0, 4) == 4\n"
)
PYTHON = sys.executable  # has pytest: the interpreter a user's activated venv would give


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    base = tmp_path_factory.mktemp("doctor")
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        root = base / "project"
        repo = new_repo(root)
        repo.commit(
            "Initial",
            files={"src/calc.py": CALC, "tests/test_calc.py": TESTS, "README.md": "# calc\n"},
        )
    return repo


@pytest.fixture
def repo(project: GitRepo, tmp_path: Path) -> GitRepo:
    copy = tmp_path / "project"
    shutil.copytree(project.root, copy, symlinks=True)
    return GitRepo(copy)


def configure(repo: GitRepo, **config: object) -> None:
    config.setdefault("testCommand", f"PYTHONPATH=src {PYTHON} -m pytest -q")
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def doctor(repo: GitRepo, **env: str) -> tuple[int, list[str]]:
    result = run_gitgauge("doctor", cwd=repo.root, env={**os.environ, **env})
    assert result.stderr == "", result.stderr
    return result.returncode, result.stdout.splitlines()


def line(lines: list[str], start: str) -> str:
    found = [text for text in lines if text.startswith(start)]
    assert found, f"no line starting {start!r} in:\n" + "\n".join(lines)
    return found[0]


def test_a_working_src_layout_passes_every_check(repo: GitRepo) -> None:
    configure(repo)
    code, lines = doctor(repo)
    assert code == 0, "\n".join(lines)
    assert line(lines, "ok    git version ")
    assert line(lines, "ok    gitgauge.yaml loads: testCommand ")
    assert "2 tests ran, 2 passed" in line(lines, "ok    testCommand at HEAD (")
    assert line(lines, "ok    per-test reports arrive (JUnit XML, naming 2 tests)")
    ran = lines.index(line(lines, "ok    testCommand at HEAD ("))
    assert (
        "mine runs the suite up to 4 times per candidate (2 at the fix and 2 at its "
        in (lines[ran + 1])
    )
    assert line(lines, "ok    the tests import the project from the checkout (src/calc.py")
    assert lines[-1] == "doctor: `gitgauge mine` should work here"
    if shutil.which("bwrap") or os.environ.get("CI") == "true":
        require(shutil.which("bwrap") is not None, "bubblewrap")
        sandbox = line(lines, "ok    sandbox: bubblewrap works")
        assert "in the sandbox" in line(lines, "ok    testCommand at HEAD (")
        assert sandbox
        assert f"      hidden: your repository ({repo.root}) and its git directory" in lines


def test_doctor_names_what_the_suite_will_not_see(repo: GitRepo) -> None:
    """A variable the suite needs but gitgauge withholds fails the suite at HEAD; doctor names
    it, and once `env:` passes it the suite sees it (and no secret otherwise)."""
    repo.write(
        "tests/test_env.py", "import os\n\n\ndef test_db():\n    assert os.environ['SUITE_DB']\n"
    )
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Test the database setting")
    configure(repo)
    _, lines = doctor(repo, SUITE_DB="sqlite://", DEPLOY_TOKEN="very-secret-value")
    said = line(lines, "info  environment: the suite does not see ")
    assert "SUITE_DB" in said and "DEPLOY_TOKEN" in said and "look secret" in said
    assert "very-secret-value" not in "\n".join(lines)
    assert "3 tests ran, 2 passed" in line(lines, "warn  testCommand at HEAD ("), lines
    configure(repo, env={"SUITE_DB": None})
    code, lines = doctor(repo, SUITE_DB="sqlite://", DEPLOY_TOKEN="very-secret-value")
    assert code == 0, "\n".join(lines)
    assert "3 tests ran, 3 passed" in line(lines, "ok    testCommand at HEAD ("), lines
    assert "SUITE_DB" not in line(lines, "info  environment: the suite does not see ")


def test_no_config_says_to_run_init(repo: GitRepo) -> None:
    code, lines = doctor(repo)
    assert code == 1
    assert line(lines, "FAIL  ").endswith(
        "gitgauge.yaml not found: run `gitgauge init`, then set testCommand in it"
    )


def test_a_command_that_does_not_exist(repo: GitRepo) -> None:
    configure(repo, testCommand="gitgauge-no-such-runner -q")
    code, lines = doctor(repo)
    assert code == 1
    failed = line(lines, "FAIL  testCommand did not start at HEAD (")
    assert failed.endswith(": exit 127")
    assert "not found" in lines[lines.index(failed) + 1]
    assert lines[-1] == "doctor: 1 problem(s) marked FAIL: `gitgauge mine` would not work yet"


def test_a_src_layout_without_its_path(repo: GitRepo) -> None:
    configure(repo, testCommand=f"{PYTHON} -m pytest -q")
    code, lines = doctor(repo)
    assert code == 1
    assert "passed 0" not in line(lines, "FAIL  testCommand at HEAD (")
    assert ", 0 passed (" in line(lines, "FAIL  testCommand at HEAD (")
    assert line(lines, "      the tests cannot import 'calc', which is in src/: ").endswith(
        "so set `PYTHONPATH=src` in testCommand (`PYTHONPATH=src python -m pytest -q`), or "
        "install the checkout in setupCommand"
    )


def test_no_tests_collected(repo: GitRepo) -> None:
    configure(repo, testCommand=f"PYTHONPATH=src {PYTHON} -m pytest -q -k no_test_has_this_name")
    code, lines = doctor(repo)
    assert code == 1
    assert line(lines, "FAIL  testCommand ran no test at HEAD (").endswith(
        "(exit 5: the JUnit XML report lists no tests)"
    )


def _editable_venv(repo: GitRepo, import_path: Path) -> None:
    """A linked `.venv` whose site-packages holds an editable install's `.pth`, as
    `pip install -e .` writes it (src layout)."""
    site = repo.root / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "__editable__.calc-0.1.pth").write_text(f"{import_path}\n", encoding="utf-8")
    (repo.root / ".gitignore").write_text(".venv/\nbuild/\n", encoding="utf-8")


def test_a_linked_editable_install_is_redirected_to_each_checkout(repo: GitRepo) -> None:
    _editable_venv(repo, repo.root / "src")
    # No PYTHONPATH: the redirection alone makes the checkout's src/ importable.
    configure(repo, testCommand=f"{PYTHON} -m pytest -q", worktree={"link": [".venv"]})
    code, lines = doctor(repo)
    assert code == 0, "\n".join(lines)
    assert line(lines, "ok    worktree.link: .venv linked read-only into every checkout")
    assert line(
        lines, "info  .venv/lib/python3.11/site-packages/__editable__.calc-0.1.pth"
    ).endswith("imports from your checkout (src); each worktree uses its own copy instead")
    assert line(lines, "ok    the tests import the project from the checkout (src/calc.py")


def test_a_linked_editable_install_of_an_untracked_directory(repo: GitRepo) -> None:
    (repo.root / "build" / "lib").mkdir(parents=True)
    _editable_venv(repo, repo.root / "build" / "lib")
    configure(repo, worktree={"link": [".venv"]})
    code, lines = doctor(repo)
    assert code == 1
    failed = line(lines, "FAIL  worktree.link: .venv/lib/python3.11/site-packages/__editable__")
    assert "which git does not track" in failed
    assert "install into the worktree with setupCommand" in failed


def test_tests_that_import_the_worktree_instead_of_the_checkout(repo: GitRepo) -> None:
    # An absolute PYTHONPATH (as an editable install of the working tree gives) outside the
    # sandbox: the suite passes, on today's code.
    configure(
        repo,
        testCommand=f"PYTHONPATH={repo.root / 'src'} {PYTHON} -m pytest -q",
        run={"sandbox": "none"},
    )
    code, lines = doctor(repo)
    assert code == 1
    assert line(lines, "info  run.sandbox: none: tests and agents run unsandboxed")
    assert line(
        lines, "FAIL  the tests import your worktree's files, not the checkout's: "
    ).endswith("src/calc.py")


@pytest.mark.parametrize("mode", ["bwrap", "auto"])
def test_no_bubblewrap(repo: GitRepo, mode: str) -> None:
    configure(repo, run={"sandbox": mode})
    code, lines = doctor(repo, GITGAUGE_BWRAP=str(repo.root / "no-such-bwrap"))
    missing = "bubblewrap is not installed (no `bwrap` on PATH): install bubblewrap"
    if mode == "bwrap":
        assert code == 1
        assert missing in line(lines, "FAIL  run.sandbox: bwrap, and the sandbox cannot run: ")
        assert not any(
            text.startswith(("ok    testCommand", "FAIL  testCommand")) for text in lines
        )
    else:
        assert code == 0, "\n".join(lines)
        assert missing in line(lines, "warn  no sandbox: ")
        assert (
            "mine and run go on unsandboxed"
            in lines[lines.index(line(lines, "warn  no sandbox")) + 1]
        )
        assert "in the sandbox" not in line(lines, "ok    testCommand at HEAD (")


def test_claude_absent_or_not_logged_in(repo: GitRepo, tmp_path: Path) -> None:
    configure(repo, run={"sandbox": "none"})
    code, lines = doctor(repo, GITGAUGE_CLAUDE_BIN=str(tmp_path / "no-claude"))
    assert code == 0  # mining needs no agent
    assert line(lines, "warn  claude-code: no `claude` on PATH (GITGAUGE_CLAUDE_BIN names another)")

    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    fake.chmod(0o755)
    home = Path(os.environ["HOME"])
    code, lines = doctor(repo, GITGAUGE_CLAUDE_BIN=str(fake))
    assert line(lines, f"warn  claude-code: {fake}, not logged in (no ANTHROPIC_API_KEY, no ")
    assert lines[lines.index(line(lines, "warn  claude-code")) + 1].strip() == (
        "run `claude` once and log in, or set ANTHROPIC_API_KEY"
    )

    credentials = home / ".claude" / ".credentials.json"
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text("{}", encoding="utf-8")
    code, lines = doctor(repo, GITGAUGE_CLAUDE_BIN=str(fake))
    assert line(lines, f"ok    claude-code: {fake}, logged in ({credentials})")
    code, lines = doctor(repo, GITGAUGE_CLAUDE_BIN=str(fake), ANTHROPIC_API_KEY="sk-test")
    assert line(lines, f"ok    claude-code: {fake}, key in ANTHROPIC_API_KEY")


def test_a_conftest_that_crashes_pytest_is_said_as_a_crash(repo: GitRepo) -> None:
    """pytest stops before any test (exit 4, no report): doctor names the crash and what it
    printed, not the report option."""
    repo.commit("Add a conftest", files={"tests/conftest.py": "import no_such_module_here\n"})
    configure(repo)
    code, lines = doctor(repo)
    assert code == 1
    failed = line(lines, "FAIL  testCommand crashed before running any test at HEAD (")
    assert failed.endswith("(exit 4)")
    assert "no_such_module_here" in lines[lines.index(failed) + 1]
    assert not [text for text in lines if "no per-test reports" in text], lines


def test_a_suite_that_fails_after_its_tests_pass_is_a_warning_with_its_cost(repo: GitRepo) -> None:
    """Every test passes and the command exits 1 (a linter, npm's posttest): mining works,
    test by test, but pays for it on every run; doctor says so with the runs per candidate."""
    configure(repo, testCommand=f"PYTHONPATH=src {PYTHON} -m pytest -q; exit 1", mine={"reruns": 2})
    code, lines = doctor(repo)
    assert code == 0, "\n".join(lines)  # verdicts are per test: mine works, slower
    warned = line(lines, "warn  testCommand at HEAD (")
    assert "2 tests ran, 2 passed (" in warned and warned.endswith(", exit 1)")
    at = lines.index(warned)
    assert lines[at + 1].strip() == (
        "something after the tests fails (npm's posttest? a linter?): make testCommand run "
        "only the tests"
    )
    cost = lines[at + 2].strip()
    assert cost.startswith("this run took "), lines
    assert (
        "mine runs the suite up to 6 times per candidate (3 at the fix and 3 at its parent, "
        "mine.reruns: 2): about " in cost
    ), cost
    assert cost.endswith(" per candidate")
    assert line(lines, "ok    per-test reports arrive (JUnit XML, naming 2 tests)")


def test_npm_test_with_a_failing_posttest_names_the_script(tmp_path: Path) -> None:
    """qs's `npm test`: the tests pass, then a posttest fails; doctor names package.json's
    scripts and the command that runs the test script alone."""
    require(shutil.which("npm") is not None and shutil.which("node") is not None, "node and npm")
    scripts = {"test": "node --test test/", "posttest": 'node -e "process.exit(1)"'}
    project = new_repo(tmp_path / "js")
    project.commit(
        "Initial",
        files={
            "package.json": json.dumps({"name": "t", "version": "1.0.0", "scripts": scripts}),
            "test/add.test.js": (
                "const test = require('node:test');\nconst assert = require('node:assert');\n"
                "test('adds', () => assert.strictEqual(1 + 1, 2));\n"
                "test('subtracts', () => assert.strictEqual(2 - 1, 1));\n"
            ),
        },
    )
    (project.root / "gitgauge.yaml").write_text("testCommand: npm test\n", encoding="utf-8")
    code, lines = doctor(project)
    assert code == 0, "\n".join(lines)
    warned = line(lines, "warn  testCommand at HEAD (")
    assert "2 tests ran, 2 passed (" in warned and warned.endswith(", exit 1)")
    assert line(lines, "      `npm test` also runs package.json's posttest (").endswith(
        "`testCommand: npm test --ignore-scripts` runs the test script ('node --test test/') alone"
    )
    assert line(lines, "ok    per-test reports arrive (TAP on stdout, naming 2 tests)")
    assert "node: " in line(lines, "ok    interpreter ")


def _venv_inside(repo: GitRepo) -> Path:
    """An activated-looking `.venv` in the repository (ignored by git) whose python imports
    this interpreter's packages (pytest) through a `.pth`, as an installed venv would."""
    venv = repo.root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    (repo.root / ".gitignore").write_text(".venv/\n", encoding="utf-8")
    return venv


def test_an_activated_venv_inside_the_repository_is_named_with_its_link(repo: GitRepo) -> None:
    """tomli's case: the sandbox hides the repository, so the activated `.venv`'s python is not
    there and `python` silently becomes the next one on PATH. Doctor compares the interpreter
    in the sandbox with the one outside and names the `worktree.link` that brings it back."""
    require_bwrap()
    venv = _venv_inside(repo)
    path = (
        f"{venv / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    activated = {"PATH": path, "VIRTUAL_ENV": str(venv)}
    configure(repo, testCommand="PYTHONPATH=src python -m pytest -q")
    code, lines = doctor(repo, **activated)
    assert code == 1, "\n".join(lines)
    failed = line(lines, "FAIL  interpreter: in the sandbox `python` is ")
    assert f"outside it {venv / 'bin' / 'python'} (" in failed
    assert failed.endswith("(and python3 likewise)")
    assert (
        f"PATH's {venv.resolve() / 'bin'} lies inside your repository"
        in (lines[lines.index(failed) + 1])
    )
    assert "add `worktree.link: [.venv]` to gitgauge.yaml" in lines[lines.index(failed) + 1]

    configure(repo, testCommand="PYTHONPATH=src python -m pytest -q", worktree={"link": [".venv"]})
    code, lines = doctor(repo, **activated)
    assert code == 0, "\n".join(lines)
    same = line(lines, "ok    interpreter in the sandbox, as outside it: python: ")
    assert same.startswith(
        f"ok    interpreter in the sandbox, as outside it: python: {venv}/bin/python ("
    )
    assert "2 tests ran, 2 passed" in line(lines, "ok    testCommand at HEAD (")
