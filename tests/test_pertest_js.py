"""Per-test verdicts for JavaScript suites with real mocha and tape, configured as the README's
table says: mocha's built-in xunit reporter writes JUnit XML where `$GITGAUGE_JUNIT_XML` points;
tape prints TAP, which gitgauge reads with nothing to configure. Each repository is mined and
run (gold, noop) through the CLI.

mocha and tape come from `$GITGAUGE_JS_RUNNERS` (a directory whose `node_modules` holds them:
`.ci/run` installs pinned versions there); a repository links that `node_modules` into every
worktree (`worktree.link`), as a project links its own. No test reaches the network.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.environment import isolated
from helpers.js_words import MOCHA_EXTRA, MOCHA_WORDS, commit_words, js_runners, linked_repo
from helpers.repos import GitRepo
from helpers.results import load_tasks

# Real mocha and tape suites under node: `-m "not slow"` leaves them out.
pytestmark = pytest.mark.slow

MOCHA_COMMAND = 'npx mocha --reporter xunit --reporter-options output="$GITGAUGE_JUNIT_XML"'
TAPE_COMMAND = "npx tape 'test/*.js'"

SIGN = "exports.sign = (x) => (x > 0) - (x < 0);\n"

MOCHA_ENV = (
    "describe('environment', () => {\n"
    "  it('is broken', () => { throw new Error('broken at every commit'); });\n});\n"
)
MOCHA_SIGN = """\
const assert = require('assert');
const { sign } = require('../src/sign.js');
describe('sign', () => {
  it('is negative', () => assert.strictEqual(sign(-3), -1));
  it('is positive', () => assert.strictEqual(sign(4), 1));
});
"""

TAPE_ENV = (
    "const test = require('tape');\ntest('environment', (t) => { t.fail('broken'); t.end(); });\n"
)
TAPE_WORDS = """\
const test = require('tape');
const { count } = require('../src/words.js');
test('counts words', (t) => { t.equal(count('a b'), 2); t.equal(count('a'), 1); t.end(); });
EXTRA"""
TAPE_EXTRA = (
    "test('ignores extra spaces', (t) => { t.equal(count(' a  b '), 2, 'two words'); t.end(); });\n"
)


@pytest.fixture(scope="module")
def node_modules() -> Path:
    return js_runners("node", "npx")


def js_repo(root: Path, modules: Path, test_command: str) -> GitRepo:
    repo = linked_repo(root, modules)
    config = {"testCommand": test_command, "worktree": {"link": ["node_modules"]}}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo


def cli_env(base: Path) -> dict[str, str]:
    private = base / "tmp"
    private.mkdir(exist_ok=True)
    # npx must use the linked node_modules, never the registry.
    return dict(os.environ, TMPDIR=str(private), npm_config_offline="true")


class Mined:
    def __init__(self, base: Path, repo: GitRepo, shas: dict[str, str], stdout: str, stderr: str):
        self.base, self.repo, self.shas = base, repo, shas
        self.stdout, self.stderr = stdout, stderr
        self.tasks = load_tasks(repo)

    def line(self, name: str) -> str:
        # Its verdict line, not a "still at it" progress line (printed under load).
        return next(
            line
            for line in self.stdout.splitlines()
            if self.shas[name][:8] in line and "(still at it, " not in line
        )


def mine(base: Path, repo: GitRepo, shas: dict[str, str]) -> Mined:
    result = run_gitgauge("mine", cwd=repo.root, env=cli_env(base))
    assert result.returncode == 0, result.stderr
    return Mined(base, repo, shas, result.stdout, result.stderr)


@contextmanager
def words_mined(
    base: Path,
    modules: Path,
    command: str,
    broken: tuple[str, str],
    words: tuple[str, str, str],
    more: Mapping[str, tuple[str, Mapping[str, str | bytes | None]]] | None = None,
) -> Iterator[Mined]:
    """A repository in `base` (isolated there) whose suite runs by `command`, mined: a count()
    that splits on single spaces, a test broken at every commit (`broken`: its path and text)
    and count's tests (`words`: path, text with EXTRA where the fix's new test goes, that test);
    the fix with its test ("words"); then `more` commits (key -> subject, files)."""
    with isolated(base):
        repo = js_repo(base / "repo", modules, command)
        added = {"package.json": '{"name": "words", "private": true}\n', broken[0]: broken[1]}
        shas = {"words": commit_words(repo, "Initial commit", added, words)}
        for key, (subject, files) in (more or {}).items():
            shas[key] = repo.commit(subject, files=files)
        yield mine(base, repo, shas)


@pytest.fixture(scope="module")
def mocha(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mined]:
    broken = ("test/env.spec.js", MOCHA_ENV)
    words = ("test/words.spec.js", MOCHA_WORDS, MOCHA_EXTRA)
    # At the parent mocha cannot load the new test file: it stops before any report.
    sign = ("Fix missing sign helper", {"src/sign.js": SIGN, "test/sign.spec.js": MOCHA_SIGN})
    base = tmp_path_factory.mktemp("mocha")
    with words_mined(base, node_modules, MOCHA_COMMAND, broken, words, {"sign": sign}) as mined:
        yield mined


def test_mocha_xunit_gives_per_test_verdicts(mocha: Mined) -> None:
    words = mocha.tasks[mocha.shas["words"]]
    assert words["failToPass"] == ["count::ignores extra spaces"]
    assert words["passToPass"] == 1
    assert words["failingBoth"] == ["environment::is broken"]
    assert words["notRunAtParent"] == 0
    assert "F2P 1 / P2P 1, 1 failing on both sides" in mocha.line("words")
    assert "JUnit XML" not in mocha.stderr


def test_mocha_that_cannot_load_the_new_file_at_the_parent_is_judged_by_the_fixs_tests(
    mocha: Mined,
) -> None:
    sign = mocha.tasks[mocha.shas["sign"]]
    assert sign["failToPass"] == ["sign::is negative", "sign::is positive"]
    assert sign["passToPass"] == 0
    assert sign["notRunAtParent"] == 2  # count's two tests
    assert "testCommand wrote no JUnit XML report at the parent (exit 1)" in mocha.line("sign")


@pytest.fixture(scope="module")
def tape(node_modules: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mined]:
    broken, words = ("test/env.js", TAPE_ENV), ("test/words.js", TAPE_WORDS, TAPE_EXTRA)
    base = tmp_path_factory.mktemp("tape")
    with words_mined(base, node_modules, TAPE_COMMAND, broken, words) as mined:
        yield mined


def test_tape_tap_gives_per_test_verdicts_named_by_test_not_assertion(tape: Mined) -> None:
    words = tape.tasks[tape.shas["words"]]
    assert words["failToPass"] == ["ignores extra spaces"]
    assert words["passToPass"] == 1  # counts words (two assertions, one test)
    assert words["failingBoth"] == ["environment"]
    assert words["failToPassOutsideFix"] is False
    assert "F2P 1 / P2P 1, 1 failing on both sides" in tape.line("words")
    assert tape.stderr.count("per-test outcomes are read from the TAP it prints") == 1


def results(root: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in (root / ".gitgauge" / "runs").glob("*/results/*/*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[f"{record['config']} {record['task']}"] = record
    return found


@pytest.mark.parametrize("suite", ["mocha", "tape"])
def test_gold_resolves_and_noop_does_not_per_test(
    suite: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    mined: Mined = request.getfixturevalue(suite)
    root = tmp_path / "repo"
    shutil.copytree(mined.repo.root, root, symlinks=True)
    configs = []
    for name in ("gold", "noop"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"name: {name}\nadapter: {name}\n", encoding="utf-8")
        configs += ["-c", str(path)]
    ran = run_gitgauge("run", *configs, cwd=root, env=cli_env(tmp_path))
    assert ran.returncode == 0, ran.stderr
    found = results(root)
    assert len(found) == 2 * len(mined.tasks)
    for key, result in found.items():
        task = next(task for task in mined.tasks.values() if task["id"] == result["task"])
        if key.startswith("gold "):
            assert result["status"] == "resolved", result
            assert (result["failToPassFailed"], result["regressed"]) == ([], False)
        elif task["id"].endswith("-fix-missing-sign-helper"):
            # Without src/sign.js mocha cannot load the test file: no report, the exit code
            # says unresolved, and regressions are unknown.
            assert result["status"] == "unresolved", result
            assert (result["failToPassFailed"], result["regressed"]) == (None, None)
        else:
            assert result["status"] == "unresolved", result
            assert result["failToPassFailed"] == task["failToPass"]
            assert result["regressed"] is False
