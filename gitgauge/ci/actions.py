"""What GitHub Actions tells a job about its pull request: the refs to compare, where to post,
and whether the pull request comes from a fork.

Read from the environment the runner sets (`GITHUB_EVENT_PATH`: the `pull_request` event's JSON,
`GITHUB_BASE_REF`, `GITHUB_SHA`, `GITHUB_REPOSITORY`, `GITHUB_API_URL`, `GITHUB_TOKEN`) when the
command line does not say; every value missing or malformed is a one-line `UsageError` naming the
variable or flag.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitgauge.core.errors import UsageError

DEFAULT_API_URL = "https://api.github.com"


@dataclass(frozen=True)
class PullRequest:
    """The pull request of the event, as far as the check needs it."""

    number: int
    base_sha: str | None
    head_sha: str | None
    base_ref: str | None
    head_repository: str | None
    """`owner/name` of the head's repository (a fork's, for a pull request from a fork)."""
    base_repository: str | None

    @property
    def from_fork(self) -> bool:
        """The head's repository is not the base's; a head without one (a deleted fork's) is
        taken for a fork too: nothing says it is not."""
        if self.base_repository is None:
            return False
        head = self.head_repository
        return head is None or head.lower() != self.base_repository.lower()


@dataclass(frozen=True)
class CiContext:
    """The refs to compare and where the verdict goes."""

    base: str
    head: str
    pull_request: PullRequest | None
    repository: str | None
    api_url: str
    token: str | None


def read_event(path: Path) -> PullRequest | None:
    """The pull request of the event file at `path`; None for an event without one (a push)."""
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(
            f"GITHUB_EVENT_PATH {path}: cannot read it ({error.strerror}); run the check in a "
            "pull_request workflow, or pass --base and --head"
        ) from None
    except json.JSONDecodeError:
        raise UsageError(f"GITHUB_EVENT_PATH {path}: not a JSON event file") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        return None
    number = pull.get("number", event.get("number"))
    if not isinstance(number, int):
        raise UsageError(f"GITHUB_EVENT_PATH {path}: its pull_request has no number")
    base, head = _mapping(pull.get("base")), _mapping(pull.get("head"))
    return PullRequest(
        number=number,
        base_sha=_text(base.get("sha")),
        head_sha=_text(head.get("sha")),
        base_ref=_text(base.get("ref")),
        head_repository=_text(_mapping(head.get("repo")).get("full_name")),
        base_repository=_text(_mapping(base.get("repo")).get("full_name")),
    )


def ci_context(
    environ: Mapping[str, str], *, base: str | None, head: str | None, pull: int | None
) -> CiContext:
    """The refs and the pull request from the flags, else from GitHub Actions' environment."""
    event_path = environ.get("GITHUB_EVENT_PATH")
    request = read_event(Path(event_path)) if event_path else None
    if pull is not None:
        request = _numbered(request, pull)
    if base is None:
        base = _base_from(environ, request)
    if head is None:
        head = (request.head_sha if request else None) or environ.get("GITHUB_SHA") or None
    if head is None:
        raise UsageError(
            "no head to compare: pass --head REF (or run in GitHub Actions, which sets "
            "GITHUB_EVENT_PATH and GITHUB_SHA)"
        )
    return CiContext(
        base=base,
        head=head,
        pull_request=request,
        repository=environ.get("GITHUB_REPOSITORY")
        or (request.base_repository if request else None),
        api_url=environ.get("GITHUB_API_URL") or DEFAULT_API_URL,
        token=environ.get("GITHUB_TOKEN") or None,
    )


def _base_from(environ: Mapping[str, str], request: PullRequest | None) -> str:
    if request is not None and request.base_sha:
        return request.base_sha
    ref = environ.get("GITHUB_BASE_REF")
    if ref:
        # actions/checkout fetches the base branch as a remote-tracking branch
        return f"origin/{ref}"
    raise UsageError(
        "no base to compare with: pass --base REF (or run in a pull_request workflow, which "
        "sets GITHUB_EVENT_PATH and GITHUB_BASE_REF)"
    )


def _numbered(request: PullRequest | None, number: int) -> PullRequest:
    if number <= 0:
        raise UsageError(f"--pr must be a pull request's number, got {number}")
    if request is None:
        return PullRequest(number, None, None, None, None, None)
    return PullRequest(
        number,
        request.base_sha,
        request.head_sha,
        request.base_ref,
        request.head_repository,
        request.base_repository,
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
