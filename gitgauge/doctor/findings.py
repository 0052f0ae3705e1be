"""What doctor says: a `Finding` per check (its status, one line, the lines saying what to do),
and the `Diagnosis` they add up to."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

Status = Literal["ok", "warn", "FAIL", "info"]
Scope = Literal["mine", "agent"]
"""What a FAIL stops: `mine` (the checks of a first `gitgauge mine`), or `agent` (`doctor
--probe -c CONFIG`: `gitgauge run` with that config)."""


@dataclass(frozen=True)
class Finding:
    status: Status
    text: str
    hints: list[str] = field(default_factory=list)
    """Lines saying what to do, printed under the finding."""
    scope: Scope = "mine"

    def lines(self) -> Iterator[str]:
        yield f"{self.status:<5} {self.text}"
        for hint in self.hints:
            yield f"      {hint}"


class Found(Protocol):
    """How a check reports a finding (printed as it comes: the test run takes as long as the
    suite)."""

    def __call__(self, status: Status, text: str, hints: list[str] | None = None) -> None: ...


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)

    def failed(self, scope: Scope) -> int:
        return sum(
            1 for finding in self.findings if finding.status == "FAIL" and finding.scope == scope
        )

    @property
    def mine_would_work(self) -> bool:
        return self.failed("mine") == 0

    @property
    def agents_work(self) -> bool:
        """No probed agent config failed (true when none was probed)."""
        return self.failed("agent") == 0

    @property
    def probed(self) -> bool:
        return any(finding.scope == "agent" for finding in self.findings)
