"""What one `gitgauge run` is asked to do: every option of the command line in one record, built
once by the CLI and read whole by planning (`running/plan.py`) and the run (`running/run.py`),
and the flags that change gitgauge.yaml's settings applied to it (`configured`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitgauge.core.errors import UsageError
from gitgauge.core.schema import RepoConfig
from gitgauge.running.executors import EXECUTORS
from gitgauge.running.sandboxing import resolve_sandbox


@dataclass(frozen=True)
class RunRequest:
    """Every option of a run, as given (None: not given, gitgauge.yaml or the default decides)."""

    configs: tuple[Path, ...] = ()
    """`--config`: the agent config files, in the order given."""
    task: str | None = None
    """`--task`: one task's id or a unique start of it (None: every task)."""
    resume: str | None = None
    """`--resume`: the run to continue (`latest`: the newest); None starts a new run."""
    retry_errors: bool = False
    """`--retry-errors`: with `resume`, run the errored pairs again."""
    repeat: int = 1
    """`--repeat`: attempts per config x task pair (a resumed run keeps its own)."""
    jobs: int = 1
    """`--jobs`, as a number: pairs at a time with the local executor."""
    wait: bool = False
    """`--wait`: wait for another command holding `.gitgauge/` instead of failing."""
    sandbox: str | None = None
    """`--sandbox`: auto, bwrap or none (see `sandboxing.resolve_sandbox`)."""
    executor: str | None = None
    """`--executor`: local or ray (default: `run.executor`)."""
    ray_address: str | None = None
    """`--ray-address`: the Ray cluster's address (with the ray executor)."""
    judge: bool | None = None
    """`--judge/--no-judge`: `chains.judge` for this run."""
    judge_model: str | None = None
    """`--judge-model`: `chains.judgeModel` for this run."""
    mode: str | None = None
    """`--mode`: the mode of every task whose kind has modes (a fixture's agent or text)."""
    max_cost: float | None = None
    """`--max-cost`: the run's budget in US dollars."""
    estimate: bool = False
    """`--estimate`: print the expected cost and wall time, run nothing else (but a sample)."""

    def check(self) -> None:
        """Refuse what is wrong whatever the repository, before anything is read."""
        if self.max_cost is not None and not self.max_cost > 0:
            raise UsageError(
                f"--max-cost must be a positive amount of US dollars, got {self.max_cost}"
            )

    def configured(self, config: RepoConfig) -> RepoConfig:
        """gitgauge.yaml's settings as the flags set them: `run.sandbox`, `run.executor` (and
        `--ray-address` checked), `chains.judge` and `chains.judgeModel`."""
        config = apply_flags(
            config, sandbox=self.sandbox, executor=self.executor, ray_address=self.ray_address
        )
        return apply_judge_flags(config, judge=self.judge, judge_model=self.judge_model)


def apply_flags(
    config: RepoConfig,
    *,
    sandbox: str | None,
    executor: str | None,
    ray_address: str | None,
) -> RepoConfig:
    """gitgauge.yaml's `run` settings as `--sandbox`, `--executor` and `--ray-address` set them
    (a bad value is a `UsageError` naming the flag)."""
    mode, _ = resolve_sandbox(sandbox, config)
    run = config.run
    if sandbox is not None:
        run = run.model_copy(update={"sandbox": mode})
    if executor is not None:
        if executor not in EXECUTORS:
            raise UsageError(
                f"--executor must be {' or '.join(EXECUTORS.names())}, got {executor!r}"
            )
        run = run.model_copy(update={"executor": executor})
    if ray_address is not None and run.executor != "ray":
        raise UsageError("--ray-address goes with --executor ray (or run.executor: ray)")
    return config.model_copy(update={"run": run})


def apply_judge_flags(
    config: RepoConfig, *, judge: bool | None, judge_model: str | None
) -> RepoConfig:
    """gitgauge.yaml's `chains` as `--judge` and `--judge-model` set them."""
    chains = config.chains
    if judge is not None:
        chains = chains.model_copy(update={"judge": judge})
    if judge_model is not None:
        if not judge_model.strip():
            raise UsageError("--judge-model must name a model (haiku, sonnet, opus or a model id)")
        if not chains.judge:
            raise UsageError("--judge-model goes with --judge (or chains.judge: true)")
        chains = chains.model_copy(update={"judgeModel": judge_model})
    return config.model_copy(update={"chains": chains})
