"""GitBench's fixture format as its public pack writes it, beyond what its contributing guide
shows: a `threshold` on any scorer, `branch_exists` naming its branch `name`, `git_output` and
`model_output` without a check, `file_content` with `contains: true`, selections that are
fractions, `structured` answers, a reflog target named by its message and by `HEAD@{n}`, a
bisect target by its subject, a stash by its ref. Each reading is written in
docs/guide/fixture-tasks.md; the derivations run on real repositories."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.fixture_tasks import PAIR_REPOSITORY, judge, pair_state, probe, unit_fixture
from helpers.repos import GitRepo

from gitgauge.kinds.fixture import derive
from gitgauge.kinds.fixture.derive import Expectation
from gitgauge.kinds.fixture.model import SCORER_TYPES, Fixture, FixtureProblem
from gitgauge.kinds.fixture.verdict import PathState, RepoState, Verdict

SHA_A = "a" * 7 + "1" * 33
SHA_B = "b" * 7 + "2" * 33
SHA_C = "c" * 7 + "3" * 33

# The least each scorer needs besides its type (what `_require` asks for).
NEEDS: dict[str, dict[str, Any]] = {
    "commit_hash_by_subject": {"subject": "Fix"},
    "command_equivalence": {"accepted": ["git status"]},
    "state_assertions": {"expected_state": {"assertions": [{"type": "file_exists", "path": "a"}]}},
    "resolved_file_blocks": {"expected_files": {"a.txt": "x\n"}},
    "reflog_recovery": {"ref": "HEAD@{1}"},
}


def fixture(scoring: dict[str, Any], **keys: Any) -> Fixture:
    return unit_fixture(scoring, {"prompt": "Do it.", "expected": "7", **keys})


@pytest.mark.parametrize("kind", SCORER_TYPES)
def test_every_scorer_takes_a_threshold_as_gitbench_writes_one_on_any(kind: str) -> None:
    item = fixture({"type": kind, "threshold": 0.5, **NEEDS.get(kind, {})})
    assert item.scoring.threshold == 0.5
    with pytest.raises(FixtureProblem, match=r"scoring\.threshold: 1\.5 is not between 0 and 1"):
        fixture({"type": kind, "threshold": 1.5, **NEEDS.get(kind, {})})


def test_a_threshold_decides_only_where_the_score_is_a_fraction() -> None:
    # A 0-or-1 scorer: GitBench's reflog fixtures write `threshold: 0.5`; it changes nothing.
    hashes = fixture({"type": "bisect_regression", "threshold": 0.1, "subject": "Switch port"})
    wanted = Expectation("Switch port", (SHA_A,), subjects=("Switch port",))
    wrong = judge(hashes, SHA_B, wanted)
    assert wrong.passed is False and wrong.score == 0.0
    assert judge(hashes, SHA_A, wanted).score == 1.0
    # A selection is a fraction: half of the branches passes a threshold of 0.5, not the default.
    expected = ["topic-a", "topic-b"]
    half = judge(
        fixture({"type": "branch_selection", "threshold": 0.5}, expected=expected), "topic-a"
    )
    assert half.passed is True and half.score == 0.5
    strict = judge(fixture({"type": "branch_selection"}, expected=expected), "topic-a")
    assert strict.passed is False and strict.score == 0.5


def test_a_selection_fails_on_an_extra_item_unless_the_fixture_allows_extras() -> None:
    expected = ["topic-a"]
    extra = judge(fixture({"type": "branch_selection"}, expected=expected), "topic-a\nmain")
    assert extra.passed is False and "over-selection" in extra.detail
    allowed = fixture({"type": "branch_selection", "allow_extra": True}, expected=expected)
    assert judge(allowed, "topic-a\nmain").passed is True


def test_a_commit_selection_takes_subjects_in_any_case_bullets_and_one_line_of_commas() -> None:
    item = fixture({"type": "commit_selection"}, expected="Fix typo, Fix typo again")
    assert item.scoring.pass_mark == 1.0
    found = Expectation(
        "",
        (SHA_A, SHA_B),
        subjects=("Fix typo", "Fix typo again"),
        commits=((SHA_A, "Fix typo"), (SHA_B, "Fix typo again")),
    )
    for answer in (
        "- fix typo\n* Fix Typo Again",
        "Fix typo, Fix typo again",
        SHA_A[:7] + "\n" + SHA_B,
    ):
        assert judge(item, answer, found).passed is True, answer
    assert judge(item, "Fix typo", found).score == 0.5
    assert judge(item, "Fix typo\nFix typo again\nAdd docs", found).passed is False


def test_a_subject_several_commits_share_is_selected_by_any_of_their_hashes(
    git_repo: GitRepo,
) -> None:
    repo = git_repo
    for content in ("one", "two"):
        repo.commit("WIP", files={"notes.txt": content})
    repo.commit("Add app", files={"app.py": "x = 1\n"})
    item = fixture({"type": "commit_selection"}, expected=["WIP"])
    found = derive.expectation(item, probe(item, repo.root))
    assert not found.problems and len(found.hashes) == 2
    assert judge(item, found.hashes[1][:8], found).passed is True
    assert judge(item, "Add app", found).passed is False


def test_structured_compares_each_field_as_its_rule_says_and_scores_their_mean() -> None:
    item = fixture(
        {
            "type": "structured",
            "fields": {"branch": {"type": "exact_match"}, "why": {"threshold": 0.9}},
        },  # fmt: skip
        expected="branch: release/1.0\nwhy: it has the hotfix\nbase: main",
    )
    right = judge(item, "```\nbranch: release/1.0\nwhy: it has the hotfix\nbase: main\n```")
    assert right.passed is True and right.score == 1.0
    loose = judge(item, "branch: release/1.0\nwhy: it has a hotfix\nbase: main")
    assert loose.passed is False and "why" in loose.detail  # 0.9 asked of this field
    missing = judge(item, "branch: release/1.0\nwhy: it has the hotfix")
    assert missing.passed is False and "base (missing)" in missing.detail
    assert missing.score is not None and 0.6 < missing.score < 0.7
    with pytest.raises(FixtureProblem, match=r"scoring\.fields\.branch\.type: 'regex'"):
        fixture({"type": "structured", "fields": {"branch": {"type": "regex"}}})


def test_branch_exists_names_its_branch_as_name_or_as_branch_never_both() -> None:
    listed = {state_branches(): (0, "main\nrelease\n")}
    for key in ("name", "branch"):
        item = _assertions({"type": "branch_exists", key: "release"})
        assert judge(item, "", state=pair_state(listed), mode="agent").passed
    with pytest.raises(FixtureProblem, match=r"assertions\.0: branch_exists needs the branch"):
        _assertions({"type": "branch_exists", "name": "release", "branch": "release"})
    with pytest.raises(FixtureProblem, match=r"assertions\.0: branch_exists needs the branch"):
        _assertions({"type": "branch_exists"})


def test_git_output_without_a_check_holds_on_exit_0_and_a_check_reads_stderr_too() -> None:
    bare = _assertions({"type": "git_output", "command": "git rev-parse --verify v1.0"})
    assert _agent(bare, outputs={"git rev-parse --verify v1.0": (0, "abc\n")}).passed is True
    assert _agent(bare, outputs={"git rev-parse --verify v1.0": (128, "")}).passed is False
    said = _assertions({"type": "git_output", "command": "git push", "contains": "up-to-date"})
    state = RepoState(
        PAIR_REPOSITORY, {"git push": (0, "")}, {"git push": "Everything up-to-date\n"}
    )
    assert judge(said, "", state=state, mode="agent").passed is True


def test_model_output_without_a_check_wants_an_answer() -> None:
    item = _assertions({"type": "model_output"})
    assert judge(item, "done").passed is True
    assert judge(item, "  ").passed is False


def test_file_content_with_contains_true_finds_the_value_and_a_missing_file_holds_no_text() -> None:
    found = _assertions(
        {"type": "file_content", "path": "a.txt", "value": "beta", "contains": True}
    )
    assert found.scoring.assertions[0].contains == ("beta",)
    assert found.scoring.assertions[0].value is None
    assert _agent(found, paths={"a.txt": PathState("file", "alpha\nbeta\n")}).passed is True
    whole = _assertions(
        {"type": "file_content", "path": "a.txt", "value": "beta", "contains": False}
    )
    assert _agent(whole, paths={"a.txt": PathState("file", "alpha\nbeta\n")}).passed is False
    absent = _assertions({"type": "file_not_contains", "path": "a.txt", "value": "secret"})
    assert _agent(absent).passed is True  # not there: it holds no secret (GitBench's reading)
    with pytest.raises(FixtureProblem, match="file_content needs value"):
        _assertions({"type": "file_content", "path": "a.txt"})


def test_a_reflog_target_is_named_by_its_message_and_by_the_selector_it_had(
    git_repo: GitRepo,
) -> None:
    repo = git_repo
    repo.commit("First version", files={"a.txt": "1"})
    repo.commit("Add third version - important changes", files={"a.txt": "2"})
    lost = repo.git("rev-parse", "HEAD").strip()
    repo.git("reset", "-q", "--hard", "HEAD~1")
    item = fixture(
        {"type": "reflog_recovery", "threshold": 0.5, "accept_message": True},
        expected="Add third version - important changes",
    )
    found = derive.expectation(item, probe(item, repo.root))
    assert not found.problems and found.hashes == (lost,)
    assert "HEAD@{1}" in found.refs
    assert judge(item, "HEAD@{1}", found).passed is True
    assert judge(item, "HEAD@{0}", found).passed is False
    assert judge(item, f"git reset --hard {lost[:9]}", found).passed is True
    assert judge(item, "Add third version - important changes", found).passed is True
    assert judge(item, "not Add third version - important changes", found).passed is False


def test_a_bisect_target_is_named_by_its_hash_or_by_its_subject() -> None:
    item = fixture({"type": "bisect_regression", "threshold": 0.5}, expected="Switch port")
    found = Expectation("Switch port", (SHA_A,), subjects=("Switch port",))
    assert judge(item, "The first bad commit is 'switch port'.", found).passed is True
    assert judge(item, f"{SHA_B[:8]} Switch port", found).passed is False  # a wrong hash named
    assert judge(item, "Change the port", found).passed is False


def test_a_stash_named_by_its_ref_is_the_stash_that_ref_named_before_the_agent(
    git_repo: GitRepo,
) -> None:
    repo = git_repo
    repo.commit("Initial commit", files={"file.txt": "base\n"})
    for work in ("older", "newer"):
        repo.write("file.txt", f"{work}\n")
        repo.git("stash", "push", "-q", "-m", work)
    item = fixture({"type": "stash_recovery", "threshold": 0.5}, expected="stash@{1}")
    found = derive.expectation(item, probe(item, repo.root))
    assert not found.problems and found.refs == ("stash@{1}",) and "older" in found.subjects[0]
    assert judge(item, "git stash apply stash@{1}", found).passed is True
    assert judge(item, "stash@{0}", found).passed is False
    none = fixture({"type": "stash_recovery"}, expected="stash@{5}")
    assert "no stash@{5}" in derive.expectation(none, probe(none, repo.root)).problems[0]


# -- helpers ------------------------------------------------------------------------------------


def state_branches() -> str:
    from gitgauge.kinds.fixture.state import BRANCHES

    return BRANCHES


def _assertions(*assertions: dict[str, Any]) -> Fixture:
    return fixture({"type": "state_assertions"}, expected_state={"assertions": list(assertions)})


def _agent(
    item: Fixture,
    outputs: dict[str, tuple[int | None, str]] | None = None,
    paths: dict[str, PathState] | None = None,
) -> Verdict:
    return judge(item, "", state=pair_state(outputs, paths), mode="agent")
