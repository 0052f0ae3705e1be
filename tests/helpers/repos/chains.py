"""A synthetic project whose first-parent history holds file-commit chains of each kind, for the
commit-history task tests (`mine --chains`, `kind: rebase`, `kind: commits`).

`build_chain_repo` makes it with the git CLI (never with gitgauge's own git door), oldest first:

| scenario | commits                                               | expected                   |
| -------- | ----------------------------------------------------- | -------------------------- |
| long     | 8 commits modifying src/alpha.py (one also beta.py)   | one chain: the newest 6    |
| merge    | 2 on src/gamma.py, a merge that changes it, 2 more    | nothing (the merge splits) |
| added    | src/delta.py added, then modified twice               | nothing (the add ends it)  |
| markdown | 3 commits on docs/guide.md                            | skipped (Markdown only)    |
| subjects | 3 on src/eps.py, two subjects alike                   | skipped (same subjects)    |
| impure   | 3 on src/theta.py, each with a big file of its own    | skipped (purity)           |
| four     | 4 on src/kappa.py                                     | a chain of 4               |
| zeta     | 3 on src/zeta.py: a function, its test, its docs      | a chain of 3 (the newest)  |

Scenarios are separated by a commit that touches another file, so no run crosses them. The test
command runs every `test_*` function of `tests/test_*.py` with `src/` importable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helpers.repos import RUN_TESTS, TEST_COMMAND, GitRepo, new_repo

Files = dict[str, str | bytes | None]

CHAIN_CHECKS = (
    "checkTree",
    "checkNothingInProgress",
    "checkNothingUncommitted",
    "checkSeriesLength",
    "checkSubjectsDistinct",
    "checkBranch",
)
"""The checks of a chain task's pair as docs/guide/chain-tasks.md lists them (the tests' own copy:
a check the package loses still fails them)."""


@dataclass
class ChainRepo:
    repo: GitRepo
    commits: dict[str, list[str]] = field(default_factory=dict)
    """scenario -> its commits, oldest first (merge: the first-parent ones and the merge)."""

    @property
    def root(self) -> Path:
        return self.repo.root

    def parent_of(self, sha: str) -> str:
        return self.repo.git("rev-parse", f"{sha}^").strip()


def _lines(name: str, count: int) -> str:
    return "".join(f"{name}_{n} = {n}\n" for n in range(count))


def _grow(
    repo: GitRepo,
    path: str,
    text: str,
    steps: list[tuple[str, str]],
    extra: Mapping[int, Mapping[str, str | bytes | None]] | None = None,
) -> tuple[list[str], str]:
    """One commit a step (subject, a line appended to `path`), step n also writing `extra[n]`;
    returns the commits and the file's text after them."""
    shas = []
    for number, (subject, line) in enumerate(steps):
        text += line
        files: Files = {path: text, **(extra or {}).get(number, {})}
        shas.append(repo.commit(subject, files=files))
    return shas, text


def _numbered(subject: str, prefix: str, numbers: range) -> list[tuple[str, str]]:
    """Steps "<subject> n" each appending `<prefix>n = n`."""
    return [(f"{subject} {n}", f"{prefix}{n} = {n}\n") for n in numbers]


def build_chain_repo(root: Path) -> ChainRepo:
    repo = new_repo(root)
    built = ChainRepo(repo)
    repo.commit(
        "Start the project",
        files={
            "run_tests.py": RUN_TESTS,
            "src/alpha.py": "A = 0\n",
            "src/beta.py": "B = 0\n",
            "src/gamma.py": "G = 0\n",
            "src/eps.py": "E = 0\n",
            "src/theta.py": "T = 0\n",
            "src/kappa.py": "K = 0\n",
            "src/zeta.py": '"""Zeta."""\n',
            "docs/guide.md": "# Guide\n",
            ".gitignore": "__pycache__/\n.gitgauge/\n",
            "gitgauge.yaml": f"testCommand: {TEST_COMMAND}\n",
        },
    )
    separators = iter(range(100))

    def separate() -> None:
        number = next(separators)
        repo.commit(f"Note {number}", files={f"notes/{number}.txt": f"note {number}\n"})

    built.commits["long"], _ = _grow(
        repo,
        "src/alpha.py",
        "A = 0\n",
        _numbered("Alpha step", "A", range(8)),
        extra={5: {"src/beta.py": "B = 0\nB1 = 1\n"}},
    )
    separate()

    merge, gamma = _grow(repo, "src/gamma.py", "G = 0\n", _numbered("Gamma step", "G", range(2)))
    # The side branch changes gamma.py too, so the merge itself modifies it against its first
    # parent: only the rule "none a merge" splits the five.
    gamma += "GS = 0\n"
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("Side work", files={"side.txt": "side\n", "src/gamma.py": gamma})
    repo.git("checkout", "-q", "main")
    merge.append(repo.merge(["side"], "Merge branch 'side'", hour=5))
    more, _ = _grow(repo, "src/gamma.py", gamma, _numbered("Gamma step", "G", range(2, 4)))
    built.commits["merge"] = merge + more
    separate()

    added = repo.commit("Add delta", files={"src/delta.py": "D = 0\n"})
    delta, _ = _grow(repo, "src/delta.py", "D = 0\n", _numbered("Delta step", "D", range(2)))
    built.commits["added"] = [added, *delta]
    separate()

    sections = [(f"Guide section {n}", f"\nSection {n}.\n") for n in range(3)]
    built.commits["markdown"], _ = _grow(repo, "docs/guide.md", "# Guide\n", sections)
    separate()

    subjects = ("Tidy eps", "Tidy eps", "Finish eps")
    eps = [(subject, f"E{n} = {n}\n") for n, subject in enumerate(subjects)]
    built.commits["subjects"], _ = _grow(repo, "src/eps.py", "E = 0\n", eps)
    separate()

    big = {n: {f"data/big{n}.py": _lines(f"big{n}", 20)} for n in range(3)}
    theta = _numbered("Theta step", "T", range(3))
    built.commits["impure"], _ = _grow(repo, "src/theta.py", "T = 0\n", theta, extra=big)
    separate()

    kappa = _numbered("Kappa step", "K", range(4))
    built.commits["four"], _ = _grow(repo, "src/kappa.py", "K = 0\n", kappa)
    separate()

    built.commits["zeta"] = [
        repo.commit(
            "Add zeta.double",
            files={"src/zeta.py": '"""Zeta."""\n\n\ndef double(x):\n    return 2 * x\n'},
        ),
        repo.commit(
            "Test zeta.double",
            files={
                "src/zeta.py": '"""Zeta: doubling."""\n\n\ndef double(x):\n    return 2 * x\n',
                "tests/test_zeta.py": "from zeta import double\n\n\n"
                "def test_double():\n    assert double(2) == 4\n",
            },
        ),
        repo.commit(
            "Document zeta.double",
            files={
                "src/zeta.py": '"""Zeta: doubling."""\n\n\ndef double(x):\n'
                '    """Twice x."""\n    return 2 * x\n'
            },
        ),
    ]
    return built
