"""Patch ids of many commits from one streamed pipeline: `git log --no-walk --stdin -p` of every
commit (its diff against its parent) piped into one `git patch-id --stable`, instead of a
`git diff` and a `git patch-id` per commit. The diffs flow from one git to the other through an
OS pipe; gitgauge reads only the `<patch-id> <commit>` lines, so memory does not grow with the
diffs.

The ids are the ones `Repository.patch_id` gives each commit on its own: `git log -p` reads the
same diff configuration as `git diff` (`diff.context`, `diff.noprefix`, `diff.algorithm`,
`diff.submodule`, ...; `git diff-tree` reads none of it, and its ids differ under such a
config). The files left out (Markdown, for mining) are left out by a pathspec, which a commit
whose paths it would not match exactly (a directory named like such a file, a name that is
such a file only by Unicode case folding), a merge and a root commit do not go through: those,
and every commit when the pipeline fails (a parent missing from this clone), get
`Repository.patch_id` one by one, as before.

Many commits are split over one pipeline per core (`PIPELINES`, at least `SHARE` commits each):
each commit's id depends on that commit alone, and the two gits of one pipeline keep about one
core busy between them, so two pipelines on two cores take about half the time (bench row 1b).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import PurePosixPath

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Commit, Repository
from gitgauge.core.parallel import in_order

PIPELINES = max(1, min(4, os.cpu_count() or 1))
"""How many `git log -p | git patch-id` pipelines run at once, at most."""
SHARE = 64
"""The fewest commits one pipeline is given: below that, starting one costs more than it saves."""

_SUFFIX = re.compile(r"\.[a-z0-9]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def patch_ids(
    repo: Repository, commits: Sequence[Commit], *, ignored_suffixes: Collection[str]
) -> dict[str, str]:
    """Commit sha -> `git patch-id --stable` of its change against its first parent, files whose
    suffix (`PurePosixPath.suffix`, any case) is in `ignored_suffixes` left out. Commits without
    a parent, without any other change (an empty commit, only such files), or that git cannot
    diff (the parent is not in this clone) have none."""
    suffixes = sorted(ignored_suffixes)
    for suffix in suffixes:
        if not _SUFFIX.fullmatch(suffix):
            raise ValueError(f"not a lower-case suffix a pathspec can match: {suffix!r}")
    streamed: list[Commit] = []
    alone: list[Commit] = []
    for commit in commits:
        if len(commit.parents) == 1 and _pathspec_exact(commit, suffixes):
            streamed.append(commit)
        elif commit.parents:
            alone.append(commit)
    try:
        found = _streamed(repo, streamed, suffixes)
    except GitError:  # one commit git cannot diff fails them all: each on its own, as before
        found, alone = {}, [commit for commit in commits if commit.parents]
    for commit in alone:
        patch = _one(repo, commit, suffixes)
        if patch is not None:
            found[commit.sha] = patch
    return found


def _streamed(
    repo: Repository, commits: Sequence[Commit], suffixes: Sequence[str]
) -> dict[str, str]:
    """Every commit's id, from up to `PIPELINES` pipelines at once (a `GitError` from any).

    A commit none of whose paths holds an ignored suffix goes without the exclusions: they
    leave out nothing of it, and git spends about a third of its time matching them."""
    plain = [commit for commit in commits if not _may_match(commit, suffixes)]
    filtered = [commit for commit in commits if _may_match(commit, suffixes)]
    shares: list[tuple[Sequence[Commit], Sequence[str]]] = [
        *((share, ()) for share in _shares(plain)),
        *((share, suffixes) for share in _shares(filtered)),
    ]
    found: dict[str, str] = {}
    for ids in in_order(
        shares,
        lambda share, slot: _pipeline(repo, *share),
        jobs=max(1, min(PIPELINES, len(shares))),
        name="patch-ids",
    ):
        found.update(ids)
    return found


def _shares(commits: Sequence[Commit]) -> list[Sequence[Commit]]:
    """`commits` in up to `PIPELINES` runs of at least `SHARE` (none when there is none)."""
    if not commits:  # `git log --stdin` with nothing on stdin would show HEAD
        return []
    count = max(1, min(PIPELINES, len(commits) // SHARE))
    size = -(-len(commits) // count)
    return [commits[start : start + size] for start in range(0, len(commits), size)]


def _may_match(commit: Commit, suffixes: Sequence[str]) -> bool:
    """Whether an exclusion could match a path of `commit` (one of its parts holds a suffix, in
    any case: ASCII case folding keeps what `lower` finds)."""
    return any(suffix in path.lower() for path in commit.paths for suffix in suffixes)


def _pipeline(
    repo: Repository, commits: Sequence[Commit], suffixes: Sequence[str]
) -> dict[str, str]:
    wanted = {commit.sha for commit in commits}
    shas = "".join(f"{commit.sha}\n" for commit in commits)
    argv = [
        "git",
        *NO_HOOKS,
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "--format=%H",  # the line patch-id takes as the next commit's name
        "--no-show-signature",
        "--no-notes",
        "-p",
        # What `Repository.diff_text(binary=True)` passes `git diff`.
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--binary",
        "-M",
        "--",
        *(f":(exclude,glob,icase)**/?*{suffix}" for suffix in suffixes),
    ]
    # A user's GIT_LITERAL_PATHSPECS=1 would take the exclusions for file names.
    env = {**process.clean_env(cwd=repo.root), "GIT_LITERAL_PATHSPECS": "0"}
    found: dict[str, str] = {}
    pending = b""
    try:
        for chunk in process.stream(
            argv,
            cwd=repo.root,
            stdin_text=shas,
            then=["git", *NO_HOOKS, "patch-id", "--stable"],
            env=env,
        ):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                _take(line, wanted, found)
    except process.StreamError as error:
        raise GitError(f"git log -p | git patch-id failed: {error.stderr_tail.strip()}") from None
    except OSError as error:  # git could not start
        raise GitError(f"git log -p | git patch-id failed: {error}") from None
    _take(pending, wanted, found)
    return found


def _take(line: bytes, wanted: set[str], found: dict[str, str]) -> None:
    """One `<patch-id> <commit>` line. Only the commits asked for, each its first id: a line
    of a diff that patch-id would take for a commit's name starts an id of that name, as it
    would in the diff of one commit alone."""
    words = line.decode("ascii", errors="replace").split()
    if len(words) == 2 and words[1] in wanted:
        found.setdefault(words[1], words[0])


def _one(repo: Repository, commit: Commit, suffixes: Sequence[str]) -> str | None:
    paths = [path for path in commit.paths if PurePosixPath(path).suffix.lower() not in suffixes]
    try:
        return repo.patch_id(commit.parents[0], commit.sha, paths)
    except GitError:
        return None


def _pathspec_exact(commit: Commit, suffixes: Sequence[str]) -> bool:
    """Whether the exclusions leave out exactly the paths of `commit` with those suffixes:
    `**/?*.md` with `icase` matches a name with something before `.md`, in ASCII case, and may
    match a directory of that name too."""
    for path in commit.paths:
        lowered = path.lower()  # holds any suffix the ASCII case folding of a part would
        if not any(suffix in lowered for suffix in suffixes):
            continue
        *folders, name = path.split("/")
        if any(_glob_matches(folder, suffixes) for folder in folders):
            return False
        if _glob_matches(name, suffixes) != (PurePosixPath(name).suffix.lower() in suffixes):
            return False
    return True


def _glob_matches(name: str, suffixes: Sequence[str]) -> bool:
    folded = name.translate(_ASCII_LOWER)
    return any(len(name) > len(suffix) and folded.endswith(suffix) for suffix in suffixes)
