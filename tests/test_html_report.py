"""`gitgauge report --html [FILE]`: one page that needs nothing else to show (no script, no
network), every name escaped, links to each attempt's patch and logs that resolve to the files on
disk (from FILE, or from `.gitgauge/report.html` without one), and the page loaded in headless
Chromium showing every config, every task and the charts."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.components import require
from helpers.records import result
from helpers.repos import GitRepo

from gitgauge.core.records import AgentBehaviour, RunManifest, RunResult
from gitgauge.core.schema import AgentConfig, Timeouts
from gitgauge.core.store import Store

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RUN_ID = "20240101T000000Z-aaaaaa"
LATER_RUN = "20240102T000000Z-bbbbbb"
HOSTILE = '<script>alert("gitgauge")</script>'
CONFIGS = ["sonnet + CLAUDE.md", HOSTILE, "base & co"]
# Task ids are slugs (a result naming another is skipped as bad data): only config names can
# carry markup, and the hostile one does.
TASKS = ["0000aaa1-fix-slug", "0000aaa2-fix-quoting", "0000aaa3-fix-parser"]


def stored_results() -> list[RunResult]:
    """sonnet: costs, one regression; the hostile name: three attempts per task; base & co: no
    cost and a setup error on t3 (no patch for that one)."""
    items = [
        result("sonnet + CLAUDE.md", TASKS[0], "resolved", costUsd=0.42, adapterSeconds=30.0),
        result("sonnet + CLAUDE.md", TASKS[1], "resolved", costUsd=0.61, regressed=True),
        result("sonnet + CLAUDE.md", TASKS[2], "unresolved", costUsd=0.35, adapterSeconds=50.0),
        result("base & co", TASKS[0], "unresolved", adapterSeconds=3.0),
        result("base & co", TASKS[1], "resolved", adapterSeconds=4.0),
        result("base & co", TASKS[2], "error", errorKind="setup"),
    ]
    for index, task in enumerate(TASKS):
        for attempt in (1, 2, 3):
            status = "resolved" if attempt <= index + 1 else "unresolved"
            items.append(result(HOSTILE, task, status, attempt=attempt, costUsd=0.1 * attempt))
    return items


def write_runs(repo: GitRepo) -> Store:
    store = Store(repo.root)
    store.save_manifest(
        RunManifest(
            runId=RUN_ID,
            gitgaugeVersion="0.1.0",
            configs=[AgentConfig(name=name, adapter="noop") for name in CONFIGS],
            configFiles=[f"config{index}.yaml" for index in range(len(CONFIGS))],
            tasks=TASKS,
            testCommand="pytest",
            timeouts=Timeouts(),
            startedAt="2024-01-01T00:00:00.000+00:00",
        )
    )
    for item in stored_results():
        store.save_result(item)
        logs = store.log_dir(item.runId, item.config, item.task, item.attempt)
        logs.mkdir(parents=True, exist_ok=True)
        if item.errorKind == "setup":
            (logs / "setup.stderr").write_text("no network\n", encoding="utf-8")
        else:
            (logs / "agent.patch").write_text(f"patch of {item.attempt}\n", encoding="utf-8")
            (logs / "test.stdout").write_text("1 passed\n", encoding="utf-8")
    return store


class _Page(HTMLParser):
    """Tags, hrefs and text of the page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [value for name, value in attrs if name in ("href", "src") and value]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


@pytest.fixture
def report_repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", files={"README.md": "hello\n"})
    write_runs(git_repo)
    return git_repo


def test_the_page_is_self_contained_escaped_and_links_to_patches_and_logs(
    report_repo: GitRepo,
) -> None:
    written = run_gitgauge("report", "--html", "out/report.html", cwd=report_repo.root)

    assert written.returncode == 0, written.stderr
    page_path = report_repo.root / "out" / "report.html"
    page = page_path.read_text(encoding="utf-8")
    parsed = parse(page)
    text = "".join(parsed.text)
    # Nothing to fetch, nothing to run: the hostile config name is text, not a script element.
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    assert not re.search(r"https?:|url\(|@import|//", " ".join(parsed.hrefs) + page.lower())
    assert HOSTILE not in page and "&lt;script&gt;alert(&quot;gitgauge&quot;)" in page
    for name in [*CONFIGS, *TASKS]:
        assert name in text, name
    assert parsed.tags.count("svg") == 2  # the rate chart and the cost scatter
    assert "No cost reported (not plotted): base &amp; co." in page
    # Every link is relative to the page and reaches a file or folder under .gitgauge/runs/.
    targets = [(page_path.parent / urllib.parse.unquote(href)).resolve() for href in parsed.hrefs]
    runs = (report_repo.root / ".gitgauge" / "runs").resolve()
    assert targets and all(target.exists() and runs in target.parents for target in targets)
    patches = [target for target in targets if target.name == "agent.patch"]
    # 3 (sonnet) + 9 (three attempts of three tasks) + 2 (base & co: no patch after a setup error)
    assert len(patches) == 14 and len(targets) == 14 + 15
    assert "patch 3" in text and "logs 3" in text  # attempts are numbered with repeats
    assert "1/3" in text and "3/3" in text and "resolved, regressed" in text


def test_without_a_file_the_page_goes_beside_the_runs_it_links(report_repo: GitRepo) -> None:
    """`--html` alone writes `.gitgauge/report.html` and says so; its links reach the patches
    and logs from there (`runs/...`), also when `report` runs in a subdirectory."""
    written = run_gitgauge("report", "--html", cwd=report_repo.root)
    assert written.returncode == 0, written.stderr
    assert written.stdout.splitlines() == ["wrote .gitgauge/report.html"]
    page_path = report_repo.root / ".gitgauge" / "report.html"
    hrefs = parse(page_path.read_text(encoding="utf-8")).hrefs
    assert hrefs and all(href.startswith("runs/") for href in hrefs), hrefs
    targets = [page_path.parent / urllib.parse.unquote(href) for href in hrefs]
    assert all(target.exists() for target in targets)

    page_path.unlink()
    (report_repo.root / "sub").mkdir()
    again = run_gitgauge("report", "--html", "--all", cwd=report_repo.root / "sub")
    assert again.returncode == 0, again.stderr
    assert page_path.is_file()
    assert again.stdout.strip().endswith(".gitgauge/report.html")


def test_the_docs_say_the_page_links_patches_and_logs_it_does_not_hold() -> None:
    root = Path(__file__).resolve().parents[1]
    for name in ("README.md", "docs/report.md", "docs/guide/comparing.md"):
        text = " ".join((root / name).read_text(encoding="utf-8").split())
        assert "self-contained" not in text, name
        assert "--html [FILE]" in text and ".gitgauge/report.html" in text, name
        assert ".gitgauge/runs/" in text, name


def test_all_runs_label_columns_with_their_run(report_repo: GitRepo) -> None:
    later = result("base & co", TASKS[0], "resolved").model_copy(update={"runId": LATER_RUN})
    Store(report_repo.root).save_result(later)

    written = run_gitgauge("report", "--all", "--html", "all.html", cwd=report_repo.root)

    assert written.returncode == 0, written.stderr
    text = "".join(parse((report_repo.root / "all.html").read_text(encoding="utf-8")).text)
    assert f"{RUN_ID}:base & co" in text and f"{LATER_RUN}:base & co" in text


def test_without_runs_no_page_is_written(git_repo: GitRepo) -> None:
    git_repo.commit("initial", files={"README.md": "hello\n"})

    written = run_gitgauge("report", "--html", "report.html", cwd=git_repo.root)

    assert written.returncode == 1 and "no runs yet" in written.stderr
    assert not (git_repo.root / "report.html").exists()


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env=dict(os.environ),
    )


def test_the_page_renders_in_headless_chromium(report_repo: GitRepo, tmp_path: Path) -> None:
    binary = chromium()
    require(binary is not None, "chromium (Debian's `chromium` package)")
    assert binary is not None
    written = run_gitgauge("report", "--html", "report.html", cwd=report_repo.root)
    assert written.returncode == 0, written.stderr
    url = (report_repo.root / "report.html").resolve().as_uri()
    screenshot = tmp_path / "report.png"

    dumped = run_chromium(binary, tmp_path / "profile", "--dump-dom", url)
    shot = run_chromium(
        binary, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1200,1600", url
    )

    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = parse(dumped.stdout)
    text = "".join(dom.text)
    for name in [*CONFIGS, *TASKS]:
        assert name in text, name
    assert "script" not in dom.tags
    assert dom.tags.count("svg") == 2 and dom.tags.count("circle") >= 3
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 10_000  # a blank page is a few hundred bytes


def claude_transcript(command: str, output: str) -> str:
    """A claude stream-json transcript: init, a Bash call and its result, a message, the end."""
    events: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "cwd": "/work", "model": "m"},
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": command},
                    },
                ],
            },
        },  # fmt: skip
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "id": "msg_2",
                "role": "assistant",
                "content": [{"type": "text", "text": f"done {HOSTILE}"}],
            },
        },
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2},
    ]
    return "".join(json.dumps(event) + "\n" for event in events)


def test_a_pairs_transcript_is_a_collapsible_list_of_steps_linked_from_its_cell(
    report_repo: GitRepo,
) -> None:
    store = Store(report_repo.root)
    config, task = "sonnet + CLAUDE.md", TASKS[0]
    long_output = "x" * 5000 + "END-OF-OUTPUT"
    logs = store.log_dir(RUN_ID, config, task)
    (logs / "transcript.jsonl").write_text(
        claude_transcript("pytest -q", long_output), encoding="utf-8"
    )
    behaviour = AgentBehaviour(
        source="claude", turns=2, toolCalls={"Bash": 1}, shellCommands=1, testRuns=1,
        filesRead=0, filesEdited=0,
    )  # fmt: skip
    store.save_result(
        result(config, task, "resolved", costUsd=0.42, adapterSeconds=30.0, behaviour=behaviour)
    )

    written = run_gitgauge("report", "--html", "out/report.html", cwd=report_repo.root)

    assert written.returncode == 0, written.stderr
    page = (report_repo.root / "out" / "report.html").read_text(encoding="utf-8")
    parsed = parse(page)
    # The cell says what the agent did and links to the transcript further down the page.
    anchors = [href for href in parsed.hrefs if href.startswith("#")]
    assert len(anchors) == 1, anchors
    opened = page.index(f'<details class="pair" id="{anchors[0][1:]}">')
    block = page[opened : page.index("</ol>", opened)]
    assert "2 turns, ran the tests, 0 read, 0 edited" in "".join(parsed.text)
    # Collapsed (no `open`), one step per event the agent made, each opening to its text.
    assert "<details open" not in page
    assert "<summary>Bash: pytest -q</summary>" in page
    assert page.count('<ol class="steps">') == 1
    # What the agent wrote is escaped, and a long result is cut.
    assert HOSTILE not in page
    assert "x" * 2000 in page and "x" * 2001 not in page and "END-OF-OUTPUT" not in page
    assert "<summary>Bash: pytest -q</summary>" in block

    # The exports carry the behaviour: the rows' medians, the matrix's per-cell numbers.
    rows = json.loads(run_gitgauge("report", "--format", "json", cwd=report_repo.root).stdout)
    row = next(row for row in rows if row["config"] == config)
    assert (row["behaviourTasks"], row["ranTestsTasks"], row["medianTurns"]) == (1, 1, 2.0)
    assert row["medianTestRuns"] == 1.0 and row["totalWallSeconds"] == 180.0
    as_csv = run_gitgauge("report", "--format", "csv", cwd=report_repo.root).stdout
    csv_row = next(r for r in csv.DictReader(io.StringIO(as_csv)) if r["config"] == config)
    assert float(csv_row["medianTurns"]) == 2.0 and csv_row["ranTestsTasks"] == "1"
    cells = json.loads(
        run_gitgauge("report", "--tasks", "--format", "json", cwd=report_repo.root).stdout
    )
    cell = next(c for c in cells if c["config"] == config and c["task"] == task)
    assert (cell["measured"], cell["ranTests"], cell["turns"], cell["testRuns"]) == (1, 1, 2, 1)
