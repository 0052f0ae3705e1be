"""A sample project that reads its version from git, as setuptools-scm, versioneer and every
`git describe`-based build do, and whose suite asserts that version: without the tags of its
own history it reads `0.1.devN` and fails at every commit (tests/test_tags.py,
tests/test_tag_checkouts.py).

Its history has an annotated tag, a tag of that tag, a lightweight tag on a merged side branch,
a tag on a side branch never merged, tags of a tree and of a blob (on no commit), and tags on
the fix and on a later commit (which would show the answer). Each time its suite runs it
records what git showed it (HEAD, `git tag`, `git describe --tags`, setuptools-scm's version) in
a file of its own in `$TAGS_SEEN` (when set: the sandbox hides that folder); `LISTER` is an
agent's script that records what its workspace's git shows.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from helpers.repos import GitRepo, new_repo

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "tagged"
dynamic = ["version"]

[tool.setuptools_scm]

[tool.pytest.ini_options]
pythonpath = ["src"]
"""
# The project's own test of its version: the nearest tag (`git describe --tags`, versioneer's
# way) and, where it is installed, setuptools-scm's version, both at least the version of the
# base's tag. What git showed it goes to a file of its own in $TAGS_SEEN.
VERSION_TEST = """\
import json
import os
import subprocess
import uuid
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def git(*args):
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def scm_version():
    try:
        from setuptools_scm import get_version
    except ImportError:
        return None
    return get_version(root=str(ROOT))


def test_the_version_read_from_git():
    seen = {
        "head": git("rev-parse", "HEAD"),
        "tags": sorted(git("tag", "--list").split()),
        "describe": git("describe", "--tags", "--abbrev=0"),
        "scm": scm_version(),
    }
    if os.environ.get("TAGS_SEEN"):  # not in the sandbox, which hides the folder
        Path(os.environ["TAGS_SEEN"], uuid.uuid4().hex + ".json").write_text(json.dumps(seen))
    assert Version(seen["describe"].removeprefix("v").split("-")[0]) >= Version("1.1")
    if seen["scm"] is not None:
        assert Version(seen["scm"]) >= Version("1.1")
"""
CLAMP_BUGGY = "def clamp(x, low, high):\n    return max(low, x)\n"
CLAMP_FIXED = "def clamp(x, low, high):\n    return max(low, min(x, high))\n"
CLAMP_TEST = (
    "from tagged.clamp import clamp\n\n\ndef test_clamp_high():\n    assert clamp(9, 0, 5) == 5\n"
)
VISIBLE_AT_BASE = ["v1.0.0", "v1.0.0-signed", "v1.0.1-side", "v1.1.0"]
"""The tags in the fix's parent's history: annotated, a tag of that tag, a lightweight tag on a
merged side branch, a lightweight tag."""


@dataclass
class Sample:
    repo: GitRepo
    fix: str
    base: str
    seen: Path
    """Where the sample's suite records what git showed it."""
    env: dict[str, str]


def build(base: Path, *, sandbox: str = "none") -> Sample:
    repo = new_repo(base / "repo")
    repo.commit(
        "Initial commit",
        files={
            "pyproject.toml": PYPROJECT,
            "src/tagged/__init__.py": "",
            "tests/test_version.py": VERSION_TEST,
            "README": "tagged\n",
            ".gitignore": "__pycache__/\n.pytest_cache/\n",
        },
    )
    repo.git("tag", "-a", "v1.0.0", "-m", "the first release")
    repo.git("-c", "advice.nestedTag=false", "tag", "-a", "v1.0.0-signed", "-m", "again", "v1.0.0")
    repo.git("switch", "-q", "-c", "side")
    repo.commit("Add a changelog", files={"CHANGES": "1.0.1: a changelog\n"})
    repo.git("tag", "v1.0.1-side")
    repo.git("switch", "-q", "main")
    repo.merge(["side"], "Merge the changelog")
    repo.git("switch", "-q", "-c", "unmerged")
    repo.commit("An experiment never merged", files={"EXPERIMENT": "no\n"})
    repo.git("tag", "v9.9.9-unmerged")
    repo.git("switch", "-q", "main")
    base_sha = repo.commit("Add clamp helper", files={"src/tagged/clamp.py": CLAMP_BUGGY})
    repo.git("tag", "v1.1.0")
    # Tags of no commit: `git tag --merged` leaves them out, and nothing may break on them.
    repo.git("tag", "a-tree", "HEAD^{tree}")
    repo.git("tag", "-a", "a-blob", "-m", "the readme", "HEAD:README")
    fix = repo.commit(
        "Fix clamp ignoring the upper bound",
        "clamp(9, 0, 5) returned 9: the upper bound was never applied.",
        files={"src/tagged/clamp.py": CLAMP_FIXED, "tests/test_clamp.py": CLAMP_TEST},
    )
    repo.git("tag", "-a", "v1.2.0", "-m", "the release with the fix")
    repo.commit("Describe clamp", files={"README": "tagged: clamp(x, low, high)\n"})
    repo.git("tag", "v1.3.0")
    config = {
        "testCommand": f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider",
        # No sandbox by default: the suite records what it saw in a folder outside the checkout.
        "run": {"sandbox": sandbox},
        "env": {"TAGS_SEEN": None},
    }
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    seen = base / "seen"
    seen.mkdir()
    private = base / "tmp"
    private.mkdir()
    env = dict(os.environ, TAGS_SEEN=str(seen), TMPDIR=str(private))
    return Sample(repo, fix, base_sha, seen, env)


def merged(repo: GitRepo, commit: str) -> list[str]:
    """`git tag --merged`, asked of the user's repository by the test's own git."""
    return sorted(repo.git("tag", "--merged", commit).split())


def drain(folder: Path) -> list[dict[str, Any]]:
    """The suite's records since the last drain (removed: the next step starts empty)."""
    records = []
    for path in sorted(folder.iterdir()):
        records.append(json.loads(path.read_text(encoding="utf-8")))
        path.unlink()
    return records


LISTER = """\
import json, subprocess, sys
def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)
seen = {
    "tags": sorted(git("tag", "--list").stdout.split()),
    "describe": git("describe", "--tags").stdout.strip(),
    "released": git("cat-file", "-t", "v1.0.0").stdout.strip(),
    "future": git("cat-file", "-t", sys.argv[2]).returncode,
    "refs": git("for-each-ref", "--format=%(refname)").stdout.split(),
}
open(sys.argv[1], "w").write(json.dumps(seen))
"""
