"""What a model is asked for a spoiler-free prompt (or a judge's verdict): the record the kinds
build and the mining stage's backends send, so it lives below both."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class RewriteRequest:
    nonce: str
    """A random marker delimiting the repository's content (it cannot close the delimiters)."""
    system: str
    """Trusted instructions."""
    user: str
    """The delimited repository content, with trusted notes around it."""

    @property
    def combined(self) -> str:
        """System and user text in one, for a backend with a single input (the claude CLI)."""
        return f"{self.system}\n\n{self.user}"


def fresh_nonce(contents: Iterable[str], nonce: str | None = None) -> str:
    """A random delimiter code that none of `contents` holds (`nonce`, a caller's choice in the
    tests, when none holds it), so the content cannot close its block."""
    shown = list(contents)
    while nonce is None or any(nonce in text for text in shown):
        nonce = secrets.token_hex(16)
    return nonce


def untrusted_block(name: str, text: str, nonce: str) -> str:
    """`text` (its final newlines dropped) between `<untrusted-NAME-NONCE>` and its closing
    tag: data from the repository, which the instructions tell the model not to follow."""
    tag = f"untrusted-{name}-{nonce}"
    return f"<{tag}>\n{text.rstrip(chr(10))}\n</{tag}>"
