"""Which file a test's parameter names: a test in a file the fix did not change is still the fix's
own when it runs on a data file the fix added or changed (toml-test's
`tests/data/invalid/carriage-return.toml`, run by the unchanged
`tests/test_data.py::test_invalid[carriage-return]`).

The parameter of a test name, by its form:

- the text inside the trailing `[...]` of its name (pytest's parametrised ids): pytest's escaping
  undone (`\\xNN`, `\\uNNNN`), and tried whole, without the counter pytest appends to a repeated
  id (`empty0`, `x1_0`), and by every run of its `-`-separated parts (pytest joins several
  parameters with `-`, and file names hold `-` too);
- the subtests after a Go test's name (`TestParse/valid/carriage-return`), by every run of its
  `/`-separated levels;
- the whole title (node's runner, mocha, tape, vitest: `it(file, ...)`), only as a name or path.

A piece names a file when, read as a path (`\\` as `/`), it is the file's name, a path ending in
it with or without the extension (`invalid/carriage-return.toml`, `invalid/carriage-return`,
`/abs/checkout/tests/data/invalid/carriage-return.toml`), or, for the first two forms, its bare
stem when that has at least `MIN_STEM` characters and a letter: `[1]`, `[a]` or `[cr]` name no
file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

MIN_STEM = 3
"""The shortest stem a bare parameter may name (`[a]`, `[cr]` are too common to mean a file)."""
MAX_PARTS = 32
"""Parameters with more parts are tried whole (their runs grow with the square)."""

_BRACKETED = re.compile(r"[^\[]*\[(?P<parameter>.+)\]")
_GO_SUBTEST = re.compile(r"(?:Test|Fuzz|Example)[^/]*/(?P<parameter>.+)")
# pytest makes a repeated id unique with a counter, after `_` when the id ends with a digit.
_COUNTER = re.compile(r"(?<=\d)_\d+$|(?<=[^\d_])\d+$")
_LETTER = re.compile(r"[^\W\d_]")
# What pytest's `ascii_escaped` writes for a character that is not printable ASCII.
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[tnr\\])")
_ESCAPED = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}


@dataclass(frozen=True)
class Piece:
    text: str
    stem_ok: bool
    """A bare stem may match (a bracketed or Go parameter, not a free title)."""


def pieces(title: str) -> Iterator[Piece]:
    """What of a test's own name (after `classname::`) may name a file (rules in the doc)."""
    yield Piece(title, stem_ok=False)
    bracketed = _BRACKETED.fullmatch(title)
    if bracketed:
        for parameter in _variants(bracketed["parameter"]):
            yield from _runs(parameter, "-")
    go = _GO_SUBTEST.fullmatch(title)
    if go:
        yield from _runs(go["parameter"], "/")


def _variants(parameter: str) -> list[str]:
    """The id as written, unescaped, and each without a trailing duplicate counter."""
    found = [parameter, _ESCAPE.sub(_unescape, parameter)]
    found += [_COUNTER.sub("", text) for text in found]
    return list(dict.fromkeys(text for text in found if text))


def _unescape(escape: re.Match[str]) -> str:
    code = escape[1]
    if code[0] in "xuU":
        point = int(code[1:], 16)
        return chr(point) if point <= 0x10FFFF else escape[0]
    return _ESCAPED[code]


def _runs(parameter: str, separator: str) -> Iterator[Piece]:
    parts = parameter.split(separator)
    if len(parts) > MAX_PARTS:
        yield Piece(parameter, stem_ok=True)
        return
    for start in range(len(parts)):
        for end in range(start + 1, len(parts) + 1):
            yield Piece(separator.join(parts[start:end]), stem_ok=True)


class NamedFiles:
    """The files a parameter may name (the fix's test files it added or changed), by each name
    a parameter may give them."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_ending: dict[str, str] = {}
        """Name, path endings with and without the extension -> the file."""
        self._by_path: dict[str, str] = {}
        """The whole path, with and without the extension -> the file (for absolute paths)."""
        self._by_stem: dict[str, str] = {}
        for path in paths:
            self._add(path)

    def _add(self, path: str) -> None:
        pure = PurePosixPath(path)
        parts = pure.parts
        bare = pure.with_suffix("").parts if pure.suffix else ()
        for count in range(1, len(parts) + 1):
            if pure.suffix or count > 1:  # a name without an extension is a bare stem
                self._by_ending.setdefault("/".join(parts[-count:]), path)
            if count > 1 and bare:
                self._by_ending.setdefault("/".join(bare[-count:]), path)
        self._by_path.setdefault(path, path)
        if bare:
            self._by_path.setdefault("/".join(bare), path)
        stem = pure.stem if pure.suffix else pure.name
        if len(stem) >= MIN_STEM and _LETTER.search(stem):
            self._by_stem.setdefault(stem, path)

    def named_by(self, title: str) -> str | None:
        """The file a test's own name (after `classname::`) names, or None."""
        if not self._by_path:
            return None
        for piece in pieces(title):
            found = self._named(piece)
            if found is not None:
                return found
        return None

    def _named(self, piece: Piece) -> str | None:
        text = piece.text.replace("\\", "/").removeprefix("./")
        found = self._by_ending.get(text)
        if found is None and piece.stem_ok:
            found = self._by_stem.get(text)
        slash = text.find("/")
        while found is None and slash >= 0:  # an absolute path, or one from elsewhere
            found = self._by_path.get(text[slash + 1 :])
            slash = text.find("/", slash + 1)
        return found
