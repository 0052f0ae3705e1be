"""Build the embedded sample repository that ``gitgauge demo`` mines and runs agents on.

The demo lets a new user watch the whole pipeline (mine, verify, run, report) in well
under a minute before pointing gitgauge at their own code, and it gives the test suite
one realistic history whose expected outcome is known commit by commit: three genuine
bug fixes, and commits that the classifier or the fail-before/pass-after check must
reject. The history is data in ``demo_sample/history.yaml``; this module only replays it
with a pinned author and pinned dates, so every build has the same SHAs.
"""

import datetime
import importlib.resources
import importlib.util
import json
import pathlib
import shlex
from dataclasses import dataclass
from typing import Any, Protocol

import yaml

from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import HistoryStep, Repository, write_history
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.worktree import Warn
from gitgauge.init import init as init_repository
from gitgauge.mining.mine import MineEvents, MineSummary
from gitgauge.mining.mine import mine as mine_history
from gitgauge.reporting.compare import compare as compare_sides
from gitgauge.reporting.compare_render import render_text as render_comparison
from gitgauge.running.plan import RunPlan, plan_run, plan_sandbox

DEMO_FIXES: tuple[str, ...] = (
    "fix: slugify drops digits",
    "fix(parser): crash on empty input",
    "Fix off-by-one error in pagination",
)
"""Subjects of the demo commits that ``gitgauge mine`` must turn into tasks."""

DEMO_NON_FIXES: tuple[str, ...] = ("fix: handle None in join",)
"""Subjects the classifier accepts but verification must reject (passes before the fix)."""

_AUTHOR = ("gitgauge demo", "demo@example.invalid")
_FIRST_COMMIT_AT = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


@dataclass(frozen=True)
class _DemoCommit:
    """One step of the sample history, as read from ``history.yaml``."""

    subject: str
    body: str
    write: dict[str, str]
    delete: tuple[str, ...]

    @property
    def message(self) -> str:
        if self.body:
            return f"{self.subject}\n\n{self.body}\n"
        return f"{self.subject}\n"


def _load_history() -> list[_DemoCommit]:
    manifest = importlib.resources.files("gitgauge") / "demo_sample" / "history.yaml"
    raw = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    return [
        _DemoCommit(
            subject=str(entry["subject"]),
            body=str(entry.get("body") or "").strip(),
            write={str(path): str(text) for path, text in (entry.get("write") or {}).items()},
            delete=tuple(str(path) for path in entry.get("delete") or ()),
        )
        for entry in raw["commits"]
    ]


def build_demo_repo(dest: pathlib.Path) -> None:
    """Create the demo git repository at ``dest``, which must not exist or be empty.

    Commit ``n`` of the history is authored and committed by
    ``gitgauge demo <demo@example.invalid>`` at 2024-01-01T00:00Z plus ``n`` hours, on
    branch ``main``; nothing is read from the user's git identity.
    """
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(
            f"{dest} already exists and is not an empty directory; "
            "choose a new path for the demo repository"
        )
    dest.mkdir(parents=True, exist_ok=True)
    steps = [
        HistoryStep(message=commit.message, write=commit.write, delete=commit.delete)
        for commit in _load_history()
    ]
    write_history(dest, steps, author=_AUTHOR, first_at=_FIRST_COMMIT_AT)


def demo_test_command(python: str) -> str:
    """The demo's testCommand: pytest under the interpreter running gitgauge."""
    return f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider"


def write_demo_config(repo_root: pathlib.Path, *, python: str) -> None:
    """A gitgauge.yaml for the demo repository (run after `gitgauge init` laid the template)."""
    text = (
        "# Written by `gitgauge demo`.\n"
        f"testCommand: {json.dumps(demo_test_command(python))}\n"
        "mine:\n  last: 50\n"
        "timeouts:\n  test: 60000\n  setup: 60000\n  adapter: 60000\n"
    )
    (repo_root / "gitgauge.yaml").write_text(text, encoding="utf-8")


DEMO_CONFIGS_DIR = pathlib.Path(".gitgauge") / "demo-configs"
"""Where the demo writes its agent configs: under `.gitgauge/`, which git ignores."""


DEMO_AGENT = "agent"
"""The bundled offline agent without a CLAUDE.md."""
DEMO_AGENT_WITH_NOTES = "agent-with-claude-md"
"""The same agent with the bundled CLAUDE.md overlaid by its config's `files:` key."""


def write_demo_agent_configs(repo_root: pathlib.Path, *, python: str) -> list[pathlib.Path]:
    """The agent configs the demo runs: the baselines `gold` (resolves all) and `noop` (none),
    then the bundled offline agent (``demo_sample/agent.py``) without and with a CLAUDE.md that
    tells it how to fix each bug: the same agent, two harnesses."""
    folder = repo_root / DEMO_CONFIGS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    sample = importlib.resources.files("gitgauge") / "demo_sample"
    (folder / "CLAUDE.md").write_bytes((sample / "CLAUDE.md").read_bytes())
    command = f"{shlex.quote(python)} {shlex.quote(str(sample / 'agent.py'))}"
    configs = {
        "gold": "adapter: gold\n",
        "noop": "adapter: noop\n",
        DEMO_AGENT: f"adapter: script\ncommand: {json.dumps(command)}\n",
        DEMO_AGENT_WITH_NOTES: (
            f"adapter: script\ncommand: {json.dumps(command)}\n"
            "files:\n  CLAUDE.md: CLAUDE.md  # workspace path: file beside this config\n"
        ),
    }
    paths = []
    for name, body in configs.items():
        path = folder / f"{name}.yaml"
        path.write_text(f"# Written by `gitgauge demo`.\nname: {name}\n{body}", "utf-8")
        paths.append(path)
    return paths


class DemoScreen(Protocol):
    """How `run_demo` shows what it does (the CLI prints)."""

    def say(self, text: str) -> None: ...

    def mine_events(self) -> MineEvents: ...

    def mined(self, summary: MineSummary, store: Store) -> None: ...

    def run(
        self, repo: Repository, config: RepoConfig, store: Store, plan: RunPlan, *, sandbox: Any
    ) -> None: ...


def run_demo(target: pathlib.Path, *, python: str, screen: DemoScreen, warn: Warn) -> Repository:
    """The whole pipeline on the sample repository, as a user runs it: build it at `target`,
    `gitgauge init`, mine, run gold, noop and the offline agent with and without its CLAUDE.md,
    compare the two harnesses."""
    if importlib.util.find_spec("pytest") is None:
        raise GitGaugeError(
            "the demo's sample project is tested with pytest, which is not installed: "
            "pip install 'gitgauge[demo]' (or pip install pytest)"
        )
    try:
        build_demo_repo(target)
    except FileExistsError as error:
        raise GitGaugeError(str(error)) from None
    screen.say(f"demo repository: {target}")
    repo = Repository(target)
    init_repository(repo.root)
    write_demo_config(repo.root, python=python)
    config = load_repo_config(repo.root)
    store = Store(repo.root)
    screen.say("$ gitgauge mine")
    summary = mine_history(repo, config, store, warn=warn, events=screen.mine_events())
    screen.mined(summary, store)
    config_files = write_demo_agent_configs(repo.root, python=python)
    screen.say("")
    screen.say("$ gitgauge run " + " ".join(f"-c {p.relative_to(repo.root)}" for p in config_files))
    plan = plan_run(repo, store, config_files, task_id=None, warn=warn)
    box = plan_sandbox(repo, config, plan, mode=config.run.sandbox, warn=warn)
    screen.run(repo, config, store, plan, sandbox=box)
    for line in (
        "gold applies each real fix and should resolve every task; noop changes nothing",
        f"and should resolve none. {DEMO_AGENT} and {DEMO_AGENT_WITH_NOTES} are one offline",
        "agent with two harnesses: the second has a CLAUDE.md (overlaid by `files:`) that",
        "tells it how to fix each bug and to run the tests. Did the CLAUDE.md help, and what",
        "did the agent do differently (its transcripts are in the run's logs)?",
        "",
        f"$ gitgauge compare {DEMO_AGENT} {DEMO_AGENT_WITH_NOTES}",
    ):
        screen.say(line)
    comparison = compare_sides(
        store.load_runs(warn=warn), DEMO_AGENT, DEMO_AGENT_WITH_NOTES, runs_dir=store.runs_dir
    )
    screen.say(render_comparison(comparison))
    return repo
