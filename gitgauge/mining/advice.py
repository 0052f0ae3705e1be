"""What `mine` says at the end: when it yields few tasks, why (from its own counts) and what to
try, in two lines; and, whatever the count, a candidate rejected for its time limit names the key
that raises it."""

from __future__ import annotations

from gitgauge.core.text import plural
from gitgauge.mining.mine import MineSummary
from gitgauge.mining.verify import REJECT_REASONS

FEW_TASKS = 10
"""Fewer tasks than this, and `mine` says why and what to try."""

NO_BUG_WORD = "no bug word"
OTHER_TYPE = "other conventional type"
TIMED_OUT = "timed out"
"""The rejection of a candidate whose suite outran `timeouts.test` at the fix."""


def closing_advice(summary: MineSummary, *, last: int, test_timeout_ms: int) -> list[str]:
    """The lines after the summary: `few_tasks_advice`, else the timeout's own line (none when
    there are enough tasks and nothing timed out). `test_timeout_ms`: `timeouts.test`."""
    few = few_tasks_advice(summary, last=last, test_timeout_ms=test_timeout_ms)
    if few:
        return few
    timed_out = summary.rejected[TIMED_OUT]
    if not timed_out:
        return []
    limit = _limit(test_timeout_ms)
    return [
        f"{plural(timed_out, 'candidate')} timed out at the fix: raise timeouts.test in "
        f"gitgauge.yaml (now {limit}) if the suite needs longer."
    ]


def _limit(milliseconds: int) -> str:
    return f"{milliseconds} ms = {milliseconds / 1000:g} s"


def few_tasks_advice(
    summary: MineSummary, *, last: int, test_timeout_ms: int | None = None
) -> list[str]:
    """Two lines (why; what to try) when the task set is smaller than `FEW_TASKS`, else none.
    `last`: how many commits the mine was asked to scan; `test_timeout_ms`: `timeouts.test`,
    named when a candidate timed out."""
    others = sum(len(mined.tasks) + mined.already_mined for mined in summary.kinds)
    tasks = len(summary.tasks) + summary.already_mined + others
    if tasks >= FEW_TASKS:
        return []
    why: list[str] = []
    no_word = summary.rules.dropped[NO_BUG_WORD]
    if no_word:
        has = "has" if no_word == 1 else "have"
        why.append(f"{no_word} of {plural(summary.scanned, 'subject')} {has} no bug word")
    other = summary.rules.dropped[OTHER_TYPE]
    if other:
        why.append(f"{other} {'has' if other == 1 else 'have'} a non-fix type (feat:, chore:, ...)")
    untested = summary.rules.dropped["no test file"]
    if untested:
        touch = "touches" if untested == 1 else "touch"
        why.append(f"{plural(untested, 'fix', 'fixes')} {touch} no test file")
    rejected = sum(summary.rejected.values())
    if rejected:
        # Ties in the summary's order of reasons, not in the order verdicts came in (a Ray
        # mine's verdicts come as they finish).
        order = sorted(summary.rejected.items(), key=lambda item: (-item[1], _rank(item[0])))
        kinds = ", ".join(f"{count} {reason}" for reason, count in order[:3])
        were = "was" if rejected == 1 else "were"
        why.append(f"{plural(rejected, 'candidate')} {were} rejected ({kinds})")
    if summary.judged_before:
        were = "was" if summary.judged_before == 1 else "were"
        why.append(f"{summary.judged_before} {were} judged by an earlier mine")
    try_next: list[str] = []
    if summary.scanned >= last:
        try_next.append(f"`gitgauge mine --last {max(last * 5, 500)}` to scan further back")
    else:
        commits = "the 1 commit" if summary.scanned == 1 else f"all {summary.scanned} commits"
        try_next.append(f"({commits} of HEAD {'was' if summary.scanned == 1 else 'were'} scanned)")
    if no_word:
        try_next.append("your house fix types in mine.fixTypes (`BUG:` -> fixTypes: [BUG])")
    timed_out = summary.rejected[TIMED_OUT]
    if timed_out and test_timeout_ms is not None:
        try_next.append(
            f"a longer timeouts.test in gitgauge.yaml (now {_limit(test_timeout_ms)}; "
            f"{plural(timed_out, 'candidate')} timed out at the fix)"
        )
    if rejected:
        try_next.append("`gitgauge doctor` to check testCommand")
    try_next.append("`gitgauge mine --explain SHA` for a commit you expected")
    found = "no tasks" if tasks == 0 else f"only {plural(tasks, 'task')}"
    reasons = (
        "; ".join(why)
        if why
        else f"{plural(summary.candidates, 'candidate')} in {plural(summary.scanned, 'commit')}"
    )
    return [f"{found}: {reasons}.", f"  try: {'; '.join(try_next)}."]


def _rank(reason: str) -> int:
    reasons: tuple[str, ...] = REJECT_REASONS
    return reasons.index(reason) if reason in reasons else len(reasons)
