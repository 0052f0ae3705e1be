"""GitBench-format fixture packs end to end, through the real CLI: `gitgauge import gitbench` of
the sample pack (`examples/fixtures/`, plus one fixture gitgauge cannot score), then `gitgauge
run` in agent mode and in text mode with gold, noop, a script that answers wrong and one that
does three fixtures' work itself, then `gitgauge report --by benchmark`.

The `llm_judge` fixture is judged by the loopback fake Messages API (the judge's SDK backend),
so every fixture of the pack is scored. Everything runs in bubblewrap (`run.sandbox: bwrap`):
skipped without a usable one, failed under `CI=true`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.components import require
from helpers.configs import agent_config, configs_args, gold_noop_and, write_configs
from helpers.environment import isolated
from helpers.fakes.messages_api import Reply, serve
from helpers.repos import GitRepo, new_repo
from helpers.results import runs_in_order

from gitgauge.core.sandbox import probe
from gitgauge.kinds.fixture.model import SCORER_TYPES

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fixtures"

WRONG_ANSWER = "rm -f keep.txt"
"""Wrong for every fixture; done (agent mode) or executed (text mode), it also breaks the one
fixture whose assertions hold untouched (config/g002 keeps keep.txt)."""
# In agent mode (in the repository) the answer file; in text mode (no repository) its stdout.
WRONG = (
    f'if [ -d .git ]; then {WRONG_ANSWER}; echo "{WRONG_ANSWER}" > "$GITGAUGE_ANSWER"; '
    f'else echo "{WRONG_ANSWER}"; fi'
)

# Three fixtures' work done in the repository, as an agent would: a reflog recovery (which adds
# a reflog entry, so HEAD@{1} derived afterwards would name the wrong commit), a submodule from
# a sibling bare repository (needs protocol.file.allow) and a worktree beside the repository.
DOER = """case "$GITGAUGE_TASK_ID" in
gitbench-reflog-r001) git reset -q --hard 'HEAD@{1}' && git rev-parse HEAD > "$GITGAUGE_ANSWER" ;;
gitbench-submodules-s001) git submodule -q add ../lib-bare vendor/lib &&
  git commit -q -m 'Add lib submodule' ;;
gitbench-branches-b002) git worktree add -q -b release/1.0 ../release ':/Prepare release' ;;
esac"""
DONE_BY_DOER = ("gitbench-reflog-r001", "gitbench-submodules-s001", "gitbench-branches-b002")

JUDGE_C002 = "It renames the function greet to welcome"
"""In gold's answer to the llm_judge fixture (its `expected`), never in the wrong answer."""


def write_fixture(
    folder: Path, id: str, setup: list[str], prompt: str = "p", expected: str = "e", **more: Any
) -> None:
    """Fixture `id` in GitBench's format, written in `folder` as `<id>.yaml`: set up by `setup`,
    with `prompt`, `expected` and `more`."""
    fields = {"id": id, "setup": setup, "prompt": prompt, "expected": expected, **more}
    (folder / f"{id}.yaml").write_text(yaml.safe_dump(fields))


def configured_repo(root: Path, config: str) -> GitRepo:
    """A repository at `root` whose one commit adds gitgauge.yaml, holding `config`."""
    repo = new_repo(root)
    repo.write("gitgauge.yaml", config)
    repo.git("add", "gitgauge.yaml")
    repo.git("commit", "-q", "-m", "gitgauge")
    return repo


@dataclass(frozen=True)
class Pack:
    root: Path
    tasks: dict[str, dict[str, Any]]
    imported: subprocess.CompletedProcess[str]
    reimported: subprocess.CompletedProcess[str]
    results: dict[tuple[str, str, str], dict[str, Any]]
    """(the run's --mode, config, task) -> result record."""
    report: subprocess.CompletedProcess[str]
    runs: dict[str, subprocess.CompletedProcess[str]]
    html: str
    compared: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pack]:
    base = tmp_path_factory.mktemp("fixture-pack")
    source = base / "pack" / "fixtures"
    shutil.copytree(SAMPLE, source)
    broken = source / "broken"
    broken.mkdir()
    write_fixture(broken, "z001", ["git init"], scoring={"type": "regex_match"})
    configs = write_configs(base / "configs", gold_noop_and(wrong=WRONG, doer=DOER))
    private_tmp = base / "tmp"
    private_tmp.mkdir()
    # The pack's setups, agents and answers run in bubblewrap, as a user's would.
    binary, reason = probe(os.environ, network=True)
    require(binary is not None, f"a usable bubblewrap ({reason})")
    with isolated(base), serve() as api:
        # The judge: the wrong answer scores low, gold's (the reference itself) high.
        api.replies = [Reply(WRONG_ANSWER, "0.1"), Reply(JUDGE_C002, "0.95")]
        repo = configured_repo(base / "repo", 'testCommand: "true"\nrun:\n  sandbox: bwrap\n')
        root = repo.root
        env = dict(
            os.environ,
            TMPDIR=str(private_tmp),
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api.base_url,
        )
        imported = run_gitgauge(
            "import", "gitbench", str(source.parent), "--check", "-j", "2", cwd=root, env=env
        )
        # The pack's one fixture gitgauge cannot score is skipped, and the import says so by its
        # exit code: a script must not take a pack that did not come in whole for success.
        assert imported.returncode == 1, imported.stderr + imported.stdout
        assert "1 fixture skipped (broken 1; each named above)" in imported.stderr
        # A changed fixture, imported again on its own (one file).
        changed = source / "history" / "h003-count-merges.yaml"
        changed.write_text(changed.read_text().replace("difficulty: medium", "difficulty: hard"))
        reimported = run_gitgauge("import", "gitbench", str(changed), cwd=root, env=env)
        assert reimported.returncode == 0, reimported.stderr + reimported.stdout
        runs: dict[str, subprocess.CompletedProcess[str]] = {}
        every = ("gold", "noop", "wrong")
        for mode, names in (("agent", (*every, "doer")), ("text", every)):
            args = configs_args(*(configs[name] for name in names))
            runs[mode] = run_gitgauge(
                "run", *args, "--mode", mode, "-j", "2", cwd=root, env=env, timeout=900
            )
            assert runs[mode].returncode == 0, runs[mode].stderr + runs[mode].stdout
        report = run_gitgauge("report", "--by", "benchmark", cwd=root, env=env)
        html = base / "report.html"
        page = run_gitgauge("report", "--tasks", "--html", str(html), cwd=root, env=env)
        assert page.returncode == 0, page.stderr
        compared = run_gitgauge("compare", "noop", "gold", "--kind", "fixture", cwd=root, env=env)
    tasks = {
        path.stem: yaml.safe_load(path.read_text())
        for path in (root / ".gitgauge" / "tasks").glob("*.yaml")
    }
    results: dict[tuple[str, str, str], dict[str, Any]] = {}
    # The agent-mode run first, then the text-mode one (in the order they started).
    made = runs_in_order(root)
    assert len(made) == 2, made
    for mode, run in zip(("agent", "text"), made, strict=True):
        for path in run.glob("results/*/*.json"):
            record = json.loads(path.read_text())
            results[(mode, record["config"], record["task"])] = record
    yield Pack(root, tasks, imported, reimported, results, report, runs, html.read_text(), compared)


def outcomes(pack: Pack, mode: str, config: str) -> dict[str, str]:
    return {
        task: record["status"]
        for (in_mode, name, task), record in pack.results.items()
        if (in_mode, name) == (mode, config)
    }


def test_import_makes_a_fixture_task_of_each_fixture_and_skips_the_one_it_cannot_score(
    pack: Pack,
) -> None:
    sample = sorted(SAMPLE.glob("*/*.yaml"))
    assert len(pack.tasks) == len(sample) == 19
    task = pack.tasks["gitbench-reflog-r001"]
    assert (task["kind"], task["benchmark"], task["fixtureId"]) == ("fixture", "reflog", "r001")
    assert (task["difficulty"], task["mode"]) == ("medium", "agent")
    assert task["tags"] == ["reflog", "recovery", "reset"] and task["purpose"]
    assert len(task["contentHash"]) == 64 and task["source"].endswith("r001-recover-reset.yaml")
    # command_equivalence runs in text mode only.
    assert pack.tasks["gitbench-submodules-s002"]["mode"] == "text"
    said = pack.imported.stdout + pack.imported.stderr
    assert "z001.yaml: scoring.type: " in said
    assert "  broken: 0 (0 new, 0 changed, 0 unchanged, 1 skipped)" in said
    assert "  history: 7 (7 new, 0 changed, 0 unchanged)" in said
    assert "imported 19 fixtures:" in said


def test_import_flags_the_fixture_noop_passes_and_check_finds_no_broken_one(pack: Pack) -> None:
    flagged = sorted(t for t, task in pack.tasks.items() if task["nonDiscriminating"])
    assert flagged == ["gitbench-config-g002"]
    said = pack.imported.stdout
    assert "1 nonDiscriminating" in said
    assert "gold, agent mode: 18/18 scored pass" in said, said
    assert "gold, text mode: 19/19 scored pass" in said, said
    assert "noop, agent mode: passes 1: gitbench-config-g002" in said


def test_a_changed_fixture_imported_again_says_so(pack: Pack) -> None:
    said = pack.reimported.stdout
    assert "changed: gitbench-history-h003" in said, said
    assert "  history: 1 (0 new, 1 changed, 0 unchanged)" in said
    assert pack.tasks["gitbench-history-h003"]["difficulty"] == "hard"


@pytest.mark.parametrize("mode", ["agent", "text"])
def test_gold_passes_every_fixture_the_wrong_answer_none_noop_only_the_flagged_one(
    pack: Pack, mode: str
) -> None:
    every = set(pack.tasks)
    gold, noop, wrong = (outcomes(pack, mode, name) for name in ("gold", "noop", "wrong"))
    assert set(gold) == set(noop) == set(wrong) == every
    assert {t: s for t, s in gold.items() if s != "resolved"} == {}
    assert {t: s for t, s in wrong.items() if s != "unresolved"} == {}
    assert sorted(t for t, s in noop.items() if s == "resolved") == ["gitbench-config-g002"]
    ran_in = {
        record["sandbox"] for (in_mode, _, _), record in pack.results.items() if in_mode == mode
    }
    assert ran_in == {"bwrap"}
    assert {t: s for t, s in noop.items() if s not in ("resolved", "unresolved")} == {}
    # A script's answer: the file it wrote in agent mode, its stdout in text mode.
    sources = {
        pack.results[(mode, "wrong", task)]["answerSource"]
        for task in every
        if pack.results[(mode, "wrong", task)]["mode"] == mode
    }
    assert sources == {"file" if mode == "agent" else "message"}


def test_a_run_mode_overrides_the_imported_one_except_for_a_text_only_fixture(
    pack: Pack,
) -> None:
    agent = pack.results[("agent", "gold", "gitbench-reflog-r001")]
    text = pack.results[("text", "gold", "gitbench-reflog-r001")]
    assert (agent["answerSource"], text["answerSource"]) == ("file", "message")
    # command_equivalence is text-only: in the agent-mode run it still ran as text.
    assert pack.results[("agent", "gold", "gitbench-submodules-s002")]["mode"] == "text"
    assert {record["mode"] for (mode, _, _), record in pack.results.items() if mode == "text"} == {
        "text"
    }


def test_the_work_of_the_fixtures_done_in_the_repository_scores_right(pack: Pack) -> None:
    doer = outcomes(pack, "agent", "doer")
    for task in DONE_BY_DOER:
        assert doer[task] == "resolved", pack.results[("agent", "doer", task)]
    # The recovery moved HEAD@{1}; the target was derived before, so the answer is right.
    recovered = pack.results[("agent", "doer", "gitbench-reflog-r001")]
    assert recovered["answerSource"] == "file" and len(recovered["answer"].strip()) == 40
    # Nothing else did the doer any good (bar the one whose assertions hold untouched).
    others = {t for t, s in doer.items() if s == "resolved"} - set(DONE_BY_DOER)
    assert others == {"gitbench-config-g002"}


def test_the_llm_judge_fixture_is_scored_by_the_judge(pack: Pack) -> None:
    for mode in ("agent", "text"):
        gold = pack.results[(mode, "gold", "gitbench-commit_messages-c002")]
        wrong = pack.results[(mode, "wrong", "gitbench-commit_messages-c002")]
        assert (gold["status"], gold["score"]) == ("resolved", 0.95)
        assert (wrong["status"], wrong["score"]) == ("unresolved", 0.1)


def test_report_by_benchmark_gives_a_pass_rate_per_benchmark_and_difficulty(pack: Pack) -> None:
    assert pack.report.returncode == 0, pack.report.stderr
    said = pack.report.stdout
    for benchmark in ("reflog", "submodules", "history", "merge_conflicts", "bisect"):
        assert benchmark in said, said
    for difficulty in ("trivial", "easy", "medium", "hard"):
        assert difficulty in said, said


def test_the_html_page_groups_the_task_matrix_by_benchmark(pack: Pack) -> None:
    groups = re.findall(r'<tr class="group"><th colspan="\d+">benchmark (\w+)</th></tr>', pack.html)
    assert groups == sorted({task["benchmark"] for task in pack.tasks.values()}), groups
    # Each benchmark's tasks follow its heading row.
    start = pack.html.index(">benchmark reflog<")
    assert pack.html.index("gitbench-reflog-r001", start) < pack.html.index(">benchmark stash<")


def test_compare_pairs_on_fixture_tasks(pack: Pack) -> None:
    assert pack.compared.returncode == 0, pack.compared.stderr
    said = pack.compared.stdout
    assert "Compared on the 19 tasks both ran" in said, said
    assert "only gold: 18" in said and "only noop: 0" in said


def test_the_sample_pack_has_a_fixture_of_every_scorer() -> None:
    files = SAMPLE.glob("*/*.yaml")
    used = {yaml.safe_load(path.read_text())["scoring"]["type"] for path in files}
    assert used == set(SCORER_TYPES)


def test_the_users_checkout_is_left_clean(pack: Pack) -> None:
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=pack.root, capture_output=True, text=True
    )
    assert status.stdout == ""
    assert not (pack.root.parent / "lib-bare").exists()
    assert not (pack.root.parent / "release").exists()


def test_check_lists_a_fixture_that_fails_its_own_gold_and_a_broken_setup_is_skipped(
    tmp_path: Path,
) -> None:
    pack = tmp_path / "pack" / "config"
    pack.mkdir(parents=True)
    # Its expected command sets the value its assertion says it must not have: gold fails.
    write_fixture(
        pack,
        "g900",
        ["git init", "git commit -q --allow-empty -m start"],
        prompt="Make pull rebase. Output ONLY the command.",
        expected="git config pull.rebase false",
        scoring={"type": "state_assertions"},
        expected_state={
            "assertions": [{"type": "git_config", "key": "pull.rebase", "value": "true"}]
        },
    )
    write_fixture(pack, "g901", ["git init", "git checkout -q no-such-branch"])
    # An llm_judge fixture whose judge answers no score: unscored, never passed or failed.
    judged = tmp_path / "pack" / "commit_messages"
    judged.mkdir()
    shutil.copy(SAMPLE / "commit_messages" / "c002-explain-rename.yaml", judged)
    repo = configured_repo(tmp_path / "repo", 'testCommand: "true"\n')
    gold = tmp_path / "gold.yaml"
    gold.write_text("name: gold\nadapter: gold\n")
    with serve() as api:
        api.replies = [Reply(JUDGE_C002, "I would rather not say.")]
        env = dict(os.environ, ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=api.base_url)
        checked = run_gitgauge(
            "import", "gitbench", str(pack.parent), "--check", cwd=repo.root, env=env
        )
        # One benchmark folder on its own: nothing new in it; then in text mode.
        again = run_gitgauge("import", "gitbench", str(pack), cwd=repo.root, env=env)
        as_text = run_gitgauge(
            "import", "gitbench", str(pack), "--mode", "text", cwd=repo.root, env=env
        )
        ran = run_gitgauge("run", "-c", str(gold), cwd=repo.root, env=env)
        report = run_gitgauge("report", cwd=repo.root, env=env)
        rewrite = run_gitgauge("rewrite", cwd=repo.root, env=env)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    skipped = "g901.yaml: the fixture's setup.1: `git checkout -q no-such-branch` exited 1"
    assert skipped in checked.stderr, checked.stderr
    assert "gold, agent mode: 0/1 scored pass, 1 unscored" in checked.stdout, checked.stdout
    assert "gold, text mode: 0/1 scored pass, 1 unscored" in checked.stdout
    assert (
        "  unscored (no LLM judge): gitbench-commit_messages-c002 (agent), "
        "gitbench-commit_messages-c002 (text)"
    ) in checked.stdout
    assert "not scored: the LLM judge answered 'I would rather not say.'" in checked.stderr
    assert "  broken: gitbench-config-g900 (agent): " in checked.stdout
    assert "  broken: gitbench-config-g900 (text): " in checked.stdout
    assert "1 fixture fails its own gold" in checked.stderr
    assert "; 1 fixture skipped (config 1; each named above)" in checked.stderr
    assert "  config: 1 (1 new, 0 changed, 0 unchanged, 1 skipped)" in checked.stdout
    tasks = sorted(p.stem for p in (repo.root / ".gitgauge" / "tasks").glob("*.yaml"))
    assert tasks == ["gitbench-commit_messages-c002", "gitbench-config-g900"]
    assert again.returncode == 1, again.stderr  # g901 is skipped again
    assert "1 fixture skipped (config 1; each named above)" in again.stderr
    assert "  config: 1 (0 new, 0 changed, 1 unchanged, 1 skipped)" in again.stdout
    assert "commit_messages" not in again.stdout
    assert as_text.returncode == 1, as_text.stderr
    assert "changed: gitbench-config-g900 (" in as_text.stdout
    assert "g900.yaml) mode agent before, text now" in as_text.stdout, as_text.stdout
    assert ran.returncode == 0, ran.stderr + ran.stdout
    text_task = yaml.safe_load(
        (repo.root / ".gitgauge/tasks/gitbench-config-g900.yaml").read_text()
    )
    assert text_task["mode"] == "text"
    (result,) = (repo.root / ".gitgauge" / "runs").glob("*/results/gold/gitbench-config-g900.json")
    assert json.loads(result.read_text())["mode"] == "text"
    # Unscored: out of the totals (gold 0/1 here is the broken g900), listed under the table.
    assert report.returncode == 0, report.stderr
    (row,) = [line for line in report.stdout.splitlines() if line.startswith("gold ")]
    assert "0/1" in row, report.stdout
    footnote = " ".join(report.stdout.split())
    assert (
        "(unscored: no LLM judge could score them): gold (fixture): gitbench-commit_messages-c002"
        in footnote
    )
    # `gitgauge rewrite` keeps fixture prompts (made per pair) and says so once.
    assert rewrite.returncode == 0, rewrite.stderr
    assert rewrite.stderr.count("have no prompt rewriting: kept as they are") == 1, rewrite.stderr
    assert "kept       gitbench-config-g900" in rewrite.stdout


def test_an_estimate_samples_in_the_runs_mode_and_its_resume_keeps_it(
    pack: Pack, tmp_path: Path
) -> None:
    # A config no run knows yet is sampled first, and the sample is the run --resume continues:
    # it must run in the --mode asked for, or the continuation cannot ever take it.
    root = tmp_path / "repo"
    shutil.copytree(pack.root, root, symlinks=True)
    config = agent_config(tmp_path / "configs", "later", adapter="noop")
    task = "gitbench-reflog-r001"
    with isolated(tmp_path):
        estimate = run_gitgauge(
            "run", "-c", config, "--task", task, "--mode", "text", "--estimate", cwd=root
        )
    assert estimate.returncode == 0, estimate.stderr + estimate.stdout
    assert "running 3 of its pairs first" in estimate.stdout
    sampled = runs_in_order(root)[-1]
    assert json.loads((sampled / "run.json").read_text())["mode"] == "text"
    result = json.loads((sampled / "results" / "later" / f"{task}.json").read_text())
    assert result["mode"] == "text"
