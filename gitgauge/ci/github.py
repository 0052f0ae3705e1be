"""The one door to GitHub's REST API: the pull request's comments, read, created and updated with
the workflow's token (`urllib` from the standard library; nothing else of gitgauge talks HTTP to
GitHub).

The token needs only `pull-requests: write` (a pull request's conversation comments are issue
comments: `GET/POST /repos/{owner}/{repo}/issues/{number}/comments`, `PATCH
/repos/{owner}/{repo}/issues/comments/{id}`). Every failure is a `GitHubError` of one line that
names the request, GitHub's status and message, and what to do.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from gitgauge import __version__
from gitgauge.core.errors import GitGaugeError

PER_PAGE = 100
"""Comments asked per page (GitHub's maximum)."""
MAX_PAGES = 50
"""Pages of comments read at most while looking for ours (5,000 comments)."""
TIMEOUT_SECONDS = 30.0
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


class GitHubError(GitGaugeError):
    """A GitHub API request failed (refused token, unknown pull request, unreachable API)."""


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str
    """The comment's page (`html_url`), as GitHub gives it."""


@dataclass(frozen=True)
class GitHub:
    """One repository's pull-request comments through the API at `api_url`."""

    api_url: str
    """`GITHUB_API_URL` (https://api.github.com, or a GitHub Enterprise server's)."""
    repository: str
    """`owner/name`."""
    token: str

    def comments(self, number: int) -> list[Comment]:
        """Every comment of pull request `number`, oldest first (following the `Link` pages)."""
        url: str | None = f"{self._base()}/issues/{number}/comments?per_page={PER_PAGE}"
        found: list[Comment] = []
        for _ in range(MAX_PAGES):
            if url is None:
                break
            data, link = self._request("GET", url)
            if not isinstance(data, list):
                raise GitHubError(f"GET {url}: GitHub answered with no list of comments")
            found += [_comment(item) for item in data]
            match = _NEXT.search(link or "")
            url = match.group(1) if match else None
        return found

    def create_comment(self, number: int, body: str) -> Comment:
        data, _ = self._request("POST", f"{self._base()}/issues/{number}/comments", {"body": body})
        return _comment(data)

    def update_comment(self, comment_id: int, body: str) -> Comment:
        data, _ = self._request(
            "PATCH", f"{self._base()}/issues/comments/{comment_id}", {"body": body}
        )
        return _comment(data)

    def _base(self) -> str:
        return f"{self.api_url.rstrip('/')}/repos/{self.repository}"

    def _request(
        self, method: str, url: str, payload: dict[str, Any] | None = None
    ) -> tuple[Any, str | None]:
        body = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(url, data=body, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", f"gitgauge/{__version__}")
        if body is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                text = response.read().decode("utf-8")
                link = response.headers.get("Link")
        except urllib.error.HTTPError as error:
            raise GitHubError(_refusal(method, url, error)) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise GitHubError(
                f"{method} {url}: GitHub's API is unreachable ({reason}); check GITHUB_API_URL"
            ) from None
        try:
            return json.loads(text), link
        except json.JSONDecodeError:
            raise GitHubError(f"{method} {url}: GitHub's answer is not JSON") from None


def _refusal(method: str, url: str, error: urllib.error.HTTPError) -> str:
    try:
        message = str(json.loads(error.read().decode("utf-8")).get("message", ""))
    except (ValueError, AttributeError, OSError):
        message = ""
    said = f" ({message})" if message else ""
    hint = {
        401: "GITHUB_TOKEN is missing or expired: pass the workflow's token in the job's env",
        403: "the token may not write comments: give the job `permissions: pull-requests: write`",
        404: "no such repository or pull request for this token (check GITHUB_REPOSITORY and "
        "the event's number)",
    }.get(error.code, "see GitHub's status page, then run the check again")
    return f"{method} {url}: GitHub answered {error.code}{said}; {hint}"


def _comment(data: Any) -> Comment:
    if not isinstance(data, dict) or not isinstance(data.get("id"), int):
        raise GitHubError("GitHub answered with a comment that has no id")
    return Comment(id=data["id"], body=str(data.get("body") or ""), url=str(data.get("html_url")))


def post_sticky(github: GitHub, number: int, body: str, *, marker: str) -> tuple[str, Comment]:
    """One comment of ours on pull request `number`: the first one holding `marker` updated in
    place, else a new one; (`created` or `updated`, the comment)."""
    for comment in github.comments(number):
        if marker in comment.body:
            return "updated", github.update_comment(comment.id, body)
    return "created", github.create_comment(number, body)
