"""Every extension point is one registry (`core/registry.py`): task kinds, adapters, export
formats and executors, each with its built-ins loaded on first use and an unknown name refused
with the names that exist."""

from __future__ import annotations

import pytest

from gitgauge.cli.export import ExportFormat
from gitgauge.core import kinds
from gitgauge.core.errors import ConfigError, TaskError, UsageError
from gitgauge.core.registry import Registry
from gitgauge.exporting.formats import FORMATS
from gitgauge.running.adapters.base import ADAPTERS


def test_a_registry_keeps_order_and_names_the_known_ones_for_an_unknown_name() -> None:
    colours: Registry[object] = Registry("colour")  # an int and a function
    colours.add("red", 1)

    @colours.register("blue")
    def blue() -> None: ...

    assert colours.names() == ["red", "blue"] and "red" in colours and "green" not in colours
    with pytest.raises(TaskError, match=r"unknown colour 'green' \(known: blue, red\)"):
        colours.get("green")


def test_the_built_in_entries_of_every_registry() -> None:
    assert kinds.names() == ["fix", "merge", "rebase", "commits", "fixture"]
    assert ADAPTERS.sorted() == ["claude-code", "codex", "gold", "noop", "script"]
    assert FORMATS.names() == ["swebench", "harbor"]
    assert [member.value for member in ExportFormat] == ["swebench", "harbor"]
    assert set(FORMATS.names()) == {member.value for member in ExportFormat}


@pytest.mark.parametrize(
    ("registry", "error"),
    [(kinds.KINDS, TaskError), (ADAPTERS, ConfigError), (FORMATS, UsageError)],
)
def test_each_registry_refuses_an_unknown_name_with_its_own_error(
    registry: Registry[object], error: type[Exception]
) -> None:
    with pytest.raises(error, match="unknown .* 'nothing-of-that-name'"):
        registry.get("nothing-of-that-name")
