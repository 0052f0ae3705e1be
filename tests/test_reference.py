"""The generated reference (docs/gen_reference.py): up to date with the code, its check fails when
a model gains a key the pages do not have, and the `gitgauge init` template holds every key of
the models, commented, and loads once uncommented."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from gitgauge.core.config import parse_config_text
from gitgauge.core.schema import RepoConfig

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def throwaway_schema() -> Iterator[tuple[types.ModuleType, str]]:
    """gitgauge's schema module, loaded afresh from its source with one key added to `mine:`."""
    source = (ROOT / "gitgauge/core/schema.py").read_text(encoding="utf-8")
    anchor = "class MineSettings(_HumanRecord):\n"
    body = source.index(anchor) + len(anchor)
    source = (
        source[:body]
        + "    maxCandidates: int = 50\n"
        + '    """How many candidates a mine verifies at most (a key the reference lacks)."""\n'
        + source[body:]
    )
    name = "gitgauge_throwaway_schema"
    module = types.ModuleType(name)
    sys.modules[name] = module  # pydantic resolves the postponed annotations through it
    try:
        exec(compile(source, "throwaway_schema.py", "exec"), module.__dict__)
        yield module, source
    finally:
        del sys.modules[name]


def test_the_generated_pages_are_up_to_date(gen: types.ModuleType) -> None:
    assert gen.stale(ROOT, gen.generate()) == []
    assert gen.check_bad_input(ROOT) == []
    assert gen.main(["--check"]) == 0


def test_a_new_config_key_makes_the_check_fail(
    gen: types.ModuleType, throwaway_schema: tuple[types.ModuleType, str]
) -> None:
    module, source = throwaway_schema
    assert "maxCandidates" in module.MineSettings.model_fields

    pages = gen.generate(schema=module, source=source)

    assert gen.stale(ROOT, pages) == [
        "docs/reference/config.md is out of date: run `python docs/gen_reference.py`",
        ".gitgauge-template/gitgauge.yaml is out of date: run `python docs/gen_reference.py`",
    ]
    config_page = pages[Path("docs/reference/config.md")]
    assert (
        "| `mine.maxCandidates` | integer | `50` | How many candidates a mine verifies at most "
        "(a key the reference lacks). |"
    ) in config_page
    assert "#   maxCandidates: 50" in pages[Path(".gitgauge-template/gitgauge.yaml")]


def test_the_check_fails_on_a_page_edited_by_hand(gen: types.ModuleType, tmp_path: Path) -> None:
    pages = gen.generate()
    for path, text in pages.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert gen.stale(tmp_path, pages) == []
    cli = tmp_path / "docs/reference/cli.md"
    cli.write_text(cli.read_text(encoding="utf-8").replace("--last", "--latest"), encoding="utf-8")
    assert gen.stale(tmp_path, pages) == [
        "docs/reference/cli.md is out of date: run `python docs/gen_reference.py`"
    ]


def _key_paths(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    for name, field in model.model_fields.items():
        yield prefix + name
        annotation = field.annotation
        inner = [a for a in getattr(annotation, "__args__", ()) if isinstance(a, type)]
        for candidate in [annotation, *inner]:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                yield from _key_paths(candidate, f"{prefix}{name}.")


def _template_keys(text: str) -> list[str]:
    """The dotted key paths the template's commented key lines spell, by their indentation
    (after the header, which ends at the first blank line)."""
    stack: list[str] = []
    keys = []
    for match in re.finditer(r"(?m)^# ((?:  )*)([A-Za-z_]+):", text.split("\n\n", 1)[1]):
        depth = len(match.group(1)) // 2
        stack[depth:] = [match.group(2)]
        keys.append(".".join(stack))
    return keys


def test_init_writes_every_key_of_the_models_commented() -> None:
    text = (ROOT / ".gitgauge-template/gitgauge.yaml").read_text(encoding="utf-8")
    keys = _template_keys(text)

    assert keys == list(_key_paths(RepoConfig))
    # The keys a first version of the template left out (issue 27).
    for key in (
        "mine.reruns",
        "tests.junit",
        "run.sandbox",
        "run.sandbox_network",
        "run.sandbox_home_writable",
        "run.executor",
        "run.ray",
        "run.ray.address",
    ):
        assert key in keys, key
    assert yaml.safe_load(text) is None  # all commented: a fresh file sets nothing

    # Uncommented, every key loads, with the models' defaults where the template shows one.
    header, keys_part = text.split("\n\n", 1)
    uncommented = header + "\n\n" + re.sub(r"(?m)^# ((?:  )*[A-Za-z_]+:)", r"\1", keys_part)
    config = parse_config_text(uncommented, RepoConfig, source="gitgauge.yaml")
    defaults = RepoConfig(testCommand="x")
    assert config.mine.reruns == defaults.mine.reruns
    assert config.run.sandbox == defaults.run.sandbox
    assert config.run.sandbox_network == defaults.run.sandbox_network
    assert config.run.executor == defaults.run.executor
    assert config.tests.junit == "target/surefire-reports/*.xml"
    assert config.run.ray is not None and config.run.ray.address == "10.0.0.5:6379"


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"Run the tests[^\n]*\n\n```sh\n(.*?)\n```", readme, re.S)
    assert block, "README: no 'Run the tests' block"
    # The README makes and activates a virtualenv first; .ci/run has made and activated its own.
    command = block.group(1).split(" && ", 2)[2]
    assert command == "pip install -e '.[test,ray]' && python -m pytest"
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    assert command in ci
