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

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from conftest import GitRepo

RUN_TESTS = """\
import runpy, sys, traceback
from pathlib import Path
sys.path.insert(0, "src")
failed = 0
for path in sorted(Path("tests").glob("test_*.py")):
    for name, check in sorted(runpy.run_path(str(path)).items()):
        if name.startswith("test_") and callable(check):
            try:
                check()
            except Exception:
                failed += 1
                traceback.print_exc()
print(f"{failed} failed")
sys.exit(1 if failed else 0)
"""
TEST_COMMAND = "python3 run_tests.py"


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


def build_chain_repo(root: Path) -> ChainRepo:
    root.mkdir(parents=True)
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
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

    alpha = "A = 0\n"
    built.commits["long"] = []
    for step in range(8):
        alpha += f"A{step} = {step}\n"
        files = {"src/alpha.py": alpha}
        if step == 5:
            files["src/beta.py"] = "B = 0\nB1 = 1\n"
        built.commits["long"].append(repo.commit(f"Alpha step {step}", files=files))
    separate()

    gamma = "G = 0\n"
    built.commits["merge"] = []
    for step in range(2):
        gamma += f"G{step} = {step}\n"
        built.commits["merge"].append(
            repo.commit(f"Gamma step {step}", files={"src/gamma.py": gamma})
        )
    # The side branch changes gamma.py too, so the merge itself modifies it against its first
    # parent: only the rule "none a merge" splits the five.
    gamma += "GS = 0\n"
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("Side work", files={"side.txt": "side\n", "src/gamma.py": gamma})
    repo.git("checkout", "-q", "main")
    repo._tick += 1
    stamp = f"2024-01-01T05:{repo._tick % 60:02d}:00+00:00"
    subprocess.run(
        ["git", "merge", "--no-ff", "-q", "-m", "Merge branch 'side'", "side"],
        cwd=root,
        env=dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp),
        check=True,
        capture_output=True,
    )
    built.commits["merge"].append(repo.git("rev-parse", "HEAD").strip())
    for step in range(2, 4):
        gamma += f"G{step} = {step}\n"
        built.commits["merge"].append(
            repo.commit(f"Gamma step {step}", files={"src/gamma.py": gamma})
        )
    separate()

    delta = "D = 0\n"
    built.commits["added"] = [repo.commit("Add delta", files={"src/delta.py": delta})]
    for step in range(2):
        delta += f"D{step} = {step}\n"
        built.commits["added"].append(
            repo.commit(f"Delta step {step}", files={"src/delta.py": delta})
        )
    separate()

    guide = "# Guide\n"
    built.commits["markdown"] = []
    for step in range(3):
        guide += f"\nSection {step}.\n"
        built.commits["markdown"].append(
            repo.commit(f"Guide section {step}", files={"docs/guide.md": guide})
        )
    separate()

    eps = "E = 0\n"
    built.commits["subjects"] = []
    for step, subject in enumerate(("Tidy eps", "Tidy eps", "Finish eps")):
        eps += f"E{step} = {step}\n"
        built.commits["subjects"].append(repo.commit(subject, files={"src/eps.py": eps}))
    separate()

    theta = "T = 0\n"
    built.commits["impure"] = []
    for step in range(3):
        theta += f"T{step} = {step}\n"
        built.commits["impure"].append(
            repo.commit(
                f"Theta step {step}",
                files={"src/theta.py": theta, f"data/big{step}.py": _lines(f"big{step}", 20)},
            )
        )
    separate()

    kappa = "K = 0\n"
    built.commits["four"] = []
    for step in range(4):
        kappa += f"K{step} = {step}\n"
        built.commits["four"].append(
            repo.commit(f"Kappa step {step}", files={"src/kappa.py": kappa})
        )
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
