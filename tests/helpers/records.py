"""Records gitgauge reads, made by hand: a fix task, a pair's result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitgauge.core.records import RunResult, Task

MINED_AT = "2024-01-01T00:00:00+00:00"
RUN_ID = "20240101T000000Z-aaaaaa"


def fix_task(
    base: str, fix: str, subject: str, test_files: Sequence[str], *, id: str, **fields: Any
) -> Task:
    """A fix task of `subject` from `base` to `fix`: the title-only prompt gitgauge writes for
    it, mined at a pinned time; `fields` set any other (or override these)."""
    given: dict[str, Any] = {
        "prompt": f"Fix the following bug:\n\n{subject}",
        "promptQuality": "title-only",
        "minedAt": MINED_AT,
        **fields,
    }
    return Task(id=id, base=base, fix=fix, subject=subject, testFiles=list(test_files), **given)


def result(config: str, task: str, status: str, run_id: str = RUN_ID, **fields: Any) -> RunResult:
    """A result of `config` on `task`, started and finished at pinned times."""
    return RunResult(
        runId=run_id,
        config=config,
        task=task,
        status=status,  # type: ignore[arg-type]
        startedAt="2024-01-01T00:00:00.000+00:00",
        finishedAt="2024-01-01T00:01:00.000+00:00",
        **fields,
    )
