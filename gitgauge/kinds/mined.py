"""What the kinds' miners share: the summary of what one found (a `core.kinds.MinedKind`) and
its lines of `mine`'s summary, in the same order for every kind (what it looked at, what was
mined before or skipped and why, then its tasks)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from gitgauge.core.records import Task


@dataclass
class KindSummary(ABC):
    already_mined: int = 0
    """Candidates whose tasks an earlier mine saved."""
    skipped: Counter[str] = field(default_factory=Counter)
    """Candidates passed over, by reason."""
    tasks: list[Task] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Its part of `mine`'s summary."""
        said = self.looked_at()
        if self.already_mined:
            said.append(f"  already mined:   {self.already_mined}")
        said += [
            f"  skipped, {reason}: {self.skipped[reason]}"
            for reason in self.skip_order()
            if self.skipped.get(reason)
        ]
        said.append(self.tasks_line())
        return said

    @abstractmethod
    def looked_at(self) -> list[str]:
        """The first lines: what the miner walked and how many candidates it found there."""

    @abstractmethod
    def tasks_line(self) -> str:
        """The last line: the tasks saved."""

    def skip_order(self) -> Sequence[str]:
        """The skip reasons in the order they are listed (by default, alphabetical)."""
        return sorted(self.skipped)
