"""The patch ids of duplicate detection come from one `git log -p | git patch-id` for all
candidates (`gitgauge/core/git/patchids.py`): they are the ids one `git diff` and one
`git patch-id` per candidate gave (`Repository.patch_id`, as `mine.duplicates` computed them
before), on a real repository with every kind of change, under users' diff settings, when the
pipeline fails, and for no commit at all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.environment import isolated
from helpers.repos import RELEASE_BRANCHES, GitRepo, new_repo, pick_to_release_branches

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import ChangedPath, Commit, Repository, patchids
from gitgauge.core.git.patchids import patch_ids
from gitgauge.core.paths import MARKDOWN_SUFFIXES, is_markdown
from gitgauge.mining.mine import Candidate, duplicates

CLAMP = "def clamp(x, lo, hi):\n    return max(lo, x)\n"
CLAMP_FIXED = "def clamp(x, lo, hi):\n    return min(hi, max(lo, x))\n"
# A change that git's diff algorithms (myers, patience) cut into different hunks.
FROB = """#include <stdio.h>

// Frobs foo heartily
int frobnitz(int foo)
{
    int i;
    for(i = 0; i < 10; i++)
    {
        printf("Your answer is: ");
        printf("%d\\n", foo);
    }
}

int fact(int n)
{
    if(n > 1)
    {
        return fact(n-1) * n;
    }
    return 1;
}

int main(int argc, char **argv)
{
    frobnitz(fact(10));
}
"""
FROB_FIXED = """#include <stdio.h>

int fib(int n)
{
    if(n > 2)
    {
        return fib(n-1) + fib(n-2);
    }
    return 1;
}

// Frobs foo heartily
int frobnitz(int foo)
{
    int i;
    for(i = 0; i < 10; i++)
    {
        printf("%d\\n", foo);
    }
}

int main(int argc, char **argv)
{
    frobnitz(fib(10));
}
"""
KELVIN = "\u212a"  # lower-cases to "k": Markdown to Python's str.lower, not to git's icase


def one_by_one(repo: Repository, commits: list[Commit]) -> dict[str, str]:
    """The ids as `mine.duplicates` computed them before: a `git diff` of the candidate's paths
    but Markdown, and a `git patch-id --stable` of it, for each candidate."""
    found = {}
    for commit in commits:
        paths = [path for path in commit.paths if not is_markdown(path)]
        try:
            patch = repo.patch_id(commit.parents[0], commit.sha, paths) if commit.parents else None
        except GitError:
            patch = None
        if patch is not None:
            found[commit.sha] = patch
    return found


def build_history(repo: GitRepo) -> dict[str, str]:
    """A root commit, then one commit of each kind of change (named), with three cherry-picks of
    one fix (on two release branches, each with its own changelog line) merged back."""
    shas = {
        "root": repo.commit("Initial import", files={"src/clamp.py": CLAMP, "README.md": "#\n"})
    }
    for branch in RELEASE_BRANCHES:
        repo.git("branch", branch)
    fix = {"src/clamp.py": CLAMP_FIXED, "tests/test_clamp.py": "def test_upper():\n    pass\n"}
    shas["fix"] = repo.commit("Fix clamp upper bound", files=fix)
    shas.update(pick_to_release_branches(repo, "Fix clamp upper bound", fix))
    shas["merge"] = repo.git("rev-parse", "HEAD").strip()
    shas["empty"] = repo.commit("fix: nothing at all")
    shas["binary"] = repo.commit("fix: the logo", files={"logo.png": bytes(range(256)) * 40})
    shas["binary changed"] = repo.commit("fix: logo", files={"logo.png": bytes(range(255, -1, -1))})
    os.chmod(repo.root / "src" / "clamp.py", 0o755)
    shas["mode"] = repo.commit("fix: make clamp executable")
    repo.delete("src/clamp.py")
    shas["rename"] = repo.commit("fix: rename clamp", files={"src/bounds.py": CLAMP_FIXED})
    lines = "".join(f"line {n} of the notes\n" for n in range(40))
    repo.commit("add notes", files={"notes.md": lines})
    repo.delete("notes.md")
    shas["markdown renamed"] = repo.commit("fix: notes are code", files={"notes.py": lines})
    repo.delete("notes.py")
    shas["renamed to markdown"] = repo.commit("fix: code is notes", files={"notes.MD": lines})
    shas["only markdown"] = repo.commit("fix: typo", files={"docs/guide.md": "fixed\n"})
    odd_names = {
        ".md": "a hidden file named .md is no Markdown\n",
        "docs/.x.markdown": "hidden Markdown\n",
        "UP.MD": "shouting\n",
        "page.Mdx": "mdx\n",
        "we ird [1]*.py": "glob characters\n",
        "données/é.md": "accents\n",
        "x.md.": "a trailing dot: no suffix\n",
    }
    shas["odd names"] = repo.commit("fix: odd names", files=odd_names)
    shas["markdown-named folder"] = repo.commit("fix: folder", files={"api.md/gen.py": "x = 1\n"})
    shas["Kelvin"] = repo.commit("fix: kelvin", files={f"notes.mar{KELVIN}down": "k\n"})
    os.symlink("src/bounds.py", repo.root / "link.py")
    shas["symlink"] = repo.commit("fix: link")
    repo.commit("add a file", files={"thing": "a file\n"})
    repo.delete("thing")
    shas["file to folder"] = repo.commit("fix: folder", files={"thing/inner.py": "y = 2\n"})
    big = "".join(f"row {n}\n" for n in range(40_000))  # far more than a pipe holds
    shas["large"] = repo.commit("fix: large", files={"data.txt": big})
    rows = big.splitlines(keepends=True)
    rows[100], rows[112] = "row one hundred\n", "row one hundred and twelve\n"
    shas["two hunks"] = repo.commit("fix: two rows", files={"data.txt": "".join(rows)})
    repo.commit("add frob", files={"frob.c": FROB})
    shas["patience"] = repo.commit("fix: frob", files={"frob.c": FROB_FIXED})
    (repo.root / "vendored").mkdir()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendored")
    shas["submodule"] = repo.commit("fix: add a submodule")
    repo.git("update-index", "--cacheinfo", f"160000,{'2' * 40},vendored")
    shas["submodule moved"] = repo.commit("fix: move the submodule")
    return shas


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, str]]:
    """Built once for the module (each test only reads it, or adds an unreachable object)."""
    base = tmp_path_factory.mktemp("patch-ids")
    with isolated(base):
        repo = new_repo(base / "repo")
        return repo, build_history(repo)


@pytest.fixture
def history(
    built: tuple[GitRepo, dict[str, str]],
) -> tuple[Repository, dict[str, str], list[Commit]]:
    repo = Repository(built[0].root)
    return repo, built[1], list(repo.log("HEAD", max_count=1000))


@pytest.mark.parametrize(
    "setting",
    [
        None,
        # Settings `git diff` and `git log -p` read and `git diff-tree` does not: each changes
        # the ids of some commits, so both ways must read them alike.
        ("diff.context", "1"),
        ("diff.noprefix", "true"),
        ("diff.interHunkContext", "20"),
        ("diff.submodule", "log"),
        ("diff.algorithm", "patience"),
        ("core.quotePath", "false"),
        ("log.showSignature", "true"),
    ],
)
def test_one_pipeline_gives_every_commit_the_id_it_had_alone(
    built: tuple[GitRepo, dict[str, str]],
    history: tuple[Repository, dict[str, str], list[Commit]],
    setting: tuple[str, str] | None,
) -> None:
    repo, shas, commits = history
    if setting is not None:
        built[0].git("config", *setting)
    try:
        streamed = patch_ids(repo, commits, ignored_suffixes=MARKDOWN_SUFFIXES)
        before = one_by_one(repo, commits)
    finally:
        if setting is not None:
            built[0].git("config", "--unset", setting[0])

    assert streamed == before

    assert set(shas.values()) <= {commit.sha for commit in commits}
    picks = {streamed[shas[name]] for name in ("fix", "release-1", "release-2")}
    assert len(picks) == 1, "a cherry-pick with its own changelog line is the same patch"
    for none in ("root", "merge", "empty", "only markdown"):
        assert shas[none] not in streamed, none
    for changed in ("binary", "binary changed", "mode", "rename", "markdown renamed", "large"):
        assert shas[changed] in streamed, changed
    assert streamed[shas["binary"]] != streamed[shas["binary changed"]]


def test_many_commits_shared_among_pipelines_get_the_ids_they_had_alone(
    git_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `SHARE` commits a pipeline, the commits are split over up to `PIPELINES` at once:
    every commit still gets its own id, whichever share it fell in, and a cherry-pick in
    another share than its original is still the same patch."""
    monkeypatch.setattr(patchids, "PIPELINES", 3)
    monkeypatch.setattr(patchids, "SHARE", 4)
    git_repo.commit("Initial import", files={"a.py": "a = 0\n"})
    for number in range(1, 13):
        git_repo.commit(f"Change {number}", files={"a.py": f"a = {number}\n"})
    git_repo.commit("Go back to 2", files={"a.py": "a = 2\n"})
    git_repo.commit("Change 3 again", files={"a.py": "a = 3\n"})  # change 3's diff, 2 -> 3
    repo = Repository(git_repo.root)
    commits = list(repo.log("HEAD", max_count=100))
    streamed = patch_ids(repo, commits, ignored_suffixes=MARKDOWN_SUFFIXES)
    assert streamed == one_by_one(repo, commits)
    assert len(streamed) == 14  # three shares of 5, 5 and 4: the newest and change 3 apart
    by_subject = {commit.subject: streamed.get(commit.sha) for commit in commits}
    assert by_subject["Change 3 again"] == by_subject["Change 3"]
    assert len(set(streamed.values())) == 13


def test_duplicates_keep_the_same_candidates(
    history: tuple[Repository, dict[str, str], list[Commit]],
) -> None:
    repo, shas, commits = history
    candidates = [Candidate(commit, "rich") for commit in commits if len(commit.parents) < 2]
    before = one_by_one(repo, [candidate.commit for candidate in candidates])
    groups: dict[str, list[str]] = {}
    for candidate in candidates:
        if candidate.commit.sha in before:
            groups.setdefault(before[candidate.commit.sha], []).append(candidate.commit.sha)
    expected = {sha: group[0] for group in groups.values() for sha in group[1:]}

    kept = duplicates(repo, candidates, mined=set())
    kept_mined = duplicates(repo, candidates, mined={shas["fix"]})

    assert {sha: keeper.commit.sha for sha, keeper in kept.items()} == expected
    newest = shas["release-2"]  # the merges put both release lines after main's fix
    assert {kept[shas["fix"]].commit.sha, kept[shas["release-1"]].commit.sha} == {newest}
    assert {kept_mined[shas[name]].commit.sha for name in ("release-1", "release-2")} == {
        shas["fix"]
    }
    assert duplicates(repo, [], mined=set()) == {}


def test_no_commit_needs_no_git(git_repo: GitRepo) -> None:
    git_repo.commit("Initial import", files={"a.py": "a\n"})
    repo = Repository(git_repo.root)
    root = next(iter(repo.log("HEAD", max_count=1)))

    assert patch_ids(repo, [], ignored_suffixes=MARKDOWN_SUFFIXES) == {}
    # A root commit is given no id (and `git log --stdin` with nothing on it would show HEAD).
    assert patch_ids(repo, [root], ignored_suffixes=MARKDOWN_SUFFIXES) == {}


def test_a_commit_git_cannot_diff_fails_only_itself(
    built: tuple[GitRepo, dict[str, str]],
    history: tuple[Repository, dict[str, str], list[Commit]],
) -> None:
    """A parent missing from the clone stops `git log -p`: every commit then gets its id on its
    own, and the one whose parent is missing none (verification says why)."""
    repo, _, commits = history
    git_repo = built[0]
    tree = git_repo.git("rev-parse", "HEAD^{tree}").strip()
    missing = "1234567890" * 4
    raw = (
        f"tree {tree}\nparent {missing}\nauthor A <a@b.c> 1700000000 +0000\n"
        "committer A <a@b.c> 1700000000 +0000\n\nfix: orphan\n"
    )
    orphan = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        cwd=git_repo.root,
        input=raw,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    broken = Commit(orphan, (missing,), "fix: orphan", "", (ChangedPath("M", "src/bounds.py"),))
    with_broken = [*commits[:5], broken, *commits[5:]]

    streamed = patch_ids(repo, with_broken, ignored_suffixes=MARKDOWN_SUFFIXES)

    assert orphan not in streamed
    assert streamed == one_by_one(repo, commits)


def test_suffixes_a_pathspec_cannot_say_are_refused(git_repo: GitRepo) -> None:
    git_repo.commit("Initial import", files={"a.py": "a\n"})
    with pytest.raises(ValueError, match="suffix"):
        patch_ids(Repository(git_repo.root), [], ignored_suffixes={".MD"})


# -- the door: two commands joined by a pipe ----------------------------------------------------


def test_a_pipeline_streams_the_second_commands_output(tmp_path: Path) -> None:
    chunks = process.stream(
        ["sh", "-c", "cat; echo second >&2"],
        cwd=tmp_path,
        stdin_text="b\na\n",
        then=["sort"],
    )

    assert b"".join(chunks) == b"a\nb\n"


def test_a_failing_first_command_raises_with_its_stderr(tmp_path: Path) -> None:
    with pytest.raises(process.StreamError) as raised:
        b"".join(
            process.stream(["sh", "-c", "echo broken >&2; exit 3"], cwd=tmp_path, then=["cat"])
        )

    assert raised.value.exit_code == 3
    assert "broken" in raised.value.stderr_tail


def test_a_failing_second_command_is_the_one_reported(tmp_path: Path) -> None:
    """The first then dies of SIGPIPE, saying nothing: the second says why."""
    first = ["sh", "-c", "while :; do echo y; done"]
    second = ["sh", "-c", "read -r line; echo bad >&2; exit 4"]
    with pytest.raises(process.StreamError) as raised:
        b"".join(process.stream(first, cwd=tmp_path, then=second))

    assert raised.value.exit_code == 4
    assert "bad" in raised.value.stderr_tail


def test_stopping_early_ends_both_commands(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    first = ["sh", "-c", f"echo $$ >> {pids}; while :; do echo y; done"]
    second = ["sh", "-c", f"echo $$ >> {pids}; exec cat"]
    chunks = process.stream(first, cwd=tmp_path, then=second, chunk_size=16)

    assert next(chunks).startswith(b"y\n")
    chunks.close()

    for pid in map(int, pids.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_the_log_stream_splits_into_the_same_tokens_wherever_its_chunks_end() -> None:
    """`git log -z` arrives in chunks that end anywhere: inside a token, inside a multi-byte
    character, on a NUL. The tokens are the same for every split."""
    from gitgauge.core.git.logparse import nul_tokens

    stream = "\x01sha\0par ent\0Fix café\0\0M\0src/naïve.py\0\0tail".encode() + b"\xff"
    expected = stream.decode("utf-8", errors="surrogateescape").split("\0")
    for size in range(1, len(stream) + 1):
        chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert list(nul_tokens(iter(chunks))) == expected, size


def test_a_commits_paths_name_both_sides_of_a_rename_once_each_in_order() -> None:
    from gitgauge.core.git import both_sides

    changes = (
        ChangedPath("R", "src/new.py", "src/old.py"),
        ChangedPath("M", "tests/test_new.py"),
        ChangedPath("C", "src/copy.py", "src/new.py"),
    )
    commit = Commit("sha", ("parent",), "Fix", "", changes)
    assert commit.paths == ["src/old.py", "src/new.py", "tests/test_new.py", "src/copy.py"]
    # Added after what is already there, which keeps its order and is not repeated.
    assert both_sides(changes, ["tests/test_new.py"]) == [
        "tests/test_new.py",
        "src/old.py",
        "src/new.py",
        "src/copy.py",
    ]
