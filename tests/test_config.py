"""gitgauge.yaml: defaults, and every mistake is one line naming the file and the key (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers.cli import run_gitgauge
from helpers.repos import GitRepo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitgauge.core.config import load_repo_config, parse_config_text
from gitgauge.core.errors import ConfigError
from gitgauge.core.schema import AgentConfig, RepoConfig, RunSettings

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

PROJECT_ROOT = Path(__file__).parents[1]


def mine_with_config(git_repo: GitRepo, text: str | None) -> tuple[int, list[str]]:
    """Run `gitgauge mine` with `text` as gitgauge.yaml (None: no file); exit code, stderr lines."""
    if text is not None:
        (git_repo.root / "gitgauge.yaml").write_text(text, encoding="utf-8")
    result = run_gitgauge("mine", cwd=git_repo.root)
    return result.returncode, result.stderr.strip().splitlines()


def assert_one_line_error(code: int, lines: list[str], *fragments: str) -> str:
    assert code == 1, lines
    assert len(lines) == 1, lines
    line = lines[0]
    for fragment in ("gitgauge.yaml", *fragments):
        assert fragment in line, line
    return line


# -- through the CLI -----------------------------------------------------------------------------


def test_missing_test_command(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, "setupCommand: make\n")
    line = assert_one_line_error(code, lines, "testCommand")
    assert "missing" in line


def test_last_must_be_a_whole_number(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, 'testCommand: "true"\nmine:\n  last: "ten"\n')
    assert_one_line_error(code, lines, "mine.last", "'ten'")


@pytest.mark.parametrize("key", ["test", "setup", "adapter"])
@pytest.mark.parametrize("value", ["0", "-5"])
def test_timeouts_must_be_positive(git_repo: GitRepo, key: str, value: str) -> None:
    code, lines = mine_with_config(git_repo, f'testCommand: "true"\ntimeouts:\n  {key}: {value}\n')
    line = assert_one_line_error(code, lines, f"timeouts.{key}")
    assert value in line


@pytest.mark.parametrize("key", ["test", "setup", "adapter"])
def test_timeouts_past_a_day_are_refused(git_repo: GitRepo, key: str) -> None:
    # 3,600,000,000 ms is 41 days: the seconds-or-milliseconds mistake, or a typo's extra zeros.
    code, lines = mine_with_config(
        git_repo, f'testCommand: "true"\ntimeouts:\n  {key}: 3600000000\n'
    )
    line = assert_one_line_error(code, lines, f"timeouts.{key}", "3600000000 ms", "a day")
    assert "86400000" in line and "milliseconds" in line


def test_a_timeout_of_exactly_a_day_is_accepted() -> None:
    text = "testCommand: x\ntimeouts:\n  test: 86400000\n  setup: 86400000\n  adapter: 86400000\n"
    config = parse_config_text(text, RepoConfig, source="gitgauge.yaml")
    assert config.timeouts.test == config.timeouts.adapter == 86_400_000


def test_unknown_key_suggests_the_closest_known_key(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, 'testComand: "pytest"\n')
    line = assert_one_line_error(code, lines, "testComand", "did you mean 'testCommand'")
    # The typo is the cause; a "missing testCommand" would send the user looking elsewhere.
    assert "missing" not in line


def test_unknown_nested_key_names_its_path(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, 'testCommand: "true"\ntimeouts:\n  tset: 5\n')
    assert_one_line_error(code, lines, "timeouts.tset", "did you mean 'test'")


def test_every_unknown_key_is_reported_at_once(git_repo: GitRepo) -> None:
    """Two typos are two errors: both are named in the one line, in the file's order, each
    with its path and the closest known key; the missing key a typo explains is not."""
    code, lines = mine_with_config(
        git_repo, 'testComand: "true"\nmine:\n  rerun: 2\n  last: 5\ntimeouts:\n  tset: 5\n'
    )
    line = assert_one_line_error(code, lines)
    assert line.endswith(
        "gitgauge.yaml: unknown keys 'testComand' (did you mean 'testCommand'?), 'mine.rerun' "
        "(did you mean 'reruns'?), 'timeouts.tset' (did you mean 'test'?)"
    ), line
    assert "missing" not in line


def test_unknown_keys_come_with_the_other_problem_of_the_file() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(
            "testCommand: x\nfoo: 1\nmine:\n  last: ten\n", RepoConfig, source="gitgauge.yaml"
        )
    message = str(caught.value)
    assert message.startswith("gitgauge.yaml: unknown key 'foo' (known keys: testCommand, ")
    assert message.endswith("; mine.last: expected a whole number, got 'ten'"), message


def test_every_unknown_key_of_an_agent_config_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(
            "name: x\nadapter: gold\nmodle: a\nargz: []\n", AgentConfig, source="my.yaml"
        )
    assert str(caught.value) == (
        "my.yaml: unknown keys 'modle' (did you mean 'model'?), 'argz' (did you mean 'args'?)"
    )


def test_invalid_yaml_names_the_line(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(
        git_repo, 'testCommand: "pytest"\nmine:\n  last: [1, 2\ntimeouts: {}\n'
    )
    line = assert_one_line_error(code, lines, "invalid YAML")
    assert "line 4" in line or "line 3" in line


def test_invalid_yaml_tab_indentation(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, 'testCommand: "pytest"\nmine:\n\tlast: 3\n')
    assert_one_line_error(code, lines, "invalid YAML", "line 3")


@pytest.mark.parametrize("text", ["", "\n\n", "# only comments\n# testCommand: pytest\n"])
def test_empty_file(git_repo: GitRepo, text: str) -> None:
    code, lines = mine_with_config(git_repo, text)
    line = assert_one_line_error(code, lines, "empty", "testCommand")
    assert "Traceback" not in line


def test_missing_config_file_says_to_run_init(git_repo: GitRepo) -> None:
    code, lines = mine_with_config(git_repo, None)
    assert_one_line_error(code, lines, "gitgauge init")


def test_config_is_read_from_the_repository_root_in_a_subdirectory(git_repo: GitRepo) -> None:
    (git_repo.root / "gitgauge.yaml").write_text("mine:\n  last: 0\n", encoding="utf-8")
    (git_repo.root / "deep" / "er").mkdir(parents=True)
    result = run_gitgauge("mine", cwd=git_repo.root / "deep" / "er")
    assert result.returncode == 1
    assert str(git_repo.root / "gitgauge.yaml") in result.stderr


# -- the loader itself -----------------------------------------------------------------------------


def test_defaults() -> None:
    config = parse_config_text('testCommand: "pytest -q"\n', RepoConfig, source="gitgauge.yaml")
    assert config.testCommand == "pytest -q"
    assert config.setupCommand is None
    assert config.mine.last == 200
    assert (config.timeouts.test, config.timeouts.setup, config.timeouts.adapter) == (
        300_000,
        600_000,
        900_000,
    )
    assert config.worktree.link == []
    assert (config.mine.chains, config.mine.chainLength, config.mine.chainPurity) == (
        False,
        [3, 6],
        0.5,
    )
    assert (config.chains.testEachCommit, config.chains.judge, config.chains.judgeModel) == (
        False,
        False,
        "haiku",
    )


def test_every_key_as_the_spec_writes_it(tmp_path: Path) -> None:
    (tmp_path / "gitgauge.yaml").write_text(
        "testCommand: npm test\n"
        "setupCommand: npm install\n"
        "mine:\n  last: 20\n"
        "timeouts:\n  test: 1000\n  setup: 2000\n  adapter: 3000\n"
        "worktree:\n  link:\n    - node_modules\n    - .venv\n",
        encoding="utf-8",
    )
    config = load_repo_config(tmp_path)
    assert config.setupCommand == "npm install"
    assert config.mine.last == 20
    assert (config.timeouts.test, config.timeouts.setup, config.timeouts.adapter) == (
        1000,
        2000,
        3000,
    )
    assert config.worktree.link == ["node_modules", ".venv"]


def test_the_example_file_documents_and_sets_every_key() -> None:
    text = (PROJECT_ROOT / "gitgauge.yaml.example").read_text(encoding="utf-8")
    config = parse_config_text(text, RepoConfig, source="gitgauge.yaml.example")
    raw = yaml.safe_load(text)
    assert set(raw) == set(RepoConfig.model_fields)
    assert set(raw["mine"]) == {
        "last",
        "reruns",
        "fixTypes",
        "nonFixTypes",
        "merges",
        "maxConflicts",
        "chains",
        "chainLength",
        "chainPurity",
    }
    assert set(raw["chains"]) == {"testEachCommit", "judge", "judgeModel"}
    assert set(raw["tests"]) == {"junit", "patterns"}
    assert set(raw["timeouts"]) == {"test", "setup", "adapter"}
    assert set(raw["worktree"]) == {"link"}
    assert set(raw["run"]) == set(RunSettings.model_fields)
    assert set(raw["run"]["ray"]) == {"address", "resources", "env", "link"}
    assert config.testCommand


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("testCommand: 5\n", ["testCommand", "string"]),
        ("testCommand: ''\n", ["testCommand", "empty"]),
        ("testCommand: [pytest]\n", ["testCommand"]),
        ("testCommand: x\nsetupCommand: 3\n", ["setupCommand"]),
        ("testCommand: x\nmine:\n  last: true\n", ["mine.last"]),
        ("testCommand: x\nmine:\n  last: 1.5\n", ["mine.last"]),
        ("testCommand: x\nmine: 5\n", ["mine", "mapping"]),
        ("testCommand: x\ntimeouts:\n  test: '300000'\n", ["timeouts.test"]),
        ("testCommand: x\nworktree:\n  link: node_modules\n", ["worktree.link", "list"]),
        ("testCommand: x\nworktree:\n  link: [/abs/path]\n", ["worktree.link", "relative"]),
        ("testCommand: x\nworktree:\n  link: [../outside]\n", ["worktree.link", "relative"]),
        ("testCommand: x\nworktree:\n  lnk: [a]\n", ["worktree.lnk", "did you mean 'link'"]),
        ("testCommand: x\nmine:\n  chainLength: [1, 6]\n", ["mine.chainLength", "[3, 6]"]),
        ("testCommand: x\nmine:\n  chainLength: [6, 3]\n", ["mine.chainLength", "shortest"]),
        ("testCommand: x\nmine:\n  chainLength: [3]\n", ["mine.chainLength"]),
        ("testCommand: x\nmine:\n  chainLength: [3, 21]\n", ["mine.chainLength", "20"]),
        ("testCommand: x\nmine:\n  chainPurity: 1.5\n", ["mine.chainPurity"]),
        ("testCommand: x\nchains:\n  judge: 'yes'\n", ["chains.judge"]),
        ("testCommand: x\nchains:\n  judgeModel: ''\n", ["chains.judgeModel"]),
        ("testCommand: x\nchains:\n  testEach: true\n", ["did you mean 'testEachCommit'"]),
        ("- testCommand: x\n", ["mapping", "list"]),
        ("just some text\n", ["mapping"]),
        ("? [a, b]\n: c\n", []),
        ("testCommand: x\ntestCommand: y\n", []),
    ],
)
def test_loader_errors(text: str, fragments: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, RepoConfig, source="gitgauge.yaml")
    message = str(caught.value)
    assert message.startswith("gitgauge.yaml: ")
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_unreadable_bytes_are_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "gitgauge.yaml").write_bytes(b"testCommand: \xff\xfe\n")
    with pytest.raises(ConfigError, match="gitgauge.yaml"):
        load_repo_config(tmp_path)


# -- property: nothing but ConfigError, whatever the text ----------------------------------------


def _accepts_or_config_error(text: str) -> None:
    try:
        config = parse_config_text(text, RepoConfig, source="gitgauge.yaml")
    except ConfigError as error:
        message = str(error)
        assert message.startswith("gitgauge.yaml: ")
        assert "\n" not in message
    else:
        assert isinstance(config, RepoConfig)


_KEYS = st.sampled_from(
    ["testCommand", "setupCommand", "mine", "last", "timeouts", "test", "setup", "adapter"]
    + ["worktree", "link", "run", "history", "isolated", "full"]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.binary(max_size=10)
)
_STRUCTURES = st.recursive(
    _SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(_KEYS | st.text(max_size=8) | st.integers(), children, max_size=5)
    ),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_any_text_gives_a_config_or_a_config_error(text: str) -> None:
    _accepts_or_config_error(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STRUCTURES)
def test_any_yaml_structure_gives_a_config_or_a_config_error(value: object) -> None:
    _accepts_or_config_error(yaml.safe_dump(value, allow_unicode=True))


def test_per_test_keys_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "gitgauge.yaml"
    path.write_text(
        "testCommand: mvn test\nmine:\n  reruns: 0\n"
        "tests:\n  junit: target/surefire-reports/*.xml\n",
        encoding="utf-8",
    )
    config = load_repo_config(tmp_path)
    assert config.mine.reruns == 0
    assert config.tests.junit == "target/surefire-reports/*.xml"
    path.write_text("testCommand: t\ntests:\n  junit: /abs/*.xml\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tests\.junit: '/abs/\*\.xml' must be a glob relative"):
        load_repo_config(tmp_path)
    path.write_text("testCommand: t\nmine:\n  reruns: -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mine\.reruns"):
        load_repo_config(tmp_path)
