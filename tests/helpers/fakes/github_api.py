"""A loopback fake of GitHub's REST API for a pull request's comments, as `gitgauge ci` uses it:
list (paginated by `per_page`, a `Link: rel="next"` header), create and update, each checked
for the workflow's bearer token; every request is recorded."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import parse_qs, urlsplit

from helpers.fakes.loopback import Answer, LoopbackServer

LIST = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>\d+)/comments$")
ONE = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/comments/(?P<id>\d+)$")


@dataclass
class Request:
    method: str
    path: str
    authorization: str | None
    body: Any


class FakeGitHub(LoopbackServer):
    methods = ("GET", "POST", "PATCH")

    def __init__(self, repository: str, token: str, *, page_size: int = 2) -> None:
        super().__init__()
        self.repository = repository
        self.token = token
        self.page_size = page_size
        """At most this many comments per page, whatever `per_page` asks (to test paging)."""
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self._next_id = 1000

    def add_comment(self, number: int, body: str, login: str = "someone") -> int:
        self._next_id += 1
        comment = {
            "id": self._next_id,
            "body": body,
            "html_url": f"https://github.example/{self.repository}/pull/{number}#c{self._next_id}",
            "user": {"login": login},
        }
        self.comments.setdefault(number, []).append(comment)
        return self._next_id

    def respond(self, method: str, path: str, headers: Message, body: bytes) -> Answer:
        parts = urlsplit(path)
        payload: Any = json.loads(body) if body else None  # the JSON sent, as Request.body
        self.record(Request(method, path, headers.get("authorization"), payload))
        if headers.get("authorization") != f"Bearer {self.token}":
            return _json(401, {"message": "Bad credentials"})
        listed, one = LIST.match(parts.path), ONE.match(parts.path)
        match = listed or one
        if match is None or match.group("repo") != self.repository:
            return _json(404, {"message": "Not Found"})
        if listed and method == "GET":
            return self._page(int(listed.group("number")), parse_qs(parts.query), parts.path)
        if listed and method == "POST":
            number = int(listed.group("number"))
            made = self.add_comment(number, payload["body"], login="github-actions[bot]")
            return _json(201, self._find(made))
        if one and method == "PATCH":
            comment = self._find(int(one.group("id")))
            if comment is None:
                return _json(404, {"message": "Not Found"})
            comment["body"] = payload["body"]
            return _json(200, comment)
        return _json(404, {"message": "Not Found"})

    def _page(self, number: int, query: dict[str, list[str]], path: str) -> Answer:
        comments = self.comments.get(number, [])
        size = min(int(query.get("per_page", ["30"])[0]), self.page_size)
        page = int(query.get("page", ["1"])[0])
        shown = comments[(page - 1) * size : page * size]
        headers = {"content-type": "application/json"}
        if page * size < len(comments):
            headers["link"] = f'<{self.address}{path}?per_page={size}&page={page + 1}>; rel="next"'
        return 200, headers, json.dumps(shown).encode()

    def _find(self, comment_id: int) -> dict[str, Any] | None:
        for comments in self.comments.values():
            for comment in comments:
                if comment["id"] == comment_id:
                    return comment
        return None

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method in ("POST", "PATCH")]


def _json(status: int, value: Any) -> Answer:
    return status, {"content-type": "application/json"}, json.dumps(value).encode()
