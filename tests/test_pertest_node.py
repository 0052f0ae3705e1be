"""Per-test verdicts with node's built-in test runner, which writes JUnit XML where
`$GITGAUGE_JUNIT_XML` points: a small JS repository whose suite has an always-failing test,
mined and run through the CLI. Skipped without node, except in CI (`CI=true`), which installs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.js_words import WORDS_BUGGY, WORDS_FIXED
from helpers.repos import new_repo
from helpers.results import load_tasks

# node's real test runner: `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

TEST_COMMAND = 'node --test --test-reporter=junit --test-reporter-destination="$GITGAUGE_JUNIT_XML"'
BROKEN = (
    "const test = require('node:test');\n"
    "test('environment', () => { throw new Error('broken at every commit'); });\n"
)
WORDS_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { count } = require('../src/words.js');\n"
    "test('counts words', () => assert.strictEqual(count('a b'), 2));\n"
    "test('ignores extra spaces', () => assert.strictEqual(count(' a  b '), 2));\n"
)


def node_with_junit() -> bool:
    node = shutil.which("node")
    if node is None:
        return False
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    major, minor = (int(part) for part in version.strip().lstrip("v").split(".")[:2])
    return (major, minor) >= (20, 13)


@pytest.fixture
def node_needed() -> None:
    if not node_with_junit():
        if os.environ.get("CI") == "true":
            pytest.fail("node 20.13+ is required in CI (.ci/run installs nodejs)")
        pytest.skip("node 20.13+ (with the junit test reporter) is not installed")


def test_node_test_runner_gives_per_test_verdicts(node_needed: None, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    repo.commit("Initial commit", files={"src/words.js": WORDS_BUGGY, "test/env.test.js": BROKEN})
    fix = repo.commit(
        "Fix word count with extra spaces",
        "count(' a  b ') said 5: empty strings between spaces were counted as words.",
        files={"src/words.js": WORDS_FIXED, "test/words.test.js": WORDS_TEST},
    )
    (repo.root / "gitgauge.yaml").write_text(
        yaml.safe_dump({"testCommand": TEST_COMMAND}), encoding="utf-8"
    )
    private = tmp_path / "tmp"
    private.mkdir()
    env = dict(os.environ, TMPDIR=str(private))
    mined = run_gitgauge("mine", cwd=repo.root, env=env)
    assert mined.returncode == 0, mined.stderr
    task = load_tasks(repo)[fix]
    assert task["failToPass"] == ["test::ignores extra spaces"]
    assert task["passToPass"] == 1  # counts words: passes at the parent too
    assert task["failingBoth"] == ["test::environment"]
    assert "F2P 1 / P2P 1" in mined.stdout

    gold = tmp_path / "gold.yaml"
    gold.write_text("name: gold\nadapter: gold\n", encoding="utf-8")
    ran = run_gitgauge("run", "-c", str(gold), cwd=repo.root, env=env)
    assert ran.returncode == 0, ran.stderr
    (result_file,) = (repo.root / ".gitgauge" / "runs").glob("*/results/gold/*.json")
    result = json.loads(result_file.read_text(encoding="utf-8"))
    assert result["status"] == "resolved"
    assert result["regressed"] is False
    assert result["failToPassFailed"] == [] and result["passToPassFailed"] == []
    assert os.listdir(private) == []
