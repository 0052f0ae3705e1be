"""`mine --executor ray`, the driver's side: each fix candidate's verification, and each other
kind's per-candidate suite run (`core.suite_jobs`), as one task of a pool of remote workers (the
Ray glue is `running/executors/ray_mine.py`, joined to this by the CLI), with what it needs: the
job, the config and the history up to its commit.

The pool gets the candidates as an iterator and pulls them as it has room, so at most a window
of packs is built and held at once, and verdicts are handed back as they finish (the same
`Verdict`s a local mine saves and remembers, so `--explain`, re-mining and a later local mine
see no difference). A job the pool lost twice is an error naming its nodes (for a fix
candidate, a `CandidateError`), never a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gitgauge.core.git import Commit, Repository
from gitgauge.core.git.history import pack_of
from gitgauge.core.schema import RepoConfig
from gitgauge.core.suite_jobs import Done, Job, Place
from gitgauge.core.worktree import Warn
from gitgauge.mining.mine import Candidate, MineEvents
from gitgauge.mining.node import NodeOutcome, NodeRequest, run_on_node, verify_fix
from gitgauge.mining.verify import CandidateError, Verdict, verify

PoolJob = tuple[str, object, Callable[[], bytes]]
"""(key, request, what builds its history pack: called when the job is submitted)."""
PoolResult = tuple[str, object | None, str | None]
"""(key, the node function's outcome, or None and why the job was lost)."""


class CandidatePool(Protocol):
    """Runs `work(request, load_pack, root=..., node=...)` for each job on remote workers and
    yields the results as they finish; closing the generator cancels the jobs left."""

    def map(
        self, work: Callable[..., object], jobs: Iterator[PoolJob]
    ) -> Generator[PoolResult, None, None]: ...


@dataclass
class RemoteJobs:
    """`core.suite_jobs.SuiteJobs` on `pool`: each job's commit and its history shipped."""

    repo: Repository
    config: RepoConfig
    pool: CandidatePool
    warn: Warn
    env: Mapping[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`."""

    def map(
        self,
        work: Callable[[Place, Any], Any],
        jobs: Sequence[Job[Any]],
        *,
        on_start: Callable[[Commit], None],
        name: str,
    ) -> Generator[Done[Any, Any], None, None]:
        # Keys name the job in the pool's ledger of nodes, shared by the whole mine.
        keyed = [(f"{name}-{number}", job) for number, job in enumerate(jobs)]
        by_key = dict(keyed)
        results = self.pool.map(run_on_node, self._requests(work, keyed, on_start))
        try:
            for key, outcome, lost in results:
                job = by_key.pop(key)
                if outcome is None:
                    yield Done(job, None, lost or "lost")
                    continue
                assert isinstance(outcome, NodeOutcome)
                for message in outcome.warnings:
                    self.warn(message)
                for message in outcome.node_warnings:
                    self.warn(f"{outcome.node}: {message}")
                if outcome.value is None:
                    yield Done(job, None, outcome.error or f"on node {outcome.node}")
                else:
                    yield Done(job, outcome.value)
        finally:
            results.close()

    def _requests(
        self,
        work: Callable[[Place, Any], Any],
        keyed: Sequence[tuple[str, Job[Any]]],
        on_start: Callable[[Commit], None],
    ) -> Iterator[PoolJob]:
        """Each job's request and pack maker, made only as the pool pulls it."""
        for key, job in keyed:
            sha = job.commit.sha
            on_start(job.commit)
            request = NodeRequest(
                work=work,
                payload=job.payload,
                commit=job.commit,
                config=self.config,
                tags=self.repo.tags_at(sha),
                env=dict(self.env),
            )
            yield key, request, _packer(self.repo, sha)


@dataclass
class RemoteVerifier:
    """A `mining.mine.Verifier`: the fix candidates verified by `pool`, and the other kinds'
    suites run there too (`jobs`)."""

    repo: Repository
    config: RepoConfig
    pool: CandidatePool
    warn: Warn
    env: Mapping[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`."""

    @property
    def jobs(self) -> RemoteJobs:
        return RemoteJobs(self.repo, self.config, self.pool, self.warn, env=self.env)

    def __call__(
        self, candidates: Sequence[Candidate], events: MineEvents
    ) -> Generator[Verdict | CandidateError, None, None]:
        shipped: list[Job[Commit]] = []
        for candidate in candidates:
            commit = candidate.commit
            if not commit.parents or not self.repo.has_commit(commit.parents[0]):
                # Said here, as a local mine says it: there is no history to ship.
                yield verify(self.repo, commit, self.config, warn=self.warn)
            else:
                shipped.append(Job(commit, commit))
        results = self.jobs.map(verify_fix, shipped, on_start=events.on_start, name="verify")
        try:
            for done in results:
                if done.value is None:
                    yield CandidateError(done.job.commit, done.lost or "lost")
                else:
                    assert isinstance(done.value, Verdict)
                    yield done.value
        finally:
            results.close()


def _packer(repo: Repository, tip: str) -> Callable[[], bytes]:
    """The history up to `tip` and no further (a fix's parent comes with it)."""
    return lambda: pack_of(repo, (tip,))
