"""The door to git for commit-history tasks (`kind: rebase`, `kind: commits`): the first-parent
history mined for file-commit chains, a chain's commits re-applied on their parents, the
interactive rebase an agent starts inside, gold's series, and an agent's series read back.

Before an agent runs, its git directory is gitgauge's own: the rebase is started there with an
explicit `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE` and gitgauge's command-line settings
(`checkout.owned_git`). After the agent, its git directory is never run: HEAD, refs and the
in-progress markers are read as plain files, its object files are copied into a directory of
gitgauge's (`copy_objects`), and the series is read through a git directory of gitgauge's that
reads those copies last, after gitgauge's own objects and the history copy (`AgentHistory`), so
an object the agent forged under a name the history already has is never the one read.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import NO_HOOKS, Repository, _tokens
from gitgauge.core.git.checkout import (
    OWNED_CONFIG,
    _plain_file,
    alternates_variable,
    git_env,
    init_git_dir,
    owned_git,
    parse_tree_listing,
    read_blob,
)

CHAIN_BRANCH = "main"
"""The branch an agent's series is on: the rebase starts from it, the commits go onto it."""
BREAK_FIRST = (
    'f() { { printf "break\\n"; cat "$1"; } > "$1.gitgauge" && mv "$1.gitgauge" "$1"; }; f'
)
"""`GIT_SEQUENCE_EDITOR` that puts `break` before the todo list's first pick: the rebase stops
before doing anything, and the agent starts inside it."""
MAX_OBJECT_BYTES = 2 * 1024**3
"""An agent's object files past this are not copied: its history is then unreadable."""
_COMMIT_MARK = "\x01"
_HEX40 = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
_LOOSE_NAME = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
_PACK_NAME = re.compile(r"pack-[0-9a-f]{40,64}\.(?:pack|idx)")


# -- mining: the first-parent history with line counts --------------------------------------


@dataclass(frozen=True)
class FileChange:
    """One path a commit changed against its first parent (renames seen as delete + add)."""

    status: str
    """A, M, D or T."""
    path: str
    old_mode: str
    new_mode: str
    added: int | None
    """Lines added; None for a binary file."""
    deleted: int | None

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.deleted or 0)

    @property
    def is_submodule(self) -> bool:
        return "160000" in (self.old_mode, self.new_mode)


@dataclass(frozen=True)
class LoggedCommit:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    changes: tuple[FileChange, ...]

    def change_of(self, path: str) -> FileChange | None:
        return next((change for change in self.changes if change.path == path), None)


def first_parent_log(
    repo: Repository, rev: str = "HEAD", *, max_count: int
) -> Iterator[LoggedCommit]:
    """The last `max_count` first-parent commits of `rev`, newest first, each with its changes
    and line counts against its first parent (a merge lists none). One streamed `git log`."""
    argv = [
        "git",
        *NO_HOOKS,
        "log",
        "--first-parent",
        f"--max-count={max_count}",
        "-z",
        "--raw",
        "--numstat",
        "--no-renames",
        "--no-abbrev",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--encoding=UTF-8",
        "--no-show-signature",
        "--format=" + _COMMIT_MARK + "%H%x00%P%x00%s%x00%b%x00",
        rev,
        "--",
    ]
    try:
        yield from _parse_numstat_log(_tokens(process.stream(argv, cwd=repo.root)))
    except process.StreamError as error:
        raise GitError(f"git log failed in {repo.root}: {error.stderr_tail.strip()}") from None


def _parse_numstat_log(tokens: Iterator[str]) -> Iterator[LoggedCommit]:
    header: list[str] | None = None
    raw: dict[str, tuple[str, str, str]] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}

    def finish(fields: Sequence[str]) -> LoggedCommit:
        sha, parents, subject, body = fields
        changes = tuple(
            FileChange(
                status=status,
                path=path,
                old_mode=old_mode,
                new_mode=new_mode,
                added=counts.get(path, (None, None))[0],
                deleted=counts.get(path, (None, None))[1],
            )
            for path, (status, old_mode, new_mode) in raw.items()
        )
        return LoggedCommit(sha, tuple(parents.split()), subject, body.strip("\n"), changes)

    iterator = iter(tokens)
    for token in iterator:
        if token.startswith(_COMMIT_MARK):
            if header is not None:
                yield finish(header)
            header = [token[1:], next(iterator), next(iterator), next(iterator)]
            raw, counts = {}, {}
            continue
        record = token.lstrip("\n")
        if not record:
            continue
        if record.startswith(":"):  # `:old_mode new_mode old_id new_id status` NUL path
            fields = record[1:].split()
            raw[next(iterator)] = (fields[4][0], fields[0], fields[1])
            continue
        added, _, rest = record.partition("\t")
        deleted, _, path = rest.partition("\t")
        counts[path] = (_count(added), _count(deleted))
    if header is not None:
        yield finish(header)


def _count(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def replay_problem(repo: Repository, parent: str, commit: str) -> str | None:
    """None when `commit`'s patch (binary included), applied to `parent`'s tree in an index of
    gitgauge's own, gives exactly `commit`'s tree; else what went wrong, in git's words. New
    objects go to a temporary object directory: nothing is written into the user's `.git`."""
    with tempfile.TemporaryDirectory(prefix="gitgauge-replay-") as folder:
        patch = Path(folder) / "commit.patch"
        made = process.run(
            [
                "git", *NO_HOOKS, "diff", "--binary", "--full-index", "--no-renames", "--no-color",
                "--no-ext-diff", "--no-textconv", parent, commit, "--",
            ],
            cwd=repo.root,
            stdout_path=patch,
        )  # fmt: skip
        if not made.ok:
            return f"git diff failed: {made.stderr_tail.strip()}"
        (Path(folder) / "objects" / "pack").mkdir(parents=True)
        env = process.clean_env(
            cwd=repo.root,
            extra={
                "GIT_INDEX_FILE": str(Path(folder) / "index"),
                "GIT_OBJECT_DIRECTORY": str(Path(folder) / "objects"),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates_variable(repo.object_stores()),
            },
        )
        steps = [["read-tree", parent]]
        if patch.stat().st_size:  # an empty commit has nothing to apply
            steps.append(["apply", "--cached", "--whitespace=nowarn", str(patch)])
        for step in steps:
            result = process.run(["git", *NO_HOOKS, *step], cwd=repo.root, env=env)
            if not result.ok:
                lines = result.stderr_tail.strip().splitlines()
                return lines[-1] if lines else f"git {step[0]}: exit {result.exit_code}"
        written = process.run(["git", *NO_HOOKS, "write-tree"], cwd=repo.root, env=env)
        if not written.ok or written.stdout_tail.strip() != tree_of(repo, commit):
            return "re-applied on its parent, it gives another tree than its own"
    return None


# -- a pair's workspace, before the agent ------------------------------------------------------


def attach_head(agent_dir: Path, branch: str = CHAIN_BRANCH) -> None:
    """HEAD on `branch` at the commit `agent_repository` detached it at (the checkout's), as a
    developer's checkout has it: a reset, a rebase and new commits then move the branch. The
    branch is a loose ref: with `run.history: full` the packed refs also hold the user's own
    branches, and git reads the last of two packed `refs/heads/main`; a loose one wins."""
    head = (agent_dir / "HEAD").read_text(encoding="utf-8").strip()
    if not _HEX40.fullmatch(head):
        raise GitError(f"{agent_dir / 'HEAD'} is not a detached HEAD ({head[:60]!r})")
    ref = agent_dir / "refs" / "heads" / branch
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(f"{head}\n", encoding="utf-8")
    (agent_dir / "HEAD").write_text(f"ref: refs/heads/{branch}\n", encoding="utf-8")


def start_rebase(agent_dir: Path, work_tree: Path, *, count: int) -> list[str]:
    """`git rebase -i HEAD~count` in the agent's fresh git directory, with a sequence editor that
    puts `break` first: the rebase stops before its first pick, HEAD detached at the chain's
    parent, the todo list picking the chain unchanged. Returns the todo list's lines."""
    owned_git(
        agent_dir,
        "rebase",
        "--interactive",
        "--no-autosquash",
        f"HEAD~{count}",
        work_tree=work_tree,
        index=agent_dir / "index",
        extra_env={"GIT_SEQUENCE_EDITOR": BREAK_FIRST, "GIT_EDITOR": "true"},
    )
    todo = agent_dir / "rebase-merge" / "git-rebase-todo"
    if not todo.is_file():
        raise GitError(f"git rebase -i HEAD~{count} did not stop at its `break` in {agent_dir}")
    return [line for line in todo.read_text(encoding="utf-8").splitlines() if line.strip()]


def finish_rebase(work_tree: Path) -> None:
    """`git rebase --continue` through the work tree's `.git`, as an agent would run it (gold on
    a rebase task: the todo list as it stands replays the chain unchanged)."""
    _workspace_git(work_tree, "rebase", "--continue", extra={"GIT_EDITOR": "true"})


@dataclass(frozen=True)
class Author:
    name: str
    email: str
    date: str


def commit_author(repo: Repository, sha: str) -> Author:
    name, email, date = repo.git("log", "-1", "--format=%an%x00%ae%x00%aI", sha).strip().split("\0")
    return Author(name, email, date)


def raw_message(repo: Repository, sha: str) -> str:
    """A commit's message exactly as its object holds it."""
    raw = repo.git("cat-file", "commit", sha)
    return raw.split("\n\n", 1)[1] if "\n\n" in raw else ""


def commit_everything(
    work_tree: Path, message: str, *, author: Author, paths: Sequence[str]
) -> None:
    """Stage `paths` (new, changed and deleted files alike) and `git commit` through the work
    tree's `.git`, the message kept byte for byte (gold on a commits task writes the original
    series)."""
    _workspace_git(work_tree, "add", "--all", "--", *(f":(literal){path}" for path in paths))
    _workspace_git(
        work_tree,
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "--cleanup=verbatim",
        "--file=-",
        stdin_text=message,
        extra={
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_AUTHOR_DATE": author.date,
        },
    )


def _workspace_git(
    work_tree: Path, *args: str, extra: dict[str, str] | None = None, stdin_text: str | None = None
) -> None:
    env = process.clean_env(
        cwd=work_tree,
        extra={
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "gitgauge",
            "GIT_AUTHOR_EMAIL": "gitgauge@localhost",
            "GIT_COMMITTER_NAME": "gitgauge",
            "GIT_COMMITTER_EMAIL": "gitgauge@localhost",
            **(extra or {}),
        },
    )
    result = process.run(
        ["git", *NO_HOOKS, *args], cwd=work_tree, env=env, stdin_text=stdin_text, tail_bytes=None
    )
    if not result.ok:
        detail = (
            result.stderr_tail.strip() or result.stdout_tail.strip() or f"exit {result.exit_code}"
        )
        raise GitError(f"git {' '.join(args[:2])} failed in {work_tree}: {detail}")


# -- after the agent: its git directory read as data -----------------------------------------

IN_PROGRESS_MARKERS = (
    ("rebase-merge", "rebase"),
    ("rebase-apply", "rebase"),
    ("MERGE_HEAD", "merge"),
    ("CHERRY_PICK_HEAD", "cherry-pick"),
    ("REVERT_HEAD", "revert"),
    ("sequencer", "cherry-pick or revert sequence"),
)
"""Files and directories git leaves in a git directory while an operation is unfinished."""


@dataclass(frozen=True)
class HeadState:
    """What an agent's git directory says of HEAD, read from its files."""

    ref: str | None
    """The branch HEAD is on (`refs/heads/main`); None when HEAD is detached or unreadable."""
    sha: str | None
    """The commit HEAD names, when it names one."""
    in_progress: tuple[str, ...]
    """Operations left unfinished (`rebase`, `merge`, ...)."""


def read_head_state(agent_dir: Path) -> HeadState:
    """HEAD, the ref it names (loose or packed) and the in-progress markers of an agent's git
    directory, as plain files: never followed through a symlink, never through git."""
    in_progress: list[str] = []
    for name, operation in IN_PROGRESS_MARKERS:
        try:
            (agent_dir / name).lstat()
        except OSError:
            continue
        if operation not in in_progress:
            in_progress.append(operation)
    text = (_plain_file(agent_dir / "HEAD") or b"").decode("utf-8", "replace").strip()
    ref: str | None = None
    sha: str | None = None
    if text.startswith("ref: "):
        name = text.removeprefix("ref: ").strip()
        parts = PurePosixPath(name).parts
        if parts[:2] == ("refs", "heads") and ".." not in parts and len(parts) > 2:
            ref = name
            sha = read_ref(agent_dir, name)
    elif text:
        sha = text
    if sha is not None and not _HEX40.fullmatch(sha):
        sha = None
    return HeadState(ref=ref, sha=sha, in_progress=tuple(in_progress))


def read_ref(agent_dir: Path, name: str) -> str | None:
    """The sha a ref names in a git directory: its loose file, else `packed-refs`."""
    loose = _plain_file(agent_dir / name)
    if loose is not None:
        found = loose.decode("ascii", "replace").strip()
        return found if _HEX40.fullmatch(found) else None
    packed = (_plain_file(agent_dir / "packed-refs") or b"").decode("utf-8", "replace")
    for line in packed.splitlines():
        sha, _, ref = line.partition(" ")
        if ref.strip() == name and _HEX40.fullmatch(sha):
            return sha
    return None


def copy_objects(agent_dir: Path, dest: Path, *, max_bytes: int = MAX_OBJECT_BYTES) -> bool:
    """Copy the agent's object files (loose objects and packs: regular files with git's names,
    never a symlink, never `info/alternates`) into `dest`, a new object directory of gitgauge's.
    False when there are more than `max_bytes` of them (nothing more is copied)."""
    source = agent_dir / "objects"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "pack").mkdir(exist_ok=True)
    try:
        if not stat.S_ISDIR(source.lstat().st_mode):
            return True
    except OSError:
        return True
    copied = 0
    for folder in sorted(os.listdir(source)):
        here = source / folder
        if not (_LOOSE_DIR.fullmatch(folder) or folder == "pack") or not _is_dir(here):
            continue
        for name in sorted(os.listdir(here)):
            wanted = _PACK_NAME.fullmatch(name) if folder == "pack" else _LOOSE_NAME.fullmatch(name)
            entry = here / name
            try:
                info = entry.lstat()
            except OSError:
                continue
            if not wanted or not stat.S_ISREG(info.st_mode):
                continue
            copied += info.st_size
            if copied > max_bytes:
                return False
            (dest / folder).mkdir(exist_ok=True)
            try:
                shutil.copyfile(entry, dest / folder / name, follow_symlinks=False)
            except OSError:
                continue
    return True


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class SeriesCommit:
    """One commit of an agent's series (or of the original chain), as its object says."""

    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str

    @property
    def subject(self) -> str:
        """The first paragraph on one line, as `git log --format=%s` shows it."""
        paragraph = self.message.strip("\n").split("\n\n", 1)[0]
        return " ".join(line.strip() for line in paragraph.splitlines()).strip()


SHOW_ARGS = (
    "show", "--no-color", "--no-ext-diff", "--no-textconv", "--stat", "--patch", "--format=%B",
)  # fmt: skip
"""How a commit is shown to the judge: its message, then its diffstat and patch; never its id,
author or date, which would tell the original from the agent's series."""


class AgentHistory:
    """An agent's commits read as data: a git directory of gitgauge's own (`series.git` in
    `holder`) whose objects come from `stores` (gitgauge's checkout objects, the history copy),
    then from `agent_objects` (a `copy_objects` copy), in that order."""

    def __init__(self, holder: Path, *, stores: Sequence[Path], agent_objects: Path) -> None:
        self.git_dir = holder / "series.git"
        if self.git_dir.exists():
            shutil.rmtree(self.git_dir)
        init_git_dir(self.git_dir, stores=[*stores, agent_objects])

    def git(self, *args: str, index: Path | None = None, work_tree: Path | None = None) -> str:
        return owned_git(self.git_dir, *args, index=index, work_tree=work_tree, timeout_seconds=120)

    def commit(self, sha: str) -> SeriesCommit | None:
        """The commit `sha`, or None when no store holds it (or it is not a commit)."""
        out = self.git_dir / "cat-file.out"
        try:
            result = process.run(
                ["git", *OWNED_CONFIG, "cat-file", "commit", sha],
                cwd=self.git_dir,
                env=git_env(self.git_dir, None, None),
                stdout_path=out,
                timeout_seconds=60,
            )
            if not result.ok:
                return None
            return parse_commit(sha, out.read_bytes())
        finally:
            out.unlink(missing_ok=True)

    def walk(self, head: str, stop: str, *, limit: int) -> list[SeriesCommit] | None:
        """The commits from `head` back along first parents until `stop` (excluded), oldest
        first; None when `stop` is not reached within `limit` commits or a commit is missing."""
        series: list[SeriesCommit] = []
        current = head
        while current != stop:
            if len(series) >= limit:
                return None
            commit = self.commit(current)
            if commit is None or not commit.parents:
                return None
            series.append(commit)
            current = commit.parents[0]
        return list(reversed(series))

    def read_blob(self, object_id: str) -> bytes:
        return read_blob(self.git_dir, object_id, scratch=self.git_dir)

    def entries(self, treeish: str) -> dict[str, tuple[str, str]] | None:
        """path -> (mode, object id) of every file of `treeish`; None when it is unreadable."""
        try:
            return parse_tree_listing(self.git("ls-tree", "-r", "-z", treeish))
        except GitError:
            return None

    def index_tree(self, index: Path) -> str | None:
        """The tree an index file (a copy of the agent's) holds; None when it holds unmerged
        entries or cannot be read. Objects it names need not exist (`--missing-ok`)."""
        try:
            return self.git("write-tree", "--missing-ok", index=index).strip()
        except GitError:
            return None

    def show(self, shas: Sequence[str]) -> str:
        """The commits one after another as `SHOW_ARGS` shows them."""
        return show_series([self.git(*SHOW_ARGS, sha) for sha in shas])

    def lay_tree(self, tree: str, *, work_tree: Path, index: Path) -> None:
        """Make `tree` a checkout's index and tracked files (objects read as this reader reads
        them): one commit of the agent's series, to be tested."""
        self.git("read-tree", "--reset", "-u", tree, index=index, work_tree=work_tree)


def show_series(shown: Sequence[str]) -> str:
    """Numbered `git show` texts, the form the judge reads for both series."""
    return "\n".join(
        f"--- commit {number} of {len(shown)} ---\n{text.rstrip()}\n"
        for number, text in enumerate(shown, 1)
    )


def show_original(repo: Repository, shas: Sequence[str]) -> str:
    """The original chain shown as `AgentHistory.show` shows an agent's series."""
    return show_series([repo.git(*SHOW_ARGS, sha) for sha in shas])


def parse_commit(sha: str, raw: bytes) -> SeriesCommit | None:
    """A raw commit object: its tree, parents and message (undecodable bytes replaced)."""
    head, _, message = raw.partition(b"\n\n")
    tree: str | None = None
    parents: list[str] = []
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        text = value.decode("ascii", "replace").strip()
        if key == b"tree" and tree is None and _HEX40.fullmatch(text):
            tree = text
        elif key == b"parent" and _HEX40.fullmatch(text):
            parents.append(text)
    if tree is None:
        return None
    return SeriesCommit(sha, tree, tuple(parents), message.decode("utf-8", "replace"))


def tree_of(repo: Repository, commit: str) -> str:
    return repo.git("rev-parse", f"{commit}^{{tree}}").strip()
