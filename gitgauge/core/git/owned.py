"""How gitgauge runs git on git directories, indexes and configuration of its own: the settings
and environment every such command gets (`OWNED_CONFIG`, `git_env`, `owned_git`), a new git
directory and the object stores it reads (`init_git_dir`, `set_stores`, alternates quoting),
and what is read or made through one: trees edited in a scratch index, blobs and their sizes,
an agent's diff (`diff_records`, `write_patch`) and tree listings.

A work tree an agent wrote into decides nothing here: every command runs with an explicit
`GIT_DIR` (and `GIT_WORK_TREE` and `GIT_INDEX_FILE` where there is one) that gitgauge made, no
global or system configuration, no hooks, no fsmonitor, no filters or text conversion, and
objects read from stores gitgauge names (`objects/info/alternates` written from gitgauge's
records).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitError
from gitgauge.core.git import full_file_system

OWNED_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "checkout.workers=0",  # files written in parallel (one worker per core)
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.excludesFile=/dev/null",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "core.symlinks=true",
    "-c", "core.fileMode=true",
    "-c", "core.trustctime=true",
    "-c", "core.checkStat=default",
    "-c", "core.sparseCheckout=false",
    "-c", "core.splitIndex=false",
    "-c", "core.quotePath=false",
    "-c", "index.sparse=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "diff.ignoreSubmodules=all",
    "-c", "submodule.recurse=false",
    "-c", "color.ui=never",
    "-c", "advice.addEmbeddedRepo=false",
    "-c", "protocol.allow=never",
)  # fmt: skip
"""Configuration for every git command gitgauge runs over a work tree it did not write itself:
command-line settings outrank every file, and they reach git's own child processes too."""
OWNED_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding !eol !diff !merge\n"
"""`$GIT_DIR/info/attributes`, which outranks every `.gitattributes` in the work tree: bytes are
read and written as they are (no line-ending or encoding conversion, no filter, no `$Id$`), and
binary detection is git's own (a `-diff` in the work tree would hide a file's lines)."""
BYTECODE_EXCLUDES = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.py[co]")
"""Compiled bytecode never crosses from a work tree into a patch: an unchecked-hash `.pyc` runs
in place of its source, which the patch would not show."""


def git_env(git_dir: Path, work_tree: Path | None, index: Path | None) -> dict[str, str]:
    """An environment in which git reads no configuration but `git_dir`'s and the command
    line's, and finds its repository, work tree and index only where gitgauge says."""
    extra = {
        "GIT_DIR": str(git_dir),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "gitgauge",
        "GIT_AUTHOR_EMAIL": "gitgauge@localhost",
        "GIT_COMMITTER_NAME": "gitgauge",
        "GIT_COMMITTER_EMAIL": "gitgauge@localhost",
    }
    if work_tree is not None:
        extra["GIT_WORK_TREE"] = str(work_tree)
    if index is not None:
        extra["GIT_INDEX_FILE"] = str(index)
    return process.clean_env(cwd=work_tree, extra=extra)


def owned_git(
    git_dir: Path,
    *args: str,
    work_tree: Path | None = None,
    index: Path | None = None,
    stdin_text: str | None = None,
    ok_codes: Sequence[int] = (0,),
    timeout_seconds: float | None = None,
    extra_env: dict[str, str] | None = None,
) -> str:
    """Run git on gitgauge's own `git_dir` (and `work_tree`); stdout, or `GitError`."""
    result = process.run(
        ["git", *OWNED_CONFIG, *args],
        cwd=work_tree or git_dir,
        env={**git_env(git_dir, work_tree, index), **(extra_env or {})},
        stdin_text=stdin_text,
        tail_bytes=None,
        timeout_seconds=timeout_seconds,
    )
    # `git add` with an exclusion naming a path the work tree's .gitignore ignores stages
    # everything else, then says so and exits 1: what the agent ignored is not its patch anyway.
    if (
        result.exit_code == 1
        and args[:1] == ("add",)
        and "ignored by one of your .gitignore files" in result.stderr_tail
        and "fatal:" not in result.stderr_tail
    ):
        return result.stdout_tail
    if result.exit_code not in ok_codes or result.timed_out:
        detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
        full = full_file_system(git_dir)
        raise GitError(f"git {' '.join(args[:2])} failed: {detail}" + (f"\n{full}" if full else ""))
    return result.stdout_tail


def init_git_dir(git_dir: Path, *, stores: Sequence[Path], head: str | None = None) -> None:
    """A new git directory of gitgauge's own that reads its objects from `stores` (and writes
    new ones into its own `objects/`), written directly rather than by `git init`: no template
    (the user's `init.templateDir` may hold hooks), gitgauge's attributes, a work tree beside it
    rather than a bare repository, HEAD at `head` (detached) or an unborn `main`."""
    for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
        (git_dir / folder).mkdir(parents=True, exist_ok=True)
    (git_dir / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
        encoding="utf-8",
    )
    (git_dir / "HEAD").write_text(f"{head}\n" if head else "ref: refs/heads/main\n")
    (git_dir / "info" / "attributes").write_text(OWNED_ATTRIBUTES, encoding="utf-8")
    set_stores(git_dir, stores)


def set_stores(git_dir: Path, stores: Sequence[Path]) -> None:
    """Point `git_dir` at the object stores it reads (written by gitgauge, from its records)."""
    info = git_dir / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{alternates_line(store)}\n" for store in stores)
    (info / "alternates").write_text(lines, encoding="utf-8", errors="surrogateescape")


def edit_tree(
    git_dir: Path,
    tree: str,
    *,
    scratch: Path,
    remove: Sequence[str] = (),
    put: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """`tree` with the files `remove` taken out and `put` (path -> mode, object id) set, as a
    new tree of `git_dir`, made in a scratch index (`scratch`, a directory of gitgauge's): no
    work tree is read or written."""
    if not remove and not put:
        return tree
    index = scratch / "edit-tree.index"
    zero = "0" * len(tree)
    records = [f"0 {zero}\t{path}" for path in remove]
    records += [f"{mode} {object_id}\t{path}" for path, (mode, object_id) in (put or {}).items()]
    try:
        owned_git(git_dir, "read-tree", tree, index=index)
        owned_git(
            git_dir,
            "update-index",
            "-z",
            "--index-info",
            index=index,
            stdin_text="".join(f"{record}\0" for record in records),
        )
        return owned_git(git_dir, "write-tree", index=index).strip()
    finally:
        index.unlink(missing_ok=True)


def read_blob(git_dir: Path, object_id: str, *, scratch: Path) -> bytes:
    """The bytes of a blob `git_dir` reads (through a file in `scratch`: a blob may be big)."""
    out = scratch / f"blob-{threading.get_ident()}.out"
    try:
        result = process.run(
            ["git", *OWNED_CONFIG, "cat-file", "blob", object_id],
            cwd=git_dir,
            env=git_env(git_dir, None, None),
            stdout_path=out,
        )
        if not result.ok:
            raise GitError(f"git cat-file blob {object_id[:12]} failed: {result.stderr_tail}")
        return out.read_bytes()
    finally:
        out.unlink(missing_ok=True)


def alternates_line(store: Path) -> str:
    """One line of `objects/info/alternates`: git reads a line that starts with `"` as a
    C-quoted path, so a store whose path holds a newline, a quote or a backslash (or starts
    with one) is written quoted, and every other as it is."""
    text = os.fsdecode(store)
    if not any(char in text for char in '\n"\\') and not text.startswith((" ", "#")):
        return text
    return c_quote(text)


def alternates_variable(stores: Sequence[Path]) -> str:
    """`GIT_ALTERNATE_OBJECT_DIRECTORIES` naming `stores`: `:`-separated, and an entry that
    holds a `:` (or anything `alternates_line` quotes) C-quoted, which git reads the same way."""
    entries = []
    for store in stores:
        line = alternates_line(store)
        entries.append(c_quote(os.fsdecode(store)) if ":" in line and line[:1] != '"' else line)
    return os.pathsep.join(entries)


def c_quote(text: str) -> str:
    """`text` as git's C-style quoting writes it (`"a\\nb"`); non-ASCII bytes as octal."""
    out = ['"']
    for byte in os.fsencode(text):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


@dataclass(frozen=True)
class TreeChange:
    status: str
    """A (added), M, D or T against the tree the agent started from; a rename is a deletion
    plus an addition."""
    path: str
    object_id: str = ""
    """The blob the agent's tree has at `path` (all zeros for a deletion)."""


@dataclass(frozen=True)
class AgentDiff:
    """The agent's tree against the tree it started from (its patch is written apart, to a
    file: `write_patch`, so a huge one is never held in memory)."""

    changes: tuple[TreeChange, ...]
    numstat: str
    """`--numstat -z` records (renames detected)."""


DIFF_OPTIONS = ("--find-renames", "--no-ext-diff", "--no-textconv", "--no-color")


def diff_records(
    git_dir: Path, *revisions: str, work_tree: Path | None, index: Path | None
) -> AgentDiff:
    """The changes and line counts of `git diff REVISIONS` (no patch: a few bytes per file)."""
    output = owned_git(
        git_dir,
        "diff", "--raw", "--no-abbrev", "--numstat", "-z", *DIFF_OPTIONS, *revisions,
        work_tree=work_tree,
        index=index,
    )  # fmt: skip
    raw, numstat, _ = _split_diff(output)
    return AgentDiff(changes=tuple(raw), numstat=numstat)


def blob_sizes(git_dir: Path, object_ids: Sequence[str]) -> dict[str, int]:
    """object id -> size in bytes, of the ids `git_dir` has (one `cat-file --batch-check`)."""
    wanted = [object_id for object_id in object_ids if object_id.strip("0")]
    if not wanted:
        return {}
    listed = owned_git(
        git_dir,
        "cat-file",
        "--batch-check=%(objectname) %(objectsize)",
        stdin_text="".join(f"{object_id}\n" for object_id in wanted),
    )
    sizes: dict[str, int] = {}
    for line in listed.splitlines():
        name, _, size = line.partition(" ")
        if size.isdigit():
            sizes[name] = int(size)
    return sizes


def write_patch(
    git_dir: Path,
    *revisions: str,
    work_tree: Path | None,
    index: Path | None,
    dest: Path,
    limit_bytes: int,
) -> int | None:
    """Write the patch of `git diff REVISIONS` (one `git apply` accepts, binary too) to `dest`,
    streamed by git into the file; its size, or None when it passed `limit_bytes` (then
    nothing is left at `dest`)."""
    partial = dest.with_name(f".{dest.name}.partial")
    try:
        result = process.run(
            ["git", *OWNED_CONFIG, "diff", "-p", "--binary", *DIFF_OPTIONS, *revisions],
            cwd=work_tree or git_dir,
            # No opportunistic index refresh: the size limit holds for every file git writes.
            env={**git_env(git_dir, work_tree, index), "GIT_OPTIONAL_LOCKS": "0"},
            stdout_path=partial,
            tail_bytes=0,
            stdout_limit_bytes=limit_bytes,
        )
        if result.output_exceeded:
            return None
        if not result.ok:
            detail = result.stderr_tail.strip() or result.start_error or f"exit {result.exit_code}"
            raise GitError(f"git diff failed: {detail}")
        size = partial.stat().st_size
        if size > limit_bytes:
            return None
        os.replace(partial, dest)
        return size
    finally:
        partial.unlink(missing_ok=True)


def _split_diff(output: str) -> tuple[list[TreeChange], str, str]:
    """Split `git diff --raw --numstat -p -z`: raw records (`:modes ids status NUL path NUL`, a
    rename with two paths), numstat records, an empty record, then the patch."""
    marker = output.find("\0\0diff --git ")
    head, patch = (output[: marker + 1], output[marker + 2 :]) if marker != -1 else (output, "")
    tokens = head.split("\0")
    changes: list[TreeChange] = []
    position = 0
    while position < len(tokens) and tokens[position].startswith(":"):
        fields = tokens[position].split()
        status, object_id = fields[-1][0], fields[3] if len(fields) > 3 else ""
        if status in "RC":
            old, new = tokens[position + 1], tokens[position + 2]
            if status == "R":
                changes.append(TreeChange(status="D", path=old))
            changes.append(TreeChange(status="A", path=new, object_id=object_id))
            position += 3
        else:
            changes.append(TreeChange(status, tokens[position + 1], object_id))
            position += 2
    numstat = "\0".join(tokens[position:])
    return changes, numstat, patch


def parse_tree_listing(listing: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) from `git ls-tree -r -z` (`mode type id\tpath`)."""
    entries: dict[str, tuple[str, str]] = {}
    for record in listing.split("\0"):
        if "\t" not in record:
            continue
        meta, path = record.split("\t", 1)
        fields = meta.split()
        entries[path] = (fields[0], fields[2])
    return entries
