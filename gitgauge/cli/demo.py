"""`gitgauge demo`: the whole pipeline on the bundled sample repository, no network."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say, warn
from gitgauge.cli.mine import MineProgress, print_mine_summary
from gitgauge.cli.run import run_and_report
from gitgauge.core.git import Repository
from gitgauge.core.sandbox import Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.demo import run_demo
from gitgauge.mining.mine import MineEvents, MineSummary
from gitgauge.running.plan import RunPlan


class _Screen:
    """The demo on the terminal: each step printed as the CLI prints it."""

    def __init__(self) -> None:
        self.progress = MineProgress()

    def say(self, text: str) -> None:
        say(text)

    def mine_events(self) -> MineEvents:
        return self.progress.events()

    def mined(self, summary: MineSummary, store: Store) -> None:
        self.progress.clear()
        print_mine_summary(summary, store)

    def run(
        self,
        repo: Repository,
        config: RepoConfig,
        store: Store,
        plan: RunPlan,
        *,
        sandbox: Sandbox | None,
    ) -> None:
        # Two at a time: twelve pairs, each waiting on pytest.
        run_and_report(repo, config, store, plan, jobs=2, repeat=1, resume=None, sandbox=sandbox)


def demo(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Where to build the demo repository (default: a new temporary one)."),
    ] = None,
) -> None:
    """Build the bundled sample repository and run the whole pipeline on it (no network)."""

    def action() -> None:
        target = directory or Path(tempfile.mkdtemp(prefix="gitgauge-demo-")) / "sample"
        repo = run_demo(target, python=sys.executable, screen=_Screen(), warn=warn)
        say("")
        say(f"Try `gitgauge report` in {repo.root}.")

    guarded(action)
