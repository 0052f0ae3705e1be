"""A package.json script read as the shell reads it, enough to find the part that runs the tests:
its commands (split at unquoted `&&`, `||`, `;`, `|`, `&`) and each command's words, kept as
written (a quoted glob stays quoted for the runner) beside their unquoted values."""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    raw: str
    """As the script writes it, quotes included."""
    value: str
    """What the program receives (quotes removed)."""


def commands(script: str) -> list[str]:
    """The script's commands, in order, each stripped."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    index = 0
    while index < len(script):
        char = script[index]
        if quote:
            if char == "\\" and quote == '"' and index + 1 < len(script):
                current.append(script[index : index + 2])
                index += 2
                continue
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "\\" and index + 1 < len(script):
            current.append(script[index : index + 2])
            index += 2
            continue
        elif char in ";|&\n":
            parts.append("".join(current))
            current = []
            index += 2 if script[index : index + 2] in ("&&", "||") else 1
            continue
        current.append(char)
        index += 1
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def words(command: str) -> list[Word]:
    """The command's words, split at unquoted whitespace."""
    found: list[Word] = []
    current: list[str] = []
    quote = ""
    for char in command + " ":
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char.isspace():
            if current:
                raw = "".join(current)
                found.append(Word(raw, _value(raw)))
                current = []
            continue
        current.append(char)
    return found


def _value(raw: str) -> str:
    try:
        values = shlex.split(raw)
    except ValueError:
        return raw
    return values[0] if len(values) == 1 else raw
