"""`gitgauge demo`: the whole pipeline on the bundled sample repository, no network."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import guarded, say, warn
from gitgauge.cli.mine import MineProgress, print_mine_summary
from gitgauge.cli.run import run_and_report
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.store import Store
from gitgauge.init import init as init_repository
from gitgauge.mining.mine import mine as mine_history
from gitgauge.reporting.compare import compare as compare_sides
from gitgauge.reporting.compare_render import render_text as render_comparison
from gitgauge.running.plan import plan_run, plan_sandbox


def demo(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Where to build the demo repository (default: a new temporary one)."),
    ] = None,
) -> None:
    """Build the bundled sample repository and run the whole pipeline on it (no network)."""

    def action() -> None:
        import importlib.util
        import tempfile

        from gitgauge.demo import (
            DEMO_AGENT,
            DEMO_AGENT_WITH_NOTES,
            build_demo_repo,
            write_demo_agent_configs,
            write_demo_config,
        )

        if importlib.util.find_spec("pytest") is None:
            raise GitGaugeError(
                "the demo's sample project is tested with pytest, which is not installed: "
                "pip install 'gitgauge[demo]' (or pip install pytest)"
            )
        target = directory or Path(tempfile.mkdtemp(prefix="gitgauge-demo-")) / "sample"
        try:
            build_demo_repo(target)
        except FileExistsError as error:
            raise GitGaugeError(str(error)) from None
        say(f"demo repository: {target}")
        repo = Repository(target)
        init_repository(repo.root)
        write_demo_config(repo.root, python=sys.executable)
        config = load_repo_config(repo.root)
        say("$ gitgauge mine")
        progress = MineProgress()
        summary = mine_history(
            repo,
            config,
            Store(repo.root),
            warn=warn,
            events=progress.events(),
        )
        progress.clear()
        print_mine_summary(summary, Store(repo.root))
        config_files = write_demo_agent_configs(repo.root, python=sys.executable)
        say("")
        say("$ gitgauge run " + " ".join(f"-c {p.relative_to(repo.root)}" for p in config_files))
        store = Store(repo.root)
        plan = plan_run(repo, store, config_files, task_id=None, warn=warn)
        box = plan_sandbox(repo, config, plan, mode=config.run.sandbox, warn=warn)
        # Two at a time: twelve pairs, each waiting on pytest.
        run_and_report(repo, config, store, plan, jobs=2, repeat=1, resume=None, sandbox=box)
        say("gold applies each real fix and should resolve every task; noop changes nothing")
        say(f"and should resolve none. {DEMO_AGENT} and {DEMO_AGENT_WITH_NOTES} are one offline")
        say("agent with two harnesses: the second has a CLAUDE.md (overlaid by `files:`) that")
        say("tells it how to fix each bug. Did the CLAUDE.md help?")
        say("")
        say(f"$ gitgauge compare {DEMO_AGENT} {DEMO_AGENT_WITH_NOTES}")
        comparison = compare_sides(
            store.load_runs(warn=warn), DEMO_AGENT, DEMO_AGENT_WITH_NOTES, runs_dir=store.runs_dir
        )
        say(render_comparison(comparison))
        say("")
        say(f"Try `gitgauge report` in {repo.root}.")

    guarded(action)
