"""The synthetic repositories, built with `git fast-import` (no network, identical every time):
long histories for classification (one with backported fixes, for duplicate detection), and
verification repositories whose fixes really verify."""

from __future__ import annotations

import random
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common import TEST_COMMAND, BenchError, git

EPOCH = 1_700_000_000
"""Commit dates start here (one second per commit): fixed, so the repositories are identical."""


@dataclass
class CommitSpec:
    subject: str
    body: str = ""
    files: dict[str, str | None] = field(default_factory=dict)
    """Path -> new content (None: delete)."""


def fast_import(root: Path, commits: Iterator[CommitSpec]) -> int:
    """Create a repository at `root` whose `main` is exactly `commits` (oldest first); check the
    last one out. Returns the number of commits."""
    root.mkdir(parents=True)
    git("init", "-q", "-b", "main", str(root), cwd=root.parent)
    count = 0
    with tempfile.TemporaryFile() as err:
        importer = subprocess.Popen(
            ["git", "fast-import", "--quiet"], cwd=root, stdin=subprocess.PIPE, stderr=err
        )
        assert importer.stdin is not None
        for count, spec in enumerate(commits, start=1):
            importer.stdin.write(_fast_import_commit(spec, EPOCH + count))
        importer.stdin.close()
        if importer.wait() != 0:
            err.seek(0)
            raise BenchError(f"git fast-import failed: {err.read().decode()[-2000:]}")
    git("reset", "-q", "--hard", "main", cwd=root)
    return count


def _fast_import_commit(spec: CommitSpec, stamp: int) -> bytes:
    message = f"{spec.subject}\n\n{spec.body}\n" if spec.body else f"{spec.subject}\n"
    raw = message.encode()
    who = f"Bench <bench@gitgauge.invalid> {stamp} +0000"
    parts = [f"commit refs/heads/main\nauthor {who}\ncommitter {who}\ndata {len(raw)}\n".encode()]
    parts.append(raw + b"\n")
    for path, content in spec.files.items():
        if content is None:
            parts.append(f"D {path}\n".encode())
            continue
        data = content.encode()
        parts.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    parts.append(b"\n")
    return b"".join(parts)


def history_commits(count: int) -> Iterator[CommitSpec]:
    """A long, linear history with a realistic mix: ~5% fix subjects that touch a test and a
    source file (candidates), ~8% bug words that touch no test (classified, then dropped by the
    path rule), the rest features, refactors, docs and chores."""
    rng = random.Random(20240601)
    sources = [f"src/pkg{i % 20}/mod{i}.py" for i in range(400)]
    tests = [f"tests/pkg{i % 20}/test_mod{i}.py" for i in range(400)]
    docs = [f"docs/page{i}.md" for i in range(40)]
    yield CommitSpec(
        "Initial import",
        files={path: f"# {path}\n" for path in [*sources, *tests, *docs, "README.md"]},
    )
    plain = ("feat: add option", "refactor: tidy", "chore: bump", "docs: explain", "Update")
    for n in range(1, count):
        roll = rng.random()
        module = rng.randrange(400)
        body = f"Details of change {n}: what changed and why,\nover two lines.\n"
        if roll < 0.05:
            subject = rng.choice(
                (f"fix: handle empty input in mod{module}", f"Fix crash in mod{module}")
            )
            touched = [sources[module], tests[module]]
        elif roll < 0.10:
            subject, touched = f"Fix typo in page{module % 40}", [docs[module % 40]]
        elif roll < 0.13:
            subject, touched = f"fix: log errors in mod{module}", [sources[module]]
        else:
            subject = f"{rng.choice(plain)} {n}"
            pool = rng.choice((sources, sources, tests, docs))
            touched = rng.sample(pool, rng.randint(1, 3))
        yield CommitSpec(
            subject,
            body if rng.random() < 0.3 else "",
            {path: f"# {path}\nrevision {n}\n" for path in touched},
        )


def backport_history_commits(count: int) -> Iterator[CommitSpec]:
    """`count` linear commits where about 1 in 60 is a fix (a source file and its test, as in
    `history_commits`), and about a fifth of the fixes are applied again 50 to 500 commits later
    (in 50,000 commits; as far in proportion in fewer), as a backport: a `chore:` commit puts both
    files back as they were before the fix, then a fix with the same subject makes the same
    change again, with a CHANGELOG.md line (Markdown, left out of the patch). Each backport has
    the patch id of its original fix: one duplicate each (row 1b)."""
    rng = random.Random(20240602)
    delay = (max(1, count // 1000), max(2, count // 100))  # 50 to 500 in 50,000
    sources = [f"src/pkg{i % 20}/mod{i}.py" for i in range(400)]
    tests = [f"tests/pkg{i % 20}/test_mod{i}.py" for i in range(400)]
    docs = [f"docs/page{i}.md" for i in range(40)]
    state = {path: f"# {path}\n" for path in [*sources, *tests, *docs, "README.md"]}
    yield CommitSpec("Initial import", files=dict(state))
    backports: dict[int, list[tuple[int, str, dict[str, str], dict[str, str]]]] = {}
    plain = ("feat: add option", "refactor: tidy", "chore: bump", "docs: explain", "Update")
    made = 1
    while made < count:
        module = rng.randrange(400)
        due = [fix for at in sorted(backports) if at <= made for fix in backports.pop(at)]
        if due and made + 2 <= count:
            fixed, subject, before, after = due[0]
            backports.setdefault(made + 2, []).extend(due[1:])
            yield CommitSpec(f"chore: restore mod{fixed} for a backport", files=dict(before))
            changelog = {"CHANGELOG.md": f"# Changes\n\n- {subject} (backport {made})\n"}
            yield CommitSpec(subject, "Backport.", {**after, **changelog})
            state.update(after)
            made += 2
            continue
        if rng.random() < 0.017:
            subject = f"fix: handle empty input in mod{module} ({made})"
            touched = [sources[module], tests[module]]
        else:
            subject = f"{rng.choice(plain)} {made}"
            touched = rng.sample(rng.choice((sources, sources, tests, docs)), rng.randint(1, 3))
        files = {path: f"# {path}\nrevision {made}\n" for path in touched}
        if subject.startswith("fix:") and rng.random() < 0.2:
            before = {path: state[path] for path in touched}
            later = backports.setdefault(made + rng.randint(*delay), [])
            later.append((module, subject, before, files))
        state.update(files)
        yield CommitSpec(subject, files=files)
        made += 1


RUN_TESTS = """\
# Sleeps a fixed time, then passes when every tests/<name>.expect equals src/<name>.txt (shell
# builtins only). Appends its own start and end (ns) to $BENCH_TEST_LOG: the benchmark sums
# the real test time instead of assuming it, so the jitter of sleep stays out of the overhead.
started=$(date +%s%N)
sleep {sleep}
status=0
for expect in tests/*.expect; do
  name=${{expect#tests/}}
  name=${{name%.expect}}
  read -r want < "$expect"
  read -r got < "src/$name.txt"
  if [ "$want" != "$got" ]; then
    echo "FAIL $name: want '$want', got '$got'"
    status=1
    break
  fi
done
echo "$started $(date +%s%N)" >> "$BENCH_TEST_LOG"
exit $status
"""


def verification_commits(
    *, candidates: int, fillers: int, tree_files: int, sleep: float
) -> Iterator[CommitSpec]:
    """`candidates` fix commits, each preceded by `fillers` ordinary commits. Fix i changes
    src/mod<i>.txt and tests/mod<i>.expect from "bug i" to "fixed i"."""
    initial: dict[str, str | None] = {"run_tests.sh": RUN_TESTS.format(sleep=sleep)}
    initial["README.md"] = "A benchmark repository.\n"
    for i in range(candidates):
        initial[f"src/mod{i}.txt"] = f"bug {i}\n"
        initial[f"tests/mod{i}.expect"] = f"bug {i}\n"
    for j in range(tree_files):
        initial[f"vendor/d{j // 250}/f{j}.txt"] = f"vendored file {j}\n"
    yield CommitSpec("Initial import", files=initial)
    for i in range(candidates):
        for k in range(fillers):
            yield CommitSpec(f"docs: note {i}.{k}", files={"README.md": f"note {i}.{k}\n"})
        yield CommitSpec(
            f"fix: wrong value in mod{i}",
            f"mod{i} returned its old value; it must return the fixed one ({i}).",
            {f"src/mod{i}.txt": f"fixed {i}\n", f"tests/mod{i}.expect": f"fixed {i}\n"},
        )


def write_repo_config(root: Path, *, history: str = "isolated", sandbox: str = "none") -> None:
    # reruns: 0 keeps rows 2-4 what they measure: exit-code verification, three suite runs per
    # candidate (row 7b measures reports and reruns). No sandbox unless asked: the test command
    # appends to $BENCH_TEST_LOG, outside the workspace, which a sandboxed test cannot write (row
    # 4d measures the sandbox by wall time).
    text = (
        f"testCommand: '{TEST_COMMAND}'\nmine:\n  reruns: 0\n"
        f"run:\n  history: {history}\n  sandbox: {sandbox}\n"
        # The suite sees no variable its config does not name.
        "env:\n  BENCH_TEST_LOG: null\n"
    )
    (root / "gitgauge.yaml").write_text(text, encoding="utf-8")
