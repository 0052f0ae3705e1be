"""`mine --chains` on a generated 200-commit history: the chains it saves are exactly those a
brute-force reading of the same rule finds, commit by commit through `git diff-tree`.

The history (written with `git fast-import`, seeded, so the same on every machine) edits a few
files with a bias to stay on one file for a while, so runs of every length appear; it also adds
and deletes files, changes two files at once, and merges a side branch every so often.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo, new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

COMMITS = 200
SHORTEST, LONGEST = 3, 6


def fast_import_stream(seed: int) -> bytes:
    rng = random.Random(seed)
    files = {f"src/m{k}.py": f"M{k} = 0\n" for k in range(5)}
    side: dict[str, str] = {}
    out: list[bytes] = []
    mark = 0
    tick = 1_700_000_000

    def data(text: str) -> bytes:
        raw = text.encode()
        return b"data %d\n" % len(raw) + raw + b"\n"

    def commit(branch: str, subject: str, changes: dict[str, str | None], **more: str) -> int:
        nonlocal mark, tick
        mark += 1
        tick += 60
        lines = [
            f"commit refs/heads/{branch}".encode(),
            f"mark :{mark}".encode(),
            f"committer Gen <gen@example.invalid> {tick} +0000".encode(),
            data(subject).rstrip(b"\n"),
        ]
        if "from_mark" in more:
            lines.append(f"from :{more['from_mark']}".encode())
        if "merge_mark" in more:
            lines.append(f"merge :{more['merge_mark']}".encode())
        for path, content in changes.items():
            if content is None:
                lines.append(f"D {path}".encode())
            else:
                lines.append(f"M 100644 inline {path}".encode())
                lines.append(data(content).rstrip(b"\n"))
        out.append(b"\n".join(lines) + b"\n\n")
        return mark

    head = commit("main", "Start", {**files, "gitgauge.yaml": "testCommand: 'true'\n"})
    side_tip: int | None = None
    current = "src/m0.py"
    partner: str | None = None
    next_file = 5
    for number in range(1, COMMITS):
        if number % 23 == 0 and side_tip is not None:
            head = commit(
                "main",
                f"Merge side {number}",
                dict(side),
                from_mark=str(head),
                merge_mark=str(side_tip),
            )
            side_tip = None
            continue
        if number % 23 == 11:
            # A side branch forks here; it only touches side/ files, merged later.
            path = f"side/s{number}.txt"
            side[path] = f"side {number}\n"
            side_tip = commit("side", f"Side {number}", {path: side[path]}, from_mark=str(head))
        roll = rng.random()
        changes: dict[str, str | None] = {}
        if roll < 0.06:
            path = f"src/m{next_file}.py"
            next_file += 1
            files[path] = f"NEW = {number}\n"
            changes[path] = files[path]
        elif roll < 0.1 and len(files) > 3:
            path = rng.choice(sorted(files))
            del files[path]
            changes[path] = None
            if current == path:
                current = sorted(files)[0]
        else:
            if rng.random() > 0.7:
                current = rng.choice(sorted(files))
            if partner is None or partner not in files or rng.random() > 0.6:
                # Two files edited together for a while: runs of equal length, told apart by
                # their purity (or, when equal, by their paths).
                partner = rng.choice(sorted(files)) if rng.random() < 0.35 else None
            touched = [current, *([partner] if partner and partner != current else [])]
            for path in touched:
                files[path] += "".join(f"x{number}_{k} = {k}\n" for k in range(rng.randint(1, 3)))
                changes[path] = files[path]
        head = commit("main", f"Change {number}", changes, from_mark=str(head))
    return b"".join(out)


def brute_force_chains(repo: GitRepo) -> list[tuple[tuple[str, ...], str]]:
    """The rule, read literally: for every start commit (newest first) every file and every
    length from the shortest to the longest is tried; the longest valid window wins, then the
    purer, then the first path; the walk continues below a chain, else at the next commit."""
    listed = repo.git("rev-list", "--first-parent", f"--max-count={COMMITS}", "--parents", "HEAD")
    walk = [line.split() for line in listed.splitlines()]
    status: list[dict[str, str]] = []
    lines: list[dict[str, int]] = []
    for sha, *parents in walk:
        if len(parents) != 1:
            status.append({})
            lines.append({})
            continue
        raw = repo.git("diff-tree", "-r", "--no-renames", "--no-commit-id", "--raw", sha)
        status.append(
            {line.split("\t")[1]: line.split("\t")[0].split()[4] for line in raw.splitlines()}
        )
        numstat = repo.git("diff-tree", "-r", "--no-renames", "--no-commit-id", "--numstat", sha)
        counts: dict[str, int] = {}
        for line in numstat.splitlines():
            added, deleted, path = line.split("\t")
            counts[path] = (int(added) if added != "-" else 0) + (
                int(deleted) if deleted != "-" else 0
            )
        lines.append(counts)

    def valid(start: int, length: int, path: str) -> bool:
        window = range(start, start + length)
        return start + length <= len(walk) and all(
            len(walk[i]) == 2 and status[i].get(path) == "M" for i in window
        )

    def purity(start: int, length: int, path: str) -> float:
        window = range(start, start + length)
        total = sum(sum(lines[i].values()) for i in window)
        return sum(lines[i].get(path, 0) for i in window) / total if total else 0.0

    every_path = sorted({path for changed in status for path in changed})
    found: list[tuple[tuple[str, ...], str]] = []
    start = 0
    while start < len(walk):
        windows = [
            (length, purity(start, length, path), path)
            for path in every_path
            for length in range(SHORTEST, LONGEST + 1)
            if valid(start, length, path)
        ]
        if not windows:
            start += 1
            continue
        length, _, path = min(windows, key=lambda w: (-w[0], -w[1], w[2]))
        chain = tuple(walk[i][0] for i in reversed(range(start, start + length)))
        found.append((chain, path))
        start += length
    return found


@pytest.mark.parametrize("seed", [24])
def test_mined_chains_equal_a_brute_force_reading_of_the_rule(seed: int, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = new_repo(root)
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=root,
        input=fast_import_stream(seed),
        check=True,
        capture_output=True,
    )
    repo.git("checkout", "-q", "-f", "main")
    (root / "gitgauge.yaml").write_text(
        yaml.safe_dump(
            {
                "testCommand": "true",
                "mine": {"last": COMMITS, "chainLength": [SHORTEST, LONGEST], "chainPurity": 0.0},
                "run": {"sandbox": "none"},
            }
        )
    )
    assert int(repo.git("rev-list", "--first-parent", "--count", "HEAD")) == COMMITS
    expected = brute_force_chains(repo)
    # The history has something to find: long runs cut at 6, short ones, two-file commits.
    lengths = {len(chain) for chain, _ in expected}
    assert lengths == {3, 4, 5, 6} and len(expected) >= 15, lengths

    env = dict(os.environ, TMPDIR=str(tmp_path))
    mined = run_gitgauge("mine", "--chains", "-j", "2", cwd=root, env=env)
    assert mined.returncode == 0, mined.stderr

    tasks = [
        yaml.safe_load(path.read_text()) for path in (root / ".gitgauge" / "tasks").glob("*.yaml")
    ]
    by_kind = {
        kind: sorted((tuple(t["chain"]), t["file"]) for t in tasks if t["kind"] == kind)
        for kind in ("rebase", "commits")
    }
    assert by_kind["rebase"] == by_kind["commits"] == sorted(expected)
    assert f"file-commit chains: {len(expected)}" in mined.stdout
    assert "skipped, " not in mined.stdout.split("first-parent commits:", 1)[1]


def _plumb(root: Path, *args: str, stdin: str = "") -> str:
    """A git plumbing command fed `stdin`, with a fixed identity and date."""
    stamp = "2024-01-01T00:00:00+00:00"
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Gen",
        GIT_AUTHOR_EMAIL="gen@example.invalid",
        GIT_COMMITTER_NAME="Gen",
        GIT_COMMITTER_EMAIL="gen@example.invalid",
        GIT_AUTHOR_DATE=stamp,
        GIT_COMMITTER_DATE=stamp,
    )
    done = subprocess.run(
        ["git", *args], cwd=root, input=stdin, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_chain_whose_commit_does_not_re_apply_is_counted_and_skipped(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    """The middle commit of a three-commit chain on src/a.py also adds `sub/.git/x`, a path
    `git apply` refuses: re-applied on its parent it cannot give its own tree. Written with
    `git mktree`, since no work tree can hold such a path."""
    root = git_repo.root
    base = git_repo.commit(
        "Start", files={"src/a.py": "A = 0\n", "gitgauge.yaml": "testCommand: 'true'\n"}
    )
    config = _plumb(root, "rev-parse", f"{base}:gitgauge.yaml")

    def blob(text: str) -> str:
        return _plumb(root, "hash-object", "-w", "--stdin", stdin=text)

    def tree(entries: str) -> str:
        return _plumb(root, "mktree", stdin=entries)

    stray = blob("not a git file\n")
    inner = tree(f"100644 blob {stray}\tx\n")
    dotgit = tree(f"040000 tree {inner}\t.git\n")
    parent = base
    content = "A = 0\n"
    chain = []
    for step in range(3):
        content += f"A{step} = {step}\n"
        src = tree(f"100644 blob {blob(content)}\ta.py\n")
        entries = f"100644 blob {config}\tgitgauge.yaml\n040000 tree {src}\tsrc\n"
        if step >= 1:
            entries += f"040000 tree {dotgit}\tsub\n"
        commit = _plumb(root, "commit-tree", tree(entries), "-p", parent, "-m", f"Step {step}")
        chain.append(commit)
        parent = commit
    _plumb(root, "update-ref", "refs/heads/main", parent)
    # Only `mine` reads the history: nothing checks such a tree out.
    (root / ".git" / "info" / "exclude").write_text(".gitgauge/\n")

    env = dict(os.environ, TMPDIR=str(tmp_path))
    mined = run_gitgauge("mine", "--chains", "--last", "4", cwd=root, env=env)

    assert mined.returncode == 0, mined.stderr
    assert "file-commit chains: 1" in mined.stdout, mined.stdout
    assert "skipped, a commit does not re-apply on its parent: 1" in mined.stdout, mined.stdout
    assert f"{chain[1][:8]}: " in mined.stdout and "invalid path 'sub/.git/x'" in mined.stdout
    assert not list((root / ".gitgauge" / "tasks").glob("*.yaml"))


def test_mine_chains_in_gitgauge_yaml_and_no_chains_for_one_mine(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    git_repo.commit(
        "Start",
        files={
            "src/a.py": "A = 0\n",
            ".gitignore": ".gitgauge/\n",
            "gitgauge.yaml": yaml.safe_dump(
                {"testCommand": "true", "mine": {"chains": True}, "run": {"sandbox": "none"}}
            ),
        },
    )
    content = "A = 0\n"
    for step in range(3):
        content += f"A{step} = {step}\n"
        git_repo.commit(f"Step {step}", files={"src/a.py": content})
    env = dict(os.environ, TMPDIR=str(tmp_path))
    tasks_dir = git_repo.root / ".gitgauge" / "tasks"

    off = run_gitgauge("mine", "--no-chains", cwd=git_repo.root, env=env)
    assert off.returncode == 0, off.stderr
    assert "file-commit chains" not in off.stdout
    assert not list(tasks_dir.glob("*.yaml"))

    dry = run_gitgauge("mine", "--dry-run", cwd=git_repo.root, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "chain candidate (3 commits on src/a.py, purity 1.00)" in dry.stdout, dry.stdout
    assert not list(tasks_dir.glob("*.yaml"))

    on = run_gitgauge("mine", cwd=git_repo.root, env=env)
    assert on.returncode == 0, on.stderr
    assert "file-commit chains: 1" in on.stdout, on.stdout
    kinds = sorted(yaml.safe_load(path.read_text())["kind"] for path in tasks_dir.glob("*.yaml"))
    assert kinds == ["commits", "rebase"]

    again = run_gitgauge("mine", cwd=git_repo.root, env=env)
    assert again.returncode == 0, again.stderr
    assert "already mined:   1" in again.stdout, again.stdout
    assert len(list(tasks_dir.glob("*.yaml"))) == 2
