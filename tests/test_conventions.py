"""Real projects' conventions: NumPy's `BUG:`, area prefixes, reverts, house commit types, and the
test-file layouts of other ecosystems — each rule with a counter-example — then the mine summary
by rule and `mine --explain` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo
from helpers.repos.sample import mine_env, sample_root_files, write_config

from gitgauge.core.config import parse_config_text
from gitgauge.core.errors import ConfigError
from gitgauge.core.paths import is_protected, is_test_file
from gitgauge.core.schema import RepoConfig
from gitgauge.mining.classify import SubjectTypes, classify_subject

# -- subjects -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "rule"),
    [
        # NumPy, SciPy, pandas, scikit-learn: `BUG:` is an area tag, and BUG a bug word.
        ("BUG: fix overflow in cumsum", "area-bug-word"),
        ("BUG: overflow in cumsum", "area-bug-word"),
        # Area prefixes (module: what), with a bug word.
        ("jsonutils: fix JSONLIterator nontermination at EOF", "area-bug-word"),
        ("tableutils: fix Table.to_text crashes", "area-bug-word"),
        ("net/http: fix header parsing", "area-bug-word"),
        ("drm/i915: crash on resume", "area-bug-word"),
        ("parser(lexer): fix the EOF token", "area-bug-word"),
    ],
)
def test_area_tags_with_a_bug_word_are_candidates(subject: str, rule: str) -> None:
    verdict = classify_subject(subject)
    assert verdict.candidate, subject
    assert verdict.rule == rule


@pytest.mark.parametrize(
    ("subject", "rule"),
    [
        ("TST: add tests for cumsum", "none"),  # an area tag without a bug word
        ("jsonutils: add JSONLIterator", "none"),
        ("chore: fix lint", "conventional-other"),  # a known non-fix type wins over bug words
        ("build: fix the wheel", "conventional-other"),
        ("feature: fix-ups for the new page", "conventional-other"),
        ("deps: bump parser to fix CVE", "conventional-other"),
        ("revert: fix: handle empty input", "conventional-other"),
        ('Revert "fix: handle empty input"', "revert"),  # removes a fix; it is not one
        ('Revert "Fix crash on empty list"', "revert"),
    ],
)
def test_counter_examples_are_not_candidates(subject: str, rule: str) -> None:
    verdict = classify_subject(subject)
    assert not verdict.candidate, subject
    assert verdict.rule == rule


def test_a_subject_that_only_mentions_revert_is_judged_as_usual() -> None:
    assert classify_subject("Fix the revert button").candidate
    assert classify_subject('Reapply "fix: handle empty input"').candidate


def test_house_types_extend_both_lists() -> None:
    house = SubjectTypes.extended(fix=["BUG", "patch"], non_fix=["maint", "tst"])
    assert classify_subject("BUG: overflow", types=house).rule == "conventional-fix"
    assert classify_subject("patch: trim the output", types=house).candidate
    assert not classify_subject("MAINT: fix lint", types=house).candidate
    assert not classify_subject("TST: fix a flaky test", types=house).candidate
    # The built-in lists still hold; and without the house lists, the same subjects differ.
    assert not classify_subject("chore: fix lint", types=house).candidate
    assert classify_subject("MAINT: fix lint").candidate
    assert not classify_subject("patch: trim the output").candidate


def test_house_types_win_over_the_built_in_lists() -> None:
    house = SubjectTypes.extended(fix=["perf"], non_fix=["hotfix"])
    assert classify_subject("perf: slow parser", types=house).candidate
    assert not classify_subject("hotfix: restore login", types=house).candidate


def test_commit_type_config_keys_are_validated() -> None:
    config = parse_config_text(
        "testCommand: pytest\nmine:\n  fixTypes: [BUG]\n  nonFixTypes: [MAINT, TST]\n",
        RepoConfig,
        source="gitgauge.yaml",
    )
    assert config.mine.fixTypes == ["BUG"]
    with pytest.raises(ConfigError, match=r"gitgauge.yaml: mine: bug is both in fixTypes"):
        parse_config_text(
            "testCommand: pytest\nmine:\n  fixTypes: [BUG]\n  nonFixTypes: [bug]\n",
            RepoConfig,
            source="gitgauge.yaml",
        )
    with pytest.raises(ConfigError, match=r"mine.fixTypes: 'fix it' is not a commit type"):
        parse_config_text(
            "testCommand: pytest\nmine:\n  fixTypes: ['fix it']\n", RepoConfig, source="g.yaml"
        )


# -- test files -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "counter_example"),
    [
        ("polls/tests.py", "polls/testsuite.py"),  # Django
        ("tests.py", "contests.py"),
        ("test.py", "latest.py"),
        ("lib/foo_test.rb", "lib/foo_testing.rb"),  # minitest
        ("src/FooTest.php", "src/Contest.php"),  # PHPUnit
        ("src/FooTests.php", "src/FooTestsHelper.php"),
        ("Foo/FooTests.cs", "Foo/Attest.cs"),  # .NET
        ("Foo/FooTest.cs", "Foo/Protest.cs"),
        ("base/foo_test.cc", "base/foo_test_util.h"),  # C++
        ("base/foo_unittest.cc", "base/unittest_main.h"),
        ("src/foo_test.cpp", "src/latest.cpp"),
        ("cypress/e2e/login.cy.ts", "src/login.cy"),  # Cypress
        ("lib/app/parser_test.exs", "lib/app/parser.ex"),  # Elixir outside test/
        ("t/basic.t", "lib/Foo.pm"),  # Perl
        ("t/lib/Helper.pm", "lib/t.pm"),
        ("lib/Foo/roundtrip.t", "lib/Foo/roundtrip.pm"),
        ("pkg/parse/testdata/input.json", "pkg/parse/data/input.json"),  # Go fixtures
        ("src/__snapshots__/Button.test.tsx.snap", "src/snapshots.ts"),  # Jest/Vitest
        ("src/components/Button.snap", "src/components/snapper.ts"),
    ],
)
def test_test_file_conventions_of_other_ecosystems(path: str, counter_example: str) -> None:
    assert is_test_file(path), path
    assert is_protected(path), path
    assert not is_test_file(counter_example), counter_example
    assert not is_protected(counter_example), counter_example


@pytest.mark.parametrize(
    ("pattern", "path", "counter_example"),
    [
        ("qa/*", "qa/cases/login.py", "src/qa/cases.py"),  # a `/`: the whole path; * crosses /
        ("*_check.py", "src/deep/parser_check.py", "src/parser_checks.py"),  # no `/`: the name
        ("/checks/*.yaml", "checks/a.yaml", "src/checks/a.yaml"),  # a leading / is the root
    ],
)
def test_project_patterns_add_test_files(pattern: str, path: str, counter_example: str) -> None:
    assert not is_test_file(path)
    assert is_test_file(path, patterns=[pattern])
    assert is_protected(path, patterns=[pattern])
    assert not is_test_file(counter_example, patterns=[pattern])


def test_empty_test_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"tests.patterns: a pattern must not be empty"):
        parse_config_text(
            "testCommand: pytest\ntests:\n  patterns: ['']\n", RepoConfig, source="g.yaml"
        )


# -- the summary by rule and --explain, through the CLI ------------------------------------------


@pytest.fixture
def history(git_repo: GitRepo) -> dict[str, str]:
    """One commit for each rule, mined with --dry-run (nothing is verified)."""
    repo = git_repo
    repo.commit("Initial", files=sample_root_files())
    src_and_test = {"src/calc.py": "x = 1\n", "tests/test_calc.py": "y = 1\n"}
    shas = {}
    for n, (name, subject, files) in enumerate(
        [
            ("conventional", "fix: handle empty input", src_and_test),
            ("other", "chore: fix lint", src_and_test),
            ("area", "BUG: overflow in cumsum", src_and_test),
            (
                "django",
                "polls: fix the vote count",
                {"polls/views.py": "v = 1\n", "polls/tests.py": "t = 1\n"},
            ),
            ("bugword", "Fix the parser", src_and_test),
            ("revert", 'Revert "fix: handle empty input"', src_and_test),
            ("untested", "Fix the pager", {"src/pager.py": "p = 1\n"}),
            ("tests-only", "Fix a flaky test", {"tests/test_calc.py": "z = 1\n"}),
            ("plain", "Add a pager", src_and_test),
        ]
    ):
        files = {path: f"{text}# {n}\n" for path, text in files.items()}
        shas[name] = repo.commit(subject, files=files)
    write_config(repo)
    return shas


def test_mine_summary_counts_every_rule(git_repo: GitRepo, history: dict[str, str]) -> None:
    result = run_gitgauge("mine", "--dry-run", cwd=git_repo.root)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    listed = {line.split()[1] for line in out.splitlines() if line.startswith("skipped")}
    expected = {history[name][:8] for name in ("conventional", "area", "django", "bugword")}
    assert listed == expected
    assert "    conventional fix type:    1 / 0" in out
    assert "    other conventional type:  0 / 1" in out
    assert "    area tag + bug word:      2 / 0" in out  # BUG: and polls:
    assert "    bug word:                 3 / 0" in out  # two of them dropped by files
    assert "    revert:                   0 / 1" in out
    assert "    no bug word:              0 / 1" in out  # the root commit is counted as one
    assert "    no test file:             1" in out
    assert "    only tests or Markdown:   1" in out
    assert "candidates:        4" in out


def test_explain_names_the_rules_and_the_files(git_repo: GitRepo, history: dict[str, str]) -> None:
    out = run_gitgauge("mine", "--explain", history["untested"][:10], cwd=git_repo.root)
    assert out.returncode == 0, out.stderr
    assert "subject  taken by rule: bug word" in out.stdout
    assert "files    dropped by rule: no test file" in out.stdout
    assert "source   src/pager.py" in out.stdout
    assert "verdict  not a candidate" in out.stdout

    out = run_gitgauge("mine", "--explain", history["area"], cwd=git_repo.root)
    assert "subject  taken by rule: area tag + bug word (prefix 'BUG')" in out.stdout
    assert "test     tests/test_calc.py" in out.stdout
    assert "verdict  a candidate, not judged yet: `gitgauge mine` verifies it" in out.stdout

    out = run_gitgauge("mine", "--explain", history["revert"], "--last", "2", cwd=git_repo.root)
    assert "subject  dropped by rule: revert" in out.stdout
    assert "window   not among the last 2 commits of HEAD (--last)" in out.stdout

    out = run_gitgauge("mine", "--explain", "HEAD~200", cwd=git_repo.root)
    assert out.returncode == 1
    assert out.stderr.startswith("gitgauge: error: 'HEAD~200' is not a commit of")


def test_explain_as_json_gives_each_commits_verdict_and_reasons(
    git_repo: GitRepo, history: dict[str, str]
) -> None:
    """`--format json`: one array, an object per commit in the order asked."""
    asked = [history["untested"][:10], history["area"], "HEAD~9"]
    out = run_gitgauge(
        "mine", *(f"--explain={rev}" for rev in asked), "--format", "json", cwd=git_repo.root
    )
    assert out.returncode == 0, out.stderr
    untested, area, root = json.loads(out.stdout)
    assert untested["sha"] == history["untested"] and untested["subject"] == "Fix the pager"
    assert untested["verdict"] == "not a candidate" and untested["candidate"] is False
    assert untested["subjectRule"] == {
        "rule": "bug-word",
        "label": "bug word",
        "taken": True,
        "prefix": None,
    }
    assert untested["fileRule"] == "no test file"
    assert untested["files"] == [{"path": "src/pager.py", "kind": "source"}]
    assert untested["reasons"] == [
        "subject: taken by rule: bug word",
        "files: dropped by rule: no test file",
    ]
    assert area["verdict"] == "not judged yet" and area["candidate"] is True
    assert area["said"] == "a candidate, not judged yet: `gitgauge mine` verifies it"
    assert area["subjectRule"]["prefix"] == "BUG" and area["fileRule"] == "tests-and-source"
    assert area["inWindow"] is True and area["task"] is None and area["duplicateOf"] is None
    assert root["verdict"] == "not a candidate" and root["structure"] == "root commit"
    assert root["subjectRule"] is None and root["reasons"] == [
        "rule: root commits are never candidates"
    ]

    text = run_gitgauge("mine", "--explain", asked[0], "--explain", asked[1], cwd=git_repo.root)
    assert text.stdout.count("verdict  ") == 2  # text: both, one block each
    alone = run_gitgauge("mine", "--format", "json", cwd=git_repo.root)
    assert alone.returncode == 2 and "--format applies only with --explain" in alone.stderr


def test_explain_shows_the_remembered_verdict(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("Initial", files=sample_root_files())
    # The test passes before the fix too: rejected, and remembered.
    fix = git_repo.commit(
        "Fix nothing really",
        files={"src/calc.py": "def add(a, b):\n    return b + a\n", "tests/test_x.py": "\n"},
    )
    write_config(git_repo)
    mined = run_gitgauge("mine", cwd=git_repo.root, env=_env(tmp_path))
    assert mined.returncode == 0, mined.stderr
    out = run_gitgauge("mine", "--explain", fix, cwd=git_repo.root, env=_env(tmp_path))
    assert "verdict  a candidate; judged before: rejected (passes before the fix)" in out.stdout


def _env(tmp_path: Path) -> dict[str, str]:
    return mine_env(tmp_path / "journal.jsonl")


def test_every_persisted_field_says_what_it_is() -> None:
    """Every field of what people write (gitgauge.yaml, agent configs) and of what gitgauge writes
    (tasks, results, manifests) has a one-line docstring under it: the file-format reference."""
    import ast

    undocumented = []
    core = Path(__file__).parents[1] / "gitgauge" / "core"
    for source in [core / "schema.py", *sorted((core / "records").glob("*.py"))]:
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.ClassDef) or node.name.endswith("Draft"):
                continue  # drafts compose RunResult's field groups, documented there
            if not any(
                getattr(base, "id", "").endswith(("BaseModel", "Record", "Fields", "FieldGroup"))
                for base in node.bases
            ):
                continue
            body = node.body
            for index, statement in enumerate(body):
                if not isinstance(statement, ast.AnnAssign):
                    continue
                field = getattr(statement.target, "id", "")
                if field == "model_config":
                    continue
                following = body[index + 1] if index + 1 < len(body) else None
                documented = (
                    isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)
                )
                if not documented:
                    undocumented.append(f"{node.name}.{field}")
    assert undocumented == []


def test_no_module_over_500_lines_and_no_function_over_80() -> None:
    """One module a responsibility, one function a step (issue 35): split by responsibility
    when one grows past these, in the package and the benchmark (ruff's C901 keeps each
    function's complexity at 15 or below)."""
    import ast

    root = Path(__file__).parents[1]
    too_long: list[str] = []
    for folder in ("gitgauge", "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            if "demo_sample" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            name = path.relative_to(root).as_posix()
            if len(text.splitlines()) > 500:
                too_long.append(f"{name}: {len(text.splitlines())} lines")
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > 80:
                        too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert too_long == []
