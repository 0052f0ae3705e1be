"""The hostile agents of issue 34 that more than one kind of task is attacked with
(`tests/test_hostile_agent.py` on a fix task, `tests/test_hostile_kinds.py` on merge and chain
tasks): a one-task project whose fix turns `magic()` from 1 into a number found nowhere else, so
RESOLVED without the fix is a cheat, and the scripts that cheat.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MAGIC = 7321
FIX_SUBJECT = "fix: magic returns the wrong number"
CALC = "def magic():\n    return 1\n"
TEST_AT_BASE = (
    "from calc import magic\n\n\ndef test_magic_is_callable():\n    assert callable(magic)\n"
)
TEST_AT_FIX = f"from calc import magic\n\n\ndef test_magic():\n    assert magic() == {MAGIC}\n"
SUITE = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
TEST_COMMAND = " ".join(SUITE)
"""The project's testCommand: its pytest suite, with this interpreter."""


def first_files(*, ignored: str = "", test: str = TEST_AT_BASE) -> dict[str, str]:
    """The project's first commit: `magic()` returning 1 and `test` (`ignored`: more lines of
    its .gitignore)."""
    return {
        ".gitignore": ".pytest_cache/\n.gitgauge/\n" + ignored,
        "calc.py": CALC,
        "tests/test_calc.py": test,
    }


def suite_with_cheat(
    folder: Path, calc: str, test: str, script: str
) -> subprocess.CompletedProcess[str]:
    """The suite run in a plain folder (no gitgauge, nothing dropped) holding `calc` as calc.py
    and `test` as tests/test_calc.py, after `script` (a cheat) ran there."""
    (folder / "tests").mkdir(parents=True)
    (folder / "calc.py").write_text(calc)
    (folder / "tests" / "test_calc.py").write_text(test)
    done = subprocess.run([sys.executable, "-c", script], cwd=folder, capture_output=True)
    assert done.returncode == 0, done.stderr
    return subprocess.run(SUITE, cwd=folder, capture_output=True, text=True)


# Row 1. A root `pytest.py`: `python -m pytest` runs it instead of pytest; it loads the real one
#        with a plugin that marks every test passed.
STAND_IN_PYTEST = '''
import pathlib
pathlib.Path("pytest.py").write_text("""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
import pytest
sys.path.insert(0, here)  # the real pytest loaded: the tests import the project from here

class Cheat:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None

sys.exit(pytest.main(sys.argv[1:], plugins=[Cheat()]))
""")
'''


def stand_in(module: str, *, package: bool = False) -> str:
    """An agent that adds a module (or a package) named `module` at the repository root: it
    loads the real `module` from elsewhere in its place, then makes `calc.magic` the fix's."""
    body = f"""
import importlib.machinery, importlib.util, os, sys
_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_here) if {package!r} else _here
_spec = importlib.machinery.PathFinder.find_spec(
    {module!r}, [p for p in sys.path if os.path.abspath(p or ".") != _root])
_real = importlib.util.module_from_spec(_spec)
sys.modules[{module!r}] = _real
_spec.loader.exec_module(_real)
import calc
calc.magic = lambda: {MAGIC}
"""
    target = f"{module}/__init__.py" if package else f"{module}.py"
    return (
        "import pathlib\n"
        f"pathlib.Path({target!r}).parent.mkdir(parents=True, exist_ok=True)\n"
        f"pathlib.Path({target!r}).write_text({body!r})\n"
    )


# Row 3. A new test file whose top-level code replaces `calc.magic` while pytest collects it.
PATCHING_TEST = f"""
import pathlib
pathlib.Path("tests/test_aaa_helpers.py").write_text(
    "import calc\\ncalc.magic = lambda: {MAGIC}\\n\\ndef test_helpers():\\n    pass\\n")
"""
# ... and the same in `tests/__init__.py`, which pytest imports before the tests of its folder.
PATCHING_PACKAGE = f"""
import pathlib
pathlib.Path("tests/__init__.py").write_text("import calc\\ncalc.magic = lambda: {MAGIC}\\n")
"""
