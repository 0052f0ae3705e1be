"""Where a kind's miner runs its per-candidate suites: here, on the checkout pool's threads, or
on a cluster (`mine --executor ray`), one job per candidate, with the same answers.

A job's work is a module-level function `work(place, payload)`. A Ray node imports it by module
and name from its own gitgauge (of the same version: checked before any work), so each kind's
work ships by reference and no stage imports a kind's code. `place` is where it runs: the user's
repository and a pooled checkout here; on a node, a history copy holding the job's commit and
its history, no later commit, with the node's own sandbox.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from gitgauge.core import process
from gitgauge.core.git import Commit, Repository
from gitgauge.core.parallel import in_order
from gitgauge.core.sandbox import Mounts
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite import UserCommands

if TYPE_CHECKING:
    from gitgauge.core.git.checkout import Checkout, CheckoutPool
    from gitgauge.core.sandbox import Sandbox

Payload = TypeVar("Payload")
Value = TypeVar("Value")


@dataclass(frozen=True)
class Place:
    """What a job's work runs with, wherever it runs."""

    repo: Repository
    config: RepoConfig
    checkout: Checkout
    """Reset by the work to the commit it tests."""
    sandbox: Sandbox | None
    warn: Callable[[str], None]
    slot: int
    """Unique among the jobs running at once on this machine (GITGAUGE_JOB)."""

    @property
    def job_env(self) -> dict[str, str]:
        return {"GITGAUGE_JOB": str(self.slot)}

    def suite_at(self, sha: str) -> process.CommandResult | None:
        """setupCommand, then testCommand, at `sha` (the checkout reset there), in the place's
        sandbox with the job's environment: a miner's per-candidate check. None when
        setupCommand failed (the suite did not run)."""
        repo, config, checkout = self.repo, self.config, self.checkout
        stores = repo.object_stores()
        checkout.reset(
            sha, stores=stores, link=config.worktree.link, link_from=repo.root, warn=self.warn
        )
        env = process.clean_env(cwd=checkout.path, extra=self.job_env)
        commands = UserCommands(config, sandbox=self.sandbox)
        setup = commands.setup(checkout.path, env=env)
        if setup is not None and not setup.ok:
            return None
        mounts = Mounts(workspace=checkout.path, read_only=(checkout.git_dir, *stores))
        return commands.suite(checkout.path, env=env, mounts=mounts, report=False).result


@dataclass(frozen=True)
class Job(Generic[Payload]):
    commit: Commit
    """The candidate's commit: a node gets its history and no later commit; progress names it."""
    payload: Payload
    """What the work needs besides the place (picklable: it travels to a node)."""


@dataclass(frozen=True)
class Done(Generic[Payload, Value]):
    job: Job[Payload]
    value: Value | None
    lost: str | None = None
    """Why there is no value (the job's node was lost twice, or could not run it): an error to
    report, never a verdict to remember."""


Work = Callable[[Place, Payload], Value]


class SuiteJobs(Protocol):
    """Runs one job per candidate and yields each as it is done (in the jobs' order here; as
    they finish on a cluster); closing the generator stops the jobs left."""

    def map(
        self,
        work: Callable[[Place, Payload], Value],
        jobs: Sequence[Job[Payload]],
        *,
        on_start: Callable[[Commit], None],
        name: str,
    ) -> Generator[Done[Payload, Value], None, None]: ...


@dataclass
class LocalJobs:
    """`SuiteJobs` on this machine: `jobs` threads, each with a checkout of `pool`."""

    repo: Repository
    config: RepoConfig
    pool: CheckoutPool
    sandbox: Sandbox | None
    warn: Callable[[str], None]
    jobs: int

    def map(
        self,
        work: Callable[[Place, Payload], Value],
        jobs: Sequence[Job[Payload]],
        *,
        on_start: Callable[[Commit], None],
        name: str,
    ) -> Generator[Done[Payload, Value], None, None]:
        def one(job: Job[Payload], slot: int) -> Done[Payload, Value]:
            on_start(job.commit)
            with self.pool.slot(slot) as checkout:
                place = Place(self.repo, self.config, checkout, self.sandbox, self.warn, slot)
                return Done(job, work(place, job.payload))

        return in_order(jobs, one, jobs=self.jobs, name=name)
