"""The suite's pytest hooks and fixtures; the code they share with the tests is in helpers/.

Every test runs isolated from the developer's machine: HOME and git's global config point into
tmp_path, the Anthropic key is removed (helpers/environment.py), and commits are made with pinned
names and dates so SHAs are stable (helpers/repos/).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.demo import DemoRun, write_gitgauge_yaml
from helpers.environment import isolate
from helpers.prestarted import SERVER
from helpers.repos import GitRepo, new_repo


def pytest_configure(config: pytest.Config) -> None:
    """Compile gitgauge's bytecode once, before any test starts the CLI. The project is installed
    editable, and with PYTHONDONTWRITEBYTECODE set (as on CI's machines) no process ever writes
    it: each of the suite's hundreds of `python -m gitgauge` runs then compiled the whole package
    from source, about half a second apiece. An installed gitgauge (`pip install`) ships
    compiled; this makes the editable one start the same. Only the controller compiles (xdist's
    workers start after this), and a file unchanged since is not compiled again."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    import gitgauge

    compileall.compile_dir(Path(gitgauge.__file__).parent, quiet=1)


@pytest.fixture(scope="session", autouse=True)
def plain_inner_pytest() -> Iterator[None]:
    """The suites these tests have gitgauge run (`python -m pytest` in a sample repository) are
    plain pytest: this interpreter's plugins (xdist, hypothesis, anyio) are none of theirs, and
    autoloading them cost each inner run about a second on a busy machine (hypothesis alone).
    Set for the test processes only, so that every command they start inherits it; an explicit
    `-p plugin` still loads."""
    previous = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    yield
    if previous is None:
        os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    else:
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = previous


@pytest.fixture(scope="session", autouse=True)
def prestarted_cli() -> Iterator[None]:
    """Stop this worker's prestarted CLI server (if a test started it) when the session ends."""
    yield
    if SERVER is not None:
        SERVER.close()


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate(tmp_path / "home", monkeypatch)
    yield


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    return new_repo(tmp_path / "repo")


@pytest.fixture
def no_stray_worktrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Give gitgauge (in this process and its subprocesses) a private temporary directory, and
    fail when the test leaves anything in it: a worktree, a history copy, a temp file."""
    import tempfile

    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    yield
    left = sorted(p.name for p in private.iterdir())
    assert not left, f"gitgauge left temporary files behind: {left}"


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary directory of this test's own for gitgauge's worktrees: other test sessions on
    the machine cannot make the leftover check below pass or fail."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    left = sorted(path.name for path in folder.iterdir() if path.name.startswith("gitgauge-"))
    assert left == [], f"gitgauge left temporary directories behind: {left}"


@pytest.fixture(scope="session")
def demo_run_once(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`gitgauge demo` once per session: the sample repository mined (3 tasks), gold, noop and
    the offline agent with and without its CLAUDE.md run. Tests that change it work on a copy."""
    base = tmp_path_factory.mktemp("demo-repository")
    private_tmp = base / "tmp"
    private_tmp.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        # gitgauge's worktrees go to a temporary directory of the demo's own, checked empty.
        patch.setenv("TMPDIR", str(private_tmp))
        built = run_gitgauge("demo", str(base / "sample"), cwd=base)
    assert built.returncode == 0, built.stderr
    left = sorted(path.name for path in private_tmp.iterdir() if path.name.startswith("gitgauge-"))
    return DemoRun(base / "sample", base / "home", built, left)


@pytest.fixture(scope="session")
def demo_repository(demo_run_once: DemoRun) -> tuple[Path, Path]:
    """The session's demo repository and the HOME it was built under."""
    return demo_run_once.root, demo_run_once.home


@pytest.fixture(scope="session")
def mined_demo_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's sample repository with the tests' own testCommand (this interpreter), mined
    once per session by the real CLI (3 tasks, no run). Modules copy it (`mined_demo`, and its
    own in tests/test_sandbox.py) and write the gitgauge.yaml they need."""
    from gitgauge.demo import build_demo_repo, demo_test_command

    base = tmp_path_factory.mktemp("mined-demo")
    root = base / "demo"
    with pytest.MonkeyPatch.context() as patch:
        isolate(base / "home", patch)
        build_demo_repo(root)
        (root / "gitgauge.yaml").write_text(
            f"testCommand: {json.dumps(demo_test_command(sys.executable))}\n"
            "timeouts:\n  test: 60000\n  setup: 60000\n",
            encoding="utf-8",
        )
        mined = run_gitgauge("mine", cwd=root)
    assert mined.returncode == 0, mined.stderr
    assert len(list((root / ".gitgauge" / "tasks").glob("*.yaml"))) == 3, mined.stdout
    return root


@pytest.fixture(scope="module")
def mined_demo(mined_demo_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo repository, mined by the real CLI (once per session: this module's own copy of
    it, with the `gitgauge run` tests' gitgauge.yaml; tests copy it again before changing it)."""
    root = tmp_path_factory.mktemp("mined") / "demo"
    shutil.copytree(mined_demo_source, root, symlinks=True)
    write_gitgauge_yaml(root)
    yield root


@pytest.fixture
def demo(mined_demo: Path, tmp_path: Path, private_tmp: Path) -> GitRepo:
    """A copy of the mined demo of this test's own, gitgauge's worktrees in `private_tmp`."""
    root = tmp_path / "demo"
    shutil.copytree(mined_demo, root, symlinks=True)
    return GitRepo(root)


@pytest.fixture(scope="module")
def gen() -> types.ModuleType:
    """docs/gen_reference.py (what writes the generated reference pages), loaded as a module."""
    source = Path(__file__).resolve().parents[1] / "docs" / "gen_reference.py"
    spec = importlib.util.spec_from_file_location("gen_reference", source)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
