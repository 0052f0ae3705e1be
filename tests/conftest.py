"""Shared test set-up: every test runs isolated from the developer's machine.

HOME and git's global config point into tmp_path, the Anthropic key is removed, and commits are
made with pinned names and dates so SHAs are stable. Repositories are built with the git CLI
directly (never with gitgauge's own git module).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prestarted_cli import SERVER

GITGAUGE = [sys.executable, "-m", "gitgauge"]


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


def isolate(home: Path, patch: pytest.MonkeyPatch) -> None:
    """Point HOME and git's global config at `home`, and drop variables that would reach a real
    API or redirect git."""
    home.mkdir(parents=True, exist_ok=True)
    patch.setenv("HOME", str(home))
    patch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "GITGAUGE_CLAUDE_BIN",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
    ):
        patch.delenv(name, raising=False)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = gitgauge tests\n\temail = tests@gitgauge.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        encoding="utf-8",
    )


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


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (dead, not yet reaped by its new parent) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def processes_with(token: str, *, also: str = "") -> list[str]:
    """Running processes whose command line holds `token` (and `also`), as "pid: command line".
    A zombie's command line is empty: a dead process is never found."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():  # /proc/self and /proc/thread-self are the caller again
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # gone
            continue
        # Not the test runner itself (`pytest -k 86399`); a path under pytest's tmp_path counts.
        runner = any("pytest" in word for word in command.split()[:3])
        if token in command and also in command and not runner:
            found.append(f"{entry.name}: {command}")
    return found


def runs_in_order(root: Path) -> list[Path]:
    """`root`'s run directories in the order the runs started, by gitgauge's own ordering
    (`Store.load_runs`): a run id's timestamp has one-second steps, and two runs of one second
    differ by their manifests' start times, not by their ids' random suffixes."""
    from gitgauge.core.store import Store

    def unreadable(message: str) -> None:
        raise AssertionError(f"a run of {root} cannot be read: {message}")

    store = Store(root)
    return [store.runs_dir / run.run_id for run in store.load_runs(warn=unreadable)]


@dataclass
class GitRepo:
    """A real repository built with the git CLI, commits at pinned dates."""

    root: Path
    _tick: int = field(default=0)

    def git(self, *args: str, check: bool = True) -> str:
        result = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def write(self, path: str, text: str | bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")

    def delete(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(
        self,
        subject: str,
        body: str = "",
        files: dict[str, str | bytes | None] | None = None,
    ) -> str:
        """Write (None: delete) `files`, stage everything, commit; return the full sha."""
        for path, content in (files or {}).items():
            if content is None:
                self.delete(path)
            else:
                self.write(path, content)
        self.git("add", "-A")
        self._tick += 1
        stamp = f"2024-01-01T{self._tick // 60:02d}:{self._tick % 60:02d}:00+00:00"
        env = dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        message = f"{subject}\n\n{body}" if body else subject
        subprocess.run(
            ["git", "commit", "-q", "--allow-empty", "--no-verify", "-m", message],
            cwd=self.root,
            env=env,
            check=True,
            capture_output=True,
        )
        return self.git("rev-parse", "HEAD").strip()

    def snapshot(self) -> dict[str, str]:
        """What gitgauge must never change: HEAD, branches, index, tree, stash, worktrees."""
        return {
            "head": self.git("rev-parse", "HEAD", check=False),
            "symbolic": self.git("symbolic-ref", "-q", "HEAD", check=False),
            "branches": self.git("for-each-ref", "refs/heads", "refs/tags"),
            # gitgauge's own state directory is expected to change; nothing else is.
            "status": "".join(
                line
                for line in self.git(
                    "status", "--porcelain", "--untracked-files=all", "--ignored"
                ).splitlines(keepends=True)
                if not line[3:].startswith(".gitgauge/")
            ),
            "index": self.git("ls-files", "-s"),
            "stash": self.git("stash", "list"),
            "worktrees": self.git("worktree", "list", "--porcelain"),
        }


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepo:
    root = tmp_path / "repo"
    root.mkdir()
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
    return repo


def run_gitgauge(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would (`python -m gitgauge ...`), in a process forked from a
    server that has imported gitgauge already (tests/prestarted_cli.py says what that changes)."""
    env = env if env is not None else dict(os.environ)
    if SERVER is not None:
        done = SERVER.run([*GITGAUGE, *args], list(args), cwd, env, timeout)
        if done is not None:
            return done
    return start_gitgauge(*args, cwd=cwd, env=env, timeout=timeout)


def start_gitgauge(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m gitgauge ...` in a process started for it, interpreter start-up and all."""
    return subprocess.run(
        [*GITGAUGE, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


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


@dataclass(frozen=True)
class DemoRun:
    root: Path
    home: Path
    output: subprocess.CompletedProcess[str]
    """What `gitgauge demo` printed (tests/test_demo.py reads it)."""
    temp_left: list[str]
    """gitgauge-* entries left in the run's own temporary directory afterwards."""


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
    once per session by the real CLI (3 tasks, no run). Modules copy it (`mined_demo` in
    tests/test_run.py and tests/test_sandbox.py) and write the gitgauge.yaml they need."""
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
