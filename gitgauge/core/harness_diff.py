"""What differs between two recorded harnesses: for `run --resume` (which parts changed) and for
`gitgauge compare` (a one-line summary such as `CLAUDE.md: +12 −3 lines; model sonnet → opus`)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from gitgauge.core.fingerprint import FileEntry, StoredHarness
from gitgauge.core.text import plural

SAME = "same harness"
SETTINGS = ("adapter", "model", "command", "args", "prompt")


def changed_parts(old: StoredHarness, new: StoredHarness) -> list[str]:
    """Names of what changed from `old` to `new`: `CLAUDE.md (files) changed`, `model`,
    `env MAX_THINKING_TOKENS`, ..."""
    a, b = old.record, new.record
    parts = [key for key in SETTINGS if a.settings.get(key) != b.settings.get(key)]
    names = sorted(set(a.env) | set(b.env))
    parts += [f"env {name}" for name in names if a.env.get(name) != b.env.get(name)]
    parts += _changed_files(a.files, b.files, "files")
    if (a.configDir is None) != (b.configDir is None):
        parts.append("configDir " + ("added" if a.configDir is None else "removed"))
    else:
        parts += _changed_files(a.configDir or {}, b.configDir or {}, "configDir")
    return parts


def _changed_files(
    a: Mapping[str, FileEntry | None], b: Mapping[str, FileEntry | None], key: str
) -> list[str]:
    found: list[str] = []
    for path in sorted(set(a) | set(b)):
        if path not in a:
            found.append(f"{path} ({key}) added")
        elif path not in b:
            found.append(f"{path} ({key}) no longer listed")
        elif _digest(a[path]) != _digest(b[path]):
            found.append(f"{path} ({key}) changed")
    return found


def differences(a: StoredHarness, b: StoredHarness) -> str:
    """B against A in one line, or `same harness`."""
    parts = _file_differences(a, b, "files", "files/", "")
    parts += _file_differences(a, b, "configDir", "configDir/", "configDir/")
    ra, rb = a.record, b.record
    for key in ("adapter", "model"):
        old, new = ra.settings.get(key), rb.settings.get(key)
        if old != new:
            parts.append(f"{key} {old or 'default'} → {new or 'default'}")
    if ra.settings.get("command") != rb.settings.get("command"):
        parts.append("command changed")
    args = _args_difference(ra.settings.get("args") or [], rb.settings.get("args") or [])
    if args:
        parts.append(f"args {args}")
    prompt_a, prompt_b = ra.settings.get("prompt"), rb.settings.get("prompt")
    if prompt_a != prompt_b:
        plus, minus = _line_counts(prompt_a or "{prompt}", prompt_b or "{prompt}")
        parts.append(f"prompt template: +{plus} −{minus} lines")
    for name in sorted(set(ra.env) | set(rb.env)):
        if name not in ra.env:
            parts.append(f"env + {name}")
        elif name not in rb.env:
            parts.append(f"env − {name}")
        elif ra.env[name] != rb.env[name]:
            parts.append(f"env {name} changed")
    return "; ".join(parts) if parts else SAME


def _file_differences(
    a: StoredHarness, b: StoredHarness, key: str, folder: str, label: str
) -> list[str]:
    files_a: dict[str, FileEntry | None] = dict(getattr(a.record, key) or {})
    files_b: dict[str, FileEntry | None] = dict(getattr(b.record, key) or {})
    parts: list[str] = []
    for path in sorted(set(files_a) | set(files_b)):
        name = f"{label}{path}"
        old, new = files_a.get(path), files_b.get(path)
        in_a, in_b = path in files_a, path in files_b
        if in_a == in_b and _digest(old) == _digest(new):
            continue
        text_a = a.text(folder + path) if old is not None and old.snapshot else None
        text_b = b.text(folder + path) if new is not None and new.snapshot else None
        if old is not None and new is not None:
            if text_a is not None and text_b is not None:
                plus, minus = _line_counts(text_a, text_b)
                parts.append(f"{name}: +{plus} −{minus} lines")
            else:
                parts.append(f"{name}: changed")
        elif not in_a and new is not None:
            parts.append(f"+ {name} ({_size(new, text_b)})")
        elif not in_b and old is not None:
            parts.append(f"− {name}")
        else:
            before = _state(in_a, old, text_a)
            parts.append(f"{name}: {before} → {_state(in_b, new, text_b)}")
    return parts


def _state(listed: bool, entry: FileEntry | None, text: str | None) -> str:
    if not listed:
        return "repository's own"
    return "removed" if entry is None else _size(entry, text)


def _size(entry: FileEntry, text: str | None) -> str:
    if text is None:
        return plural(entry.size, "byte")
    return plural(len(text.splitlines()), "line")


def _digest(entry: FileEntry | None) -> str | None:
    return entry.sha256 if entry is not None else None


def _line_counts(old: str, new: str) -> tuple[int, int]:
    """Lines added and removed from `old` to `new`, as difflib pairs them."""
    plus = minus = 0
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            minus += i2 - i1
            plus += j2 - j1
    return plus, minus


def _args_difference(old: Sequence[str], new: Sequence[str]) -> str:
    words: list[str] = []
    matcher = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            words.append("− " + " ".join(old[i1:i2]))
        if tag in ("insert", "replace"):
            words.append("+ " + " ".join(new[j1:j2]))
    return ", ".join(words)
