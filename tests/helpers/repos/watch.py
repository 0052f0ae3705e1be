"""A module's sample checkout watched while gitgauge mines and runs it once: what `Watched`
records of it (the checkout before and after, what gitgauge left in its private TMPDIR, the
journal folder of the scripted agents) and the environment that points gitgauge and the agents
there."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.repos import GitRepo
from helpers.results import journal_and_tmp


@dataclass(frozen=True)
class Watch:
    root: Path
    journal: Path
    private_tmp: Path
    before: dict[str, str]
    env: dict[str, str]
    """gitgauge's environment: its TMPDIR private, the journal folder named for the agents."""

    def done(self) -> dict[str, Any]:
        """`Watched`'s fields, with the checkout as it is now as `after`."""
        return {
            "journal": self.journal,
            "before": self.before,
            "after": GitRepo(self.root).snapshot(),
            "temp_left": sorted(p.name for p in self.private_tmp.iterdir()),
        }


def watch(base: Path, root: Path, journal_variable: str, **env: str) -> Watch:
    """Watch the checkout at `root` from now on, with base/journal (in `journal_variable`) and
    base/tmp made empty; inside `isolated(base)`, whose environment `env` adds to."""
    journal, private_tmp = journal_and_tmp(base)
    environment = dict(os.environ, TMPDIR=str(private_tmp), **{journal_variable: str(journal)})
    environment.update(env)
    return Watch(root, journal, private_tmp, GitRepo(root).snapshot(), environment)
