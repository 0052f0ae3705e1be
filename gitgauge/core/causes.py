"""What the agent adapters' failure causes share: where a text says an HTTP status."""

from __future__ import annotations


def said_status(codes: str) -> str:
    """A pattern for an HTTP status among `codes` where a text says it is one (`API Error: 402`,
    `status 429`, `"status":401`, `HTTP/1.1 403`): a bare number is no status (a traceback's
    `line 402`, an agent's `401 tests pass`), and `run` stops a whole config on these causes."""
    return (
        rf"\b(?:api error|status(?:[ _]?code)?|http(?:/[\d.]+)?|error code)[\s:=\"']*(?:{codes})\b"
    )
