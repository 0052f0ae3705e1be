"""Real repositories for the tests, built with the git CLI directly (never with gitgauge's own
git module), commits at pinned names and dates so SHAs are stable; and the test runner their
sample projects commit.

The builders of whole sample histories are beside this: `chains` (file-commit chains of each
kind), `merges` (merges of each kind) and `sample` (the mining sample project).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GitRepo:
    """A real repository built with the git CLI, commits at pinned dates."""

    root: Path
    _tick: int = field(default=0)

    def git(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def write(self, path: str, text: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")

    def delete(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(
        self,
        subject: str,
        body: str = "",
        files: Mapping[str, str | bytes | None] | None = None,
    ) -> str:
        """Write (None: delete) `files`, stage everything, commit; return the full sha."""
        for path, content in (files or {}).items():
            if content is None:
                self.delete(path)
            else:
                self.write(path, content)
        self.git("add", "-A")
        self._tick += 1
        stamp = f"2024-01-01T{self._tick // 60:02d}:{self._tick % 60:02d}:00+00:00"
        message = f"{subject}\n\n{body}" if body else subject
        self._commit(["--allow-empty", "-m", message], stamp)
        return self.git("rev-parse", "HEAD").strip()

    def merge(
        self,
        branches: list[str],
        message: str,
        *,
        resolved: dict[str, str | None] | None = None,
        day: str = "2024-01-01",
        hour: int = 0,
    ) -> str:
        """Merge `branches` into the current branch with `--no-ff`, on `day` at `hour` (the
        minute counts the repository's commits); a conflict is resolved by writing `resolved`
        (None: delete) and committing. Returns the merge's sha."""
        self._tick += 1
        stamp = f"{day}T{hour:02d}:{self._tick % 60:02d}:00+00:00"
        merged = subprocess.run(
            ["git", "merge", "--no-ff", "-q", "-m", message, *branches],
            cwd=self.root,
            env=dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp),
            capture_output=True,
            text=True,
        )
        for path, content in (resolved or {}).items():
            if content is None:
                if (self.root / path).exists():
                    self.delete(path)
            else:
                self.write(path, content)
        self.git("add", "-A")
        if (self.root / ".git" / "MERGE_HEAD").exists():
            self._commit(["--no-edit"], stamp)
        elif merged.returncode != 0:
            raise AssertionError(f"git merge {' '.join(branches)} failed: {merged.stderr}")
        return self.git("rev-parse", "HEAD").strip()

    def _commit(self, args: list[str], stamp: str) -> None:
        subprocess.run(
            ["git", "commit", "-q", "--no-verify", *args],
            cwd=self.root,
            env=dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp),
            check=True,
            capture_output=True,
        )

    def snapshot(self) -> dict[str, str]:
        """What gitgauge must never change: HEAD, branches, index, tree, stash, worktrees."""
        return {
            "head": self.git("rev-parse", "HEAD", check=False),
            "symbolic": self.git("symbolic-ref", "-q", "HEAD", check=False),
            "branches": self.git("for-each-ref", "refs/heads", "refs/tags"),
            # gitgauge's own state directory is expected to change; nothing else is.
            "status": "".join(
                line
                for line in self.git(
                    "status", "--porcelain", "--untracked-files=all", "--ignored"
                ).splitlines(keepends=True)
                if not line[3:].startswith(".gitgauge/")
            ),
            "index": self.git("ls-files", "-s"),
            "stash": self.git("stash", "list"),
            "worktrees": self.git("worktree", "list", "--porcelain"),
        }


def new_repo(root: Path) -> GitRepo:
    """An empty repository at `root` (made, with its parents), on branch main."""
    root.mkdir(parents=True)
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
    return repo


RELEASE_BRANCHES = ("release-1", "release-2")


def pick_to_release_branches(
    repo: GitRepo, subject: str, files: Mapping[str, str | bytes | None]
) -> dict[str, str]:
    """The fix `files` committed again as `subject` on each of `RELEASE_BRANCHES` (made before),
    each time with a changelog line of its branch (Markdown: no part of its patch id), then the
    branches merged back into main with `-s ours`: each branch's sha of the fix."""
    picks = {}
    for branch in RELEASE_BRANCHES:
        repo.git("checkout", "-q", branch)
        changelog = {"CHANGELOG.md": f"# {branch}\n\n- {subject}\n"}
        picks[branch] = repo.commit(subject, files={**files, **changelog})
    repo.git("checkout", "-q", "main")
    for branch in RELEASE_BRANCHES:
        repo.git("merge", "-q", "--no-ff", "-s", "ours", "-m", f"Merge {branch}", branch)
    return picks


def runner_source(preamble: str, *, recursive: bool = False) -> str:
    """The source of a sample project's test runner (no pytest, so a run takes milliseconds):
    `preamble` (its imports and `src/` on the path), then every `test_*` function of
    `tests/test_*.py` (`tests/**/test_*.py` when `recursive`), a traceback for each that fails,
    the count of failures, and exit 1 on any."""
    found = "rglob" if recursive else "glob"
    return preamble + (
        "failed = 0\n"
        f'for path in sorted(Path("tests").{found}("test_*.py")):\n'
        "    for name, check in sorted(runpy.run_path(str(path)).items()):\n"
        '        if name.startswith("test_") and callable(check):\n'
        "            try:\n"
        "                check()\n"
        "            except Exception:\n"
        "                failed += 1\n"
        "                traceback.print_exc()\n"
        'print(f"{failed} failed")\n'
        "sys.exit(1 if failed else 0)\n"
    )


RUN_TESTS = runner_source(
    'import runpy, sys, traceback\nfrom pathlib import Path\nsys.path.insert(0, "src")\n'
)
"""`run_tests.py` of the chain and merge samples: tests/test_*.py with src/ importable."""
TEST_COMMAND = "python3 run_tests.py"
