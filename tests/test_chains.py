"""Commit-history tasks end to end, through the real CLI: `gitgauge mine --chains` on a history
with chains of each kind (`helpers/repos/chains.py`), then `gitgauge run --judge` with gold, noop, a
probe that journals what its workspace holds, and scripted agents that squash, drop a hunk,
leave the rebase paused or commit the tests first, judged by the loopback fake of the Messages
API (the SDK backend), then `report` and `compare`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.chain_judge import BLOCK, fewer_commits_win, series_blocks, series_blocks_text
from helpers.cli import run_gitgauge
from helpers.configs import configs_args, gold_noop_and, write_configs
from helpers.environment import isolated, path_without_claude
from helpers.fakes.anthropic_api import FakeAnthropic, RecordedRequest
from helpers.fakes.anthropic_api import serve as serve_anthropic
from helpers.fakes.claude import envelope_fixture, fake_claude_env, read_records
from helpers.repos import new_repo
from helpers.repos.chains import CHAIN_CHECKS, ChainRepo, build_chain_repo
from helpers.results import Watched, runs_in_order, watch

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

IN_REBASE = '[ -d "$(git rev-parse --git-path rebase-merge)" ]'
ONTO = 'onto=$(cat "$(git rev-parse --git-path rebase-merge)/onto")'

PROBE = (
    'out="$CHAIN_JOURNAL/$GITGAUGE_TASK_ID.txt"; '
    '{ echo "STATUS"; git status --porcelain=v1 --untracked-files=all; '
    'echo "HEAD"; git rev-parse HEAD; git symbolic-ref -q HEAD || echo detached; '
    'echo "TODO"; cat "$(git rev-parse --git-path rebase-merge)/git-rebase-todo" 2>/dev/null; '
    "echo \"OBJECTS\"; git cat-file --batch-all-objects --batch-check='%(objectname)'; "
    'echo "LOG"; git log --all --format=%H; echo "END"; } > "$out" 2>&1; exit 0'
)


def probed(journal: Path, task: dict[str, Any]) -> dict[str, str]:
    """What PROBE wrote of `task`'s workspace, by its headings: STATUS, HEAD, TODO, OBJECTS, LOG."""
    seen = (journal / f"{task['id']}.txt").read_text()
    parts = re.split(r"^(STATUS|HEAD|TODO|OBJECTS|LOG|END)\n", seen, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


# Everything in one commit: every check holds (judging it is the judge's job).
SQUASH = (
    f"if {IN_REBASE}; then {ONTO}; git rebase --abort && git reset -q --soft $onto; fi; "
    'git add -A && git commit -q -m "Do all of it at once"'
)
# The series as it was, but its last commit loses its last line: the tree check fails.
DROPPER = (
    f"if {IN_REBASE}; then git rebase --continue >/dev/null && "
    'f=$(git diff --name-only HEAD~1 HEAD | head -n 1) && head -n -1 "$f" > ../cut.tmp && '
    'mv ../cut.tmp "$f" && git commit -q --amend -a --no-edit --allow-empty; '
    'else f=$(git diff --name-only | head -n 1) && head -n -1 "$f" > ../cut.tmp && '
    'mv ../cut.tmp "$f" && git add -A && git commit -q -m "All but a line"; fi'
)
# The rebase edited at its second pick and left there.
PAUSED = (
    f"if {IN_REBASE}; then GIT_SEQUENCE_EDITOR='sed -i 2s/^pick/edit/' git rebase --edit-todo "
    "&& git rebase --continue; else git add -A && git commit -q -m 'Do all of it'; fi; exit 0"
)
# The tests first, in a commit of their own (it fails them), then the rest.
TESTS_FIRST = (
    f"if {IN_REBASE}; then {ONTO}; git rebase --abort && git reset -q $onto; fi; "
    "git add tests 2>/dev/null && git commit -q -m 'Test doubling first'; "
    "git add -A && git commit -q -m 'Then the code'"
)
CONFIGS = gold_noop_and(
    probe=PROBE, squash=SQUASH, dropper=DROPPER, paused=PAUSED, testsfirst=TESTS_FIRST
)


@dataclass(frozen=True)
class Mined(Watched):
    built: ChainRepo
    mine_output: str
    tasks: dict[tuple[str, str], dict[str, Any]]
    """(scenario, kind) -> task record."""
    results: dict[tuple[str, str, str], dict[str, Any]]
    """(config, scenario, kind) -> result record."""
    manifest: dict[str, Any]
    requests: list[RecordedRequest]
    run_output: str
    report: str
    report_tasks: str


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory) -> Mined:
    base = tmp_path_factory.mktemp("chains")
    with isolated(base), serve_anthropic() as fake:
        built = build_chain_repo(base / "repo")
        root = built.root
        # Checked in: the run's settings are part of the project.
        (root / "gitgauge.yaml").write_text(
            "testCommand: python3 run_tests.py\nchains:\n  testEachCommit: true\n"
        )
        configs = write_configs(base / "configs", CONFIGS)
        watching = watch(
            base,
            root,
            "CHAIN_JOURNAL",
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=fake.base_url,
        )
        env = watching.env
        mine = run_gitgauge("mine", "--chains", cwd=root, env=env)
        assert mine.returncode == 0, mine.stderr
        fake.answer(fewer_commits_win)
        # No sandbox: the probe writes its journal outside the workspace (the sandbox has its
        # own tests; `test_a_sandboxed_agent_finishes_the_rebase` runs one in it).
        args = configs_args(*configs.values())
        run = run_gitgauge(
            "run", "--sandbox", "none", "--judge", "-j", "2", *args, cwd=root, env=env
        )
        assert run.returncode == 0, run.stderr + run.stdout
        report = run_gitgauge("report", cwd=root, env=env)
        assert report.returncode == 0, report.stderr
        report_tasks = run_gitgauge("report", "--tasks", cwd=root, env=env)
        assert report_tasks.returncode == 0, report_tasks.stderr
        watched = watching.done()
        requests = list(fake.requests)
    scenario_of = {commits[-1]: name for name, commits in built.commits.items()}
    tasks: dict[tuple[str, str], dict[str, Any]] = {}
    by_id: dict[str, tuple[str, str]] = {}
    for path in (root / ".gitgauge" / "tasks").glob("*.yaml"):
        record = yaml.safe_load(path.read_text())
        key = (scenario_of[record["fix"]], record["kind"])
        tasks[key] = record
        by_id[record["id"]] = key
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    (run_dir,) = (root / ".gitgauge" / "runs").iterdir()
    for path in run_dir.glob("results/*/*.json"):
        record = json.loads(path.read_text())
        # The key is built first: mypy (2.4) takes a starred item inside a subscript for 3.11's
        # `d[a, *b]` even in parentheses, which Python 3.10 accepts.
        config_task = (record["config"], *by_id[record["task"]])
        results[config_task] = record
    return Mined(
        built=built,
        mine_output=mine.stdout,
        tasks=tasks,
        results=results,
        manifest=json.loads((run_dir / "run.json").read_text()),
        requests=requests,
        run_output=run.stdout,
        report=report.stdout,
        report_tasks=report_tasks.stdout,
        **watched,
    )


CHAINS = {"long": 6, "four": 4, "zeta": 3}
KINDS = ("rebase", "commits")


def test_mine_makes_two_tasks_per_chain_and_counts_every_skip(mined: Mined) -> None:
    assert set(mined.tasks) == {(name, kind) for name in CHAINS for kind in KINDS}
    for name, length in CHAINS.items():
        chain = mined.built.commits[name][-length:]
        parent = mined.built.parent_of(chain[0])
        rebase, commits = mined.tasks[(name, "rebase")], mined.tasks[(name, "commits")]
        for task in (rebase, commits):
            assert task["chain"] == chain
            assert task["chainParent"] == parent
            assert task["fix"] == chain[-1]
            assert task["testsAtNewest"] is True
            assert len(task["chainSubjects"]) == length
        # The rebase starts at the newest commit, the commits task at the chain's parent.
        assert (rebase["base"], commits["base"]) == (chain[-1], parent)
        assert rebase["id"] != commits["id"]
        assert rebase["id"].startswith(chain[-1][:8] + "-rebase-")
    long = mined.tasks[("long", "rebase")]
    # A run of 8 commits on alpha.py: its newest 6; one of them also changes beta.py.
    assert (long["file"], long["purity"], long["difficulty"]) == ("src/alpha.py", 0.8571, "medium")
    zeta = mined.tasks[("zeta", "commits")]
    assert (zeta["file"], zeta["chainSubjects"]) == (
        "src/zeta.py",
        ["Add zeta.double", "Test zeta.double", "Document zeta.double"],
    )
    out = mined.mine_output
    assert "file-commit chains: 6" in out
    for reason in (
        "touches only Markdown or lock files: 1",
        "two commits with the same subject: 1",
        "purer chains only (mine.chainPurity): 1",
    ):
        assert f"skipped, {reason}" in out, out
    assert "chain tasks:       6" in out
    # The merge splits its run and the addition ends its run: neither is a chain, or a skip.
    repo = mined.built.repo
    merge, added = mined.built.commits["merge"][2], mined.built.commits["added"][0]
    assert "src/gamma.py" in repo.git("diff", "--name-only", f"{merge}^1", merge).split()
    assert repo.git("diff", "--name-status", f"{added}^", added).split() == ["A", "src/delta.py"]
    for name in ("merge", "added"):
        assert not any(sha[:8] in out for sha in mined.built.commits[name]), name


def workspaces(mined: Mined, kind: str) -> Iterator[tuple[str, dict[str, Any], dict[str, str]]]:
    """Each chain's name, its task of `kind` and what PROBE saw of that task's workspace."""
    for name in CHAINS:
        task = mined.tasks[(name, kind)]
        yield name, task, probed(mined.journal, task)


def test_the_commits_workspace_is_the_newest_tree_uncommitted_on_the_parent_and_nothing_more(
    mined: Mined,
) -> None:
    repo = mined.built.repo
    for name, task, seen in workspaces(mined, "commits"):
        status = seen["STATUS"]
        changed = repo.git("diff", "--name-status", task["chainParent"], task["fix"]).split("\n")
        expected = sorted(
            (" M " if line[0] == "M" else "?? ") + line.split("\t", 1)[1]
            for line in changed
            if line
        )
        assert sorted(status.splitlines()) == expected, (name, status)
        assert seen["HEAD"].split() == [task["chainParent"], "refs/heads/main"]
        objects = set(seen["OBJECTS"].split())
        only_chain = repo.git("rev-list", "--objects", task["fix"], f"^{task['chainParent']}")
        leaked = {line.split()[0] for line in only_chain.splitlines()} & objects
        assert not leaked, (name, leaked)
        assert not any(sha in seen["LOG"] for sha in task["chain"])
        assert task["chainParent"] in seen["LOG"]


def test_the_rebase_workspace_is_paused_at_a_break_and_holds_the_chain_and_nothing_after(
    mined: Mined,
) -> None:
    repo = mined.built.repo
    for name, task, seen in workspaces(mined, "rebase"):
        assert seen["STATUS"] == "", (name, seen["STATUS"])
        assert seen["HEAD"].split() == [task["chainParent"], "detached"]
        assert seen["TODO"].splitlines() == [
            f"pick {sha} {subject}"
            for sha, subject in zip(task["chain"], task["chainSubjects"], strict=True)
        ]
        objects = set(seen["OBJECTS"].split())
        assert set(task["chain"]) <= objects
        after = repo.git("rev-list", "--objects", "main", f"^{task['fix']}")
        leaked = {line.split()[0] for line in after.splitlines()} & objects
        assert not leaked, (name, leaked)
    # The longest chain is not the newest: something came after it, and none of it is there.
    assert repo.git("rev-list", "--count", "main", f"^{mined.tasks[('long', 'rebase')]['fix']}")


def checks_of(result: dict[str, Any]) -> dict[str, bool]:
    return {name: result[name] for name in CHAIN_CHECKS}


def test_gold_passes_every_check_and_the_judge_ties_it_with_itself(mined: Mined) -> None:
    for name in CHAINS:
        for kind in KINDS:
            result = mined.results[("gold", name, kind)]
            assert result["status"] == "resolved", result
            assert all(checks_of(result).values()), result
            assert result["series"] == mined.tasks[(name, kind)]["chainSubjects"]
            assert result["originalSeries"] == result["series"]
            assert (result["judgeAsFirst"], result["judgeAsSecond"]) == ("tie", "tie")
            assert result["solved"] is False
            assert (result["diffFiles"], result["diffInsertions"]) == (0, 0)
    check = mined.manifest["judgeCheck"]
    assert (check["asFirst"], check["asSecond"], check["backend"]) == (
        "tie",
        "tie",
        "anthropic-sdk",
    )
    assert "tie/tie (no position bias seen)" in mined.run_output
    assert "Judge position check: the original series of" in " ".join(mined.report.split())


def test_noop_fails(mined: Mined) -> None:
    for name in CHAINS:
        rebase = mined.results[("noop", name, "rebase")]
        assert rebase["status"] == "unresolved"
        assert (rebase["checkNothingInProgress"], rebase["checkTree"]) == (False, False)
        commits = mined.results[("noop", name, "commits")]
        assert commits["status"] == "unresolved"
        assert (commits["checkNothingUncommitted"], commits["checkSeriesLength"]) == (False, False)
        assert commits["series"] == []
        assert commits["solved"] is None  # nothing to judge


def test_one_commit_for_everything_passes_every_check_and_the_judge_decides(mined: Mined) -> None:
    for name in CHAINS:
        for kind in KINDS:
            result = mined.results[("squash", name, kind)]
            assert all(checks_of(result).values()), (kind, result)
            assert result["status"] == "resolved"
            assert result["series"] == ["Do all of it at once"]
            # The fake judge prefers fewer commits, whichever side it is shown on.
            assert (result["judgeAsFirst"], result["judgeAsSecond"], result["solved"]) == (
                "win",
                "win",
                True,
            )
            assert result["judgeInputTokens"] == 2 * 1200
            assert result["judgeModel"] == "claude-haiku-5-5"


def test_dropping_a_hunk_fails_the_tree_check_alone(mined: Mined) -> None:
    for name in CHAINS:
        for kind in KINDS:
            result = mined.results[("dropper", name, kind)]
            failed = [check for check, held in checks_of(result).items() if not held]
            assert failed == ["checkTree"], (name, kind, result)
            assert result["status"] == "unresolved"
            assert result["diffDeletions"] == 1


def test_a_rebase_left_paused_fails_nothing_in_progress(mined: Mined) -> None:
    for name in CHAINS:
        result = mined.results[("paused", name, "rebase")]
        assert result["checkNothingInProgress"] is False, result
        assert result["checkBranch"] is False  # HEAD is detached at the edited pick
        assert result["status"] == "unresolved"
        assert result["series"] == mined.tasks[(name, "rebase")]["chainSubjects"][:2]


def test_each_commit_is_tested_and_a_test_before_its_code_fails(mined: Mined) -> None:
    first = mined.results[("testsfirst", "zeta", "commits")]
    assert first["series"] == ["Test doubling first", "Then the code"]
    assert (first["seriesTested"], first["seriesPassing"]) == (2, 1)
    assert first["status"] == "resolved"  # bisectability is measured, not a check
    gold = mined.results[("gold", "zeta", "commits")]
    assert (gold["seriesTested"], gold["seriesPassing"]) == (3, 3)
    squash = mined.results[("squash", "long", "rebase")]
    assert (squash["seriesTested"], squash["seriesPassing"]) == (1, 1)
    assert mined.results[("noop", "zeta", "commits")]["seriesTested"] is None


def test_the_judge_is_sent_both_orders_with_the_series_swapped(mined: Mined) -> None:
    judged = [result for result in mined.results.values() if result["judgeModel"] is not None]
    assert len(mined.requests) == 2 * len(judged) + 2  # + the position check
    shown = [series_blocks(request) for request in mined.requests]
    for a, b in shown:
        assert (b, a) in shown
    for request in mined.requests:
        assert request.body["model"] == "claude-haiku-5-5"
        nonce = BLOCK.search(request.text).group(2)  # type: ignore[union-attr]
        assert nonce in request.body["system"]
        assert "untrusted data" in request.body["system"]
    # The original and the squash, in both orders, for the squash's pairs.
    zeta = mined.tasks[("zeta", "commits")]
    original = next(a for a, b in shown if a == b and "Add zeta.double" in a)
    assert original.count("--- commit ") == 3
    assert zeta["chain"][0] not in original  # no commit id, author or date is shown
    assert (original, next(b for a, b in shown if a == original and b != a)) in shown


def test_the_report_has_a_row_per_config_and_kind_with_checks_and_judge(mined: Mined) -> None:
    lines = mined.report.splitlines()
    assert lines[0].split()[:7] == [
        "CONFIG", "KIND", "RESOLVED", "CHECKS", "SOLVED", "WIN/TIE/LOSS", "ERRORS",
    ]  # fmt: skip
    rows = {(row[0], row[1]): row for row in (line.split() for line in lines[2:]) if len(row) > 5}
    assert rows[("gold", "rebase")][2:6] == ["3/3", "18/18", "0/3", "0/6/0"]
    assert rows[("gold", "commits")][2:6] == ["3/3", "18/18", "0/3", "0/6/0"]
    assert rows[("squash", "commits")][2:6] == ["3/3", "18/18", "3/3", "6/0/0"]
    assert rows[("noop", "rebase")][2:6] == ["0/3", "6/18", "-", "-"]
    # Nothing in progress, no subjects alike, HEAD still on the parent: 3 of 6 hold.
    assert rows[("noop", "commits")][2:6] == ["0/3", "9/18", "-", "-"]
    assert rows[("dropper", "rebase")][2:4] == ["0/3", "15/18"]


def test_report_tasks_shows_each_series_beside_the_original(mined: Mined) -> None:
    text = mined.report_tasks
    zeta = mined.tasks[("zeta", "commits")]
    block = text.split(f"{zeta['id']}:\n", 1)[1].split("\n\n", 1)[0]
    header = block.splitlines()[0]
    assert header.split()[:3] == ["original", "gold", "(commits)"]
    first = block.splitlines()[2]
    assert first.split()[:2] == ["Add", "zeta.double"]
    assert "Test doubling first" in first and "Do all of it at once" in first
    assert "(no series)" not in block  # noop's empty series is an empty column


def test_the_html_page_shows_the_checks_the_judge_and_each_series_beside_the_original(
    mined: Mined, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    written = run_gitgauge("report", "--html", str(page), cwd=mined.built.root)
    assert written.returncode == 0, written.stderr
    text = page.read_text(encoding="utf-8")
    summary = text.split('<table class="summary">', 1)[1].split("</table>", 1)[0]
    headers = re.findall(r"<th>(.*?)</th>", summary)
    assert headers[:6] == ["CONFIG", "KIND", "RESOLVED", "CHECKS", "SOLVED", "WIN/TIE/LOSS"]
    zeta = mined.tasks[("zeta", "commits")]
    table = text.split(f'<h3 class="task">{zeta["id"]}</h3><table class="series">', 1)[1]
    table = table.split("</table>", 1)[0]
    columns = re.findall(r"<th>(.*?)</th>", table)
    cells = [re.findall(r"<li>(.*?)</li>", cell) for cell in re.findall(r"<td>(.*?)</td>", table)]
    shown = dict(zip(columns, cells, strict=True))
    assert len(shown) == 1 + len(CONFIGS)  # the original, then each config's commits column
    assert shown["original"] == zeta["chainSubjects"]
    assert shown["gold (commits)"] == zeta["chainSubjects"]
    assert shown["squash (commits)"] == ["Do all of it at once"]
    assert shown["testsfirst (commits)"] == ["Test doubling first", "Then the code"]
    assert shown["noop (commits)"] == []


def test_compare_pairs_within_a_kind_on_the_checks_and_on_solved(
    mined: Mined, tmp_path: Path
) -> None:
    root = mined.built.root
    mixed = run_gitgauge("compare", "gold", "squash", cwd=root)
    assert mixed.returncode == 2 and "--kind commits or --kind rebase" in mixed.stderr
    compared = run_gitgauge("compare", "gold", "squash", "--kind", "commits", cwd=root)
    assert compared.returncode == 0, compared.stderr
    assert "Judge SOLVED" in compared.stdout
    assert "gold: 0% [0, 56], squash: 100% [44, 100]" in compared.stdout
    value = json.loads(
        run_gitgauge(
            "compare", "noop", "dropper", "--kind", "rebase", "--format", "json", cwd=root
        ).stdout
    )
    assert value["checks"]["meanA"] == 2.0 and value["checks"]["meanB"] == 5.0
    assert value["solved"] is None  # noop has nothing judged


def test_the_users_checkout_is_untouched_and_nothing_is_left_behind(mined: Mined) -> None:
    assert mined.after == mined.before
    assert mined.temp_left == []


# -- the judge, alone against the fake ----------------------------------------------------


@pytest.fixture(scope="module")
def judge_repo(tmp_path_factory: pytest.TempPathFactory) -> ChainRepo:
    base = tmp_path_factory.mktemp("judge")
    with isolated(base):
        built = build_chain_repo(base / "repo")
        outcome = run_gitgauge("mine", "--chains", cwd=built.root)
        assert outcome.returncode == 0, outcome.stderr
    return built


def _judged_run(
    built: ChainRepo, fake: FakeAnthropic, tmp_path: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], dict[str, Any]]:
    root = built.root
    (zeta,) = [p.stem for p in (root / ".gitgauge" / "tasks").glob("*-commits-document-*.yaml")]
    config = tmp_path / "squash.yaml"
    config.write_text(yaml.safe_dump({"name": "squash", "adapter": "script", "command": SQUASH}))
    env = dict(os.environ, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url)
    env["GITGAUGE_REWRITE_MAX_RETRIES"] = "0"
    run = run_gitgauge(
        "run", "--sandbox", "none", "--task", zeta, "-c", str(config), *extra, cwd=root, env=env
    )
    assert run.returncode == 0, run.stderr
    run_dir = runs_in_order(root)[-1]
    result = json.loads((run_dir / "results" / "squash" / f"{zeta}.json").read_text())
    return run, result, json.loads((run_dir / "run.json").read_text())


def test_a_malformed_answer_is_unscored_never_guessed(
    judge_repo: ChainRepo, tmp_path: Path
) -> None:
    with isolated(tmp_path), serve_anthropic() as fake:
        answers = iter(
            [
                "VERDICT: TIE",  # the position check, first order
                "VERDICT: TIE",
                "VERDICT: A",  # the squash shown first: a win
                "I prefer B.\nVERDICT: A\nVERDICT: B",  # two verdicts: malformed
            ]
        )
        fake.answer(lambda request: next(answers))
        run, result, manifest = _judged_run(judge_repo, fake, tmp_path, "--judge")
    assert (result["judgeAsFirst"], result["judgeAsSecond"], result["solved"]) == (
        "win",
        None,
        None,
    )
    assert "shown second: malformed answer" in result["judgeProblem"]
    assert result["status"] == "resolved"  # the checks score with or without a verdict
    assert manifest["judgeCheck"]["asFirst"] == "tie"
    assert ", judge: unscored (win/-)" in run.stdout
    assert "6/6 checks" in run.stdout


def test_a_judge_that_cannot_be_reached_leaves_solved_unknown(
    judge_repo: ChainRepo, tmp_path: Path
) -> None:
    with isolated(tmp_path), serve_anthropic() as fake:
        fake.fail(500)
        run, result, manifest = _judged_run(judge_repo, fake, tmp_path, "--judge")
    assert result["solved"] is None and result["judgeAsFirst"] is None
    assert "HTTP 500" in result["judgeProblem"]
    assert manifest["judgeCheck"]["problem"].startswith("shown first: the Anthropic API")
    assert "unscored" in run.stdout
    assert result["status"] == "resolved"


def test_without_a_judge_the_quality_columns_are_dashes(
    judge_repo: ChainRepo, tmp_path: Path
) -> None:
    with isolated(tmp_path), serve_anthropic() as fake:
        run, result, manifest = _judged_run(judge_repo, fake, tmp_path)
        assert fake.requests == []
    assert result["solved"] is None and result["judgeProblem"] is None
    assert manifest.get("judgeCheck") is None
    row = next(line.split() for line in run.stdout.splitlines() if line.startswith("squash   "))
    assert row[1:6] == ["commits", "1/1", "6/6", "-", "-"]


def test_judge_without_any_backend_warns_once_and_the_checks_still_score(
    judge_repo: ChainRepo, tmp_path: Path
) -> None:
    root = judge_repo.root
    tasks = sorted(p.stem for p in (root / ".gitgauge" / "tasks").glob("*.yaml"))
    config = tmp_path / "gold.yaml"
    config.write_text("name: gold\nadapter: gold\n")
    env = dict(os.environ, PATH=path_without_claude(tmp_path / "shims"))
    # Six tasks, one warning.
    run = run_gitgauge("run", "--sandbox", "none", "--judge", "-c", str(config), cwd=root, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("no judge is available") == 1, run.stderr
    assert run.stdout.count("resolved, 6/6 checks") == len(tasks) == 6, run.stdout
    run_dir = runs_in_order(root)[-1]
    result = json.loads((run_dir / "results" / "gold" / f"{tasks[0]}.json").read_text())
    assert result["judgeProblem"] == "no judge available (see the warning)"
    assert result["solved"] is None


def test_the_judge_model_flag_needs_the_judge(judge_repo: ChainRepo, tmp_path: Path) -> None:
    config = tmp_path / "gold.yaml"
    config.write_text("name: gold\nadapter: gold\n")
    run = run_gitgauge("run", "--judge-model", "opus", "-c", str(config), cwd=judge_repo.root)
    assert run.returncode == 2
    assert "--judge-model goes with --judge (or chains.judge: true)" in run.stderr


def test_with_the_full_history_both_workspaces_start_on_the_chain_not_on_your_main(
    tmp_path: Path,
) -> None:
    """`run.history: full` gives the agent your branches too, your `main` among them (its tip
    is past the chain here): the workspace's own `main` still starts where the kind says."""
    with isolated(tmp_path):
        root = tmp_path / "repo"
        repo = new_repo(root)
        parent = repo.commit(
            "Start",
            files={
                "a.py": "A = 0\n",
                ".gitignore": ".gitgauge/\n",
                "gitgauge.yaml": "testCommand: 'true'\nrun:\n  history: full\n",
            },
        )
        content = "A = 0\n"
        chain = []
        for step in range(3):
            content += f"A{step} = {step}\n"
            chain.append(repo.commit(f"Alpha step {step}", files={"a.py": content}))
        tip = repo.commit("Later work", files={"b.txt": "b\n"})
        mined = run_gitgauge("mine", "--chains", cwd=root)
        assert mined.returncode == 0, mined.stderr
        used = {name: CONFIGS[name] for name in ("gold", "noop", "probe", "squash")}
        args = configs_args(*write_configs(tmp_path / "configs", used).values())
        journal = tmp_path / "journal"
        journal.mkdir()
        env = dict(os.environ, CHAIN_JOURNAL=str(journal))
        run = run_gitgauge("run", "--sandbox", "none", *args, cwd=root, env=env)
        assert run.returncode == 0, run.stderr
    tasks = {
        record["kind"]: record
        for record in (yaml.safe_load(p.read_text()) for p in (root / ".gitgauge/tasks").iterdir())
    }
    assert tasks["rebase"]["chain"] == tasks["commits"]["chain"] == chain
    (run_dir,) = (root / ".gitgauge" / "runs").iterdir()
    results = {
        (record["config"], record["kind"]): record
        for record in (json.loads(p.read_text()) for p in run_dir.glob("results/*/*.json"))
    }
    for kind in ("rebase", "commits"):
        assert results[("gold", kind)]["status"] == "resolved", results[("gold", kind)]
        assert results[("squash", kind)]["status"] == "resolved", results[("squash", kind)]
        assert results[("noop", kind)]["status"] == "unresolved"
        seen = probed(journal, tasks[kind])
        attached = "detached" if kind == "rebase" else "refs/heads/main"
        assert seen["HEAD"].split() == [parent, attached], (kind, seen)
        assert tip in seen["LOG"]  # the full history: your main is there too


def test_without_an_api_key_the_judge_is_the_claude_cli(
    judge_repo: ChainRepo, tmp_path: Path
) -> None:
    """The second backend of prompt rewriting (a fake `claude` here: helpers/fakes/claude.py), fed
    the request on stdin, with no tools and an empty working directory."""
    root = judge_repo.root
    (zeta,) = [p.stem for p in (root / ".gitgauge" / "tasks").glob("*-commits-document-*.yaml")]
    config = tmp_path / "squash.yaml"
    config.write_text(yaml.safe_dump({"name": "squash", "adapter": "script", "command": SQUASH}))
    claude = fake_claude_env(
        tmp_path, {"result": "Neither reads better.\nVERDICT: TIE"}, api_key=False
    )
    env = {key: value for key, value in os.environ.items() if key != "ANTHROPIC_API_KEY"}
    env.update(claude)
    run = run_gitgauge(
        "run", "--sandbox", "none", "--task", zeta, "-c", str(config), "--judge",
        "--judge-model", "sonnet", cwd=root, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    run_dir = runs_in_order(root)[-1]
    result = json.loads((run_dir / "results" / "squash" / f"{zeta}.json").read_text())
    manifest = json.loads((run_dir / "run.json").read_text())
    assert (result["judgeAsFirst"], result["judgeAsSecond"], result["solved"]) == (
        "tie",
        "tie",
        False,
    )
    assert manifest["judgeCheck"]["backend"] == "claude-cli"
    cost = envelope_fixture()["total_cost_usd"]
    assert result["judgeCostUsd"] == pytest.approx(2 * cost)
    records = read_records(claude)
    assert len(records) == 4  # the position check's two orders, then the pair's two
    for record in records:
        assert record["argv"][:5] == [
            "-p",
            "--output-format",
            "json",
            "--model",
            "claude-sonnet-5-5",
        ]
        assert record["argv"][6] == "" and record["cwdEntries"] == []
        assert "<untrusted-series-a-" in record["stdin"] and "VERDICT: TIE" in record["stdin"]
    first, second = (series_blocks_text(record["stdin"]) for record in records[2:])
    assert first == (second[1], second[0]) and first[0] != first[1]  # swapped between orders
    assert series_blocks_text(records[0]["stdin"]) == series_blocks_text(records[1]["stdin"])
