"""The adapter contract: run one agent configuration on one task in a prepared workspace.

An adapter's crash, timeout or unreadable output is data (an `AdapterOutcome` with an
`error_kind`), not an exception: the run goes on. Only a problem that makes the whole config
unusable (a missing binary, no credentials) raises `AdapterError`, from `check()` and
`preflight()`, before any work starts. An adapter whose CLI prints its steps as JSON events
(claude's stream-json, codex's --json) runs it with `run_event_cli`, which saves them as the
pair's transcript (`save_transcript`) and reads them with the adapter's parser.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from gitgauge.core import process
from gitgauge.core.errors import AdapterError, ConfigError
from gitgauge.core.git import Repository
from gitgauge.core.interrupt import deferred
from gitgauge.core.records import ErrorCause, ErrorKind, Task
from gitgauge.core.registry import Registry
from gitgauge.core.sandbox import Exposure
from gitgauge.core.schema import AgentConfig
from gitgauge.core.transcript import MAX_TRANSCRIPT_BYTES, TRANSCRIPT_FILE, json_lines
from gitgauge.core.usage import AgentUsage
from gitgauge.core.worktree import write_owner

PROMPT_PREFIX = "gitgauge-prompt-"
TRANSCRIPT_PREFIX = "gitgauge-transcript-"
Parsed = TypeVar("Parsed")
"""What an adapter reads from its CLI's events (`ClaudeResult`, `CodexRun`)."""


def _say_nothing(message: str) -> None:
    """The default `AdapterContext.warn`: a caller without a user to tell."""


@dataclass(frozen=True)
class AdapterContext:
    workspace: Path
    """The checkout of the task's `base` the agent works in."""
    task: Task
    repo: Repository
    """The user's repository (for adapters that read the fix, like `gold`)."""
    timeout_seconds: float
    env: Mapping[str, str]
    """The clean environment for the agent's process (no GIT_DIR, PWD = workspace, ...)."""
    log_dir: Path
    """Where the adapter writes the agent's stdout and stderr."""
    sandbox: Sequence[str] = ()
    """The argv prefix the agent's process runs under (`bwrap ... --`); empty: none."""
    prompt: str | None = None
    """The prompt to send: the task's prompt inside the config's `prompt:` template (None: the
    task's own prompt, see `agent_prompt`)."""
    config_dir: Path | None = None
    """This pair's copy of the config's `configDir` (None without one); adapters that run claude
    set `CLAUDE_CONFIG_DIR` to it."""
    prompt_file: Path | None = None
    """`agent_prompt` in a file outside the workspace that the agent can read (the sandbox
    exposes it), removed with the pair; None: an adapter that needs one makes its own
    (`prompt_file`)."""
    warn: Callable[[str], None] = _say_nothing
    """Tells the user something about the run (a prompt cut short), once per distinct message."""
    transcript_file: Path | None = None
    """Where a `script` agent may write its transcript (`$GITGAUGE_TRANSCRIPT`): a file outside
    the workspace that the sandbox lets the agent write, read back as data after it exits."""

    @property
    def agent_prompt(self) -> str:
        return self.task.prompt if self.prompt is None else self.prompt


@contextmanager
def prompt_file(prompt: str, *, repository: Path) -> Iterator[Path]:
    """`prompt` in a file of a temporary directory of its own (labelled for the stale cleanup of
    `repository`), removed afterwards: outside the workspace, so never in the agent's patch."""
    with deferred():
        holder = Path(tempfile.mkdtemp(prefix=PROMPT_PREFIX))
        write_owner(holder, repository=repository, kind="prompt")
    try:
        path = holder / "prompt.txt"
        path.write_text(prompt, encoding="utf-8")
        yield path
    finally:
        with deferred():
            shutil.rmtree(holder, ignore_errors=True)


@contextmanager
def transcript_file(*, repository: Path) -> Iterator[Path]:
    """Where an agent may write its transcript (`$GITGAUGE_TRANSCRIPT`): a file (not made yet)
    in a temporary directory of its own, which the sandbox lets the agent write; removed
    afterwards. Outside the workspace, so never in the agent's patch."""
    with deferred():
        holder = Path(tempfile.mkdtemp(prefix=TRANSCRIPT_PREFIX))
        write_owner(holder, repository=repository, kind="transcript")
    try:
        yield holder / TRANSCRIPT_FILE
    finally:
        with deferred():
            shutil.rmtree(holder, ignore_errors=True)


def keep_transcript(written: Path, log_dir: Path) -> None:
    """The transcript an agent wrote to `written`, copied into the pair's logs (at most
    `MAX_TRANSCRIPT_BYTES`) unless its adapter saved one already. What the agent left there is
    data: a symlink or anything but a regular file is not followed."""
    target = log_dir / TRANSCRIPT_FILE
    if target.exists():
        return
    try:
        descriptor = os.open(written, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(descriptor, "rb") as source:
        if not stat.S_ISREG(os.fstat(source.fileno()).st_mode):
            return
        data = source.read(MAX_TRANSCRIPT_BYTES)
    if data.strip():
        target.write_bytes(data)


@dataclass(frozen=True)
class AdapterOutcome:
    error_kind: ErrorKind | None = None
    """None when the agent ran to completion; else adapter-exit / adapter-timeout / ..."""
    error_message: str | None = None
    """The reason first (`claude: Not logged in: run ...`), then what the CLI said."""
    error_cause: ErrorCause | None = None
    """For an error no retry of the same setup fixes: not-logged-in, bad-model, auth, quota,
    unreachable, command-not-found (`run` stops a config on it: `running/gate.py`)."""
    seconds: float = 0.0
    """Wall time of the agent run."""
    usage: AgentUsage = AgentUsage()
    """Copied even for errors: a failed run that reported its cost still spent that money."""
    final_message: str | None = None
    """The agent's last words (claude's `result`, codex's last message, a script's stdout):
    a kind that scores an answer reads it (a fixture in text mode)."""

    @property
    def ok(self) -> bool:
        return self.error_kind is None


class Adapter(ABC):
    """One agent harness. Subclasses set `name` and register with `@register`."""

    name: ClassVar[str]
    needs_command: ClassVar[bool] = False
    reads_config_dir: ClassVar[bool] = False
    """Whether the agent reads a claude config directory (`configDir`)."""
    config_dir_instead: ClassVar[str] = ""
    """What the error refusing `configDir` suggests instead (adapters with another config)."""
    reads_fix: ClassVar[bool] = False
    """Whether `run` reads the fix's own changes (only `gold`): a remote executor then ships
    them to the node; for every other adapter they never leave the machine."""

    def __init__(self, config: AgentConfig, *, source: str) -> None:
        self.config = config
        self.source = source
        """The config file, for error messages."""

    def check(self) -> None:  # noqa: B027 - most adapters have nothing to check
        """Raise `AdapterError` when this config cannot run at all (before any task starts)."""

    def preflight(  # noqa: B027 - most adapters have nothing to check
        self, env: Mapping[str, str], *, config_dir: Path | None = None
    ) -> None:
        """Raise `AdapterError` when the agent cannot work with `env` (the environment it will get,
        the config's `env` included): its binary does not run, or it has no credentials. Called
        once per config before a run; never sends a request to a model."""

    def sandbox_exposure(self, env: Mapping[str, str]) -> Exposure:
        """What the agent needs inside the sandbox besides the system and PATH: its binary's
        installation, files its command names, $HOME entries it writes (after `check()`)."""
        return Exposure()

    @abstractmethod
    def run(self, context: AdapterContext) -> AdapterOutcome:
        """Let the agent work in `context.workspace`; never raise for the agent's own failures."""


ADAPTERS: Registry[type[Adapter]] = Registry(
    "adapter", builtins="gitgauge.running.adapters.builtins", error=ConfigError
)
"""Every adapter class, by its `name`."""


def register(cls: type[Adapter]) -> type[Adapter]:
    """Class decorator: register an adapter under its `name`."""
    return ADAPTERS.add(cls.name, cls)


def adapter_names() -> list[str]:
    return ADAPTERS.sorted()


def create(config: AgentConfig, *, source: str) -> Adapter:
    """The adapter for `config`; an unknown name is a `ConfigError` listing the valid ones."""
    cls = ADAPTERS.find(config.adapter)
    if cls is None:
        raise ConfigError(
            f"{source}: adapter: unknown adapter {config.adapter!r} "
            f"(valid: {', '.join(ADAPTERS.sorted())})"
        )
    if cls.needs_command and not (config.command and config.command.strip()):
        raise ConfigError(f"{source}: command: the {cls.name} adapter requires a command")
    if config.configDir is not None and not cls.reads_config_dir:
        instead = f"; {cls.config_dir_instead}" if cls.config_dir_instead else ""
        raise ConfigError(
            f"{source}: configDir: the {cls.name} adapter runs no agent that reads it; remove "
            f"the key (configDir is for claude-code and script{instead})"
        )
    return cls(config, source=source)


def run_cli(
    context: AdapterContext,
    argv: Sequence[str],
    *,
    name: str,
    env: Mapping[str, str],
    stdout_limit: int,
) -> process.CommandResult | AdapterOutcome:
    """An agent CLI in the workspace: the prompt on stdin (never in `ps`), its output in the
    pair's logs, in the sandbox when there is one. A CLI that cannot start is an `adapter-exit`
    outcome naming it; anything else is the finished command, for the adapter to read."""
    completed = process.run(
        list(argv),
        cwd=context.workspace,
        timeout_seconds=context.timeout_seconds,
        env=env,
        stdin_text=context.agent_prompt,
        stdout_path=context.log_dir / "agent.stdout",
        stderr_path=context.log_dir / "agent.stderr",
        tail_bytes=stdout_limit,
        wrapper=context.sandbox,
    )
    failed = start_failure(completed, name=name)
    return completed if failed is None else failed


def start_failure(completed: process.CommandResult, *, name: str) -> AdapterOutcome | None:
    """The `adapter-exit` outcome of an agent's program that could not start, naming it
    (`command-not-found` when it is missing or not executable); None when it started."""
    if completed.start_error is None:
        return None
    return AdapterOutcome(
        error_kind="adapter-exit",
        error_message=f"{name} could not start: {completed.start_error}",
        error_cause="command-not-found" if not_found(completed) else None,
        seconds=completed.seconds,
    )


@dataclass(frozen=True)
class EventRun(Generic[Parsed]):
    """An agent CLI that printed its steps as JSON events and finished: the command, and what
    the adapter's parser made of its stdout (None: unreadable, `problem` says why)."""

    completed: process.CommandResult
    parsed: Parsed | None
    problem: str = ""


def run_event_cli(
    context: AdapterContext,
    *,
    name: str,
    find_binary: Callable[[Mapping[str, str]], str],
    argv: Callable[[str], Sequence[str]],
    env: Mapping[str, str],
    stdout_limit: int,
    parse: Callable[[str], Parsed],
) -> EventRun[Parsed] | AdapterOutcome:
    """`argv` of the binary `find_binary` finds, run as `run_cli` runs it, its events saved as
    the pair's transcript and read by `parse` (its ValueError is the `problem`). A binary gone
    since `check()`, or one that cannot start, is the outcome to return instead."""
    try:
        binary = find_binary(context.env)
    except AdapterError as error:
        # `check()` passed before the run started; the binary went away since.
        return AdapterOutcome(
            error_kind="adapter-exit", error_message=str(error), error_cause="command-not-found"
        )
    completed = run_cli(context, argv(binary), name=name, env=env, stdout_limit=stdout_limit)
    if isinstance(completed, AdapterOutcome):
        return completed
    save_transcript(context)
    try:
        parsed = parse(completed.stdout_tail)
    except ValueError as error:
        return EventRun(completed, None, str(error))
    return EventRun(completed, parsed)


_START_FAILURES = ("No such file or directory", "Permission denied", "Not a directory")
_SANDBOX_EXEC_FAILED = re.compile(
    r"^bwrap: execvp? .*: (?:No such file or directory|Permission denied)\s*$", re.M
)


def not_found(completed: process.CommandResult) -> bool:
    """Whether the agent's program, or the interpreter its launcher names (`#!/usr/bin/env
    node`), was not found or is not executable where it ran: it could not start, the shell or
    `env` exited 127 or 126, or the sandbox could not exec it. Never for a timeout."""
    if completed.timed_out:
        return False
    if completed.start_error is not None:
        return any(words in completed.start_error for words in _START_FAILURES)
    if completed.exit_code in (126, 127):
        return True
    return completed.exit_code == 1 and bool(_SANDBOX_EXEC_FAILED.search(completed.stderr_tail))


def save_transcript(context: AdapterContext) -> None:
    """The JSON events of the agent's stdout as the pair's `transcript.jsonl` (a hard link when
    every line is one, so a long transcript is not stored twice)."""
    stdout = context.log_dir / "agent.stdout"
    target = context.log_dir / TRANSCRIPT_FILE
    try:
        text = stdout.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    lines = list(json_lines(text))
    if not lines:
        return
    target.unlink(missing_ok=True)
    if len(lines) == len([line for line in text.splitlines() if line.strip()]):
        try:
            os.link(stdout, target)
            return
        except OSError:
            pass  # a file system without hard links: write a copy
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


VERSION_TIMEOUT_SECONDS = 30.0


def check_runs(binary: str, env: Mapping[str, str], *, name: str, install_hint: str) -> None:
    """`binary --version` runs (a local command: no request): a broken installation (node
    missing, a half-removed package) fails here, once, not in every pair."""
    completed = process.run(
        [binary, "--version"], cwd=Path.cwd(), timeout_seconds=VERSION_TIMEOUT_SECONDS, env=env
    )
    if completed.ok:
        return
    problem = completed.start_error or (
        "timed out" if completed.timed_out else f"exited {completed.exit_code}"
    )
    tail = completed.output_tail(200).strip()
    raise AdapterError(
        f"`{binary} --version` failed ({problem}{': ' + tail if tail else ''}): reinstall "
        f"{name} ({install_hint})"
    )


MESSAGE_TAIL = 500
"""How much of a failed agent CLI's output its error message keeps (all of it is in the logs)."""


def timed_out_reason(context: AdapterContext) -> str:
    return f"killed after {context.timeout_seconds:g}s (timeouts.adapter)"


def failure_message(
    completed: process.CommandResult, reason: str | None, *, events: bool = False
) -> str | None:
    """`reason` with the end of the CLI's output, so the result says what went wrong; None when
    there was no failure. With `events`, stdout's JSON event lines are left out of that end (a
    stream of events is the transcript, not words for a status line)."""
    if reason is None:
        return None
    tail = (non_event_tail(completed) if events else completed.output_tail(MESSAGE_TAIL)).strip()
    return f"{reason}; output tail: {tail}" if tail else f"{reason}; no output"


def non_event_tail(completed: process.CommandResult, limit: int = MESSAGE_TAIL) -> str:
    """The end of stdout's lines that are not JSON events, then of stderr."""
    kept = set(json_lines(completed.stdout_tail))
    words = "\n".join(
        line for line in completed.stdout_tail.splitlines() if line not in kept and line.strip()
    )
    if completed.stderr_tail.strip():
        words = (
            f"{words}\n--- stderr ---\n{completed.stderr_tail}" if words else completed.stderr_tail
        )
    return words[-limit:]
