"""`gitgauge mine --explain SHA`: the decision for one commit, rule by rule, without verifying.

It reads only: the commit, `gitgauge.yaml`, the saved tasks, the remembered verdicts and, for a
candidate, the other candidates of the window (is it the same patch as one `mine` keeps?).
"""

from __future__ import annotations

from dataclasses import dataclass

from gitgauge.core.git import Commit, Repository
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.worktree import Warn
from gitgauge.mining import classify, rules
from gitgauge.mining.classify import SUBJECT_RULES
from gitgauge.mining.mine import MineSummary, duplicates, find_candidates, judgement_key


@dataclass(frozen=True)
class Explanation:
    commit: Commit
    last: int
    in_window: bool
    """Whether the commit is among the last `last` commits of HEAD that `mine` scans."""
    structure: str | None
    """"merge commit" or "root commit" when that alone rules the commit out."""
    decision: rules.Decision | None
    files: list[tuple[str, str]]
    task: str | None
    """The id of the task saved for this commit, if any."""
    remembered: str | None
    """An earlier mine's verdict under the current commands, if any."""
    duplicate_of: str | None = None
    """The id of the candidate kept instead of this one (the same patch), if any."""

    @property
    def verdict(self) -> str:
        if self.task is not None:
            return f"mined: saved as task {self.task}"
        if self.structure is not None:
            return f"not a candidate: a {self.structure}"
        assert self.decision is not None
        if not self.decision.candidate:
            return "not a candidate"
        if self.duplicate_of is not None:
            return (
                f"a candidate; duplicate of {self.duplicate_of} (the same patch): "
                "`gitgauge mine` keeps that one"
            )
        if self.remembered is not None:
            return f"a candidate; judged before: {self.remembered} (--force judges it again)"
        where = "" if self.in_window else f" (but not among the last {self.last} commits of HEAD)"
        return f"a candidate, not judged yet{where}: `gitgauge mine` verifies it"

    def lines(self) -> list[str]:
        commit = self.commit
        out = [f"commit   {commit.sha[:12]} {commit.subject}"]
        if self.structure is not None:
            out.append(f"rule     {self.structure}s are never candidates")
        elif self.decision is not None:
            subject = self.decision.subject
            taken = "taken" if subject.candidate else "dropped"
            label = SUBJECT_RULES[subject.rule]
            prefix = f" (prefix {subject.prefix!r})" if subject.prefix else ""
            out.append(f"subject  {taken} by rule: {label}{prefix}")
            paths = self.decision.paths
            if paths is None:
                out.append("files    not looked at (the subject rule dropped the commit)")
            elif paths == "tests-and-source":
                out.append(
                    "files    taken: a test file and a file that is neither test nor Markdown"
                )
            else:
                out.append(f"files    dropped by rule: {paths}")
            for path, kind in self.files:
                out.append(f"           {kind:<8} {path}")
        if not self.in_window:
            out.append(f"window   not among the last {self.last} commits of HEAD (--last)")
        out.append(f"verdict  {self.verdict}")
        return out


def explain(
    repo: Repository, config: RepoConfig, store: Store, rev: str, *, last: int | None, warn: Warn
) -> Explanation:
    sha = repo.resolve(rev)
    commit = repo.commit_info(sha)
    count = config.mine.last if last is None else last
    in_window = sha in repo.recent(count)
    structure = None
    if len(commit.parents) > 1:
        structure = "merge commit"
    elif not commit.parents and sha not in repo.shallow_boundary():
        structure = "root commit"
    decision = None if structure else rules.decide(commit, config)
    files = rules.describe_files(commit, config) if decision and decision.paths else []
    task = next((t.id for t in store.load_tasks(warn=warn) if t.fix == sha), None)
    remembered = store.load_judgement(judgement_key(sha, config))
    duplicate_of = None
    if task is None and in_window and decision is not None and decision.candidate:
        candidates = list(find_candidates(repo, config, last=count, summary=MineSummary()))
        mined = store.mined_fix_shas(warn=warn)
        keeper = duplicates(repo, candidates, mined=mined).get(sha)
        if keeper is not None:
            duplicate_of = classify.task_id(keeper.commit.sha, keeper.commit.subject)
    return Explanation(
        commit=commit,
        last=count,
        in_window=in_window,
        structure=structure,
        decision=decision,
        files=files,
        task=task,
        remembered=remembered,
        duplicate_of=duplicate_of,
    )
