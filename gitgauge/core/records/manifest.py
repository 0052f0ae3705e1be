"""A run's manifest, `.gitgauge/runs/<run>/run.json`, and the judge's position check it keeps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

from gitgauge.core.records.fields import JudgeVerdict
from gitgauge.core.schema import AgentConfig, Timeouts

MANIFEST_SCHEMA_VERSION = 1


class JudgeCheck(BaseModel):
    """The judge's position-bias check of a run: the original series against itself."""

    model_config = ConfigDict(extra="ignore")

    task: StrictStr
    """The task whose original series was judged against itself."""
    model: StrictStr
    """Model id of the judge."""
    backend: StrictStr
    """anthropic-sdk or claude-cli."""
    asFirst: JudgeVerdict | None = None
    """The verdict for the copy shown first; `tie` is the only unbiased one."""
    asSecond: JudgeVerdict | None = None
    """The verdict for the copy shown second."""
    problem: StrictStr | None = None
    """Why a verdict is missing (a malformed answer, an error)."""
    inputTokens: int | None = None
    """Input tokens of the two requests."""
    outputTokens: int | None = None
    """Output tokens of the two requests."""
    costUsd: float | None = None
    """Their cost, when the backend reports one."""

    @property
    def unbiased(self) -> bool:
        return self.asFirst == "tie" and self.asSecond == "tie"

    def describe(self) -> str:
        """One line for the run's output and the report."""
        shown = f"{self.asFirst or '-'}/{self.asSecond or '-'}"
        where = f"judge position check: the original series of {self.task} against itself"
        if self.unbiased:
            return f"{where}: tie/tie (no position bias seen)"
        if self.asFirst is None or self.asSecond is None:
            return f"{where}: {shown}, unscored ({self.problem})"
        return (
            f"{where}: {shown}, not tie/tie: the judge favours a position or a copy; read "
            "SOLVED with care"
        )


class RunManifest(BaseModel):
    """`.gitgauge/runs/<run>/run.json`."""

    model_config = ConfigDict(extra="ignore")

    schemaVersion: StrictInt = MANIFEST_SCHEMA_VERSION
    """Format version of this file; gitgauge refuses files newer than it understands."""
    runId: StrictStr
    """UTC start time and six hex digits, also the run directory's name."""
    gitgaugeVersion: StrictStr
    """The gitgauge that made the run."""
    configs: list[AgentConfig]
    """The agent configs as given, `env` values replaced by `***` (names only)."""
    configFiles: list[StrictStr]
    """Paths of the config files, in `-c` order."""
    tasks: list[StrictStr]
    """Task ids of the run."""
    testCommand: StrictStr
    """gitgauge.yaml's testCommand the run graded with."""
    setupCommand: StrictStr | None = None
    """gitgauge.yaml's setupCommand the run used (None: none)."""
    timeouts: Timeouts
    """The timeouts in force (milliseconds)."""
    repeat: StrictInt = 1
    """Attempts per config x task pair."""
    history: StrictStr = "isolated"
    """`run.history` in force: isolated or full."""
    sandbox: StrictStr = "none"
    """The sandbox the run's agents and test commands ran in: bwrap or none. With the ray
    executor, where every node decides for itself, `run.sandbox` as asked: bwrap (every pair
    that ran, ran in it), none, or auto (each result's `sandbox` says)."""
    sandboxNetwork: StrictBool | None = None
    """With a sandbox (or `auto` on Ray): whether it shared the network (`run.sandbox_network`)."""
    startedAt: StrictStr
    """UTC time the run started, ISO 8601."""
    finishedAt: StrictStr | None = None
    """UTC time the run finished; None while it runs, or when it was interrupted."""
    harness: dict[StrictStr, StrictStr] | None = None
    """Config name -> fingerprint of its harness (see `harness/<config>/harness.json`); None in
    runs made before gitgauge recorded harnesses."""
    judgeCheck: JudgeCheck | None = None
    """The judge's position-bias check (an original series against itself), when the run
    judged commit-history tasks."""
    mode: StrictStr | None = None
    """`run --mode`: the mode every task of a kind with modes ran in (fixture tasks: agent or
    text); None: each task's own."""
