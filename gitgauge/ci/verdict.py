"""What the check says and whether it fails the job: the gate (`--fail-if`, `--min-rate`) read
from the comparison, and the comment's body.

The body is `compare --format markdown` (`reporting.compare_markdown.render_markdown`) under a
heading naming the two refs and the harness files that differ, after a hidden marker by which
the next push finds the same comment. It holds numbers, task ids and file names only: never a
transcript, a log or an environment value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitgauge.core.errors import UsageError
from gitgauge.core.store import Store
from gitgauge.reporting.compare import Comparison
from gitgauge.reporting.compare_markdown import code, render_markdown

MARKER = "<!-- gitgauge-ci -->"
"""The hidden line that marks the check's own comment on a pull request."""
FAIL_IF = ("worse", "not-better")


@dataclass(frozen=True)
class Gate:
    fail_if: str | None = None
    """`worse`: the difference's upper bound is below 0; `not-better`: its lower bound is not
    above 0 (the head is not shown better)."""
    min_rate: float | None = None
    """The head side's resolve rate must be at least this (0 to 1)."""

    def check(self) -> None:
        if self.fail_if is not None and self.fail_if not in FAIL_IF:
            raise UsageError(f"--fail-if takes worse or not-better, got {self.fail_if!r}")
        if self.min_rate is not None and not 0 <= self.min_rate <= 1:
            raise UsageError(
                f"--min-rate is a resolve rate from 0 to 1 (0.6 for 60%), got {self.min_rate}"
            )

    def failures(self, comparison: Comparison) -> list[str]:
        """Why the gate fails the job (empty: it passes)."""
        found: list[str] = []
        difference = comparison.paired.difference
        points = f"[{difference.low * 100:+.0f}, {difference.high * 100:+.0f}] points"
        if self.fail_if == "worse" and difference.high < 0:
            found.append(f"the head is worse: the difference's 95% interval is {points}")
        if self.fail_if == "not-better" and not difference.low > 0:
            found.append(f"the head is not shown better: the difference's 95% interval is {points}")
        rate = comparison.rate_b.estimate
        if self.min_rate is not None and (rate is None or rate < self.min_rate):
            shown = "unknown" if rate is None else f"{rate * 100:.0f}%"
            found.append(
                f"the head's resolve rate {shown} is below --min-rate {self.min_rate * 100:.0f}%"
            )
        return found


def comment_body(
    comparison: Comparison,
    *,
    base: str,
    head: str,
    changed: Sequence[str],
    failures: Sequence[str],
    gated: bool,
    links: str | None = None,
    store: Store | None = None,
) -> str:
    """The comment: the marker, which refs and files, `compare --format markdown` (its tasks
    linked to their patches under `links`, the published `.gitgauge/`), the gate's word."""
    files = ", ".join(code(name) for name in changed)
    lines = [
        MARKER,
        "## gitgauge: did the harness change help?",
        "",
        f"Base `{base[:12]}` against head `{head[:12]}`; harness files changed: {files}.",
        "",
        render_markdown(comparison, links=links, store=store if links else None).rstrip("\n"),
        "",
    ]
    if failures:
        lines += ["**The check fails:** " + "; ".join(failures) + "."]
    elif gated:
        lines += ["The check passes its gate."]
    lines += ["", "<sub>Posted by `gitgauge ci`; updated on every push.</sub>"]
    return "\n".join(lines) + "\n"
