"""`gitgauge mine --explain SHA`: the decision for a commit, rule by rule, without verifying; as
lines (`lines`) or, with `--format json`, as a record (`record`) in one JSON array.

It reads only: the commit, `gitgauge.yaml`, the saved tasks, the remembered verdicts and, for a
candidate, the other candidates of the window (is it the same patch as one `mine` keeps?).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gitgauge.core.git import Commit, Repository
from gitgauge.core.schema import RepoConfig
from gitgauge.core.store import Store
from gitgauge.core.text import plural
from gitgauge.core.worktree import Warn
from gitgauge.mining import classify, rules
from gitgauge.mining.classify import SUBJECT_RULES
from gitgauge.mining.mine import MineSummary, duplicates, find_candidates, judgement_key

VerdictKind = Literal["mined", "not a candidate", "duplicate", "judged before", "not judged yet"]
"""An explanation's verdict in one word or few, as `--format json` gives it (`verdict`)."""


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
    def kind(self) -> VerdictKind:
        if self.task is not None:
            return "mined"
        if self.structure is not None or not (self.decision and self.decision.candidate):
            return "not a candidate"
        if self.duplicate_of is not None:
            return "duplicate"
        return "not judged yet" if self.remembered is None else "judged before"

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
        where = "" if self.in_window else f" (but not among the {self._window})"
        return f"a candidate, not judged yet{where}: `gitgauge mine` verifies it"

    @property
    def _window(self) -> str:
        return f"last {plural(self.last, 'commit')} of HEAD"

    def reasons(self) -> list[tuple[str, str]]:
        """The rules that decided, in order: (what, the rule's outcome)."""
        if self.structure is not None:
            found = [("rule", f"{self.structure}s are never candidates")]
        elif self.decision is not None:
            subject = self.decision.subject
            taken = "taken" if subject.candidate else "dropped"
            prefix = f" (prefix {subject.prefix!r})" if subject.prefix else ""
            found = [("subject", f"{taken} by rule: {SUBJECT_RULES[subject.rule]}{prefix}")]
            paths = self.decision.paths
            if paths is None:
                found.append(("files", "not looked at (the subject rule dropped the commit)"))
            elif paths == "tests-and-source":
                found.append(
                    ("files", "taken: a test file and a file that is neither test nor Markdown")
                )
            else:
                found.append(("files", f"dropped by rule: {paths}"))
        else:
            found = []
        if not self.in_window:
            found.append(("window", f"not among the {self._window} (--last)"))
        return found

    def lines(self) -> list[str]:
        commit = self.commit
        out = [f"commit   {commit.sha[:12]} {commit.subject}"]
        for what, said in self.reasons():
            out.append(f"{what:<8} {said}")
            if what == "files":
                out += [f"           {kind:<8} {path}" for path, kind in self.files]
        out.append(f"verdict  {self.verdict}")
        return out

    def record(self) -> dict[str, Any]:
        """The explanation as `--format json` gives it (docs/guide/mining.md lists the keys)."""
        decision = self.decision
        return {
            "sha": self.commit.sha,
            "subject": self.commit.subject,
            "verdict": self.kind,
            "candidate": self.structure is None and decision is not None and decision.candidate,
            "said": self.verdict,
            "reasons": [f"{what}: {said}" for what, said in self.reasons()],
            "structure": self.structure,
            "subjectRule": None
            if decision is None
            else {
                "rule": decision.subject.rule,
                "label": SUBJECT_RULES[decision.subject.rule],
                "taken": decision.subject.candidate,
                "prefix": decision.subject.prefix,
            },
            "fileRule": None if decision is None else decision.paths,
            "files": [{"path": path, "kind": kind} for path, kind in self.files],
            "inWindow": self.in_window,
            "last": self.last,
            "task": self.task,
            "remembered": self.remembered,
            "duplicateOf": self.duplicate_of,
        }


def render_json(explanations: Sequence[Explanation]) -> str:
    """One JSON array: each commit's record, in the order asked."""
    return json.dumps([found.record() for found in explanations], indent=2, ensure_ascii=False)


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
