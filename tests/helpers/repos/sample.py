"""The mining tests' small sample project, and how to configure and mine it.

The sample's test command is `sh run_tests.sh`, which runs `run_tests.py`: every `test_*`
function of `tests/test_*.py`, with `src/` importable. Before running anything the runner appends
one JSON line to `$MINE_JOURNAL` saying where it ran (commit, directory, which test files it saw,
whether `deps/` was linked and the setup step ran), so tests can assert what was verified, where,
and with which files, not only what the summary says.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from helpers.repos import GitRepo, runner_source

RUN_TESTS_SH = 'exec "${MINE_PYTHON:-python3}" run_tests.py\n'
BROKEN_RUN_TESTS_SH = "exec gitgauge-no-such-test-runner\n"

RUN_TESTS_PY = runner_source(
    '''\
"""The sample project's test runner: every test_* function in tests/test_*.py."""
import json
import os
import runpy
import subprocess
import sys
import traceback
from pathlib import Path

marker = Path("deps/marker.txt")
record = {
    "head": subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip(),
    "cwd": os.getcwd(),
    "tests": sorted(
        p.as_posix() for p in Path("tests").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ),
    "deps": marker.read_text() if marker.exists() else None,
    "depsIsLink": os.path.islink("deps"),
    "setupDone": os.path.exists(".setup-done"),
}
if os.environ.get("MINE_JOURNAL"):
    with open(os.environ["MINE_JOURNAL"], "a", encoding="utf-8") as journal:
        journal.write(json.dumps(record) + "\\n")
if record["deps"] is None:
    sys.exit("deps/ is not linked into this checkout")
sys.path.insert(0, os.path.abspath("src"))
'''
)

SETUP_PY = 'from pathlib import Path\n\nPath(".setup-done").write_text("ok")\n'
BROKEN_SETUP_PY = 'raise SystemExit("setup is broken at this commit")\n'

DEPS_MARKER = "linked from the main checkout"

TEST_COMMAND = "sh run_tests.sh"
SETUP_COMMAND = '"${MINE_PYTHON:-python3}" setup_check.py'


def sample_root_files() -> dict[str, str | bytes | None]:
    return {
        "README.md": "# sample\n",
        "run_tests.sh": RUN_TESTS_SH,
        "run_tests.py": RUN_TESTS_PY,
        "setup_check.py": SETUP_PY,
        "src/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": (
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        ),
    }


def write_config(
    repo: GitRepo,
    *,
    test_command: str = TEST_COMMAND,
    setup_command: str | None = SETUP_COMMAND,
    link: list[str] | None = None,
    test_timeout_ms: int | None = None,
    last: int | None = None,
    reruns: int | None = 0,
    passed: tuple[str, ...] = (),
) -> None:
    """An untracked gitgauge.yaml in the user's checkout, as `gitgauge init` leaves it;
    `passed` names more variables of gitgauge's environment for the suite.
    `reruns` defaults to 0 here: these tests count the suite runs of exit-code verification."""
    config: dict[str, Any] = {"testCommand": test_command}
    if setup_command is not None:
        config["setupCommand"] = setup_command
    mine: dict[str, int] = {}
    if last is not None:
        mine["last"] = last
    if reruns is not None:
        mine["reruns"] = reruns
    if mine:
        config["mine"] = mine
    if test_timeout_ms is not None:
        config["timeouts"] = {"test": test_timeout_ms}
    config["worktree"] = {"link": ["deps"] if link is None else link}
    # The sample's runner reads these; a suite gets no variable its config does not name.
    config["env"] = dict.fromkeys(["MINE_JOURNAL", "MINE_PYTHON", *passed])
    # No sandbox: the sample's runner writes its journal outside the checkout, which the
    # sandbox hides (mining in the sandbox has tests of its own, in tests/test_sandbox.py).
    config["run"] = {"sandbox": "none"}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    # The runner insists on the linked directory: a verified task proves linking worked.
    repo.write("deps/marker.txt", DEPS_MARKER)


def mine_env(journal: Path, **extra: str) -> dict[str, str]:
    """The environment for `gitgauge mine`: TMPDIR is a private directory next to the journal,
    so what gitgauge leaves in it was left by this test (the machine's /tmp is shared)."""
    temp_dir = journal.parent / "tmp"
    temp_dir.mkdir(exist_ok=True)
    env = dict(
        os.environ, MINE_JOURNAL=str(journal), MINE_PYTHON=sys.executable, TMPDIR=str(temp_dir)
    )
    env.update(extra)
    return env


def leftovers(journal: Path) -> list[str]:
    """What gitgauge left in the private TMPDIR of `mine_env(journal)`."""
    return sorted(p.name for p in (journal.parent / "tmp").iterdir())


def checkout_state(repo: GitRepo) -> dict[str, str]:
    """`GitRepo.snapshot()` less gitgauge's own state directory, which mine is meant to fill."""
    state = repo.snapshot()
    state["status"] = "\n".join(
        line for line in state["status"].splitlines() if not line[3:].startswith(".gitgauge/")
    )
    return state


@dataclass(frozen=True)
class Fix:
    """A helper commit with a bug, then the commit that fixes it."""

    bug: str
    fix: str


def add_then_fix(
    repo: GitRepo,
    *,
    name: str,
    buggy: str,
    fixed: str,
    test: str,
    subject: str,
    body: str = "",
) -> Fix:
    """`src/<name>.py` arrives buggy and untested; the fix corrects it and adds its test."""
    bug = repo.commit(f"Add {name} helper", files={f"src/{name}.py": buggy})
    fix = repo.commit(subject, body, files={f"src/{name}.py": fixed, f"tests/test_{name}.py": test})
    return Fix(bug, fix)


@dataclass(frozen=True)
class OneLineFix:
    """A helper of one function, `def <signature>: return <expression>`, whose fix changes the
    expression and adds a test of one assert: what `add_then_fix` commits, said in its parts."""

    signature: str
    """`name(arguments)`; the module is `src/<name>.py`."""
    buggy: str
    fixed: str
    """The returned expression before and after the fix."""
    test: str
    """The test's name less `test_`."""
    check: str
    """The test's assert."""

    @property
    def sources(self) -> dict[str, str]:
        """`add_then_fix`'s `name`, `buggy`, `fixed` and `test`."""
        name = self.signature.split("(", 1)[0]
        return {
            "name": name,
            "buggy": f"def {self.signature}:\n    return {self.buggy}\n",
            "fixed": f"def {self.signature}:\n    return {self.fixed}\n",
            "test": f"from {name} import {name}\n\n\ndef test_{self.test}():\n"
            f"    assert {self.check}\n",
        }

    def commit(self, repo: GitRepo, subject: str, body: str = "") -> Fix:
        return add_then_fix(repo, **self.sources, subject=subject, body=body)
