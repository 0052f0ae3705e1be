"""`gitgauge compare A B --format markdown` through the real CLI: on the demo's repository (its
mined tasks, the offline agent run with and without its CLAUDE.md, their patches on disk) the
document's numbers are `--format json`'s, its task lists are the result files' and its links
lead to the patches; on results written by hand, hostile config names and task ids stay inside
code spans or escaped text (no broken table, no HTML, no link, no mention), and repeats,
regressions, refusals and `--links` are worded as the docs say."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_gitgauge
from helpers.records import result as outcome
from helpers.repos import GitRepo
from helpers.results import load_result

from gitgauge.core.records import RunManifest, RunResult
from gitgauge.core.schema import AgentConfig, Timeouts
from gitgauge.core.store import Store
from gitgauge.reporting.compare_markdown import code, text

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

RUN = "20240101T000000Z-aaaaaa"
BASE_URL = "https://ci.example/artifacts/42/gitgauge/"
PIPE = re.compile(r"(?<!\\)\|")
"""A cell delimiter as GitHub reads a table row: a `|` not right after a backslash."""
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def cells(row: str) -> list[str]:
    return [cell.strip() for cell in PIPE.split(row.strip())[1:-1]]


def table_rows(document: str, first_cell: str) -> list[list[str]]:
    return [
        cells(line)
        for line in document.splitlines()
        if line.startswith("|") and cells(line)[0] == first_cell
    ]


def points(rate: float) -> str:
    return "0" if abs(rate) < 0.0005 else f"{round(rate * 100):+d}"


def rate_cell(interval: dict[str, float]) -> str:
    return (
        f"{interval['estimate'] * 100:.0f}% [{interval['low'] * 100:.0f}, "
        f"{interval['high'] * 100:.0f}]"
    )


def difference_cell(value: dict[str, Any], p_text: str) -> str:
    difference = value["difference"]
    return (
        f"{points(difference['estimate'])} points [95% CI {points(difference['low'])}, "
        f"{points(difference['high'])}], {value['test']}, {p_text}"
    )


def compare_both(root: Path, a: str, b: str, env: dict[str, str] | None = None) -> tuple[
    dict[str, Any], str
]:  # fmt: skip
    as_json = run_gitgauge("compare", a, b, "--format", "json", cwd=root, env=env)
    assert as_json.returncode == 0, as_json.stderr
    markdown = run_gitgauge(
        "compare", a, b, "--format", "markdown", "--links", BASE_URL, cwd=root, env=env
    )
    assert markdown.returncode == 0, markdown.stderr
    value: dict[str, Any] = json.loads(as_json.stdout)
    return value, markdown.stdout


def listed(document: str, title_start: str) -> list[str]:
    """The task ids of the list whose bold title starts with `title_start`."""
    lines = document.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(f"**{title_start}")]
    if not starts:
        return []
    tasks = []
    for line in lines[starts[0] + 4 :]:
        if not line.startswith("|"):
            break
        found = CODE_SPAN.fullmatch(cells(line)[0])
        assert found is not None, line
        tasks.append(found.group(2).strip().replace("\\|", "|"))
    return tasks


# -- the demo's repository: real tasks, two configs run, their patches on disk ----------------


def test_the_document_holds_the_json_numbers_and_links_each_flipped_task_to_its_patches(
    demo_repository: tuple[Path, Path],
) -> None:
    root, home = demo_repository
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GIT_"))}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    a, b = "agent", "agent-with-claude-md"

    value, document = compare_both(root, a, b, env)

    lines = document.splitlines()
    # The verdict first, in one line: compare's own sentence, its names as code spans.
    word = "not shown" if not value["unlikelyChance"] else "better"
    named = value["verdict"].replace(b, "\0").replace(a, f"`{a}`").replace("\0", f"`{b}`")
    assert lines[0] == f"**Verdict: {word}.** {named}"
    (header,) = [cells(line) for line in lines if line.startswith("|  | A:")]
    assert header == ["", f"A: `{a}`", f"B: `{b}`", "B − A"]
    p_text = f"p = {value['pValue']:.2f}"
    assert table_rows(document, "resolve rate [95% CI]") == [
        [
            "resolve rate [95% CI]",
            rate_cell(value["rateA"]),
            rate_cell(value["rateB"]),
            difference_cell(value, p_text),
        ]
    ]
    resolved_a, resolved_b = value["both"] + value["onlyA"], value["both"] + value["onlyB"]
    assert table_rows(document, "resolved") == [
        ["resolved", f"{resolved_a}/{value['attemptsA']}", f"{resolved_b}/{value['attemptsB']}", ""]
    ]
    assert table_rows(document, "errors (count as unresolved)") == [
        ["errors (count as unresolved)", str(value["errorsA"]), str(value["errorsB"]), ""]
    ]
    (time_row,) = table_rows(document, "avg time")
    assert time_row[1:3] == [f"{value['time']['meanA']:.1f}s", f"{value['time']['meanB']:.1f}s"]
    assert f"(over {value['time']['tasks']} tasks" in time_row[3]
    assert (
        f"Tasks resolved by both: {value['both']}, only A: {value['onlyA']}, only B: "
        f"{value['onlyB']}, neither: {value['neither']}."
    ) in lines
    assert f"Harness B vs A: {value['harness']}" in lines
    ran = value["behaviour"]["ranTests"]
    assert any(
        line.startswith(
            f"Behaviour B vs A: ran the tests in {ran['b']} of {ran['ofB']} tasks (A: {ran['a']} "
            f"of {ran['ofA']})"
        )
        for line in lines
    ), document
    power = value["tasksForVerdict"]
    assert any(
        line.startswith("Tasks for a verdict: the exact McNemar test reaches p &lt; 0.05")
        and f" at {power['tasks']} tasks" in line
        for line in lines
    ), document

    # The lists are the result files' outcomes, task by task.
    run_dir = root / ".gitgauge" / "runs" / value["b"]["run"]
    status = {
        (config, task): load_result(run_dir, config, task)["status"]
        for config in (a, b)
        for task in value["tasks"]
    }
    only_b = [t for t in value["tasks"] if status[b, t] == "resolved" != status[a, t]]
    only_a = [t for t in value["tasks"] if status[a, t] == "resolved" != status[b, t]]
    assert (len(only_a), len(only_b)) == (value["onlyA"], value["onlyB"])
    assert listed(document, "Resolved by B only") == only_b
    assert listed(document, "Resolved by A only") == only_a
    # Each listed side links its patch where the run left one, at the path report --html links.
    targets = re.findall(r"\[patch\]\(([^)]*)\)", document)
    assert targets
    for target in targets:
        assert target.startswith(BASE_URL.rstrip("/") + "/runs/")
        relative = urllib.parse.unquote(target[len(BASE_URL) :])
        assert (root / ".gitgauge" / relative).is_file() and relative.endswith("/agent.patch")
    for task in only_a + only_b:
        for config in (a, b):
            patch = run_dir / "logs" / config / task / "agent.patch"
            url = f"{BASE_URL}runs/{value['b']['run']}/logs/{config}/{task}/agent.patch"
            assert (url in targets) == patch.is_file()

    # No transcript and no environment value reaches the document.
    transcripts = list(run_dir.glob("logs/*/*/transcript.jsonl"))
    assert transcripts
    said = {
        text_value
        for path in transcripts
        for line in path.read_text(encoding="utf-8").splitlines()
        for text_value in re.findall(r'"((?:[^"\\]|\\.){24,})"', line)
    }
    assert said and not [phrase for phrase in said if phrase in document]
    assert not [v for v in env.values() if len(v) >= 12 and v in document]


# -- results written by hand -------------------------------------------------------------------


@pytest.fixture
def repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", files={"README.md": "hello\n"})
    return git_repo


def store_run(repo: GitRepo, results: list[RunResult], run_id: str = RUN) -> None:
    configs = list(dict.fromkeys(item.config for item in results))
    store = Store(repo.root)
    store.save_manifest(
        RunManifest(
            runId=run_id,
            gitgaugeVersion="0.1.0",
            configs=[AgentConfig(name=name, adapter="script", command="true") for name in configs],
            configFiles=[f"config-{index}.yaml" for index in range(len(configs))],
            tasks=sorted({item.task for item in results}),
            testCommand="pytest -q",
            timeouts=Timeouts(),
            sandbox="none",
            startedAt=f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00.000+00:00",
        )
    )
    for item in results:
        store.save_result(item.model_copy(update={"runId": run_id}))
        folder = store.log_dir(run_id, item.config, item.task, item.attempt)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "agent.patch").write_text("--- a/x\n+++ b/x\n", encoding="utf-8")


HOSTILE_A = "evil|*x*`tick` __b__"
HOSTILE_B = "<img src=x onerror=alert(1)> @octocat [link](https://evil.example) <!--"
HOSTILE_TASK = "0badc0de-a_b_c__d__"


def outside_code(document: str) -> str:
    return CODE_SPAN.sub("", document)


def test_hostile_config_names_and_task_ids_break_no_table_and_inject_nothing(
    repo: GitRepo,
) -> None:
    tasks = [HOSTILE_TASK, "1badc0de-plain", "2badc0de-plain", "3badc0de-plain"]
    statuses = [("unresolved", "resolved"), ("resolved", "unresolved")]
    statuses += [("resolved", "resolved"), ("unresolved", "unresolved")]
    results = []
    for task, (status_a, status_b) in zip(tasks, statuses, strict=True):
        results.append(outcome(HOSTILE_A, task, status_a, adapterSeconds=3.0))
        results.append(outcome(HOSTILE_B, task, status_b, adapterSeconds=5.0))
    # A task only A ran: the task-set warning names both configs in its sentence.
    results.append(outcome(HOSTILE_A, "4badc0de-only-a", "resolved"))
    store_run(repo, results)

    value, document = compare_both(repo.root, HOSTILE_A, HOSTILE_B)

    # Every row of every table has its header's number of cells.
    widths: list[int] = []
    for line in document.splitlines():
        if not line.startswith("|"):
            widths = []
            continue
        widths.append(len(cells(line)))
        assert widths[-1] == widths[0], line
    # The names are code spans wherever they are named (escaped text in a warning's sentence):
    # outside code spans no tag, comment, mention, emphasis or link but the patches' is left.
    rest = outside_code(document)
    assert "<" not in rest and "@octocat" not in rest
    assert not re.findall(r"(?<![\\*])\*(?!\*)|(?<!\\)`", rest)
    assert set(re.findall(r"(?<!\\)\[([^\]]*)\]\(", rest)) == {"patch"}
    assert not re.findall(r"(?<!\\)_", re.sub(r"\]\([^)]*\)", "]", rest))
    assert f"B: {code(HOSTILE_B)}" in document and "``evil|*x*`tick` __b__``" in document
    assert "A: ``evil\\|*x*`tick` __b__``" in document  # its table header: `|` escaped
    assert listed(document, "Resolved by B only") == [HOSTILE_TASK]
    assert listed(document, "Resolved by A only") == ["1badc0de-plain"]
    (warning,) = value["warnings"]
    assert f"- {text(warning, line_start=True)}" in document.splitlines()
    assert "evil\\|\\*x\\*\\`tick\\` \\_\\_b\\_\\_ ran 5 tasks" in document
    assert "&lt;img src=x onerror=alert(1)&gt; @&#8203;octocat \\[link\\]" in document
    # The numbers are still the JSON's.
    (rate_row,) = table_rows(document, "resolve rate [95% CI]")
    assert rate_row[1:3] == [rate_cell(value["rateA"]), rate_cell(value["rateB"])]
    assert rate_row[3] == difference_cell(value, "p = 1.00")


def test_repeats_regressions_and_errors_are_worded_per_task(repo: GitRepo) -> None:
    results = []
    plan = {
        "aaaaaaaa-b-better": (["unresolved", "resolved", "unresolved"], ["resolved"] * 3),
        "bbbbbbbb-a-better": (["resolved"] * 3, ["resolved", "error", "unresolved"]),
        "cccccccc-same": (["resolved"] * 3, ["resolved"] * 3),
    }
    for task, (column_a, column_b) in plan.items():
        for config, column in (("A", column_a), ("B", column_b)):
            for attempt, status in enumerate(column, start=1):
                regressed = config == "B" and task == "cccccccc-same" and attempt == 2
                results.append(
                    outcome(config, task, status, attempt=attempt, regressed=regressed,
                            errorKind="adapter-exit" if status == "error" else None)
                )  # fmt: skip
    store_run(repo, results)

    value, document = compare_both(repo.root, "A", "B")

    assert value["repeated"] is True
    assert listed(document, "Resolved more often by B") == ["aaaaaaaa-b-better"]
    assert listed(document, "Resolved more often by A") == ["bbbbbbbb-a-better"]
    assert listed(document, "Regressed on one side more") == ["cccccccc-same"]
    (row,) = [cells(line) for line in document.splitlines() if "`bbbbbbbb-a-better`" in line]
    assert row[1] == "3/3 resolved, " + ", ".join(
        f"[patch {n}]({BASE_URL}runs/{RUN}/logs/A/bbbbbbbb-a-better/"
        + ("" if n == 1 else f"attempt-{n}/")
        + "agent.patch)"
        for n in (1, 2, 3)
    )
    assert row[2].startswith("1/3 resolved, 1 error, [patch 1](")
    assert table_rows(document, "regressions (base suite broke)") == [
        ["regressions (base suite broke)", "0", "1", ""]
    ]
    assert (
        f"Tasks resolved more often by A: {value['onlyA']}, by B: {value['onlyB']}, equally "
        f"often: {value['both']}, by neither: {value['neither']}."
    ) in document.splitlines()
    assert "(3 attempts per task for A, 3 for B)." in document


def test_no_verdict_bad_links_and_links_without_markdown_are_refused(repo: GitRepo) -> None:
    store_run(
        repo,
        [outcome("C", "aaaaaaaa-t", "resolved")]
        + [outcome("D", "aaaaaaaa-t", "error", errorKind="adapter-exit",
                   errorMessage="claude: Not logged in: run `claude /login`")],
    )  # fmt: skip

    refused = run_gitgauge("compare", "C", "D", "--format", "markdown", cwd=repo.root)
    not_http = run_gitgauge(
        "compare", "C", "D", "--format", "markdown", "--links", "javascript:alert(1)",
        cwd=repo.root,
    )  # fmt: skip
    breaks_link = run_gitgauge(
        "compare", "C", "D", "--format", "markdown", "--links", "https://x.example/a)b",
        cwd=repo.root,
    )  # fmt: skip
    text_format = run_gitgauge("compare", "C", "D", "--links", BASE_URL, cwd=repo.root)

    assert refused.returncode == 1
    first = refused.stdout.splitlines()[0]
    assert first.startswith("**No verdict:** every pair of D is an error (claude: ")
    assert "Not logged in: run \\`claude /login\\`" in first
    assert "Tasks for a verdict" not in refused.stdout
    assert not_http.returncode == 2 and "--links takes an http(s) URL" in not_http.stderr
    assert breaks_link.returncode == 2 and "would break the Markdown links" in breaks_link.stderr
    assert text_format.returncode == 2 and "--links is for --format markdown" in text_format.stderr


def test_code_spans_and_text_survive_what_markdown_would_read() -> None:
    assert code("plain") == "`plain`"
    assert code("`edge`") == "`` `edge` ``"
    assert code("a``b") == "```a``b```"
    assert code("a|b", cell=True) == "`a\\|b`"
    assert code("two\nlines\x1b[2J") == "`two lines\\x1b[2J`"
    assert text("# not a heading", line_start=True) == "\\# not a heading"
    assert text("1. not a list", line_start=True) == "1\\. not a list"
    assert text("a <b> & @me [x](y) *z* | `w`") == (
        "a &lt;b&gt; &amp; @&#8203;me \\[x\\](y) \\*z\\* \\| \\`w\\`"
    )


def test_a_long_list_names_its_first_30_tasks_and_counts_the_rest(repo: GitRepo) -> None:
    tasks = [f"{index:08x}-task" for index in range(33)]
    results = [outcome("A", task, "unresolved") for task in tasks]
    results += [outcome("B", task, "resolved") for task in tasks]
    store_run(repo, results)

    value, document = compare_both(repo.root, "A", "B")

    assert value["onlyB"] == 33
    assert listed(document, "Resolved by B only") == tasks[:30]
    assert "and 3 more (`gitgauge report --tasks` lists all)" in document.splitlines()
    assert document.splitlines()[0].startswith("**Verdict: better.** `B` resolved 33 more of 33")
