"""A synthetic project whose history holds merges of each kind, for merge-task tests.

`build_merge_repo` makes it with the git CLI (never with gitgauge's own git door): a small
`calc` package, a test runner (`python3 run_tests.py`: every `test_*` function of
`tests/test_*.py`), and on `main` one merge per scenario, each resolved by hand the way a
developer would, so the recorded resolution differs from both sides:

| merge          | conflict                                     | expected                    |
| -------------- | -------------------------------------------- | --------------------------- |
| clean          | none                                         | not a task                  |
| source         | `greet` in src/calc.py (1 file, 1 region)    | easy task, tests at merge   |
| test-file      | tests/test_calc.py (1 file, 2 regions)       | medium task; "ours" passes  |
| modify-delete  | src/legacy.py modified/deleted, and `mul`    | hard task                   |
| docs           | README.md only                               | skipped (docs or lock)      |
| suite-fails    | `sub` in src/calc.py; suite fails at merge   | easy task, exact match only |
| octopus        | none (three parents)                         | skipped (octopus)           |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from helpers.repos import RUN_TESTS, TEST_COMMAND, GitRepo, new_repo

CALC = """\
def greet(name):
    return "Hello " + name


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
"""

TESTS = """\
from calc import add, greet


def test_add():
    assert add(1, 2) == 3


def test_greet():
    assert greet("Bo").endswith("Bo") or greet("Bo").endswith("Bo!")
"""

LEGACY = "def old():\n    return 1\n"


@dataclass
class MergeRepo:
    repo: GitRepo
    merges: dict[str, str] = field(default_factory=dict)
    """scenario -> merge commit sha."""
    resolutions: dict[str, dict[str, str | None]] = field(default_factory=dict)
    """scenario -> the files as the recorded merge resolved them."""
    fix: str = ""
    """The one bug-fix commit (a fix task)."""

    @property
    def root(self) -> Path:
        return self.repo.root


def _merge(repo: GitRepo, branches: list[str], resolved: dict[str, str | None], msg: str) -> str:
    """Merge `branches` into main as a developer would, resolving a conflict as `resolved`."""
    return repo.merge(branches, msg, resolved=resolved, day="2024-02-01")


def _branch(repo: GitRepo, name: str, subject: str, files: dict[str, str | None]) -> None:
    repo.git("checkout", "-q", "-b", name)
    repo.commit(subject, files=files)
    repo.git("checkout", "-q", "main")


def build_merge_repo(root: Path) -> MergeRepo:
    repo = new_repo(root)
    repo.commit(
        "Initial project",
        files={
            "run_tests.py": RUN_TESTS,
            "src/calc.py": CALC,
            "src/legacy.py": LEGACY,
            "tests/test_calc.py": TESTS,
            "README.md": "# calc\n\nA calculator.\n",
            ".gitignore": "__pycache__/\n",
            "gitgauge.yaml": f"testCommand: {TEST_COMMAND}\n",
        },
    )
    found = MergeRepo(repo)

    # clean: the two sides touch different files.
    _branch(repo, "clean", "Add notes", {"NOTES.txt": "notes\n"})
    repo.commit("Add div", files={"src/calc.py": CALC + "\n\ndef div(a, b):\n    return a / b\n"})
    calc = (root / "src/calc.py").read_text()
    found.merges["clean"] = _merge(repo, ["clean"], {}, "Merge branch 'clean'")

    # source: both sides reword greet; the branch's test wants "Hi"; the merge keeps a third
    # wording.
    tests = TESTS
    _branch(
        repo,
        "greeting",
        "Greet informally",
        {
            "src/calc.py": calc.replace('return "Hello " + name', 'return "Hi " + name'),
            "tests/test_calc.py": tests
            + '\n\ndef test_hi():\n    assert greet("Bo")[:2] == "Hi"\n',
        },
    )
    repo.commit(
        "Greet with a comma",
        files={"src/calc.py": calc.replace('return "Hello " + name', 'return "Hello, " + name')},
    )
    calc = calc.replace('return "Hello " + name', 'return "Hi, " + name + "!"')
    resolved: dict[str, str | None] = {"src/calc.py": calc}
    found.merges["source"] = _merge(repo, ["greeting"], resolved, "Merge branch 'greeting'")
    found.resolutions["source"] = resolved
    tests = (root / "tests/test_calc.py").read_text()
    assert "test_hi" in tests

    # test-file: both sides add tests at the same two places; the merge keeps all of them.
    head = "from calc import add, greet\n"
    _branch(
        repo,
        "more-tests",
        "Test add more",
        {
            "tests/test_calc.py": tests.replace(head, head + "import math\n").replace(
                "def test_greet():\n", "def test_greet():\n    assert add(0, 0) == 0\n"
            )
        },
    )
    repo.commit(
        "Test add with negatives",
        files={
            "tests/test_calc.py": tests.replace(head, head + "import os\n").replace(
                "def test_greet():\n", "def test_greet():\n    assert add(-1, 1) == 0\n"
            )
        },
    )
    tests = tests.replace(head, head + "import math\nimport os\n").replace(
        "def test_greet():\n",
        "def test_greet():\n    assert add(-1, 1) == 0\n    assert add(0, 0) == 0\n",
    )
    resolved = {"tests/test_calc.py": tests}
    found.merges["test-file"] = _merge(repo, ["more-tests"], resolved, "Merge branch 'more-tests'")
    found.resolutions["test-file"] = resolved

    # modify-delete: main edits legacy.py, the branch deletes it; both change mul, and the
    # branch's test wants integer products.
    _branch(
        repo,
        "cleanup",
        "Drop legacy, mul by repeated add",
        {
            "src/legacy.py": None,
            "src/calc.py": calc.replace("return a * b", "return sum(a for _ in range(b))"),
            "tests/test_calc.py": tests + "\n\ndef test_mul():\n    from calc import mul\n"
            "    assert type(mul(3, 2)) is int and mul(3, 2) == 6\n",
        },
    )
    repo.commit(
        "Document legacy, mul of floats",
        files={
            "src/legacy.py": LEGACY.replace("return 1", "return 1  # kept"),
            "src/calc.py": calc.replace("return a * b", "return float(a) * b"),
        },
    )
    calc = calc.replace("return a * b", "return a * b if isinstance(a, int) else float(a) * b")
    resolved = {"src/legacy.py": None, "src/calc.py": calc}
    found.merges["modify-delete"] = _merge(repo, ["cleanup"], resolved, "Merge branch 'cleanup'")
    found.resolutions["modify-delete"] = resolved
    tests = (root / "tests/test_calc.py").read_text()

    # docs: a conflict in README.md only.
    _branch(repo, "docs", "Describe usage", {"README.md": "# calc\n\nUse it.\n"})
    repo.commit("Describe purpose", files={"README.md": "# calc\n\nFor sums.\n"})
    found.merges["docs"] = _merge(
        repo, ["docs"], {"README.md": "# calc\n\nFor sums. Use it.\n"}, "Merge branch 'docs'"
    )

    # suite-fails: both sides change sub; the merge is recorded with a failing test.
    _branch(
        repo,
        "subtract",
        "sub returns int",
        {"src/calc.py": calc.replace("return a - b", "return int(a - b)")},
    )
    repo.commit(
        "sub returns abs", files={"src/calc.py": calc.replace("return a - b", "return abs(a - b)")}
    )
    calc = calc.replace("return a - b", "return int(abs(a - b))")
    tests += "\n\ndef test_sub():\n    from calc import sub\n    assert sub(1, 3) == -2\n"
    resolved = {"src/calc.py": calc, "tests/test_calc.py": tests}
    found.merges["suite-fails"] = _merge(repo, ["subtract"], resolved, "Merge branch 'subtract'")
    found.resolutions["suite-fails"] = resolved
    # A bug fix after it (a fix task, to see both kinds side by side): sub keeps its sign.
    found.fix = repo.commit(
        "Fix sub dropping the sign",
        "sub(1, 3) returned 2 since the subtract merge; it must return -2 again.",
        files={
            "src/calc.py": calc.replace("return int(abs(a - b))", "return int(a - b)"),
            "tests/test_calc.py": tests + "    assert sub(5, 2) == 3\n",
        },
    )

    # octopus: three parents, no conflict.
    _branch(repo, "oct-a", "Add a.txt", {"a.txt": "a\n"})
    _branch(repo, "oct-b", "Add b.txt", {"b.txt": "b\n"})
    found.merges["octopus"] = _merge(repo, ["oct-a", "oct-b"], {}, "Merge oct-a and oct-b")
    return found
