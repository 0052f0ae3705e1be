"""Files gitgauge writes get the mode an ordinary write gives them: 0666 less the user's umask.

The writes are atomic (a temporary file renamed over the target), and a temporary file is made
0600; left so, a teammate, a CI container under another uid or a web server publishing the HTML
report could not read `gitgauge.yaml`, tasks, results or the report.
"""

from __future__ import annotations

import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import new_repo
from helpers.repos.sample import add_then_fix, mine_env, sample_root_files, write_config

GOLD = "name: gold\nadapter: gold\n"


def gitgauge_under(umask: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "gitgauge", *args))
    return subprocess.run(
        ["sh", "-c", f"umask {umask:03o}; exec {command}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=mine_env(cwd.parent / "journal.jsonl"),
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_every_file_gitgauge_writes_follows_the_umask(tmp_path: Path, umask: int) -> None:
    repo = new_repo(tmp_path / "repo")
    repo.commit("Initial", files=sample_root_files())
    add_then_fix(
        repo,
        name="half",
        buggy="def half(n):\n    return n / 3\n",
        fixed="def half(n):\n    return n / 2\n",
        test="from half import half\n\n\ndef test_half():\n    assert half(4) == 2\n",
        subject="Fix half dividing by three",
    )
    root = repo.root
    (tmp_path / "gold.yaml").write_text(GOLD, encoding="utf-8")

    def ok(*args: str) -> None:
        result = gitgauge_under(umask, *args, cwd=root)
        assert result.returncode == 0, result.stdout + result.stderr

    ok("init")
    expected = 0o666 & ~umask
    assert mode(root / "gitgauge.yaml") == expected
    write_config(repo)  # rewrites the file in place: its mode stays
    ok("mine")
    ok("run", "-c", str(tmp_path / "gold.yaml"))
    ok("report", "--html", str(tmp_path / "report.html"))

    state = root / ".gitgauge"
    written = [
        *state.glob("tasks/*.yaml"),
        *state.glob("runs/*/run.json"),
        *state.glob("runs/*/results/*/*.json"),
        tmp_path / "report.html",
    ]
    assert len(written) == 4, written  # a task, the manifest, a result, the page
    wrong = {str(path.relative_to(tmp_path)): oct(mode(path)) for path in written}
    wrong = {name: m for name, m in wrong.items() if int(m, 8) != expected}
    assert wrong == {}, f"expected {oct(expected)}"
