"""A test parametrised over data files is the fix's own when its parameter names a data file the
fix added or changed, as in tomli (toml-test's files under `tests/data/`, run by one unchanged
`test_invalid[...]`): a real repository mined by the real CLI with real pytest. A fix whose
FAIL_TO_PASS names no file it changed is still flagged.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo, new_repo
from helpers.results import load_tasks, summary

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
WARNING = "the failing tests live in files the fix did not change: review it"


def parser(
    *, bare_cr: bool = False, comments: bool = False, empty_key: bool = False, inline: bool = False
) -> str:
    """One `key = value` a line; each flag is the rule one fix of the history repairs."""
    lines = ["def loads(text):", "    table = {}"]
    if bare_cr:
        lines += [
            '    if "\\r" in text.replace("\\r\\n", "\\n"):',
            '        raise ValueError("bare carriage return")',
        ]
    lines += ['    for line in text.split("\\n"):', "        line = line.strip()"]
    lines += ["        if not line:", "            continue"]
    if comments:
        lines += ['        if line.startswith("#"):', "            continue"]
    lines += ['        key, sep, value = line.partition("=")', "        if not sep:"]
    lines += ["            raise ValueError(f\"expected '=': {line!r}\")"]
    if empty_key:
        lines += ["        if not key.strip():", '            raise ValueError("empty key")']
    value = 'value.split("#")[0].strip()' if inline else "value.strip()"
    lines += [f"        table[key.strip()] = {value}", "    return table"]
    return "\n".join(lines) + "\n"


# tomli's layout: toml-test's files, each run by one parametrised test of an unchanged module.
# Invalid cases are named by their stem (tomli's ids), valid ones by their path under data/.
TEST_DATA = """\
import json
from pathlib import Path

import pytest
from minitoml import loads

DATA = Path(__file__).parent / "data"
VALID = sorted((DATA / "valid").glob("**/*.toml"))
INVALID = sorted((DATA / "invalid").glob("**/*.toml"))


@pytest.mark.parametrize("path", VALID, ids=[p.relative_to(DATA).as_posix() for p in VALID])
def test_valid(path):
    expected = json.loads(path.with_suffix(".json").read_text())
    assert loads(path.read_bytes().decode()) == expected


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid(path):
    with pytest.raises(ValueError):
        loads(path.read_bytes().decode())
"""


def toml_repo(root: Path) -> tuple[GitRepo, dict[str, str]]:
    """Three fixes that each add toml-test data files and repair the parser, a commit that adds
    a failing data file alone, then a fix for it that adds an unrelated data file."""
    repo = new_repo(root)
    repo.commit(
        "Initial commit",
        files={
            "pytest.ini": "[pytest]\npythonpath = src\n",
            "src/minitoml.py": parser(),
            "tests/test_data.py": TEST_DATA,
            "tests/data/valid/pair.toml": "a = 1\n",
            "tests/data/valid/pair.json": '{"a": "1"}\n',
            "tests/data/invalid/table/empty.toml": "[]\n",
        },
    )
    fixes = {
        "cr": repo.commit(
            "Fix bare carriage return accepted",
            files={
                "src/minitoml.py": parser(bare_cr=True),
                "tests/data/invalid/carriage-return.toml": b"a = 1\rb = 2\n",
            },
        ),
        "comment": repo.commit(
            "Fix comment lines rejected",
            files={
                "src/minitoml.py": parser(bare_cr=True, comments=True),
                "tests/data/valid/comment.toml": "# a comment\na = 1\n",
                "tests/data/valid/comment.json": '{"a": "1"}\n',
            },
        ),
        # A second `empty.toml`: pytest numbers the repeated ids, `empty0` and `empty1`.
        "key": repo.commit(
            "Fix empty key accepted",
            files={
                "src/minitoml.py": parser(bare_cr=True, comments=True, empty_key=True),
                "tests/data/invalid/key/empty.toml": "= 1\n",
            },
        ),
    }
    repo.commit(
        "Add an inline comment case",
        files={
            "tests/data/valid/inline-comment.toml": "a = 1 # note\n",
            "tests/data/valid/inline-comment.json": '{"a": "1"}\n',
        },
    )
    fixes["inline"] = repo.commit(
        "Fix inline comments kept in values",
        files={
            "src/minitoml.py": parser(bare_cr=True, comments=True, empty_key=True, inline=True),
            "tests/data/valid/spaces.toml": "  b  =  2  \n",
            "tests/data/valid/spaces.json": '{"b": "2"}\n',
        },
    )
    config = {"testCommand": PYTEST, "mine": {"reruns": 0}}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return repo, fixes


def line_of(stdout: str, sha: str) -> str:
    return next(
        line for line in stdout.splitlines() if sha[:8] in line and "(still at it, " not in line
    )


def mine(repo: GitRepo, tmp_path: Path) -> Any:
    private = tmp_path / "tmp"
    private.mkdir(exist_ok=True)
    return run_gitgauge("mine", cwd=repo.root, env=dict(os.environ, TMPDIR=str(private)))


def test_a_test_run_on_a_data_file_the_fix_added_is_its_own(tmp_path: Path) -> None:
    repo, fixes = toml_repo(tmp_path / "repo")
    result = mine(repo, tmp_path)
    assert result.returncode == 0, result.stderr
    tasks = load_tasks(repo)
    assert set(tasks) == set(fixes.values()), result.stdout
    own = {
        "cr": ["tests.test_data::test_invalid[carriage-return]"],  # the stem
        "comment": ["tests.test_data::test_valid[valid/comment.toml]"],  # a path under data/
        "key": ["tests.test_data::test_invalid[empty0]"],  # the stem, numbered by pytest
    }
    for name, fail_to_pass in own.items():
        task = tasks[fixes[name]]
        assert task["failToPass"] == fail_to_pass, name
        assert task["failToPassOutsideFix"] is False, name
        line = line_of(result.stdout, fixes[name])
        assert "did not change" not in line and "review it" not in line, line
    # The inline comment's case came in an earlier commit: the fix's own data file passes on
    # both sides, and the test that fails before it runs a file the fix did not change.
    inline = tasks[fixes["inline"]]
    assert inline["failToPass"] == ["tests.test_data::test_valid[valid/inline-comment.toml]"]
    assert inline["failToPassOutsideFix"] is True
    assert WARNING in line_of(result.stdout, fixes["inline"])
    assert summary(result.stdout)["FAIL_TO_PASS in files the fix did not change"].startswith("1 ")
