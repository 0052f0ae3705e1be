"""When a mine yields few tasks: why, from its own counts, and what to try, in two lines."""

from __future__ import annotations

from gitgauge.mining.mine import MineSummary

FEW_TASKS = 10
"""Fewer tasks than this, and `mine` says why and what to try."""

NO_BUG_WORD = "no bug word"
OTHER_TYPE = "other conventional type"


def few_tasks_advice(summary: MineSummary, *, last: int) -> list[str]:
    """Two lines (why; what to try) when the task set is smaller than `FEW_TASKS`, else none.
    `last`: how many commits the mine was asked to scan."""
    others = sum(len(mined.tasks) + mined.already_mined for mined in summary.kinds)
    tasks = len(summary.tasks) + summary.already_mined + others
    if tasks >= FEW_TASKS:
        return []
    why: list[str] = []
    no_word = summary.rules.dropped[NO_BUG_WORD]
    if no_word:
        why.append(f"{no_word} of {summary.scanned} subjects have no bug word")
    other = summary.rules.dropped[OTHER_TYPE]
    if other:
        why.append(f"{other} have a non-fix type (feat:, chore:, ...)")
    untested = summary.rules.dropped["no test file"]
    if untested:
        why.append(f"{untested} fixes touch no test file")
    rejected = sum(summary.rejected.values())
    if rejected:
        kinds = ", ".join(f"{count} {reason}" for reason, count in summary.rejected.most_common(3))
        why.append(f"{rejected} candidates were rejected ({kinds})")
    if summary.judged_before:
        why.append(f"{summary.judged_before} were judged by an earlier mine")
    try_next: list[str] = []
    if summary.scanned >= last:
        try_next.append(f"`gitgauge mine --last {max(last * 5, 500)}` to scan further back")
    else:
        try_next.append(f"(all {summary.scanned} commits of HEAD were scanned)")
    if no_word:
        try_next.append("your house fix types in mine.fixTypes (`BUG:` -> fixTypes: [BUG])")
    if rejected:
        try_next.append("`gitgauge doctor` to check testCommand")
    try_next.append("`gitgauge mine --explain SHA` for a commit you expected")
    found = "no tasks" if tasks == 0 else f"only {tasks} task{'s' if tasks != 1 else ''}"
    reasons = (
        "; ".join(why) if why else f"{summary.candidates} candidates in {summary.scanned} commits"
    )
    return [f"{found}: {reasons}.", f"  try: {'; '.join(try_next)}."]
