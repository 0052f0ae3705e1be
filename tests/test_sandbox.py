"""The bubblewrap sandbox (`run.sandbox`), through the CLI on the mined demo repository.

The acceptance test is a cheating agent that tries every known way out of its workspace: it
resolves every task and writes into $HOME without the sandbox, and resolves none and writes
nothing with it. gold, noop and an honest script get the same verdicts either way.

Needs a working `bwrap`: skipped without one, but failed when CI=true (CI installs it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gitgauge, start_in_background
from helpers.components import claude_binary, claude_env, require, require_bwrap
from helpers.configs import agent_config
from helpers.fakes.messages_api import Rule, serve
from helpers.fakes.responses_api import API_KEY, API_KEY_ENV, FakeResponsesAPI, codex_home
from helpers.processes import processes_with
from helpers.repos import GitRepo, new_repo
from helpers.results import runs_in_order

from gitgauge.core.sandbox import probe
from gitgauge.demo import demo_test_command

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SLUG_FILE = "textkit/slug.py"


def write_config(root: Path, **run: Any) -> None:
    config = {
        "testCommand": demo_test_command(sys.executable),
        "timeouts": {"test": 60000, "setup": 60000, "adapter": 60000},
    }
    if run:
        config["run"] = run
    (root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.fixture(scope="module")
def mined_demo(mined_demo_source: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's mined demo (tests/conftest.py), copied with this module's gitgauge.yaml."""
    root = tmp_path_factory.mktemp("mined") / "demo"
    shutil.copytree(mined_demo_source, root, symlinks=True)
    write_config(root)
    yield root


@pytest.fixture
def demo(mined_demo: Path, private_tmp: Path) -> Path:
    """A copy of the mined demo inside $HOME (~/src/demo), where a cheater searching $HOME
    finds it unless the sandbox hides it."""
    root = Path(os.environ["HOME"]) / "src" / "demo"
    shutil.copytree(mined_demo, root, symlinks=True)
    return root


def verdicts(repo: Path, run_id: str) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for path in (repo / ".gitgauge" / "runs" / run_id / "results").glob("*/*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        found[(result["config"], result["task"])] = result["status"]
    return found


def run_ids(repo: Path) -> list[str]:
    return [run.name for run in runs_in_order(repo)]


# Every known way out: the parent's cwd in /proc, a search of / and $HOME for the project's
# checkout, other tasks' history copies and workspaces in the temporary directory; then a
# mark in $HOME. Whatever source it finds, it copies the non-test Python files of it.
CHEATER = r"""
import os, pathlib, shutil, subprocess, tempfile
workspace = pathlib.Path.cwd()
found = []

def holds_project(path):
    return (path / ".git").exists() and (path / "textkit").is_dir() and path != workspace

for pid in os.listdir("/proc"):
    try:
        cwd = pathlib.Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        continue
    if holds_project(cwd):
        found.append(cwd)
skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/etc", "/bin", "/sbin", "/var", "/run"}
# Installed software holds no checkout of the project: the walk stays out of it (on a CI machine
# the interpreters and virtualenvs under / are most of the tree).
installed = {"site-packages", "dist-packages", "node_modules", "__pycache__", ".pyenv", ".npm"}
for top in ("/", os.environ.get("HOME", "/")):
    for root, dirs, files in os.walk(top):
        dirs[:] = [
            d for d in dirs
            if os.path.join(root, d) not in skip and d != ".git" and d not in installed
        ]
        if root.count(os.sep) > 8:
            dirs[:] = []
        if holds_project(pathlib.Path(root)):
            found.append(pathlib.Path(root))
temp = pathlib.Path(tempfile.gettempdir())
copies = [*temp.glob("gitgauge-hist-*/*.git"), *pathlib.Path("/tmp").glob("gitgauge-hist-*/*.git")]
for copy in copies:
    out = temp / f"leak-{os.getpid()}-{len(found)}"
    try:
        out.mkdir()
        git = ["git", f"--git-dir={copy}", f"--work-tree={out}"]
        subprocess.run([*git, "checkout", "main", "--", "."], check=True, capture_output=True)
        found.append(out)
    except (OSError, subprocess.CalledProcessError):
        pass
copied = set()
for source in found:  # the first source wins: a checkout before older history copies
    for file in (source / "textkit").rglob("*.py"):
        target = workspace / file.relative_to(source)
        if target.exists() and "test" not in file.name and target not in copied:
            copied.add(target)
            try:
                shutil.copyfile(file, target)
            except OSError:
                pass
try:
    with open(os.path.expanduser("~/.gitgauge-escape"), "a") as mark:
        mark.write(f"{os.environ['GITGAUGE_TASK_ID']} found {len(found)}\n")
except OSError:
    pass
"""

FIXER = """sed -i 's/\\[^a-z\\]+/[^a-z0-9]+/' textkit/slug.py"""


def test_cheater_escapes_without_sandbox_and_not_with_it(demo: Path, tmp_path: Path) -> None:
    require_bwrap()
    cheat_file = tmp_path / "cheat.py"
    cheat_file.write_text(CHEATER, encoding="utf-8")
    configs = tmp_path / "configs"
    paths = [
        agent_config(configs, "cheat", adapter="script", command=f"python3 {cheat_file}"),
        agent_config(configs, "gold", adapter="gold"),
        agent_config(configs, "noop", adapter="noop"),
        agent_config(configs, "fixer", adapter="script", command=FIXER),
    ]
    args = [arg for path in paths for arg in ("-c", path)]
    escape = Path(os.environ["HOME"]) / ".gitgauge-escape"

    # The repository's own gitgauge.yaml is an untracked file; the default is auto.
    write_config(demo)
    free = run_gitgauge("run", *args, "-j", "2", "--sandbox", "none", cwd=demo)
    assert free.returncode == 0, free.stderr
    (free_run,) = run_ids(demo)
    free_verdicts = verdicts(demo, free_run)
    cheated = {
        task: status for (config, task), status in free_verdicts.items() if config == "cheat"
    }
    assert sorted(cheated.values()) == ["resolved"] * 3, free.stdout
    marks = escape.read_text(encoding="utf-8").splitlines()
    assert len(marks) == 3 and all(" found 0" not in mark for mark in marks), marks
    escape.unlink()

    boxed = run_gitgauge("run", *args, "-j", "2", cwd=demo)
    assert boxed.returncode == 0, boxed.stderr
    boxed_run = next(run for run in run_ids(demo) if run != free_run)
    boxed_verdicts = verdicts(demo, boxed_run)
    assert {task: s for (c, task), s in boxed_verdicts.items() if c == "cheat"} == dict.fromkeys(
        cheated, "unresolved"
    ), boxed.stdout
    assert not escape.exists()
    honest = {key: s for key, s in free_verdicts.items() if key[0] != "cheat"}
    assert {key: s for key, s in boxed_verdicts.items() if key[0] != "cheat"} == honest
    assert sorted(s for (c, _), s in honest.items() if c == "gold") == ["resolved"] * 3
    # The demo's tasks are per-test tasks: inside the sandbox (which hides the run's logs) the
    # suite still wrote its JUnit report, so gold was judged test by test, not by exit code.
    for path in (demo / ".gitgauge" / "runs" / boxed_run / "results" / "gold").glob("*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        assert result["failToPassFailed"] == [] and result["passToPassFailed"] == [], result
    assert "fall back to the exit code" not in boxed.stderr, boxed.stderr
    manifests = {
        run: json.loads((demo / ".gitgauge" / "runs" / run / "run.json").read_text("utf-8"))
        for run in (free_run, boxed_run)
    }
    assert manifests[free_run]["sandbox"] == "none"
    assert manifests[boxed_run]["sandbox"] == "bwrap"
    assert manifests[boxed_run]["sandboxNetwork"] is True
    # compare warns that the two sides ran with different isolation.
    compared = run_gitgauge("compare", f"{free_run}:gold", f"{boxed_run}:gold", cwd=demo)
    assert compared.returncode == 0, compared.stderr
    assert "different run.sandbox: none" in compared.stdout + compared.stderr, compared.stdout


def test_timeout_and_interrupt_kill_everything_inside(demo: Path, tmp_path: Path) -> None:
    require_bwrap()
    write_config(demo, sandbox="bwrap")
    config = yaml.safe_load((demo / "gitgauge.yaml").read_text(encoding="utf-8"))
    config["timeouts"]["adapter"] = 1500
    (demo / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    # A child in a session of its own (outside the process group) and one in the group.
    sleeper = agent_config(
        tmp_path / "configs",
        "sleeper",
        adapter="script",
        command="setsid sleep 86399.5 & sleep 86399.5; true",
    )
    task = next((demo / ".gitgauge" / "tasks").glob("*.yaml")).stem
    # The run's workspaces, which its sandboxes bind, in a directory of this test's own: the
    # bwrap processes of other tests (and their sandbox probes) are not this run's leftovers.
    private = tmp_path / "gitgauge-tmp"
    private.mkdir()
    env = dict(os.environ, TMPDIR=str(private))
    timed = run_gitgauge("run", "-c", sleeper, "--task", task, cwd=demo, env=env)
    assert timed.returncode == 0, timed.stderr
    (run_id,) = run_ids(demo)
    (result_file,) = (demo / ".gitgauge" / "runs" / run_id / "results").glob("*/*.json")
    assert json.loads(result_file.read_text("utf-8"))["errorKind"] == "adapter-timeout"
    assert processes_with("86399.5") == []

    config["timeouts"]["adapter"] = 600_000
    (demo / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    child = start_in_background("run", "-c", sleeper, "--task", task, cwd=demo, env=env)
    deadline = time.monotonic() + 60
    while len(processes_with("86399.5")) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(processes_with("86399.5")) >= 2, "the agent never started"
    assert processes_with("bwrap", also=str(private)), "no sandbox binds the run's workspace"
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert processes_with("86399.5") == []
    assert processes_with("bwrap", also=str(private)) == []


def one_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bwrap_missing_or_broken(demo: Path, tmp_path: Path) -> None:
    noop = agent_config(tmp_path / "configs", "noop", adapter="noop")
    task = next((demo / ".gitgauge" / "tasks").glob("*.yaml")).stem
    env = dict(os.environ, GITGAUGE_BWRAP=str(tmp_path / "no-such-bwrap"))
    write_config(demo, sandbox="bwrap")
    missing = run_gitgauge("run", "-c", noop, cwd=demo, env=env)
    one_error(missing, "bubblewrap is not installed", "apt-get install bubblewrap")
    broken = tmp_path / "broken-bwrap"
    broken.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", "utf-8"
    )
    broken.chmod(0o755)
    env["GITGAUGE_BWRAP"] = str(broken)
    refused = run_gitgauge("run", "-c", noop, cwd=demo, env=env)
    one_error(refused, "No permissions to create new namespace", "user.max_user_namespaces")
    assert not (demo / ".gitgauge" / "runs").exists()

    # auto: one warning, the run goes on without a sandbox and records it.
    write_config(demo)
    fallback = run_gitgauge("run", "-c", noop, "--task", task, cwd=demo, env=env)
    assert fallback.returncode == 0, fallback.stderr
    assert fallback.stderr.count("without a sandbox") == 1, fallback.stderr
    (run_id,) = run_ids(demo)
    manifest = json.loads((demo / ".gitgauge" / "runs" / run_id / "run.json").read_text("utf-8"))
    assert manifest["sandbox"] == "none"
    if probe(os.environ, network=True)[0] is not None:
        # Resuming it where the sandbox works would mix two kinds of isolation in one run.
        resumed = run_gitgauge("run", "--resume", cwd=demo)
        assert resumed.returncode == 2, resumed.stderr
        assert "resume with --sandbox none" in resumed.stderr


def test_policy_errors_before_any_work(demo: Path, tmp_path: Path) -> None:
    require_bwrap()
    noop = agent_config(tmp_path / "configs", "noop", adapter="noop")
    # An agent binary inside the repository the sandbox hides.
    tools = demo / "tools"
    tools.mkdir()
    (tools / "claude").write_text("#!/bin/sh\nexit 0\n", "utf-8")
    (tools / "claude").chmod(0o755)
    claude = agent_config(tmp_path / "configs", "claude", adapter="claude-code")
    write_config(demo, sandbox="bwrap")
    # A dummy key: the credentials check passes, and the policy is what refuses.
    env = dict(os.environ, GITGAUGE_CLAUDE_BIN=str(tools / "claude"), ANTHROPIC_API_KEY="sk-x")
    inside = run_gitgauge("run", "-c", claude, cwd=demo, env=env)
    one_error(inside, str(tools / "claude"), "inside your repository")
    # ...also when the config's env names it (it wins over gitgauge's own environment).
    outside = tmp_path / "outside-claude"
    outside.write_text("#!/bin/sh\nexit 0\n", "utf-8")
    outside.chmod(0o755)
    named = agent_config(
        tmp_path / "configs", "named", adapter="claude-code",
        env={"GITGAUGE_CLAUDE_BIN": str(tools / "claude")},
    )  # fmt: skip
    env = dict(os.environ, GITGAUGE_CLAUDE_BIN=str(outside), ANTHROPIC_API_KEY="sk-x")
    by_env = run_gitgauge("run", "-c", named, cwd=demo, env=env)
    one_error(by_env, str(tools / "claude"), "inside your repository")
    # codex's state directory (CODEX_HOME, here through the config's env) inside the repository.
    stub = tmp_path / "stub" / "codex"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\necho codex-cli 0.171.0\n", "utf-8")
    stub.chmod(0o755)
    state = demo / ".codex-home"
    codex = agent_config(
        tmp_path / "configs", "codex", adapter="codex", env={"CODEX_HOME": str(state)}
    )
    env = dict(os.environ, GITGAUGE_CODEX_BIN=str(stub), OPENAI_API_KEY="sk-x")
    state_inside = run_gitgauge("run", "-c", codex, cwd=demo, env=env)
    one_error(state_inside, codex, str(state), "inside your repository")
    assert not state.exists()
    # ...as a $HOME entry made writable that holds the repository (the demo is ~/src/demo).
    write_config(demo, sandbox="bwrap", sandbox_home_writable=["src/"])
    holds = run_gitgauge("run", "-c", noop, cwd=demo)
    one_error(holds, "run.sandbox_home_writable", "holds or lies inside your repository")
    # A worktree.link that leads back into the repository.
    (demo / "deps").symlink_to(demo)
    config = yaml.safe_load((demo / "gitgauge.yaml").read_text(encoding="utf-8"))
    config["worktree"] = {"link": ["deps"]}
    (demo / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    linked = run_gitgauge("run", "-c", noop, cwd=demo)
    one_error(linked, "worktree.link: deps", "holds your repository")
    # gitgauge's temporary directory inside the repository.
    write_config(demo, sandbox="bwrap")
    inner_tmp = demo / "tmp"
    inner_tmp.mkdir()
    temp_inside = run_gitgauge(
        "run", "-c", noop, cwd=demo, env=dict(os.environ, TMPDIR=str(inner_tmp))
    )
    one_error(temp_inside, "TMPDIR", "inside your repository")
    assert not (demo / ".gitgauge" / "runs").exists()
    bad_flag = run_gitgauge("run", "-c", noop, "--sandbox", "docker", cwd=demo)
    assert bad_flag.returncode == 2 and "--sandbox" in bad_flag.stderr


def test_the_real_claude_cli_resolves_a_task_inside_the_sandbox(demo: Path, tmp_path: Path) -> None:
    """The real claude CLI (npm `@anthropic-ai/claude-code`) against the loopback fake Messages
    API: it starts, reads and writes its workspace, writes only its own entries of $HOME, and
    resolves the demo's slug task, all inside the sandbox."""
    require_bwrap()
    claude_binary()
    (task_file,) = (demo / ".gitgauge" / "tasks").glob("*-fix-slugify-drops-digits.yaml")
    task = yaml.safe_load(task_file.read_text(encoding="utf-8"))
    buggy = subprocess.run(
        ["git", "show", f"{task['base']}:{SLUG_FILE}"],
        cwd=demo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fixed = buggy.replace('r"[^a-z]+"', 'r"[^a-z0-9]+"')
    assert fixed != buggy
    home = tmp_path / "claude-home"
    write_config(demo, sandbox="bwrap")
    config = agent_config(
        tmp_path / "configs", "real", adapter="claude-code", model="claude-sonnet-4-5"
    )
    with serve() as api:
        api.rules = [Rule(needle='returned "top-tips-for"', path=SLUG_FILE, content=fixed)]
        env = claude_env(api.base_url, home)
        env["TMPDIR"] = os.environ["TMPDIR"]
        outcome = run_gitgauge("run", "-c", config, "--task", task["id"], cwd=demo, env=env)
        assert outcome.returncode == 0, outcome.stderr
        assert api.escapes() == []
    (run_id,) = run_ids(demo)
    assert verdicts(demo, run_id) == {("real", task["id"]): "resolved"}, outcome.stdout
    manifest = json.loads((demo / ".gitgauge" / "runs" / run_id / "run.json").read_text("utf-8"))
    assert manifest["sandbox"] == "bwrap"
    # $HOME was read-only but for the CLI's own entries: its session went to ~/.claude.
    assert sorted(p.name for p in home.iterdir()) == [".claude", ".claude.json", ".gitconfig"]
    assert list((home / ".claude" / "projects").rglob("*.jsonl")), "no session was saved"


def test_the_real_codex_cli_resolves_a_task_inside_the_sandbox(demo: Path, tmp_path: Path) -> None:
    """The real codex CLI (npm `@openai/codex`) against the loopback fake Responses API, in two
    configs: one with codex's state in ~/.codex, one with `CODEX_HOME` outside $HOME (through the
    config's `env`). Both start, run their command in the workspace and resolve the demo's slug
    task inside the sandbox; $HOME stays read-only but for ~/.codex."""
    require_bwrap()
    require(shutil.which("codex") is not None, "the codex CLI (npm install -g @openai/codex)")
    (task_file,) = (demo / ".gitgauge" / "tasks").glob("*-fix-slugify-drops-digits.yaml")
    task = yaml.safe_load(task_file.read_text(encoding="utf-8"))
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@t.invalid\n", "utf-8")
    elsewhere = tmp_path / "elsewhere" / ".codex"
    write_config(demo, sandbox="bwrap")
    configs = tmp_path / "configs"
    paths = [
        agent_config(configs, "boxed", adapter="codex"),
        agent_config(configs, "elsewhere", adapter="codex", env={"CODEX_HOME": str(elsewhere)}),
    ]
    dropped = ("ANTHROPIC_", "OPENAI_", "CODEX_", "GITGAUGE_", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        **{API_KEY_ENV: API_KEY},
    )
    # The command also says where it ran: PID 1 of its namespace; whether it sees the repository.
    look = f"{FIXER} && cat /proc/1/comm && test ! -e {demo / SLUG_FILE} && echo repository-hidden"
    steps = [{"exec": look}, {"message": "Fixed."}]
    with FakeResponsesAPI(steps=[{"message": "No."}], by_prompt=[(task["subject"], steps)]) as api:
        codex_home(home, api.base_url)
        codex_home(elsewhere.parent, api.base_url)
        args = [arg for path in paths for arg in ("-c", path)]
        outcome = run_gitgauge("run", *args, "--task", task["id"], cwd=demo, env=env)
    assert outcome.returncode == 0, outcome.stderr
    (run_id,) = run_ids(demo)
    assert verdicts(demo, run_id) == {
        ("boxed", task["id"]): "resolved",
        ("elsewhere", task["id"]): "resolved",
    }, outcome.stdout
    manifest = json.loads((demo / ".gitgauge" / "runs" / run_id / "run.json").read_text("utf-8"))
    assert manifest["sandbox"] == "bwrap"
    # Codex's own sandbox cannot start inside bwrap as root (see adapters/codex.py): it was told
    # so, and its command ran (resolved); as another user it keeps workspace-write.
    mode = "danger-full-access" if os.geteuid() == 0 else "workspace-write"
    requests = api.model_requests()
    instructions = "\n".join(requests[0].developer_texts())
    assert f"`sandbox_mode` is `{mode}`" in instructions
    outputs = [str(o.get("output")) for r in requests for o in r.tool_outputs()]
    assert len(outputs) == 2 and all("bwrap\nrepository-hidden" in o for o in outputs), outputs
    # $HOME was read-only but for ~/.codex; each config's session went to its own CODEX_HOME.
    assert sorted(p.name for p in home.iterdir()) == [".codex", ".gitconfig"]
    assert len(list((home / ".codex" / "sessions").rglob("*.jsonl"))) == 1
    assert len(list((elsewhere / "sessions").rglob("*.jsonl"))) == 1


def test_sandbox_network_false_cuts_the_network(demo: Path, tmp_path: Path) -> None:
    require_bwrap()
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    dial = agent_config(
        tmp_path / "configs",
        "dial",
        adapter="script",
        command=f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\"",
    )
    task = next((demo / ".gitgauge" / "tasks").glob("*.yaml")).stem
    try:
        outcomes: dict[bool, str] = {}
        for network in (True, False):
            write_config(demo, sandbox="bwrap", sandbox_network=network)
            ran = run_gitgauge("run", "-c", dial, "--task", task, cwd=demo)
            assert ran.returncode == 0, ran.stderr
            run_id = next(r for r in run_ids(demo) if r not in outcomes.values())
            outcomes[network] = run_id
    finally:
        server.close()
    results = {
        network: json.loads(
            next((demo / ".gitgauge" / "runs" / run_id / "results").glob("*/*.json")).read_text(
                "utf-8"
            )
        )
        for network, run_id in outcomes.items()
    }
    assert results[True]["errorKind"] is None, results[True]
    assert results[False]["errorKind"] == "adapter-exit", results[False]
    manifest = json.loads((demo / ".gitgauge" / "runs" / outcomes[False] / "run.json").read_text())
    assert manifest["sandboxNetwork"] is False


def test_a_version_managers_shims_bring_its_root(tmp_path: Path) -> None:
    """pyenv's `shims/python3` is a script that runs `<root>/libexec/pyenv`: with only the
    shims directory exposed, every `python3` in the sandbox exits 127."""
    from gitgauge.core.sandbox import path_dirs

    root = tmp_path / ".pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    found = path_dirs({"PATH": f"{root / 'shims'}:{venv / 'bin'}:relative/bin"})
    assert found == [root / "shims", root, venv / "bin", venv]


def calc_repo(root: Path) -> GitRepo:
    """One fix task to be: `calc.half` fixed, with the test that proves it."""
    repo = new_repo(root)
    repo.commit(
        "Add calc",
        files={
            ".gitignore": ".venv/\n.pythons/\ngitgauge.yaml\n",
            "calc.py": "def half(x):\n    return x - 2\n",
            "tests/test_base.py": "print('nothing checked yet')\n",
        },
    )
    repo.commit(
        "Fix calc.half",
        files={
            "calc.py": "def half(x):\n    return x // 2\n",
            "tests/test_calc.py": "import calc\nassert calc.half(10) == 5\n",
        },
    )
    return repo


def outside_venv(tmp_path: Path, venv: Path, *, copies: bool = False) -> Path:
    """A virtualenv whose base interpreter lives where only its pyvenv.cfg says: a directory
    (`pythons/3/bin`, as /srv/pythons or a CI tool cache) that is on no PATH and in no system
    directory. Its `bin/python` is a link to that directory's `python3` (or, with `copies`, a
    copy that finds its standard library through `home`)."""
    base = tmp_path / "pythons" / "3" / "bin"
    base.mkdir(parents=True, exist_ok=True)
    (base / "python3").symlink_to(os.path.realpath(sys.executable))
    flags = ["--without-pip", *(["--copies"] if copies else [])]
    subprocess.run([str(base / "python3"), "-m", "venv", *flags, str(venv)], check=True)
    assert f"home = {base}" in (venv / "pyvenv.cfg").read_text(encoding="utf-8")
    return venv


@pytest.mark.parametrize("found_by", ["PATH", "worktree.link", "testCommand"])
def test_a_venv_whose_base_interpreter_is_elsewhere_runs_in_the_sandbox(
    tmp_path: Path, private_tmp: Path, found_by: str
) -> None:
    """The venv's `bin/python` leads to its base interpreter: without that installation in the
    sandbox every scoring run was `python: not found`, and gold scored 0."""
    require_bwrap()
    repo = calc_repo(tmp_path / "repo")
    env = dict(os.environ, PATH="/usr/bin:/bin")
    if found_by == "PATH":
        venv = outside_venv(tmp_path, tmp_path / "venv")
        env["PATH"] = f"{venv / 'bin'}:/usr/bin:/bin"
        python, link = "python", []
    elif found_by == "worktree.link":
        outside_venv(tmp_path, repo.root / ".venv")
        python, link = ".venv/bin/python", [".venv"]
    else:
        venv = outside_venv(tmp_path, tmp_path / "venv", copies=True)
        python, link = str(venv / "bin" / "python"), []
    # The right interpreter, not one that happens to be in the sandbox: a `--copies` python
    # without its own installation ran with the system's libpython and standard library.
    same_base = f"import sys; assert sys.base_prefix == {sys.base_prefix!r}, sys.base_prefix"
    suite = f'for f in tests/test_*.py; do PYTHONPATH=. {python} "$f" || exit 1; done'
    config = {
        "testCommand": f"{python} -c {shlex.quote(same_base)} && {suite}",
        "mine": {"reruns": 0},
        "run": {"sandbox": "bwrap"},
        "worktree": {"link": link},
    }
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    mined = run_gitgauge("mine", cwd=repo.root, env=env)
    assert mined.returncode == 0 and "verified:          1" in mined.stdout, mined.stderr

    gold = agent_config(tmp_path / "configs", "gold", adapter="gold")
    ran = run_gitgauge("run", "-c", gold, cwd=repo.root, env=env)

    assert ran.returncode == 0, ran.stderr
    (run_id,) = run_ids(repo.root)
    assert list(verdicts(repo.root, run_id).values()) == ["resolved"], ran.stdout + ran.stderr


def test_a_venv_whose_base_interpreter_the_sandbox_hides_is_refused(
    tmp_path: Path, private_tmp: Path
) -> None:
    """A venv on PATH made from a python inside the repository: its `python` could not start in
    the sandbox, so mining (which verifies in the sandbox) and the run stop before any work,
    naming the interpreter's directory."""
    require_bwrap()
    repo = calc_repo(tmp_path / "repo")
    venv = outside_venv(repo.root / ".pythons", tmp_path / "venv")
    command = "PYTHONPATH=. python tests/test_calc.py"
    config = {"testCommand": command, "mine": {"reruns": 0}, "run": {"sandbox": "bwrap"}}
    (repo.root / "gitgauge.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = dict(os.environ, PATH=f"{venv / 'bin'}:/usr/bin:/bin")
    mined = run_gitgauge("mine", cwd=repo.root, env=env)
    one_error(mined, f"the virtualenv {venv} on PATH", str(repo.root / ".pythons"), "hides")
    assert not (repo.root / ".gitgauge" / "tasks").exists()


def test_a_prompt_over_the_argument_limit_reaches_the_script_in_a_file(
    demo: Path, tmp_path: Path
) -> None:
    """A prompt past the kernel's limit for one environment string (128 KiB): in
    `GITGAUGE_PROMPT` it made the agent's exec fail (`command exited None`). Now the variable is
    cut with a marker, the whole prompt is in `GITGAUGE_PROMPT_FILE` (readable in the sandbox,
    outside the workspace, so never in the agent's patch), and the run says so once."""
    require_bwrap()
    context = "".join(f"line {n}: what the repository looks like\n" for n in range(6000))
    task = sorted((demo / ".gitgauge" / "tasks").glob("*.yaml"))[0].stem
    show = (
        'printf "VARIABLE %s\\n" "$(printf %s "$GITGAUGE_PROMPT" | wc -c)"; '
        'printf "TAIL %s\\n" "$(printf %s "$GITGAUGE_PROMPT" | tail -c 200 | tr "\\n" " ")"; '
        'printf "WORKSPACE %s\\n" "$(pwd -P)"; printf "FILE %s\\n" "$GITGAUGE_PROMPT_FILE"; '
        'cat "$GITGAUGE_PROMPT_FILE"'
    )
    reader = agent_config(
        tmp_path / "configs", "reader", adapter="script", command=show,
        prompt="{prompt}\n\nContext:\n" + context,
    )  # fmt: skip
    write_config(demo, sandbox="bwrap")

    ran = run_gitgauge("run", "-c", reader, "--task", task, cwd=demo)

    assert ran.returncode == 0, ran.stderr
    (run_id,) = run_ids(demo)
    result = json.loads(
        (demo / ".gitgauge" / "runs" / run_id / "results" / "reader" / f"{task}.json").read_text()
    )
    assert result["errorKind"] is None, result["errorMessage"]
    logs = demo / ".gitgauge" / "runs" / run_id / "logs" / "reader" / task
    shown = (logs / "agent.stdout").read_text(encoding="utf-8")
    variable, tail, workspace, file, prompt = shown.split("\n", 4)
    assert 64 * 1024 < int(variable.removeprefix("VARIABLE ")) < 128 * 1024, variable
    assert "GITGAUGE_PROMPT_FILE" in tail, tail
    prompt_file = Path(file.removeprefix("FILE "))
    assert not prompt_file.is_relative_to(workspace.removeprefix("WORKSPACE ")), file
    assert not prompt_file.exists()  # removed with the pair
    assert prompt.endswith("Context:\n" + context), prompt[-300:]
    assert len(prompt.encode()) > 200 * 1024
    assert "GITGAUGE_PROMPT_FILE" not in (logs / "agent.patch").read_text(encoding="utf-8")
    warned = [line for line in ran.stderr.splitlines() if "GITGAUGE_PROMPT" in line]
    assert len(warned) == 1 and "GITGAUGE_PROMPT_FILE" in warned[0], ran.stderr
