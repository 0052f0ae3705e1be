"""`adapter: codex`: OpenAI's Codex CLI (`npm install -g @openai/codex`), non-interactively.

The argv is `codex exec --json -c sandbox_mode="workspace-write" -c approval_policy="never"
--skip-git-repo-check [--model M] [args...] -`: events as JSON lines on stdout, commands
sandboxed to the workspace (writable) and never waiting for an approval; the final `-` reads the
prompt (the config's `prompt:` template applied) from stdin, so it never shows in `ps`.
`--skip-git-repo-check` because a text-mode fixture pair runs the agent in an empty directory,
not a repository, where codex otherwise refuses to start ("Not inside a trusted directory");
gitgauge chose the workspace itself, so codex's guard against an unversioned one adds nothing.
The sandbox and approval go in as `-c` settings, not as `--sandbox`, so that `args` can still
override them (`--sandbox danger-full-access`): a repeated flag is an error.
`GITGAUGE_CODEX_BIN` overrides the binary. Codex reports tokens but no cost: the config's
`pricing:` turns tokens into dollars.

Inside gitgauge's bubblewrap sandbox, when gitgauge runs as root, codex gets
`sandbox_mode="danger-full-access"` instead: codex's own Linux sandbox is a nested bubblewrap
that maps the caller's uid into a new user namespace, and the kernel lets a process map uid 0
only with CAP_SETFCAP, which gitgauge's sandbox drops (`--cap-drop ALL`), so every command would
fail with `bwrap: setting up uid map: Operation not permitted`. gitgauge's sandbox confines codex
and all its commands to the same policy. As another user the nested sandbox works and is kept.

The harness: `files` (an `AGENTS.md`, which codex reads from the workspace) are laid in by the
run, `env` is in `context.env`. `configDir` is refused when the config loads: codex's user-level
directory is `CODEX_HOME`, which also holds its login, sessions and the helper binaries of its own
sandbox, which codex refuses to create under the temporary directory where per-pair copies live.
A `CODEX_HOME` (from gitgauge's environment or the config's `env`) is honoured as it is.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.causes import said_status
from gitgauge.core.errors import AdapterError
from gitgauge.core.records import ErrorCause, ErrorKind
from gitgauge.core.sandbox import CODEX_HOME_WRITABLE, Exposure
from gitgauge.core.usage import AgentUsage
from gitgauge.running.adapters.base import (
    Adapter,
    AdapterContext,
    AdapterOutcome,
    failure_message,
    not_found,
    register,
    run_event_cli,
    timed_out_reason,
)
from gitgauge.running.adapters.codex_events import CodexRun, parse_events

BINARY_ENV = "GITGAUGE_CODEX_BIN"
HOME_ENV = "CODEX_HOME"
INSTALL_HINT = "npm install -g @openai/codex"
SANDBOX_MODE = "workspace-write"
"""Codex's own sandbox for its commands: the workspace writable, the rest read-only."""
NESTED_SANDBOX_MODE = "danger-full-access"
"""Inside gitgauge's sandbox as root, where codex's own cannot start (see the module's doc)."""


SKIP_GIT_CHECK = "--skip-git-repo-check"
"""Codex runs outside a repository too: a text-mode fixture's workspace is an empty directory."""


def base_args(sandbox_mode: str = SANDBOX_MODE) -> tuple[str, ...]:
    return (
        "exec",
        "--json",
        "-c",
        f'sandbox_mode="{sandbox_mode}"',
        "-c",
        'approval_policy="never"',
        SKIP_GIT_CHECK,
    )


BASE_ARGS = base_args()
MINIMUM_VERSION = (0, 50, 0)
"""The oldest codex whose `exec --json` prints the `turn.completed` usage events read here."""
VERSION_TIMEOUT_SECONDS = 30.0
STDOUT_LIMIT = 64 * 1024 * 1024
"""How much of the event stream is parsed (the usage events come last; commands' output is big)."""


def codex_argv(
    binary: str, *, model: str | None, args: list[str], sandbox_mode: str = SANDBOX_MODE
) -> list[str]:
    """The command line of one agent run; the prompt is not part of it (it goes to stdin)."""
    argv = [binary, *base_args(sandbox_mode)]
    if SKIP_GIT_CHECK in args:
        argv.remove(SKIP_GIT_CHECK)  # codex refuses the flag twice; the config's own is kept
    if model:
        argv += ["--model", model]
    return [*argv, *args, "-"]


def find_codex_binary(env: Mapping[str, str]) -> str:
    """`GITGAUGE_CODEX_BIN` when set, else `codex` on env's PATH; `AdapterError` when neither."""
    return process.find_executable(
        env, program="codex", override=BINARY_ENV, install_hint=INSTALL_HINT
    )


def sandbox_mode_for(*, sandboxed: bool, euid: int) -> str:
    """Codex's own sandbox mode: workspace-write, except inside gitgauge's sandbox as root."""
    return NESTED_SANDBOX_MODE if sandboxed and euid == 0 else SANDBOX_MODE


def node_executables(binary: Path, env: Mapping[str, str]) -> list[Path]:
    """What the npm package runs besides `binary`: `node` from PATH (its launcher is
    `#!/usr/bin/env node`) and the platform package's native binary when it lives outside the
    package (a pnpm store, a hoisted `@openai/codex-linux-x64`)."""
    found: list[Path] = []
    node = shutil.which("node", path=env.get("PATH", os.defpath))
    if node is not None:
        found.append(Path(node))
    package = binary.resolve().parent.parent
    for scope in (package / "node_modules" / "@openai", package.parent):
        for native in sorted(scope.glob("codex-*/vendor/*/bin/codex")):
            if package not in native.resolve().parents:
                found.append(native.resolve())
    return found


def home_exposure(env: Mapping[str, str]) -> tuple[tuple[str, ...], list[Path]]:
    """(the $HOME entries codex writes, its state directory when it lies outside $HOME)."""
    chosen = env.get(HOME_ENV, "")
    if not chosen:
        return CODEX_HOME_WRITABLE, []
    directory = Path(chosen).expanduser().absolute()
    home_text = env.get("HOME")
    if home_text:
        home = Path(home_text).resolve()
        resolved = directory.resolve()
        if resolved != home and home in resolved.parents:
            return (f"{resolved.relative_to(home).as_posix()}/",), []
    return (), [directory]


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`codex-cli 0.171.0` -> (0, 171, 0); None when no version number is in `text`."""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if match is None:
        return None
    return (int(match[1]), int(match[2]), int(match[3]))


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, int, int]:
    """Run `codex --version`; `AdapterError` when it fails or is older than `MINIMUM_VERSION`."""
    completed = process.run(
        [binary, "--version"],
        cwd=Path.cwd(),
        timeout_seconds=VERSION_TIMEOUT_SECONDS,
        env=env,
    )
    wanted = ".".join(map(str, MINIMUM_VERSION))
    if not completed.ok:
        problem = completed.start_error or (
            "timed out" if completed.timed_out else f"exited {completed.exit_code}"
        )
        raise AdapterError(
            f"`{binary} --version` failed ({problem}): install codex {wanted} or later "
            f"({INSTALL_HINT})"
        )
    version = parse_version(completed.stdout_tail)
    if version is None:
        raise AdapterError(
            f"`{binary} --version` printed no version number "
            f"({completed.stdout_tail.strip()[:80]!r}): is it the Codex CLI? ({INSTALL_HINT})"
        )
    if version < MINIMUM_VERSION:
        found = ".".join(map(str, version))
        raise AdapterError(
            f"codex {found} is too old: gitgauge needs {wanted} or later for "
            f"`codex exec --json` usage events; upgrade it ({INSTALL_HINT}@latest)"
        )
    return version


@register
class CodexAdapter(Adapter):
    name = "codex"
    config_dir_instead = (
        "for codex, lay AGENTS.md with files:, set config.toml keys with args: [-c, key=value], "
        "or point CODEX_HOME somewhere with env:"
    )

    def check(self) -> None:
        try:
            binary = find_codex_binary(os.environ)
            check_version(binary, process.clean_env())
        except AdapterError as error:
            raise AdapterError(f"{self.source}: adapter codex: {error}") from None

    def preflight(self, env: Mapping[str, str], *, config_dir: Path | None = None) -> None:
        problem = login_problem(env)
        if problem is not None:
            raise AdapterError(f"{self.source}: codex: {problem}")

    def sandbox_exposure(self, env: Mapping[str, str]) -> Exposure:
        binary = Path(find_codex_binary(env))
        home_writable, writable = home_exposure(env)
        return Exposure(
            executables=[binary, *node_executables(binary, env)],
            home_writable=home_writable,
            writable=writable,
        )

    def run(self, context: AdapterContext) -> AdapterOutcome:
        mode = sandbox_mode_for(sandboxed=bool(context.sandbox), euid=os.geteuid())
        ran = run_event_cli(
            context,
            name="codex",
            find_binary=find_codex_binary,
            argv=partial(
                codex_argv, model=self.config.model, args=self.config.args, sandbox_mode=mode
            ),
            env=context.env,
            stdout_limit=STDOUT_LIMIT,
            parse=parse_events,
        )
        if isinstance(ran, AdapterOutcome):
            return ran
        completed, parsed = ran.completed, ran.parsed
        kind, reason, cause = self._failure(context, completed, parsed, ran.problem)
        message = failure_message(completed, reason if kind is not None else None)
        # Copied even for errors: a failed run that reported tokens still spent them.
        return AdapterOutcome(
            error_kind=kind,
            error_message=message,
            error_cause=cause,
            seconds=completed.seconds,
            usage=parsed.usage(self._cost(parsed)) if parsed else AgentUsage(),
            final_message=parsed.last_message if parsed else None,
        )

    def _failure(
        self,
        context: AdapterContext,
        completed: process.CommandResult,
        parsed: CodexRun | None,
        parse_problem: str,
    ) -> tuple[ErrorKind | None, str, ErrorCause | None]:
        """What went wrong in a finished codex run: its kind (None: nothing), the reason, and
        the cause no retry fixes when one is recognised."""
        kind: ErrorKind | None = None
        reason = ""
        found: tuple[ErrorCause, str] | None = None
        if completed.timed_out:
            kind = "adapter-timeout"
            reason = timed_out_reason(context)
            if parsed is not None and not (parsed.steps or parsed.completed_turns):
                # Codex waits for an API it cannot reach with no end: the timeout says so.
                found = _unreachable(parsed.last_error)
        elif completed.exit_code != 0:
            kind = "adapter-exit"
            reason = f"codex exited {completed.exit_code}"
            if parsed is not None and parsed.failure:
                reason += f" (turn.failed: {parsed.failure[:200]})"
            if not_found(completed):
                said = " ".join(completed.output_tail(200).split())
                found = (
                    "command-not-found",
                    f"not found or not executable ({said}): {NOT_FOUND_FIX}",
                )
            else:
                found = failure_cause(
                    parsed.failure if parsed else None, completed.stderr_tail, self.config.model
                )
        elif parsed is None:
            kind = "adapter-output"
            reason = f"unreadable --json events: {parse_problem}"
        elif parsed.failure is not None:
            kind = "adapter-output"
            reason = f"codex reported turn.failed: {parsed.failure[:200]}"
            found = failure_cause(parsed.failure, completed.stderr_tail, self.config.model)
        elif parsed.completed_turns == 0:
            kind = "adapter-output"
            reason = 'no "turn.completed" event on stdout'
        if found is None:
            return kind, reason, None
        cause, sentence = found
        return kind, f"codex: {sentence} ({reason})", cause

    def _cost(self, parsed: CodexRun | None) -> float | None:
        pricing = self.config.pricing
        if pricing is None or parsed is None or parsed.input_tokens is None:
            return None
        return pricing.cost_usd(
            input_tokens=parsed.input_tokens,
            cached_input_tokens=parsed.cached_input_tokens or 0,
            output_tokens=parsed.output_tokens or 0,
        )


# -- errors no retry fixes, and credentials --

LOGIN_FIX = "run `codex login`, or set OPENAI_API_KEY"
UNREACHABLE = (
    r"waiting for network|connection failed|error sending request|connection refused"
    r"|failed to lookup address|dns error|network is unreachable|\bENOTFOUND\b|\bECONNREFUSED\b"
)
"""What codex says when no request reached the API: `Reconnecting... waiting for network
(Connection failed: error sending request)` (0.171.0, as transient `error` events while it
waits with no end, or a `turn.failed` once it gives up); not a stream cut off mid-answer."""
UNREACHABLE_FIX = (
    "check the network, the proxy variables (HTTPS_PROXY), the provider's base_url in codex's "
    "config.toml, and `run.sandbox_network` when the sandbox runs the agent"
)
_CAUSES: tuple[tuple[ErrorCause, re.Pattern[str]], ...] = (
    (
        "not-logged-in",
        re.compile(r"not logged in|no api key|missing (?:api key|credentials)", re.I),
    ),
    ("bad-model", re.compile(r"model_not_found|model .{0,60}(?:does not exist|not found)", re.I)),
    (
        "auth",
        re.compile(
            r"unauthorized|invalid_api_key|incorrect api key|" + said_status("401|403"), re.I
        ),
    ),
    (
        "quota",
        re.compile(r"insufficient_quota|usage limit|quota|rate limit|" + said_status("429"), re.I),
    ),
    ("unreachable", re.compile(UNREACHABLE, re.I)),
)
NOT_FOUND_FIX = (
    f"check GITGAUGE_CODEX_BIN, PATH and the node its launcher runs (inside the sandbox too), or "
    f"reinstall it ({INSTALL_HINT})"
)


def failure_cause(
    failure: str | None, stderr: str, model: str | None
) -> tuple[ErrorCause, str] | None:
    """The cause of a failed codex run that no retry fixes, with its fix; None otherwise."""
    texts = [text for text in (failure or "", stderr[-2000:]) if text.strip()]
    for cause, pattern in _CAUSES:
        if any(pattern.search(text) for text in texts):
            said = " ".join(texts[0].split())[:160] if texts else ""
            if cause == "not-logged-in":
                return cause, f"Not logged in: {LOGIN_FIX}"
            if cause == "auth":
                return cause, f"credentials refused ({said}): check OPENAI_API_KEY or `codex login`"
            if cause == "bad-model":
                name = f" {model!r}" if model else ""
                return cause, f"model{name} not available ({said}): check `model:` in the config"
            if cause == "unreachable":
                return cause, f"the API cannot be reached ({said}): {UNREACHABLE_FIX}"
            return cause, f"out of quota ({said}): wait, or raise the account's limit"
    return None


def classify_failure(
    stdout: str, stderr: str = "", *, model: str | None = None
) -> tuple[ErrorCause, str] | None:
    """`failure_cause` of a codex run that printed `stdout` (`exec --json` events) and
    `stderr`, also one killed while it waited for the API (its last `error` event): the cause
    and the sentence with the fix, or None when none is recognised (the caller saw it fail)."""
    try:
        parsed: CodexRun | None = parse_events(stdout)
    except ValueError:
        parsed = None
    failure = parsed.failure if parsed is not None else None
    found = failure_cause(failure, stderr, model)
    if found is None and parsed is not None and not (parsed.steps or parsed.completed_turns):
        found = _unreachable(parsed.last_error)
    return found


def _unreachable(notice: str | None) -> tuple[ErrorCause, str] | None:
    """The unreachable API a transient notice of codex says it waits for, if it says so."""
    if notice is None or not re.search(UNREACHABLE, notice, re.I):
        return None
    said = " ".join(notice.split())[:160]
    return "unreachable", f"the API cannot be reached ({said}): {UNREACHABLE_FIX}"


def login_problem(env: Mapping[str, str]) -> str | None:
    """Why codex has no credentials in `env`, or None: files only, no request.

    Present when `OPENAI_API_KEY` or `CODEX_API_KEY` is set, `$CODEX_HOME/auth.json` (default
    `~/.codex/auth.json`, what `codex login` writes) exists, or `config.toml` there chooses a
    `model_provider` of its own (whose `env_key` codex reads; gitgauge does not parse TOML)."""
    if env.get("OPENAI_API_KEY") or env.get("CODEX_API_KEY"):
        return None
    chosen = env.get(HOME_ENV, "")
    home = Path(chosen).expanduser() if chosen else Path(env.get("HOME") or Path.home()) / ".codex"
    if (home / "auth.json").is_file():
        return None
    try:
        settings = (home / "config.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        settings = ""
    if re.search(r"(?m)^\s*model_provider\s*=", settings):
        return None
    return f"Not logged in: {LOGIN_FIX}"
