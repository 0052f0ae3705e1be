"""The GitHub Actions workflow `gitgauge init --ci github` writes (and docs/guide/ci.md shows):
`gitgauge ci` on every pull request that touches the harness, its tasks cached, its comment
updated in place, no secret handed to a fork's code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitgauge.core.errors import UsageError

WORKFLOW_PATH = ".github/workflows/gitgauge.yml"
AGENT_PATH = ".github/gitgauge/agent.yaml"
PROVIDERS = ("github",)

WORKFLOW = """\
# Written by `gitgauge init --ci github` (docs/guide/ci.md): on a pull request that changes the
# agents' harness, run the base's and the pull request's harness on this repository's own
# tasks and post the verdict as one comment, updated on every push.
name: gitgauge
on:
  pull_request:
    paths:
      - "CLAUDE.md"
      - "AGENTS.md"
      - ".claude/**"
      - ".github/gitgauge/**"
      - "gitgauge.yaml"
permissions:
  contents: read
  pull-requests: write  # the comment; nothing else
concurrency:
  group: gitgauge-${{ github.event.pull_request.number }}
  cancel-in-progress: true
jobs:
  harness:
    # A fork's pull request gets no secrets and its harness is untrusted input for an agent
    # that holds the API key: skipped here (and refused by `gitgauge ci`, exit 5).
    if: github.event.pull_request.head.repo.full_name == github.repository
    runs-on: ubuntu-latest
    timeout-minutes: 60
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0  # both refs and the history the tasks come from
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install bubblewrap, the claude CLI and gitgauge
        run: |
          sudo apt-get update
          sudo apt-get install -y bubblewrap
          # Ubuntu 24.04 keeps unprivileged user namespaces (bubblewrap's) from processes
          # without an AppArmor profile; the runner is a throwaway machine.
          sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || true
          npm install -g @anthropic-ai/claude-code
          pip install gitgauge
      - name: Restore the mined tasks
        uses: actions/cache@v4
        with:
          path: |
            .gitgauge/tasks
            .gitgauge/judged
            .gitgauge/ci-tasks.json
          key: gitgauge-tasks-${{ hashFiles('gitgauge.yaml') }}-${{ github.event.pull_request.base.sha }}
          restore-keys: |
            gitgauge-tasks-${{ hashFiles('gitgauge.yaml') }}-
      - name: Compare the harness
        env:
          ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}
          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
        run: gitgauge ci -c .github/gitgauge/agent.yaml --tasks 20 --max-cost 5 --fail-if worse
"""  # noqa: E501 (the cache key's line)

AGENT = """\
# The agent `gitgauge ci` runs on both sides of a pull request (docs/guide/ci.md): the same
# adapter, model and flags; only the harness files (harnessFiles) differ, each side's taken
# from its own commit.
name: claude
adapter: claude-code
model: sonnet
args: ["--max-turns", "30"]
harnessFiles: ["CLAUDE.md", "AGENTS.md", ".claude/"]
"""


@dataclass(frozen=True)
class Written:
    created: list[Path]
    kept: list[Path]


def write_workflow(root: Path, provider: str) -> Written:
    """The workflow and its agent config under `root`, each kept when it exists."""
    if provider not in PROVIDERS:
        raise UsageError(f"--ci takes {' or '.join(PROVIDERS)}, got {provider!r}")
    created: list[Path] = []
    kept: list[Path] = []
    for relative, text in ((WORKFLOW_PATH, WORKFLOW), (AGENT_PATH, AGENT)):
        path = root / relative
        if path.exists():
            kept.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        created.append(path)
    return Written(created, kept)
