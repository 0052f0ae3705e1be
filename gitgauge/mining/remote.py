"""`mine --executor ray`, the driver's side: each fix candidate's verification as one task of a
pool of remote workers (the Ray glue is `running/executors/ray_mine.py`, joined to this by the
CLI), with what it needs: the candidate, the config and the history up to its fix.

The pool gets the candidates as an iterator and pulls them as it has room, so at most a window
of packs is built and held at once, and verdicts are handed back as they finish (the same
`Verdict`s a local mine saves and remembers, so `--explain`, re-mining and a later local mine
see no difference). A candidate the pool lost twice is a `CandidateError` naming its nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gitgauge.core.git import Repository
from gitgauge.core.git.history import pack_of
from gitgauge.core.schema import RepoConfig
from gitgauge.core.worktree import Warn
from gitgauge.mining.mine import Candidate, MineEvents
from gitgauge.mining.node import CandidateOutcome, CandidateRequest, verify_on_node
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
class RemoteVerifier:
    """A `mining.mine.Verifier`: the candidates verified by `pool`."""

    repo: Repository
    config: RepoConfig
    pool: CandidatePool
    warn: Warn
    env: Mapping[str, str] = field(default_factory=dict)
    """The values of `run.ray.env`."""

    def __call__(
        self, candidates: Sequence[Candidate], events: MineEvents
    ) -> Generator[Verdict | CandidateError, None, None]:
        by_key: dict[str, Candidate] = {}
        for candidate in candidates:
            commit = candidate.commit
            if not commit.parents or not self.repo.has_commit(commit.parents[0]):
                # Said here, as a local mine says it: there is no history to ship.
                yield verify(self.repo, commit, self.config, warn=self.warn)
            else:
                by_key[commit.sha] = candidate
        results = self.pool.map(verify_on_node, self._jobs(list(by_key.values()), events))
        try:
            for key, outcome, lost in results:
                commit = by_key.pop(key).commit
                if outcome is None:
                    yield CandidateError(commit, lost or "lost")
                    continue
                assert isinstance(outcome, CandidateOutcome)
                for message in outcome.warnings:
                    self.warn(message)
                for message in outcome.node_warnings:
                    self.warn(f"{outcome.node}: {message}")
                if outcome.verdict is None:
                    yield CandidateError(commit, outcome.error or f"on node {outcome.node}")
                else:
                    yield outcome.verdict
        finally:
            results.close()

    def _jobs(self, candidates: Iterable[Candidate], events: MineEvents) -> Iterator[PoolJob]:
        for candidate in candidates:
            commit = candidate.commit
            events.on_start(commit)
            request = CandidateRequest(
                commit=commit,
                config=self.config,
                tags=self.repo.tags_at(commit.sha),
                env=dict(self.env),
            )
            yield commit.sha, request, _packer(self.repo, commit.sha)


def _packer(repo: Repository, fix: str) -> Callable[[], bytes]:
    """The history up to the fix and no further (its parent comes with it)."""
    return lambda: pack_of(repo, (fix,))
