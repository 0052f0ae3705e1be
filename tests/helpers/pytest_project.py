"""The small pytest project several mining tests build their histories from: `src/` on pytest's
path, `calc.add` and its passing test at the first commit, and a `clamp` and a `slug` whose fixes
the tests given here prove (each one's first test fails before its fix)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

PYTEST_INI = "[pytest]\npythonpath = src\n"
CALC = "def add(a, b):\n    return a + b\n"
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


class Fixable(NamedTuple):
    """A module of the project before and after its fix, and the test that proves the fix."""

    name: str
    buggy: str
    fixed: str
    test: str


CLAMP = Fixable(
    "clamp",
    "def clamp(x, low, high):\n    return max(low, x)\n",
    "def clamp(x, low, high):\n    return max(low, min(x, high))\n",
    "from clamp import clamp\n\n\n"
    "def test_clamp_high():\n    assert clamp(9, 0, 5) == 5\n\n\n"
    "def test_clamp_inside():\n    assert clamp(3, 0, 5) == 3\n",
)
SLUG = Fixable(
    "slug",
    "def slug(text):\n    return text.replace(' ', '-')\n",
    "def slug(text):\n    return text.lower().replace(' ', '-')\n",
    "from slug import slug\n\n\ndef test_slug_lowercases():\n    assert slug('A B') == 'a-b'\n",
)


def first_files(more: Mapping[str, str] | None = None) -> dict[str, str]:
    """The first commit's files: pytest.ini, src/calc.py and tests/test_calc.py, and `more`."""
    return {
        "pytest.ini": PYTEST_INI,
        "src/calc.py": CALC,
        "tests/test_calc.py": CALC_TEST,
        **(more or {}),
    }
