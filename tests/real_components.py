"""Tests that need a real component (node, chromium...): skipped where it is missing, but a
failure in CI (`CI=true`), where `.ci/run` installs it — a skip there would hide a regression."""

from __future__ import annotations

import os

import pytest


def require(available: bool, what: str) -> None:
    """Skip (locally) or fail (in CI) when `what` is not `available`."""
    if available:
        return
    message = f"{what} is missing (.ci/run installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)
