"""`gitgauge doctor --probe -c CONFIG`: one short real call to a config's agent, as a pair of
`gitgauge run` makes it, and what it cost.

The config is loaded and checked as `run` checks it (`running.plan`: its adapter, its harness,
the binary and credentials preflight), its sandbox is `run`'s (`running.sandboxing.plan_sandbox`),
and the adapter runs once in a throwaway directory (`running.workspace.fresh_workspace`) on a
tiny prompt inside the config's `prompt:` template, with the config's `env`, a copy of its
`configDir`, the prompt and transcript files a pair gets, as `running/pair.py` runs it; at most
`PROBE_TIMEOUT_SECONDS` (or `timeouts.adapter`, when shorter). A failure is said with the cause
`run`'s early stop knows it by (the adapter's `error_cause`; a call stopped at the time limit
whose adapter names none, a script around claude, is read with `core.claude.classify_failure`),
so a config doctor finds broken is one `run` would stop after its first pairs. Without
`--probe`, `-c CONFIG` checks all of that but the call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from gitgauge.core import process, transcript
from gitgauge.core.claude import classify_failure
from gitgauge.core.config import BUILT_IN_CONFIGS, load_agent_config
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git import Repository
from gitgauge.core.records import Task
from gitgauge.core.sandbox import Mounts, Sandbox
from gitgauge.core.schema import RepoConfig
from gitgauge.doctor.findings import Found
from gitgauge.running import harness as harnesses
from gitgauge.running.adapters.base import AdapterOutcome, create
from gitgauge.running.pair import call_adapter, with_reported_cost
from gitgauge.running.plan import PlannedConfig, RunPlan, check_adapters
from gitgauge.running.sandboxing import plan_sandbox, resolve_sandbox
from gitgauge.running.workspace import fresh_workspace

PROBE_PROMPT = (
    "This is a connectivity check from `gitgauge doctor`, not a task. Do not run any tool and "
    "do not change any file. Reply with the single word OK."
)
PROBE_TIMEOUT_SECONDS = 120.0
PROBE_TASK_ID = "00000000-gitgauge-doctor-probe"
MESSAGE_LIMIT = 400
"""How much of a failed call's message its line keeps (on one line)."""


def probe_configs(
    repo: Repository,
    config: RepoConfig,
    paths: list[Path],
    *,
    call: bool,
    found: Found,
) -> None:
    """Each agent config in `paths`: checked as `run` checks it, and with `call`, one short
    call to its agent."""
    for path in paths:
        planned = _checked(path, found)
        if planned is None:
            continue
        name = f"{planned.config.name} ({planned.config.adapter})"
        if planned.config.adapter in BUILT_IN_CONFIGS:
            found("info", f"probe: {name} calls no agent: nothing to probe")
            continue
        if not call:
            found(
                "ok",
                f"agent config {path}: {name} loads, its binary runs and it has credentials",
                ["`gitgauge doctor --probe -c CONFIG` makes one short real call to its agent"],
            )
            continue
        try:
            mode, _ = resolve_sandbox(None, config)
            sandbox = plan_sandbox(
                repo, config, RunPlan([planned], []), mode=mode, warn=lambda message: None
            )
        except GitGaugeError as error:
            found("FAIL", f"probe: {name}: {error}")
            continue
        limit = min(PROBE_TIMEOUT_SECONDS, config.timeouts.adapter / 1000)
        _said(name, _call(repo, planned, sandbox, limit), limit, planned, found)


def _checked(path: Path, found: Found) -> PlannedConfig | None:
    """The config as `run` plans it (loaded, its adapter and harness made, the adapter's checks
    and preflight passed), or None after a FAIL saying why."""
    try:
        config = load_agent_config(path)
        planned = PlannedConfig(
            config,
            str(path),
            create(config, source=str(path)),
            harnesses.prepare(config, source=str(path), environ=os.environ),
        )
        check_adapters([planned])
    except GitGaugeError as error:
        found("FAIL", str(error))
        return None
    return planned


def _task(repo: Repository) -> Task:
    """A task record for the adapter's context: the probe's prompt, at HEAD."""
    head = repo.head_sha() or "0" * 40
    return Task(
        id=PROBE_TASK_ID,
        base=head,
        fix=head,
        subject="gitgauge doctor --probe",
        prompt=PROBE_PROMPT,
        testFiles=[],
        promptQuality="title-only",
        minedAt=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


@dataclass(frozen=True)
class _Called:
    outcome: AdapterOutcome
    stdout: str
    """The end of what the agent printed (read before its throwaway directory goes)."""
    stderr: str


def _call(
    repo: Repository, planned: PlannedConfig, sandbox: Sandbox | None, limit: float
) -> _Called:
    """The adapter once, in a throwaway directory, as a pair of a kind that brings its own
    directory runs it (`running.pair.call_adapter`, `running/steps.FreshSteps`)."""
    task = _task(repo)
    with fresh_workspace(repo.root) as workspace:
        logs = workspace.holder / "logs"
        logs.mkdir()
        harnesses.overlay(planned.harness, workspace.path)
        env = process.clean_env(cwd=workspace.path, extra={"GITGAUGE_JOB": "0"})
        outcome, _ = call_adapter(
            planned,
            task,
            Mounts(workspace.path),
            repo=repo,
            sandbox=sandbox,
            env=env,
            log_dir=logs,
            timeout_seconds=limit,
            warn=lambda message: None,
        )
        return _Called(
            _with_transcript_cost(outcome, logs),
            _read(logs / "agent.stdout"),
            _read(logs / "agent.stderr"),
        )


def _with_transcript_cost(outcome: AdapterOutcome, logs: Path) -> AdapterOutcome:
    """The cost and tokens of the transcript's own `result` event when the adapter reported
    none (a script that runs claude), as a pair reads them."""
    read = transcript.read(logs / transcript.TRANSCRIPT_FILE)
    if read is None:
        return outcome
    try:
        return with_reported_cost(outcome, read.result)
    except ValueError:
        return outcome


def _said(name: str, called: _Called, limit: float, planned: PlannedConfig, found: Found) -> None:
    outcome = called.outcome
    spent = _spent(outcome)
    if outcome.ok:
        answer = " ".join((outcome.final_message or "").split())
        answered = f", answered {answer[:60]!r}" if answer else ""
        found("ok", f"probe: {name} worked in {outcome.seconds:.1f} s{answered}; {spent}")
        return
    cause: str | None = outcome.error_cause
    message = outcome.error_message or outcome.error_kind
    if cause is None and outcome.error_kind == "adapter-timeout":
        # A CLI retrying an unreachable API says so before it gives up: read it as `run`
        # reads a claude failure.
        known = classify_failure(called.stdout, called.stderr, model=planned.config.model)
        if known is not None:
            cause, message = known[0], f"no answer within {limit:g} s: {known[1]}"
    hints = [f"the call still reported {spent}"] if outcome.usage.cost_usd else []
    if cause is not None:
        hints.append(
            f"`gitgauge run` stops this config once its first pairs fail alike ({cause}): "
            "fix it before the run"
        )
    else:
        hints.append("the same error would end the pairs of `gitgauge run` with this config")
    said = " ".join(str(message).split())
    said = said if len(said) <= MESSAGE_LIMIT else said[: MESSAGE_LIMIT - 3] + "..."
    found(
        "FAIL",
        f"probe: {name} failed after {outcome.seconds:.1f} s ({outcome.error_kind}): {said}",
        hints,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-20_000:]
    except OSError:
        return ""


def _spent(outcome: AdapterOutcome) -> str:
    """`cost: $0.0123, 1,203 input tokens (4,000 cached), 12 output, 1 turn`, or what is not
    known of it."""
    usage = outcome.usage
    parts = [f"cost: ${usage.cost_usd:.4f}" if usage.cost_usd is not None else "cost: -"]
    if usage.input_tokens is not None:
        cached = (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
        parts.append(
            f"{usage.input_tokens:,} input tokens" + (f" (+{cached:,} cached)" if cached else "")
        )
    if usage.output_tokens is not None:
        parts.append(f"{usage.output_tokens:,} output")
    if usage.num_turns is not None:
        parts.append(f"{usage.num_turns} turn{'' if usage.num_turns == 1 else 's'}")
    if usage.cost_usd is None and usage.input_tokens is None:
        parts[0] = "cost: not reported by the adapter"
    return ", ".join(parts)
