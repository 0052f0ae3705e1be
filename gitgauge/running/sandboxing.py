"""A run's sandbox, decided once: the mode asked and where it came from (`resolve_sandbox`), this
machine's sandbox made from it (`plan_sandbox`), and the label that the plan (a resumed run must
keep its sandbox), the run manifest and each pair's result record (`SandboxChoice.label`,
`sandbox_label`). The policy itself, what a sandboxed command sees, is `core/sandbox.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gitgauge.core import process
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Repository
from gitgauge.core.sandbox import Sandbox, SandboxMode, prepare
from gitgauge.core.schema import RepoConfig
from gitgauge.core.worktree import Warn

if TYPE_CHECKING:
    from gitgauge.running.plan import RunPlan

SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "bwrap", "none")

FROM_FLAG = "--sandbox"
FROM_CONFIG = "run.sandbox in gitgauge.yaml"
FROM_DEFAULT = "the default"


def resolve_sandbox(flag: str | None, config: RepoConfig) -> tuple[SandboxMode, str]:
    """The sandbox mode a run asks for, and where it came from (`FROM_FLAG`, `FROM_CONFIG` or
    `FROM_DEFAULT`). Precedence: the `--sandbox` flag (auto, bwrap or none; another value is a
    `UsageError` naming the flag), else `run.sandbox` in gitgauge.yaml, else the default, auto.

    What the mode becomes is decided where the pairs run, from it alone: `none` is no sandbox;
    `bwrap` is a bubblewrap sandbox, or a `SandboxError` before any work when none can be made;
    `auto` is a bubblewrap sandbox when a trial one starts on this machine (`core.sandbox.probe`:
    Linux, `bwrap` on PATH or in `$GITGAUGE_BWRAP`, user namespaces allowed), else no sandbox and
    a warning saying why. With the local executor that is this machine (`plan_sandbox`); with a
    remote one, each node decides for itself (`executors.shipped.node_sandbox`)."""
    if flag is not None:
        for mode in SANDBOX_MODES:
            if mode == flag:
                return mode, FROM_FLAG
        raise UsageError(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, got {flag!r}")
    if "sandbox" in config.run.model_fields_set:
        return config.run.sandbox, FROM_CONFIG
    return config.run.sandbox, FROM_DEFAULT


def sandbox_label(sandbox: Sandbox | None) -> Literal["bwrap", "none"]:
    """What a pair's result records of the sandbox it ran in (the manifest's too, when the
    sandbox was decided here)."""
    return "bwrap" if sandbox is not None else "none"


@dataclass(frozen=True)
class SandboxChoice:
    """A run's sandbox as decided: the mode asked and where it came from (`resolve_sandbox`),
    and this machine's sandbox made from it, or, with a remote executor, none here (each node
    decides for itself from `mode`)."""

    mode: SandboxMode
    source: str
    """Where `mode` came from: `FROM_FLAG`, `FROM_CONFIG` or `FROM_DEFAULT`."""
    network: bool
    """`run.sandbox_network`: whether sandboxed commands share the network."""
    here: Sandbox | None = None
    """This machine's sandbox (None: no sandbox here, or the nodes decide)."""
    on_nodes: bool = False
    """The pairs run on a remote executor's nodes, each deciding `mode` for itself."""

    @property
    def label(self) -> str:
        """The run manifest's `sandbox`: bwrap or none as decided here; on a remote executor,
        the mode asked (each result's `sandbox` says what its node made of it)."""
        return self.mode if self.on_nodes else sandbox_label(self.here)

    @property
    def recorded_network(self) -> bool | None:
        """The run manifest's `sandboxNetwork`: with a sandbox (or one a node may make), whether
        it shares the network; None without one."""
        if self.on_nodes:
            return self.network if self.mode != "none" else None
        return self.here.network if self.here is not None else None


def choose_sandbox(
    config: RepoConfig,
    *,
    flag: str | None = None,
    sandbox: Sandbox | None = None,
    on_nodes: bool = False,
) -> SandboxChoice:
    """The choice of a run whose sandbox is already made here (`sandbox`, from the mode
    `resolve_sandbox` gives), or, `on_nodes`, left to a remote executor's nodes."""
    mode, source = resolve_sandbox(flag, config)
    network = config.run.sandbox_network
    if on_nodes:
        return SandboxChoice(mode, source, network=network, on_nodes=True)
    return SandboxChoice(mode, source, network=network, here=sandbox)


def decide_sandbox(
    repo: Repository,
    config: RepoConfig,
    plan: RunPlan,
    *,
    flag: str | None,
    warn: Warn,
) -> SandboxChoice:
    """The run's sandbox, decided once before any work starts: with the local executor, this
    machine's, made and checked now (`plan_sandbox`); with a remote one, the nodes'."""
    if config.run.executor != "local":
        return choose_sandbox(config, flag=flag, on_nodes=True)
    mode, _ = resolve_sandbox(flag, config)
    box = plan_sandbox(repo, config, plan, mode=mode, warn=warn)
    return choose_sandbox(config, flag=flag, sandbox=box)


def plan_sandbox(
    repo: Repository,
    repo_config: RepoConfig,
    plan: RunPlan,
    *,
    mode: SandboxMode,
    warn: Warn,
) -> Sandbox | None:
    """The sandbox of a run on this machine (see `core/sandbox.py`), checked before any work
    starts.

    Each adapter is asked what it needs with the environment its agent will get (the config's
    `env` included: a `GITGAUGE_CLAUDE_BIN`, `GITGAUGE_CODEX_BIN` or `CODEX_HOME` set there
    counts)."""
    env = process.clean_env()
    return prepare(
        mode,
        network=repo_config.run.sandbox_network,
        repo_root=repo.root,
        link=repo_config.worktree.link,
        exposures=[
            (p.source, p.adapter.sandbox_exposure({**env, **p.harness.env})) for p in plan.configs
        ],
        test_command=repo_config.testCommand,
        home_writable=repo_config.run.sandbox_home_writable,
        env=env,
        warn=warn,
    )
