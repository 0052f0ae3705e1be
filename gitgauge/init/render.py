"""gitgauge.yaml as `init` writes it from what it detected (the keys it set, each under a comment
saying where it came from, then every other key commented out as in the template), and the
change it proposes to an existing file: only the keys it detects edited in place, the rest of the
file (comments, other keys) kept, checked by loading both."""

from __future__ import annotations

import copy
import difflib
import json
import re
import textwrap
from typing import Any

import yaml

from gitgauge.core.schema import RepoConfig
from gitgauge.init.records import Settings
from gitgauge.init.template import template_text

HEADER = (
    "# gitgauge configuration, written by `gitgauge init` from this repository's own files: the\n"
    "# comment above each key says where its value came from. `gitgauge doctor` checks the\n"
    "# setup; `gitgauge init --detect` shows what detection would change later.\n"
    '# Every key is explained on the "Configuration keys" page of gitgauge\'s documentation\n'
    "# (docs/reference/config.md in gitgauge's own repository, not this one).\n"
)
OTHER_KEYS = "# Every other key gitgauge reads, commented out, with its default (or an example):\n"
REWRITTEN = (
    "# gitgauge configuration, rewritten by `gitgauge init --write` (the earlier file's layout\n"
    "# could not be edited in place; its keys and values are kept, its comments are not).\n"
)
PLAIN = re.compile(r"^[A-Za-z0-9_./-]+$")


def render_new(settings: Settings) -> str:
    """The whole file for a repository without one."""
    blocks = [HEADER.rstrip("\n")]
    written = {"testCommand"}
    blocks.append(_block("testCommand", f"testCommand: {_scalar(settings.test_command)}", settings))
    if settings.link:
        written.add("worktree")
        blocks.append(_block("worktree", f"worktree:\n  link: {_flow(settings.link)}", settings))
    if settings.timeout_test_ms is not None:
        written.add("timeouts")
        blocks.append(
            _block("timeouts", f"timeouts:\n  test: {settings.timeout_test_ms}", settings)
        )
    rest = [block for block in template_blocks() if template_key(block) not in written]
    return "\n\n".join([*blocks, OTHER_KEYS.rstrip("\n"), *rest]) + "\n"


def _block(key: str, body: str, settings: Settings) -> str:
    return "\n".join([*_comment(settings, key), body])


def _comment(settings: Settings, key: str) -> list[str]:
    """The comment above a key `init` writes (where its value came from), wrapped at 100."""
    text = settings.comments.get(key, "")
    lines = textwrap.wrap(text, width=98, break_long_words=False, break_on_hyphens=False)
    return [f"# {line}" for line in lines]


def template_blocks() -> list[str]:
    """The template's blocks of commented keys (one top-level key each), its header left out."""
    text = template_text("gitgauge.yaml")
    return [block.strip("\n") for block in text.split("\n\n")[1:] if block.strip()]


def template_key(block: str) -> str | None:
    for line in block.splitlines():
        found = re.match(r"^# ([A-Za-z_]+):", line)
        if found and found.group(1) in RepoConfig.model_fields:
            return found.group(1)
    return None


def propose(existing: str, settings: Settings) -> str:
    """`existing` with the detected keys set; a file that sets nothing yet (the template, only
    comments) becomes the detected file whole."""
    current = yaml.safe_load(existing)
    if not isinstance(current, dict) or not current:
        return render_new(settings)
    expected = merged(current, settings)
    if expected == current:
        return existing
    lines = existing.splitlines()
    # In a file init wrote, the comment above a key it changes says the new value's source.
    ours = existing.startswith(HEADER.splitlines()[0])
    if current.get("testCommand") != settings.test_command:
        _set_top(lines, "testCommand", _scalar(settings.test_command), settings, ours=ours)
    link = _section(expected, "worktree").get("link")
    if link and link != _section(current, "worktree").get("link"):
        _set_nested(lines, ("worktree", "link"), _flow(link), settings, ours=ours)
    timeout = settings.timeout_test_ms
    if timeout is not None and _section(current, "timeouts").get("test") != timeout:
        _set_nested(lines, ("timeouts", "test"), str(timeout), settings, ours=ours)
    text = "\n".join(lines).rstrip("\n") + "\n"
    try:
        if yaml.safe_load(text) == expected:
            return text
    except yaml.YAMLError:
        pass
    return REWRITTEN + yaml.safe_dump(expected, sort_keys=False, allow_unicode=True, width=100)


def _section(values: dict[str, Any], name: str) -> dict[str, Any]:
    section = values.get(name)
    return section if isinstance(section, dict) else {}


def merged(current: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The existing keys with the detected ones set: `worktree.link` gains the detected entries
    (its own kept), `testCommand` and `timeouts.test` are replaced."""
    result = copy.deepcopy(current)
    result["testCommand"] = settings.test_command
    if settings.link:
        worktree = result.setdefault("worktree", {})
        if isinstance(worktree, dict):
            listed = worktree.get("link")
            links: list[Any] = listed if isinstance(listed, list) else []
            worktree["link"] = [*links, *(name for name in settings.link if name not in links)]
    if settings.timeout_test_ms is not None:
        timeouts = result.setdefault("timeouts", {})
        if isinstance(timeouts, dict):
            timeouts["test"] = settings.timeout_test_ms
    return result


def _recomment(lines: list[str], index: int, settings: Settings, key: str, *, ours: bool) -> int:
    """The comment lines right above line `index` replaced by `key`'s (in a file init wrote);
    the line's index after that."""
    if not ours:
        return index
    start = index
    while start > 0 and lines[start - 1].startswith("#"):
        start -= 1
    comment = _comment(settings, key)
    lines[start:index] = comment
    return start + len(comment)


def _set_top(lines: list[str], key: str, value: str, settings: Settings, *, ours: bool) -> None:
    for index, line in enumerate(lines):
        if re.match(rf"^{re.escape(key)}\s*:", line):
            index = _recomment(lines, index, settings, key, ours=ours)
            lines[index : _block_end(lines, index, 0)] = [f"{key}: {value}"]
            return
    at = next(
        (i for i, line in enumerate(lines) if line.strip() and not line.startswith("#")),
        len(lines),
    )
    lines[at:at] = [*_comment(settings, key), f"{key}: {value}", ""]


def _set_nested(
    lines: list[str], path: tuple[str, str], value: str, settings: Settings, *, ours: bool
) -> None:
    """`section.key: value`, edited in a block-style section, else added; a section in another
    style (`worktree: {link: [x]}`) is left for `propose`'s check to catch."""
    section, key = path
    for index, line in enumerate(lines):
        if not re.match(rf"^{re.escape(section)}\s*:", line):
            continue
        if not re.match(rf"^{re.escape(section)}\s*:\s*(#.*)?$", line):
            return
        index = _recomment(lines, index, settings, section, ours=ours)
        end = _block_end(lines, index, 0)
        children = [
            i
            for i in range(index + 1, end)
            if lines[i].strip() and not lines[i].lstrip().startswith("#")
        ]
        indent = _indent(lines[children[0]]) if children else 2
        for child in children:
            if _indent(lines[child]) == indent and re.match(
                rf"^\s+{re.escape(key)}\s*:", lines[child]
            ):
                lines[child : _block_end(lines, child, indent)] = [f"{' ' * indent}{key}: {value}"]
                return
        lines.insert(index + 1, f"{' ' * indent}{key}: {value}")
        return
    if lines and lines[-1].strip():
        lines.append("")
    lines += [*_comment(settings, section), f"{section}:", f"  {key}: {value}"]


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after the value of the key at `start` (indented `indent`): the lines indented
    deeper, or a block sequence at its own indentation."""
    end = index = start + 1
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        depth = _indent(line)
        if depth > indent or (depth == indent and line.lstrip()[:2] in ("- ", "-")):
            index += 1
            end = index
            continue
        break
    return end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _scalar(text: str) -> str:
    """A YAML string: single-quoted when that needs no escape (a command quoting its own
    arguments with double quotes), else double-quoted (JSON's escapes are YAML's)."""
    if "'" not in text and text.isprintable():
        return f"'{text}'"
    return json.dumps(text, ensure_ascii=False)


def _flow(items: Any) -> str:
    return "[" + ", ".join(i if PLAIN.match(i) else _scalar(i) for i in items) + "]"


def unified(old: str | None, new: str, *, name: str) -> str:
    """The change from `old` (None: no file yet) to `new`, as `diff -u` prints it."""
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"{name} (now)",
            tofile=f"{name} (detected)",
        )
    )
