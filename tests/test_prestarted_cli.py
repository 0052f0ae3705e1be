"""The suite's prestarted CLI (helpers/prestarted.py) gives what `python -m gitgauge` gives."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import GITGAUGE, start_gitgauge
from helpers.prestarted import Server, kept_at_import
from helpers.repos import GitRepo

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    # A server of the module's own, whether or not GITGAUGE_TEST_EXEC turned the suite's off.
    own = Server()
    yield own
    own.close()


def test_no_gitgauge_module_reads_the_environment_while_it_is_imported() -> None:
    # What a module reads at import, the forked child gets from the server, not from its call.
    spy = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from helpers.prestarted import _reads_of_the_environment\n"
        "import importlib, pkgutil, gitgauge\n"
        "with _reads_of_the_environment() as read:\n"
        "    for found in pkgutil.walk_packages(gitgauge.__path__, 'gitgauge.'):\n"
        "        if found.name != 'gitgauge.__main__':\n"
        "            importlib.import_module(found.name)\n"
        "print(json.dumps({k: sorted(v) for k, v in read.items()}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", spy], capture_output=True, text=True, check=True, timeout=120
    )
    import json

    read = json.loads(result.stdout.splitlines()[-1])
    ours = {module: names for module, names in read.items() if module.startswith("gitgauge")}
    # The one exception: GitPython is told to stay quiet without git, and the variable restored.
    assert ours == {"gitgauge.core.git": ["GIT_PYTHON_REFRESH"]}
    assert "GIT_PYTHON_REFRESH" in kept_at_import({k: set(v) for k, v in read.items()})


@pytest.mark.parametrize(
    "args, extra",
    [
        (["--version"], {}),
        (["report"], {}),  # not a git repository: the one-line error and its exit code
        (["run", "--help"], {"COLUMNS": "60"}),  # the width is the call's, not the server's
        (["init"], {}),
        (["mine", "--last", "0"], {}),
    ],
    ids=["version", "not-a-repository", "help-at-60-columns", "init", "usage-error"],
)
def test_a_forked_run_gives_what_a_started_process_gives(
    server: Server, tmp_path: Path, args: list[str], extra: dict[str, str]
) -> None:
    outcomes = []
    for way in ("forked", "started"):
        where = tmp_path / way
        where.mkdir()
        if args == ["init"]:
            subprocess.run(["git", "init", "-q", str(where)], check=True)
        env = dict(os.environ, **extra)
        if way == "forked":
            done = server.run([*GITGAUGE, *args], args, where, env, timeout=120)
            assert done is not None
        else:
            done = start_gitgauge(*args, cwd=where, env=env, timeout=120)
        written = {
            str(path.relative_to(where)): path.read_text()
            for path in where.rglob("*")
            if path.is_file() and ".git" not in path.relative_to(where).parts
        }
        said = [text.replace(str(where), "<here>") for text in (done.stdout, done.stderr)]
        outcomes.append((done.returncode, *said, written))
    assert outcomes[0] == outcomes[1]


def test_a_call_past_its_timeout_is_killed_with_what_it_started(
    server: Server, git_repo: GitRepo
) -> None:
    marker = "61.37"
    git_repo.commit("start", files={"gitgauge.yaml": f'testCommand: "sleep {marker}"\n'})
    with pytest.raises(subprocess.TimeoutExpired):
        server.run([*GITGAUGE, "doctor"], ["doctor"], git_repo.root, dict(os.environ), timeout=3)

    def sleeping() -> list[str]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                line = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker.encode() in line:
                found.append(entry.name)
        return found

    deadline = time.monotonic() + 20
    while sleeping() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sleeping(), "the killed command's test command is still running"
    # The server takes the next call.
    after = server.run([*GITGAUGE, "--version"], ["--version"], git_repo.root, dict(os.environ), 60)
    assert after is not None and after.returncode == 0


def test_what_only_start_up_reads_sends_the_call_to_a_started_process(
    server: Server, tmp_path: Path
) -> None:
    # PYTHONPATH (a shadowed package) is read by the interpreter as it starts, and a variable a
    # module reads at import is read once, by the server: such a call cannot be forked.
    for extra in ({"PYTHONPATH": str(tmp_path)}, {"TYPER_USE_RICH": "0"}):
        env = dict(os.environ, **extra)
        assert server.run([*GITGAUGE, "--version"], ["--version"], tmp_path, env, 60) is None
    plain = server.run([*GITGAUGE, "--version"], ["--version"], tmp_path, dict(os.environ), 60)
    assert plain is not None and plain.returncode == 0
