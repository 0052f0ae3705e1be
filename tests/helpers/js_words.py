"""The words project the JavaScript tests mine: a `count()` that splits on single spaces, then its
fix with a test of extra spaces; mocha's tests of it; and mocha and tape from
`$GITGAUGE_JS_RUNNERS` (a folder whose `node_modules` holds them: `.ci/run` installs pinned
versions there), linked into a repository as a project links its own."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from helpers.components import require
from helpers.repos import GitRepo, new_repo

RUNNERS_ENV = "GITGAUGE_JS_RUNNERS"
WORDS_BUGGY = "exports.count = (s) => s.split(' ').length;\n"
WORDS_FIXED = "exports.count = (s) => s.split(' ').filter(Boolean).length;\n"
MOCHA_WORDS = """\
const assert = require('assert');
const { count } = require('../src/words.js');
describe('count', () => {
  it('counts words', () => assert.strictEqual(count('a b'), 2));
EXTRA});
"""
"""count's mocha tests, with EXTRA where the fix's new test (`MOCHA_EXTRA`) goes."""
MOCHA_EXTRA = "  it('ignores extra spaces', () => assert.strictEqual(count(' a  b '), 2));\n"


def js_runners(*programs: str) -> Path:
    """`$GITGAUGE_JS_RUNNERS/node_modules`, which must hold mocha and tape, with `programs` on
    PATH: the test skips when they are missing (fails under CI=true)."""
    folder = os.environ.get(RUNNERS_ENV)
    modules = Path(folder) / "node_modules" if folder else None
    found = (
        modules is not None
        and all(shutil.which(program) for program in programs)
        and all((modules / name / "package.json").is_file() for name in ("mocha", "tape"))
    )
    require(found, f"{', '.join(programs)}, and mocha and tape in ${RUNNERS_ENV}/node_modules")
    assert modules is not None
    return modules


def linked_repo(root: Path, modules: Path) -> GitRepo:
    """An empty repository at `root` whose `node_modules` is a link to `modules`."""
    repo = new_repo(root)
    (repo.root / "node_modules").symlink_to(modules, target_is_directory=True)
    return repo


def commit_words(
    repo: GitRepo, subject: str, files: Mapping[str, str], tests: tuple[str, str, str]
) -> str:
    """Commit `subject`, adding count() (which splits on single spaces), `files`, a .gitignore of
    node_modules and count's tests (`tests`: their path, their text with EXTRA where the fix's
    new test goes, that test); then the fix with its new test. Returns the fix's sha."""
    path, text, extra = tests
    repo.commit(
        subject,
        files={
            ".gitignore": "node_modules\n",
            "src/words.js": WORDS_BUGGY,
            **files,
            path: text.replace("EXTRA", ""),
        },
    )
    return repo.commit(
        "Fix word count with extra spaces",
        files={"src/words.js": WORDS_FIXED, path: text.replace("EXTRA", extra)},
    )
