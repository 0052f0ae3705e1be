"""Every fixture scorer (`gitgauge/core/fixtures/scorers.py`) with a right answer, a near miss and
a wrong one, on fixtures read by the real format checker; what a repository derives (hashes by
subject, reflog, stash and bisect targets, self_checks) from real `git` output; the format's
refusals (an unknown scorer is an error, never a pass); the answers' parsing; the agent-mode
prompt."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.fixture_tasks import judge, pair_state, probe, unit_fixture

from gitgauge.kinds.fixture import answers, derive, prompts, state
from gitgauge.kinds.fixture.derive import Expectation
from gitgauge.kinds.fixture.format import parse_fixture
from gitgauge.kinds.fixture.model import (
    SCORER_TYPES,
    Fixture,
    FixtureProblem,
    content_hash,
    task_id,
)
from gitgauge.kinds.fixture.verdict import PathState, RepoState

SHA_A = "a" * 7 + "1" * 33
SHA_B = "b" * 7 + "2" * 33


def fixture(scoring: dict[str, Any] | None = None, **keys: Any) -> Fixture:
    return unit_fixture(
        scoring, {"prompt": "Do it. Output ONLY the answer.", "expected": "answer", **keys}
    )


# Each case: (fixture, expectation or None, state or None, right, near miss, wrong).
def _state(
    outputs: dict[str, tuple[int | None, str]] | None = None, /, **paths: PathState
) -> RepoState:
    return pair_state(outputs, paths)


CASES: dict[str, tuple[Fixture, Expectation | None, RepoState | None, str, str, str]] = {
    "similarity": (
        fixture({"type": "similarity", "threshold": 0.8}, expected="Add greeting script"),
        None,
        None,
        "Add greeting scripts",
        "Add a greeting",
        "Remove the database",
    ),
    "exact_match": (
        fixture({"type": "exact_match", "strip_fences": True}, expected="Add config file"),
        None,
        None,
        "```\nAdd config file\n```",
        "Add config file.",
        "Add a",
    ),
    "unordered_line_set": (
        fixture({"type": "unordered_line_set"}, expected=["one", "two", "three"]),
        None,
        None,
        "three\none\ntwo",
        "one\ntwo\nthree\nfour",
        "one",
    ),
    "numeric_exact": (
        fixture({"type": "numeric_exact", "allow_prose": True}, expected=2),
        None,
        None,
        "There are 2 merge commits.",
        "There are 2 merges out of 5 commits.",
        "3",
    ),
    "commit_hash_by_subject": (
        fixture({"type": "commit_hash_by_subject", "subject": "Fix typo", "hash_length": "short"}),
        Expectation("Fix typo", (SHA_A,), subjects=("Fix typo",)),
        None,
        f"`{SHA_A[:9]}`",
        SHA_A[:6],
        SHA_B[:7],
    ),
    "json_semantic_equal": (
        fixture({"type": "json_semantic_equal"}, expected={"main": "Add c", "n": 1}),
        None,
        None,
        '```json\n{"n": 1.0, "main": "Add c"}\n```',
        '{"main": "Add c", "n": true}',
        '{"main": "Start"}',
    ),
    "command_equivalence": (
        fixture(
            {
                "type": "command_equivalence",
                "accepted": [
                    "git submodule status",
                    ["git submodule init", "git submodule update"],
                ],
            }
        ),
        None,
        None,
        "```bash\n$ git submodule init\n$ git submodule  update\n```",
        "git submodule init",
        "git submodule update --remote",
    ),
    "state_assertions": (
        fixture(
            {"type": "state_assertions"},
            expected="git config pull.rebase true",
            expected_state={
                "assertions": [
                    {"type": "git_config", "key": "pull.rebase", "value": "true"},
                    {"type": "git_output", "command": "git status --porcelain", "exact": ""},
                    {"type": "file_exists", "path": "../lib-bare/HEAD"},
                    {"type": "model_output", "contains": "pull.rebase"},
                ]
            },
        ),
        None,
        _state(
            {"git config --get pull.rebase": (0, "true\n"), "git status --porcelain": (0, "")},
            **{"../lib-bare/HEAD": PathState("file", "ref: refs/heads/main\n")},
        ),
        "git config pull.rebase true",
        "git config --global pull.rebase true",  # the model_output holds; see the state below
        "git pull --rebase",
    ),
    "resolved_file_blocks": (
        fixture(
            {
                "type": "resolved_file_blocks",
                "expected_files": {"a.txt": "Hello, world\nHello, planet\n", "b.txt": "x\n"},
            }
        ),
        None,
        None,
        "### a.txt\n```\nHello, world\nHello, planet\n```\n```b.txt\nx\n```",
        "```a.txt\nHello, world\nHello, planet\n```",
        "```a.txt\nHello, world\n```\n```b.txt\nx\n```",
    ),
    "llm_judge": (
        fixture({"type": "llm_judge", "threshold": 0.7}, expected="It renames greet to welcome."),
        None,
        None,
        "0.9",
        "0.69",
        "0.1",
    ),
    "branch_selection": (
        fixture({"type": "branch_selection"}, expected=["topic-a", "topic-b"]),
        None,
        None,
        "* topic-b\n  topic-a",
        "topic-a",
        "topic-a\ntopic-b\nwip",
    ),
    "commit_selection": (
        fixture({"type": "commit_selection"}, expected=["Write intro", "Document usage"]),
        Expectation(
            "",
            (SHA_A, SHA_B),
            subjects=("Write intro", "Document usage"),
            commits=((SHA_A, "Write intro"), (SHA_B, "Document usage")),
        ),
        None,
        f"{SHA_A[:7]}\nDocument usage",
        SHA_A[:7],
        f"{SHA_A[:7]}\n{SHA_B[:7]}\nc0ffee1",
    ),
    "bisect_regression": (
        fixture({"type": "bisect_regression", "subject": "Switch port"}),
        Expectation("Switch port", (SHA_A,), subjects=("Switch port",)),
        None,
        f"The first bad commit is {SHA_A}.",
        f"{SHA_A[:7]} or maybe {SHA_B[:7]}",
        SHA_B,
    ),
    "structured": (
        fixture(
            {"type": "structured", "fields": {"hash": {"type": "exact_match"}}},
            expected="hash: abc1234\nreason: the port changed from 80 to 8080",
        ),
        None,
        None,
        "hash: abc1234\nreason: port changed from 80 to 8080",
        "hash: abc1235\nreason: the port changed from 80 to 8080",
        "hash: abc1234\nreason: nothing",
    ),
    "stash_recovery": (
        fixture({"type": "stash_recovery", "message": "parser"}),
        Expectation("parser", (SHA_A,), refs=("stash@{1}",), subjects=("On main: parser",)),
        None,
        "stash@{1}",
        "stash@{1} and stash@{0}",
        "stash@{0}",
    ),
    "reflog_recovery": (
        fixture({"type": "reflog_recovery", "ref": "HEAD@{1}", "accept_message": True}),
        Expectation("Add lexer", (SHA_A,), subjects=("Add lexer",)),
        None,
        "Add lexer",
        "Add lexer and parser",
        SHA_B[:10],
    ),
}


def test_every_scorer_has_cases() -> None:
    assert sorted(CASES) == sorted(SCORER_TYPES)


@pytest.mark.parametrize("scorer", sorted(CASES))
def test_a_scorer_passes_the_right_answer_and_fails_a_near_miss_and_a_wrong_one(
    scorer: str,
) -> None:
    item, expectation, state, right, near, wrong = CASES[scorer]
    scores = {"0.9": 0.9, "0.69": 0.69, "0.1": 0.1}
    verdicts = {}
    for name, answer in (("right", right), ("near", near), ("wrong", wrong)):
        near_state = state
        if scorer == "state_assertions" and name == "near":
            # The right words, but the repository says pull.rebase is unset: state decides.
            near_state = _state({"git status --porcelain": (0, "")})
        verdicts[name] = judge(
            item,
            answer,
            expectation=expectation,
            state=near_state,
            judge_score=scores.get(answer),
        )
    assert verdicts["right"].passed is True, verdicts["right"]
    assert verdicts["near"].passed is False, verdicts["near"]
    assert verdicts["wrong"].passed is False, verdicts["wrong"]
    for verdict in verdicts.values():
        assert verdict.detail  # every verdict says why


def test_the_similarity_score_is_recorded_and_the_threshold_decides() -> None:
    item = fixture({"type": "similarity", "threshold": 0.5}, expected="abcdefghij")
    verdict = judge(item, "abcdefXXXX")
    assert verdict.score == pytest.approx(0.6)
    assert verdict.passed is True


def test_an_llm_judge_fixture_without_a_judge_is_unscored_but_an_empty_answer_fails() -> None:
    item = CASES["llm_judge"][0]
    assert judge(item, "It renames it.", judge_score=None).passed is None
    assert judge(item, "", judge_score=None).passed is False


def test_exact_match_with_order_not_mattering_compares_lines_in_any_order() -> None:
    item = fixture({"type": "exact_match", "order_matters": False}, expected="b\na")
    assert judge(item, "a\nb").passed is True
    assert judge(fixture({"type": "exact_match"}, expected="b\na"), "a\nb").passed is False


def test_numeric_exact_without_prose_takes_only_a_bare_number() -> None:
    item = fixture({"type": "numeric_exact"}, expected="12")
    assert judge(item, " 12 ").passed is True
    assert judge(item, "12 commits").passed is False


def test_hash_length_full_wants_the_whole_hash() -> None:
    item = fixture({"type": "commit_hash_by_subject", "subject": "Fix"})
    expectation = Expectation("Fix", (SHA_A,))
    assert judge(item, SHA_A.upper(), expectation=expectation).passed is True
    assert judge(item, SHA_A[:12], expectation=expectation).passed is False


def test_branch_exists_in_a_worktree_reads_the_porcelain_listing() -> None:
    item = fixture(
        {"type": "state_assertions"},
        expected_state={
            "assertions": [{"type": "branch_exists", "branch": "release", "in_worktree": "../rel"}]
        },
    )
    porcelain = (
        "worktree /pair/repo\nHEAD 1\nbranch refs/heads/main\n\n"
        "worktree /pair/rel\nHEAD 1\nbranch refs/heads/release\n"
    )
    outputs: dict[str, tuple[int | None, str]] = {
        state.BRANCHES: (0, "main\nrelease\n"),
        state.WORKTREES: (0, porcelain),
    }
    assert judge(item, "", mode="agent", state=_state(outputs)).passed is True
    elsewhere = porcelain.replace("/pair/rel", "/pair/other")
    outputs[state.WORKTREES] = (0, elsewhere)
    assert judge(item, "", mode="agent", state=_state(outputs)).passed is False


def test_resolved_file_blocks_in_agent_mode_read_the_work_tree() -> None:
    item = fixture({"type": "resolved_file_blocks", "expected_files": {"a.txt": "x\ny\n"}})
    resolved = _state(**{"a.txt": PathState("file", "x\ny")})
    conflicted = _state(**{"a.txt": PathState("file", "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n")})
    assert judge(item, None, mode="agent", state=resolved).passed is True
    assert judge(item, None, mode="agent", state=conflicted).passed is False


def test_a_fixture_whose_expectation_could_not_be_derived_fails_with_the_reason() -> None:
    item = fixture({"type": "commit_hash_by_subject", "subject": "Nowhere"})
    expectation = derive.expectation(item, {"commits": (0, f"{SHA_A}\tElsewhere\n")})
    verdict = judge(item, SHA_A, expectation=expectation)
    assert verdict.passed is False and "Nowhere" in verdict.detail


# -- what the built repository derives ---------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def history(git_repo: Any) -> Any:
    git_repo.commit("Add parser", files={"parser.c": "p\n"})
    git_repo.commit("Add lexer", files={"lexer.c": "l\n"})
    return git_repo


def test_a_reflog_target_is_the_commit_the_ref_named_when_derived(history: Any) -> None:
    root = history.root
    lexer = git(root, "rev-parse", "HEAD").strip()
    git(root, "reset", "-q", "--hard", "HEAD~1")
    item = fixture({"type": "reflog_recovery", "ref": "HEAD@{1}"})
    before = derive.expectation(item, probe(item, root))
    assert before.hashes == (lexer,)
    # The agent's own recovery moves HEAD@{1}: derived now, it would name the parser commit.
    git(root, "reset", "-q", "--hard", "HEAD@{1}")
    after = derive.expectation(item, probe(item, root))
    assert after.hashes != (lexer,)


def test_a_hash_by_subject_a_bisect_target_and_a_selection_come_from_the_log(history: Any) -> None:
    root = history.root
    shas = dict(line.split("\t")[::-1] for line in git(root, "log", "--format=%H\t%s").split("\n")
                if line)  # fmt: skip
    item = fixture({"type": "commit_hash_by_subject", "subject": "Add parser"})
    assert derive.expectation(item, probe(item, root)).hashes == (shas["Add parser"],)
    selection = fixture({"type": "commit_selection"}, expected=["Add lexer", "Add parser"])
    found = derive.expectation(selection, probe(selection, root))
    assert found.hashes == (shas["Add lexer"], shas["Add parser"]) and not found.problems
    missing = fixture({"type": "bisect_regression", "subject": "Never made"})
    assert derive.expectation(missing, probe(missing, root)).problems


def test_a_stash_is_found_by_its_message_kept_or_dropped(history: Any) -> None:
    root = history.root
    (root / "parser.c").write_text("half\n")
    git(root, "stash", "push", "-q", "-m", "half-done parser")
    (root / "lexer.c").write_text("verbose\n")
    git(root, "stash", "push", "-q", "-m", "logging")
    item = fixture({"type": "stash_recovery", "message": "half-done parser"})
    kept = derive.expectation(item, probe(item, root))
    assert kept.refs == ("stash@{1}",) and len(kept.hashes) == 1
    git(root, "stash", "drop", "-q", "stash@{1}")
    dropped = derive.expectation(item, probe(item, root))
    assert dropped.hashes == kept.hashes and dropped.refs == ()


def test_a_self_check_replaces_the_static_expected_value(history: Any) -> None:
    item = fixture(
        {
            "type": "numeric_exact",
            "self_check": {"command": "git log --format=%H", "transform": "count_nonempty_lines"},
        },
        expected=5,
    )
    found = derive.expectation(item, probe(item, history.root))
    assert found.text == "2" and found.derived_from_self_check
    assert derive.transform("abcdef123456\n", "short_hash") == "abcdef1"


# -- the format ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "where"),
    [
        ({"scoring": {"type": "regex_match"}}, "scoring.type"),
        ({"scoring": {"type": "similarity", "treshold": 0.5}}, "scoring.treshold"),
        ({"prompt": None}, "prompt"),
        ({"expected": None}, "expected"),
        ({"setup": "git init"}, "setup"),
        ({"difficulty": "impossible"}, "difficulty"),
        ({"notes": "x"}, "notes"),
        ({"scoring": {"type": "commit_hash_by_subject"}}, "scoring.subject"),
        ({"scoring": {"type": "command_equivalence"}}, "scoring.accepted"),
        ({"scoring": {"type": "state_assertions"}}, "expected_state.assertions"),
        (
            {
                "scoring": {"type": "state_assertions"},
                "expected_state": {"assertions": [{"type": "file_exists", "path": "../../etc"}]},
            },
            "expected_state.assertions.0.path",
        ),
        (
            {
                "scoring": {"type": "state_assertions"},
                "expected_state": {"assertions": [{"type": "file_smells", "path": "a"}]},
            },
            "expected_state.assertions.0.type",
        ),
        ({"scoring": {"type": "numeric_exact"}, "expected": "many"}, "expected"),
        ({"scoring": {"type": "similarity", "threshold": 2}}, "scoring.threshold"),
    ],
)
def test_a_fixture_gitgauge_cannot_score_as_written_is_refused_naming_the_key(
    keys: dict[str, Any], where: str
) -> None:
    raw: dict[str, Any] = {"id": "f1", "setup": ["git init"], "prompt": "p", "expected": "e"}
    raw.update(keys)
    raw = {key: value for key, value in raw.items() if value is not None}
    with pytest.raises(FixtureProblem) as problem:
        parse_fixture(raw, benchmark="unit", source="pack/unit/f1.yaml")
    assert problem.value.key == where
    assert str(problem.value).startswith(f"pack/unit/f1.yaml: {where}: ")


def test_ids_are_slugged_and_the_content_hash_ignores_spelling() -> None:
    assert task_id("Commit Messages", "F013") == "gitbench-commit-messages-f013"
    assert task_id("merge_conflicts", "f001") == "gitbench-merge_conflicts-f001"
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})


# -- answers and prompts -----------------------------------------------------------------------


def test_commands_come_out_of_fences_prompts_and_comments() -> None:
    text = "```bash\n# first\n$ git add -A\n\n`git commit -m 'x y'`\n```"
    assert answers.commands(text) == ["git add -A", "git commit -m 'x y'"]
    assert answers.tokens("git commit -m 'x y'") == ["git", "commit", "-m", "x y"]
    assert answers.tokens("git commit -m 'x") is None


def test_file_blocks_are_named_by_info_string_or_the_line_before() -> None:
    text = "Here:\n\nFile: src/a.py\n```python\nA\n```\n\n```docs/b.md\nB\nB2\n```\n```\nlost\n```"
    assert answers.file_blocks(text) == {"src/a.py": "A", "docs/b.md": "B\nB2"}


def test_the_agent_prompt_asks_to_act_and_to_write_the_answer_file() -> None:
    command = fixture(prompt="Stash your work. Output ONLY the command, nothing else.")
    said = prompts.agent_prompt(command)
    assert "Output ONLY" not in said and "Stash your work." in said
    assert "run the command(s) yourself" in said and "GITGAUGE_ANSWER" in said
    value = fixture(prompt="Which commit broke it? Output ONLY its hash.")
    assert "write only its hash to the file named by" in prompts.agent_prompt(value)
    plain = fixture(prompt="Tidy the branches.")
    assert prompts.agent_prompt(plain).endswith("GITGAUGE_ANSWER.")


def test_the_text_prompt_carries_the_benchmarks_context() -> None:
    item = parse_fixture(
        {"id": "f1", "setup": ["git init"], "prompt": "Write the message.", "expected": "x"},
        benchmark="commit_messages",
        source="x",
    )
    assert prompts.context_probes(item) == ("git diff --staged",)
    assert prompts.text_prompt(item, {"git diff --staged": "+hello\n"}) == (
        "Write the message.\n\n+hello"
    )
