"""The codex adapter against the REAL Codex CLI (npm `@openai/codex`), pointed at a loopback fake
of the OpenAI Responses API (helpers/fakes/responses_api.py): argv, stdin, working directory, the
edit it makes through its command tool, the tokens of its `--json` events, pricing, failures, an
agent config's harness (`prompt:` template, an `AGENTS.md` in `files`, `env`) reaching what codex
sends, and gold / noop / codex side by side on the demo repository through the CLI. (Codex inside
the bubblewrap sandbox: tests/test_sandbox.py.)

Without codex on PATH these tests skip; with CI=true they fail instead (.ci/run installs it).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from helpers.adapters import context_for
from helpers.cli import run_gitgauge
from helpers.components import require
from helpers.environment import isolate
from helpers.fakes.claude import envelope_fixture, fake_claude_env
from helpers.fakes.responses_api import FakeResponsesAPI, Request, codex_env, codex_home
from helpers.processes import processes_with
from helpers.repos import GitRepo

from gitgauge.core.errors import AdapterError
from gitgauge.core.schema import AgentConfig, Pricing
from gitgauge.running.adapters.base import Adapter, AdapterOutcome, create
from gitgauge.running.adapters.codex import (
    BASE_ARGS,
    codex_argv,
    home_exposure,
    parse_version,
    sandbox_mode_for,
)
from gitgauge.running.adapters.codex_events import parse_events

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

REAL_CODEX = shutil.which("codex")
F = TypeVar("F", bound=Callable[..., object])
_codex_missing = pytest.mark.skipif(
    REAL_CODEX is None and os.environ.get("CI") != "true",
    reason="the codex CLI is not installed (npm install -g @openai/codex); CI=true fails instead",
)


def needs_codex(test: F) -> F:
    """A test of the real codex CLI: skipped without it (failed with CI=true), and slow."""
    # A MarkDecorator returns what it marks; mypy makes it Any (F's `...` fits both overloads).
    marked: F = pytest.mark.slow(_codex_missing(test))
    return marked


PROMPT = "Fix the following bug:\n\nfix: divide crashes on zero\n\n--model o3 $(touch pwned)\n"
CALC = "def divide(a, b):\n    return a / b\n"
FIXED_CALC = "def divide(a, b):\n    return a / b if b else 0\n"
WRITE_FIX = "printf 'def divide(a, b):\\n    return a / b if b else 0\\n' > src/calc.py"
# A wrapper that records what gitgauge gave codex, then runs the real codex with it.
RECORDER = """#!/bin/sh
printf '%s\\0' "$@" > "$RECORD_DIR/argv"
pwd > "$RECORD_DIR/cwd"
cat > "$RECORD_DIR/stdin"
exec "$REAL_CODEX" "$@" < "$RECORD_DIR/stdin"
"""


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def codex_adapter(
    *, model: str | None = None, args: list[str] | None = None, pricing: Pricing | None = None
) -> Adapter:
    config = AgentConfig(
        name="codex", adapter="codex", model=model, args=args or [], pricing=pricing
    )
    return create(config, source="codex.yaml")


@pytest.fixture
def workspace(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("add calc", files={"src/calc.py": CALC})
    return git_repo


def run_codex(
    tmp_path: Path,
    workspace: GitRepo,
    fake: FakeResponsesAPI,
    *,
    adapter: Adapter | None = None,
    timeout_seconds: float = 120.0,
) -> tuple[AdapterOutcome, Path]:
    """Run the adapter with the real codex behind the recording wrapper; returns the records."""
    assert REAL_CODEX is not None, "codex is not installed"
    codex_home(Path(os.environ["HOME"]), fake.base_url)
    records = tmp_path / "records"
    records.mkdir(exist_ok=True)
    wrapper = executable(tmp_path / "codex-wrapper", RECORDER)
    env = {
        **codex_env(tmp_path),
        "GITGAUGE_CODEX_BIN": str(wrapper),
        "RECORD_DIR": str(records),
        "REAL_CODEX": REAL_CODEX,
    }
    context = context_for(workspace, env, prompt=PROMPT, timeout_seconds=timeout_seconds)
    return (adapter or codex_adapter()).run(context), records


# -- the real CLI --------------------------------------------------------------------------------


@needs_codex
def test_real_codex_edits_the_workspace_and_reports_tokens(
    tmp_path: Path, workspace: GitRepo
) -> None:
    steps = [{"exec": WRITE_FIX}, {"message": "Fixed divide."}]
    pricing = Pricing(input=1.25, cachedInput=0.125, output=10.0)
    with FakeResponsesAPI(steps=steps) as fake:
        outcome, records = run_codex(
            tmp_path, workspace, fake, adapter=codex_adapter(pricing=pricing)
        )

    assert outcome.ok, outcome.error_message
    argv = (records / "argv").read_text().split("\0")[:-1]
    assert argv == [*BASE_ARGS, "-"]
    assert (records / "stdin").read_text() == PROMPT
    assert Path((records / "cwd").read_text().strip()).resolve() == workspace.root.resolve()
    assert (workspace.root / "src/calc.py").read_text() == FIXED_CALC
    assert not (workspace.root / "pwned").exists()
    # The prompt reached the model as the user's message; two model requests, nothing else.
    requests = fake.model_requests()
    assert len(requests) == 2
    assert all(r.path == "/v1/responses" and r.body["stream"] is True for r in requests)
    assert PROMPT.strip() in "\n".join(requests[0].user_texts())
    assert requests[0].headers["authorization"] == "Bearer sk-gitgauge-test"
    assert [r.path for r in fake.requests] == ["/v1/responses", "/v1/responses"]
    # Usage summed over the two responses of the turn; turns: one command, one message.
    assert (outcome.usage.input_tokens, outcome.usage.cache_read_input_tokens) == (2000, 800)
    assert (outcome.usage.output_tokens, outcome.usage.reasoning_output_tokens) == (400, 100)
    assert outcome.usage.num_turns == 2
    expected = (1200 * 1.25 + 800 * 0.125 + 400 * 10.0) / 1_000_000
    assert outcome.usage.cost_usd == pytest.approx(expected)
    events = (workspace.root.parent / "logs" / "agent.stdout").read_text().splitlines()
    assert json.loads(events[-1])["type"] == "turn.completed"


@needs_codex
def test_model_and_args_come_before_the_stdin_dash(tmp_path: Path, workspace: GitRepo) -> None:
    adapter = codex_adapter(model="gpt-fake-2", args=["-c", "model_reasoning_effort=low"])
    # An event type codex does not know, in the stream: skipped by codex, usage still counted.
    unknown = [{"type": "response.gitgauge_unknown", "usage": {"input_tokens": 5}}]
    with FakeResponsesAPI(steps=[{"message": "Nothing to do."}], extra_events=unknown) as fake:
        outcome, records = run_codex(tmp_path, workspace, fake, adapter=adapter)

    assert outcome.ok, outcome.error_message
    argv = (records / "argv").read_text().split("\0")[:-1]
    assert argv == [*BASE_ARGS, "--model", "gpt-fake-2", "-c", "model_reasoning_effort=low", "-"]
    assert fake.model_requests()[0].body["model"] == "gpt-fake-2"
    assert outcome.usage.cost_usd is None  # no pricing: tokens only
    assert (outcome.usage.input_tokens, outcome.usage.num_turns) == (1000, 1)


@needs_codex
def test_an_api_error_is_an_error_outcome_with_its_reason(
    tmp_path: Path, workspace: GitRepo
) -> None:
    with FakeResponsesAPI(steps=[{"status": 400}]) as fake:
        outcome, _ = run_codex(tmp_path, workspace, fake)

    assert outcome.error_kind in ("adapter-exit", "adapter-output")
    assert outcome.error_message is not None
    assert "scripted failure" in outcome.error_message
    assert (workspace.root / "src/calc.py").read_text() == CALC


@needs_codex
def test_timeout_kills_codex_and_its_commands(tmp_path: Path, workspace: GitRepo) -> None:
    steps = [{"exec": "echo $$ > sleeper.pid; sleep 60.4217"}, {"message": "done"}]
    with FakeResponsesAPI(steps=steps) as fake:
        outcome, _ = run_codex(tmp_path, workspace, fake, timeout_seconds=8)

    assert outcome.error_kind == "adapter-timeout"
    assert outcome.error_message is not None and "killed after 8s" in outcome.error_message
    # The command codex ran died with it. Codex runs it in a PID namespace of its own (the pid it
    # wrote is 2), so it is found by its command line.
    assert (workspace.root / "sleeper.pid").exists()
    deadline = time.monotonic() + 5
    while processes_with("sleep 60.4217") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with("sleep 60.4217") == []


STRACE = shutil.which("strace")
TRACER = """#!/bin/sh
exec "$STRACE" -f -qq -e trace=connect -o "$TRACE_FILE" "$REAL_CODEX" "$@"
"""


def strace_works() -> bool:
    import subprocess

    return (
        STRACE is not None
        and subprocess.run(
            [STRACE, "-o", os.devnull, "true"], capture_output=True, check=False
        ).returncode
        == 0
    )


@needs_codex
def test_codex_connects_to_nothing_but_the_loopback_fake(
    tmp_path: Path, workspace: GitRepo
) -> None:
    """The config of fake_responses_api.codex_home keeps codex off the network (analytics,
    metrics, update checks, plugin syncs): every socket it opens is a loopback one."""
    require(STRACE is not None, "strace (apt-get install strace)")
    # A container that forbids ptrace hides the check as surely as a missing strace.
    require(strace_works(), "an strace that may trace (ptrace permitted in this container)")
    assert REAL_CODEX is not None and STRACE is not None
    trace = tmp_path / "connect.trace"
    tracer = executable(tmp_path / "codex-traced", TRACER)
    with FakeResponsesAPI(steps=[{"exec": WRITE_FIX}, {"message": "Fixed."}]) as fake:
        codex_home(Path(os.environ["HOME"]), fake.base_url)
        env = {
            **codex_env(tmp_path),
            "GITGAUGE_CODEX_BIN": str(tracer),
            "STRACE": STRACE,
            "TRACE_FILE": str(trace),
            "REAL_CODEX": REAL_CODEX,
        }
        outcome = codex_adapter().run(context_for(workspace, env, prompt=PROMPT))

    assert outcome.ok, outcome.error_message
    inet = [line for line in trace.read_text().splitlines() if "AF_INET" in line]
    assert inet, "no connect() traced: is the trace empty?"
    outside = [line for line in inet if 'inet_addr("127.0.0.1")' not in line and "::1" not in line]
    assert outside == []


# -- what needs no codex -------------------------------------------------------------------------


def test_argv_puts_the_prompt_on_stdin_never_in_argv() -> None:
    argv = codex_argv("/bin/codex", model="o3", args=["--sandbox", "danger-full-access"])
    assert argv == [
        "/bin/codex", *BASE_ARGS, "--model", "o3", "--sandbox", "danger-full-access", "-"
    ]  # fmt: skip
    # A config that passes --skip-git-repo-check itself: codex refuses the flag twice.
    argv = codex_argv("codex", model=None, args=["--skip-git-repo-check"])
    assert argv.count("--skip-git-repo-check") == 1


EVENTS = "\n".join(
    [
        "WARNING: proceeding, even though we could not create PATH aliases",
        '{"type":"thread.started","thread_id":"t"}',
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"0","type":"error","message":"metadata"}}',
        '{"type":"error","message":"Reconnecting... 1/5"}',
        '{"type":"item.completed","item":{"id":"1","type":"command_execution","exit_code":0}}',
        '{"type":"item.completed","item":{"id":"2","type":"reasoning","text":"hm"}}',
        '{"type":"turn.brand_new_event","usage":{"input_tokens":999999}}',
        "{not json",
        '{"type":"item.completed","item":{"id":"3","type":"agent_message","text":"Done."}}',
        '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,'
        '"cache_write_input_tokens":0,"output_tokens":3,"reasoning_output_tokens":1}}',
        '{"type":"turn.completed","usage":{"input_tokens":15,"cached_input_tokens":8,'
        '"output_tokens":5}}',
    ]
)


def test_unknown_events_are_ignored_and_the_last_running_total_is_kept() -> None:
    parsed = parse_events(EVENTS)

    # turn.completed carries the thread's running total: the last one is the run's.
    assert parsed.completed_turns == 2 and parsed.failure is None
    assert (parsed.input_tokens, parsed.cached_input_tokens) == (15, 8)
    assert (parsed.output_tokens, parsed.reasoning_output_tokens) == (5, None)
    assert parsed.steps == 2
    assert parsed.last_message == "Done."


def test_a_usage_number_of_the_wrong_type_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"usage.output_tokens: expected a whole number"):
        parse_events('{"type":"turn.completed","usage":{"output_tokens":"3"}}')


@pytest.mark.parametrize("value", ["-3", "1000000000001"])
def test_a_usage_number_no_run_could_have_names_the_field(value: str) -> None:
    # A negative or absurd count would poison every average of the report.
    with pytest.raises(ValueError, match=rf"usage.input_tokens: expected 0 to .*, got {value}"):
        parse_events(f'{{"type":"turn.completed","usage":{{"input_tokens":{value}}}}}')


def test_turn_failed_is_kept() -> None:
    parsed = parse_events('{"type":"turn.failed","error":{"message":"quota exceeded"}}')
    assert (parsed.completed_turns, parsed.failure) == (0, "quota exceeded")


def test_pricing_counts_cached_input_at_its_own_price() -> None:
    pricing = Pricing(input=2, output=8)  # cachedInput defaults to the input price
    assert pricing.cost_usd(
        input_tokens=1_000_000, cached_input_tokens=500_000, output_tokens=1_000_000
    ) == pytest.approx(10.0)
    assert Pricing(input=2, cachedInput=0.5, output=8).cost_usd(
        input_tokens=1_000_000, cached_input_tokens=500_000, output_tokens=0
    ) == pytest.approx(1.25)


@pytest.mark.parametrize(
    ("text", "version"),
    [("codex-cli 0.171.0\n", (0, 171, 0)), ("codex 1.2.3-beta", (1, 2, 3)), ("nope", None)],
)
def test_version_parsing(text: str, version: tuple[int, int, int] | None) -> None:
    assert parse_version(text) == version


def test_missing_codex_is_an_error_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AdapterError, match=r"codex.yaml: adapter codex: the codex CLI was not fo"):
        codex_adapter().check()
    monkeypatch.setenv("GITGAUGE_CODEX_BIN", str(tmp_path / "nowhere"))
    with pytest.raises(AdapterError, match=r"GITGAUGE_CODEX_BIN=.*nowhere: no such file"):
        codex_adapter().check()


def test_too_old_codex_is_an_error_naming_both_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = executable(tmp_path / "codex", "#!/bin/sh\necho 'codex-cli 0.1.9'\n")
    monkeypatch.setenv("GITGAUGE_CODEX_BIN", str(old))
    with pytest.raises(AdapterError, match=r"codex 0.1.9 is too old: gitgauge needs 0.50.0"):
        codex_adapter().check()
    broken = executable(tmp_path / "codex", "#!/bin/sh\nexit 3\n")
    monkeypatch.setenv("GITGAUGE_CODEX_BIN", str(broken))
    with pytest.raises(AdapterError, match=r"--version` failed \(exited 3\)"):
        codex_adapter().check()


def test_pricing_is_validated_in_the_agent_config(tmp_path: Path) -> None:
    from gitgauge.core.config import load_agent_config

    path = tmp_path / "codex.yaml"
    path.write_text("name: c\nadapter: codex\npricing:\n  input: 1\n  outptu: 2\n", "utf-8")
    with pytest.raises(Exception, match=r"outptu"):
        load_agent_config(path)


# -- gold, noop and codex side by side on the demo, through the CLI ------------------------------


@pytest.fixture
def demo(demo_repository: tuple[Path, Path]) -> tuple[Path, Path]:
    """The demo repository, built and mined once per session (conftest.py)."""
    return demo_repository


def fix_command(root: Path, task: dict[str, str]) -> str:
    """A shell command writing the fix's non-test files, as the scripted model's tool call."""
    names = run_git(root, "diff", "--name-only", task["base"], task["fix"]).split()
    writes = []
    for name in names:
        if "test" in name:
            continue
        content = run_git(root, "show", f"{task['fix']}:{name}").encode()
        encoded = base64.b64encode(content).decode()
        writes.append(f"printf %s {encoded} | base64 -d > {name}")
    return " && ".join(writes)


def run_git(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


@needs_codex
def test_codex_and_claude_side_by_side_with_gold_and_noop_on_the_demo(
    demo: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = demo
    isolate(home, monkeypatch)
    files = sorted((root / ".gitgauge/tasks").glob("*.yaml"))
    tasks = [yaml.safe_load(path.read_text()) for path in files]
    assert len(tasks) == 3
    # The scripted model fixes the first two tasks and gives up on the third.
    scripts = [
        (task["subject"], [{"exec": fix_command(root, task)}, {"message": "Fixed."}])
        for task in tasks[:2]
    ]
    # The demo ran gold and noop already; the report puts each config's latest run side by side.
    configs = {
        "codex": "adapter: codex\npricing:\n  input: 1.25\n  cachedInput: 0.125\n  output: 10\n",
        "codex-unpriced": "adapter: codex\n",
        "claude": "adapter: claude-code\n",  # the fake claude: changes nothing, reports a cost
    }
    for name, body in configs.items():
        (tmp_path / f"{name}.yaml").write_text(f"name: {name}\n{body}", "utf-8")
    with FakeResponsesAPI(steps=[{"message": "I cannot fix this."}], by_prompt=scripts) as fake:
        codex_home(home, fake.base_url)
        env = {**os.environ, **codex_env(tmp_path), **fake_claude_env(tmp_path, {})}
        # Unsandboxed: the fake claude reads its scenario from tmp_path, which the sandbox hides
        # (codex in the sandbox: tests/test_sandbox.py).
        ran = run_gitgauge(
            "run", "-c", str(tmp_path / "codex.yaml"), "-c", str(tmp_path / "claude.yaml"),
            "--sandbox", "none", cwd=root, env=env,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        # Unpriced, on one task only (it is here for the report's footnote).
        ran = run_gitgauge(
            "run", "-c", str(tmp_path / "codex-unpriced.yaml"), "--task", tasks[0]["id"],
            "--sandbox", "none", cwd=root, env=env,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr

    report = run_gitgauge("report", "--format", "json", cwd=root, env=env)
    rows = {row["config"]: row for row in json.loads(report.stdout)}
    # (The demo's own run also holds its scripted agent with and without a CLAUDE.md.)
    ours = ("gold", "noop", "codex", "codex-unpriced", "claude")
    assert {name: (rows[name]["resolved"], rows[name]["errors"]) for name in ours} == {
        "gold": (3, 0),
        "noop": (0, 0),
        "codex": (2, 0),
        "codex-unpriced": (1, 0),
        "claude": (0, 0),
    }
    runs = sorted((root / ".gitgauge/runs").iterdir(), reverse=True)
    run_dir = next(run for run in runs if (run / "results/codex").is_dir())
    results = [json.loads(p.read_text()) for p in (run_dir / "results/codex").glob("*.json")]
    tokens = sorted(
        (r["inputTokens"], r["cacheReadInputTokens"], r["outputTokens"]) for r in results
    )
    assert tokens == [(1000, 400, 200), (2000, 800, 400), (2000, 800, 400)]
    assert sorted(r["reasoningOutputTokens"] for r in results) == [50, 100, 100]
    # Each pair's --json events are its transcript, and what codex did is counted from them:
    # one command for each fixed task, none for the one it gave up on; codex reads files
    # through commands, so no read count.
    for r in results:
        transcript = run_dir / "logs" / "codex" / r["task"] / "transcript.jsonl"
        kinds = [json.loads(line)["type"] for line in transcript.read_text("utf-8").splitlines()]
        assert "turn.completed" in kinds, kinds
        assert (r["behaviour"]["source"], r["behaviour"]["filesRead"]) == ("codex", None)
    assert sorted(r["behaviour"]["shellCommands"] for r in results) == [0, 1, 1]
    assert rows["codex"]["avgCostUsd"] == pytest.approx(
        sum((i - c) * 1.25 + c * 0.125 + o * 10 for i, c, o in tokens) / 3 / 1_000_000
    )
    assert rows["claude"]["avgCostUsd"] == pytest.approx(envelope_fixture()["total_cost_usd"])
    assert rows["codex-unpriced"]["avgCostUsd"] is None and rows["gold"]["avgCostUsd"] is None
    # The table says why AVG COST is empty for the unpriced codex, and only for it.
    table = run_gitgauge("report", cwd=root, env=env).stdout
    footnote = " ".join(table.split())
    assert "AVG COST is - for codex-unpriced: its agent reports tokens but no cost" in footnote
    assert "pricing:" in footnote and "for gold" not in footnote


# -- the harness: a prompt: template, an AGENTS.md overlay and env, through the CLI ---------------

TEMPLATE = "Team rule TEMPLATE-MARK applies.\n\n{prompt}\n\nTask {taskId}; tests: {testFiles}."
AGENTS_MD = "AGENTS-MARK: slugs keep their digits.\n"
HARNESS_KEY = "sk-from-the-harness-env"


@dataclass(frozen=True)
class HarnessRun:
    root: Path
    run_dir: Path
    task: dict[str, Any]
    """The slug task's record (its YAML)."""
    requests: dict[str, list[Request]]
    """The model requests of each config, told apart by the API key codex sent."""


def codex_run_env(home: Path, tmp: Path) -> dict[str, str]:
    """gitgauge's environment for a real codex run: HOME at `home` (with a git identity), nothing
    that reaches a real API, redirects git or picks another codex."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = gitgauge tests\n\temail = tests@gitgauge.invalid\n", "utf-8"
    )
    dropped = ("ANTHROPIC_", "OPENAI_", "CODEX_", "GITGAUGE_", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    return {**env, **codex_env(tmp)}


@pytest.fixture(scope="module")
def harness_run(
    demo_repository: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HarnessRun]:
    """One `gitgauge run` of two codex configs on the demo's slug task: `plain`, and `harnessed`
    (a prompt template, an AGENTS.md overlay, the API key through `env`). The scripted model
    fixes the task only when it sees both the template's and AGENTS.md's text, and also scribbles
    into AGENTS.md."""
    assert REAL_CODEX is not None, "codex is not installed (npm install -g @openai/codex)"
    base = tmp_path_factory.mktemp("codex-harness")
    root = base / "demo"
    shutil.copytree(demo_repository[0], root, symlinks=True)
    (task_file,) = (root / ".gitgauge/tasks").glob("*-fix-slugify-drops-digits.yaml")
    task = yaml.safe_load(task_file.read_text(encoding="utf-8"))
    configs = base / "configs"
    configs.mkdir()
    (configs / "agents.md").write_text(AGENTS_MD, encoding="utf-8")
    (configs / "plain.yaml").write_text("name: plain\nadapter: codex\n", "utf-8")
    harnessed = {
        "name": "harnessed",
        "adapter": "codex",
        "prompt": TEMPLATE,
        "files": {"AGENTS.md": "agents.md"},
        "env": {"GITGAUGE_TEST_OPENAI_KEY": "${HARNESS_KEY}"},
    }
    (configs / "harnessed.yaml").write_text(yaml.safe_dump(harnessed), "utf-8")
    fix = fix_command(root, task) + " && echo scribbled >> AGENTS.md"
    scripts = [(("TEMPLATE-MARK", "AGENTS-MARK"), [{"exec": fix}, {"message": "Fixed."}])]
    env = {**codex_run_env(base / "home", base), "HARNESS_KEY": HARNESS_KEY}
    with FakeResponsesAPI(steps=[{"message": "I cannot fix this."}], by_prompt=scripts) as fake:
        codex_home(base / "home", fake.base_url)
        ran = run_gitgauge(
            "run", "-c", str(configs / "plain.yaml"), "-c", str(configs / "harnessed.yaml"),
            "--task", task["id"], "--sandbox", "none", cwd=root, env=env,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    # The demo's own gold and noop run is there too.
    (run_dir,) = [r for r in (root / ".gitgauge/runs").iterdir() if (r / "results/plain").is_dir()]
    by_key: dict[str, list[Request]] = {"plain": [], "harnessed": []}
    for request in fake.model_requests():
        key = request.headers["authorization"]
        by_key["harnessed" if key == f"Bearer {HARNESS_KEY}" else "plain"].append(request)
    yield HarnessRun(root, run_dir, task, by_key)


def result_of(run: HarnessRun, config: str) -> dict[str, object]:
    (path,) = (run.run_dir / "results" / config).glob("*.json")
    result: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return result


@needs_codex
def test_the_rendered_prompt_and_agents_md_reach_codex_and_decide(harness_run: HarnessRun) -> None:
    task = harness_run.task
    rendered = TEMPLATE.format(
        prompt=task["prompt"], taskId=task["id"], testFiles=", ".join(task["testFiles"])
    )
    harnessed = "\n".join(harness_run.requests["harnessed"][0].user_texts())
    plain = "\n".join(harness_run.requests["plain"][0].user_texts())
    # On stdin: the template applied (codex sends it as the last user message), not the bare
    # prompt; AGENTS.md as codex's own project instructions. The plain config got neither.
    assert rendered.strip() in harnessed
    assert AGENTS_MD.strip() in harnessed
    assert str(task["prompt"]).strip() in plain
    assert "TEMPLATE-MARK" not in plain and "AGENTS-MARK" not in plain
    assert result_of(harness_run, "harnessed")["status"] == "resolved"
    assert result_of(harness_run, "plain")["status"] == "unresolved"


@needs_codex
def test_the_harness_env_reaches_codex(harness_run: HarnessRun) -> None:
    # The key in the harnessed config's env (`${HARNESS_KEY}`) is the one codex sent; the plain
    # config's requests carry the key of gitgauge's own environment.
    assert len(harness_run.requests["harnessed"]) == 2
    assert len(harness_run.requests["plain"]) == 1
    key = harness_run.requests["plain"][0].headers["authorization"]
    assert key == "Bearer sk-gitgauge-test"


@needs_codex
def test_the_agents_md_overlay_is_not_in_the_diff(harness_run: HarnessRun) -> None:
    result = result_of(harness_run, "harnessed")
    assert result["diffFiles"] == 1, result
    logs = harness_run.run_dir / "logs" / "harnessed"
    (patch,) = logs.rglob("agent.patch")
    text = patch.read_text(encoding="utf-8")
    assert "textkit/slug.py" in text and "AGENTS.md" not in text and "scribbled" not in text
    assert not (harness_run.root / "AGENTS.md").exists()


# -- the codex adapter's choices, without codex ---------------------------------------------------


@pytest.mark.parametrize(
    ("sandboxed", "euid", "mode"),
    [
        (False, 0, "workspace-write"),
        (False, 1000, "workspace-write"),
        (True, 1000, "workspace-write"),
        # Codex's nested bubblewrap cannot map uid 0 without CAP_SETFCAP, which bwrap dropped.
        (True, 0, "danger-full-access"),
    ],
)
def test_codex_keeps_its_own_sandbox_unless_it_cannot_start(
    sandboxed: bool, euid: int, mode: str
) -> None:
    assert sandbox_mode_for(sandboxed=sandboxed, euid=euid) == mode
    argv = codex_argv("codex", model=None, args=[], sandbox_mode=mode)
    assert argv[:6] == ["codex", "exec", "--json", "-c", f'sandbox_mode="{mode}"', "-c"]


def test_codex_home_decides_what_the_sandbox_makes_writable(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    assert home_exposure({"HOME": str(home)}) == ((".codex/",), [])
    inside = {"HOME": str(home), "CODEX_HOME": str(home / "agents" / "codex")}
    assert home_exposure(inside) == (("agents/codex/",), [])
    elsewhere = tmp_path / "elsewhere"
    assert home_exposure({"HOME": str(home), "CODEX_HOME": str(elsewhere)}) == ((), [elsewhere])


def test_the_sandbox_exposes_node_and_a_native_binary_kept_outside_the_package(
    tmp_path: Path,
) -> None:
    """An npm prefix whose platform package is a link into a store elsewhere (pnpm): the launcher,
    node (named by `#!/usr/bin/env node`, so not found from the launcher) and the native binary."""
    package = tmp_path / "prefix/lib/node_modules/@openai/codex"
    launcher = executable(package / "bin" / "codex.js", "#!/usr/bin/env node\n")
    native = tmp_path / "store/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
    executable(native, "")
    (package / "node_modules/@openai").mkdir(parents=True)
    (package / "node_modules/@openai/codex-linux-x64").symlink_to(
        tmp_path / "store/codex-linux-x64"
    )
    (tmp_path / "prefix/bin").mkdir()
    (tmp_path / "prefix/bin/codex").symlink_to(launcher)
    node = executable(tmp_path / "node-bin" / "node", "")
    env = {"PATH": f"{tmp_path / 'prefix/bin'}:{node.parent}", "HOME": str(tmp_path)}

    exposure = codex_adapter().sandbox_exposure(env)

    assert exposure.executables == [tmp_path / "prefix/bin/codex", node, native]
    assert list(exposure.home_writable) == [".codex/"]
