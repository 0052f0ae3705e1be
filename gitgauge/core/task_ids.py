"""`--task ID`: a task id or a unique start of one (the 8-character sha `mine` prints)."""

from __future__ import annotations

from collections.abc import Iterable

from gitgauge.core.errors import TaskError

CANDIDATES_SHOWN = 10
"""How many matching ids an ambiguous `--task` error lists."""


def resolve_task_id(given: str, known: Iterable[str]) -> str | None:
    """The id `given` names among `known`: itself when it is one, else the only id that starts
    with it; None when none does. Several that start with it are an error listing them."""
    ids = sorted(set(known))
    if given in ids:
        return given
    matches = [task_id for task_id in ids if given and task_id.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:CANDIDATES_SHOWN])
        more = len(matches) - CANDIDATES_SHOWN
        tail = f" and {more} more" if more > 0 else ""
        raise TaskError(
            f"task {given!r} is ambiguous: {len(matches)} tasks start with it ({shown}{tail}); "
            "give more of the id"
        )
    return None
