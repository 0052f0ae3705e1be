"""`gitgauge mine` and `gitgauge rewrite`: from a repository to saved tasks (`init` is
`cli/init.py`)."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from gitgauge.cli.common import (
    JobsOption,
    RayAddressOption,
    StatusLine,
    WaitOption,
    guarded,
    parse_jobs,
    say,
    warn,
)
from gitgauge.cli.mine_cluster import mine_executor, open_cluster
from gitgauge.core.config import load_repo_config
from gitgauge.core.errors import UsageError
from gitgauge.core.git import Commit, Repository
from gitgauge.core.lock import exclusive
from gitgauge.core.records import Task
from gitgauge.core.schema import Timeouts
from gitgauge.core.store import Store
from gitgauge.core.text import plural
from gitgauge.core.worktree import remove_stale
from gitgauge.mining.advice import closing_advice
from gitgauge.mining.classify import SUBJECT_RULES
from gitgauge.mining.explain import explain as explain_commit
from gitgauge.mining.explain import render_json as render_explanations
from gitgauge.mining.mine import MineEvents, MineSummary
from gitgauge.mining.mine import mine as mine_history
from gitgauge.mining.rewrite import DEFAULT_MODEL as DEFAULT_REWRITE_MODEL
from gitgauge.mining.rewrite import Rewriter, RewriteTotals, rewrite_tasks
from gitgauge.mining.rules import PATH_DROPS, RuleCounts
from gitgauge.mining.verify import REJECT_REASONS, CandidateError, Verdict

REWRITE_MODEL_OPTION = typer.Option(
    "--rewrite-model",
    help=f"Model for prompt rewriting: haiku, sonnet, opus or a model id "
    f"(default: {DEFAULT_REWRITE_MODEL}).",
)
LastOption = Annotated[
    int | None,
    typer.Option("--last", "-n", help="How many recent commits to scan (default: mine.last)."),
]
RequireBodyOption = Annotated[
    bool, typer.Option("--require-body", help="Skip candidates whose commit body is title-only.")
]
ForceOption = Annotated[
    bool, typer.Option("--force", help="Judge again candidates an earlier mine already judged.")
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="List the candidates; verify nothing.")
]
RewritePromptsOption = Annotated[
    bool,
    typer.Option(
        "--rewrite-prompts",
        help="Ask a model for a spoiler-free prompt for each new task (trusted repos only).",
    ),
]
RewriteModelOption = Annotated[str | None, REWRITE_MODEL_OPTION]
ExplainOption = Annotated[
    list[str] | None,
    typer.Option(
        "--explain",
        metavar="SHA",
        help="Print why a commit is (not) a candidate, and its remembered verdict; verify "
        "nothing. Repeat it for more commits.",
    ),
]


class ExplainFormat(str, Enum):
    text = "text"
    json = "json"


FormatOption = Annotated[
    ExplainFormat,
    typer.Option(
        "--format",
        help="With --explain: text, or json (one array, an object per commit: its verdict, "
        "the rules that decided, its files).",
    ),
]
MergesOption = Annotated[
    bool | None,
    typer.Option(
        "--merges/--no-merges",
        help="Also mine merge-conflict tasks from conflicted merges (default: mine.merges).",
        show_default=False,
    ),
]
ChainsOption = Annotated[
    bool | None,
    typer.Option(
        "--chains/--no-chains",
        help="Also mine rebase and commits tasks from file-commit chains (default: mine.chains).",
        show_default=False,
    ),
]
RewriteTaskOption = Annotated[
    str | None,
    typer.Option(
        "--task",
        help="Rewrite only this task: its id, or a unique start of it (default: every task).",
    ),
]
RewriteForceOption = Annotated[
    bool, typer.Option("--force", help="Rewrite again tasks whose prompt was rewritten.")
]
MineExecutorOption = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where candidates are verified: local, or ray (a Ray cluster, with the run.ray "
        "settings; needs gitgauge[ray]). Default: mine.executor in gitgauge.yaml, else local.",
    ),
]
MINE_RESUME_HINT = (
    "run `gitgauge mine` again: verified tasks are saved and judged candidates are remembered"
)


def mine(
    last: LastOption = None,
    require_body: RequireBodyOption = False,
    force: ForceOption = False,
    dry_run: DryRunOption = False,
    jobs: JobsOption = "1",
    wait: WaitOption = False,
    rewrite_prompts: RewritePromptsOption = False,
    rewrite_model: RewriteModelOption = None,
    explain: ExplainOption = None,
    merges: MergesOption = None,
    chains: ChainsOption = None,
    output_format: FormatOption = ExplainFormat.text,
    executor: MineExecutorOption = None,
    ray_address: RayAddressOption = None,
) -> None:
    """Find bug-fix commits, prove each fails before and passes after, save them as tasks."""

    def action() -> None:
        if explain:
            explain_commits(explain, last=last, as_json=output_format is ExplainFormat.json)
            return
        if output_format is not ExplainFormat.text:
            raise UsageError("--format applies only with --explain")
        mine_tasks(
            last=last,
            require_body=require_body,
            force=force,
            dry_run=dry_run,
            jobs=jobs,
            wait=wait,
            rewrite_prompts=rewrite_prompts,
            rewrite_model=rewrite_model,
            asked={"merges": merges, "chains": chains},
            executor=executor,
            ray_address=ray_address,
        )

    guarded(action, resume_hint=MINE_RESUME_HINT)


def explain_commits(revs: list[str], *, last: int | None, as_json: bool) -> None:
    """`gitgauge mine --explain SHA...`: why each commit is or is not a candidate."""
    repo = Repository(Path.cwd())
    config = load_repo_config(repo.root)
    store = Store(repo.root)
    found = [explain_commit(repo, config, store, rev, last=last, warn=warn) for rev in revs]
    if as_json:
        say(render_explanations(found))
        return
    for index, explanation in enumerate(found):
        if index:
            say("")
        for line in explanation.lines():
            say(line)


def mine_tasks(
    *,
    last: int | None,
    require_body: bool,
    force: bool,
    dry_run: bool,
    jobs: str,
    wait: bool,
    rewrite_prompts: bool,
    rewrite_model: str | None,
    asked: dict[str, bool | None],
    executor: str | None = None,
    ray_address: str | None = None,
) -> MineSummary:
    """`gitgauge mine`: the history mined under the `.gitgauge/` lock, then the summary
    printed."""
    repo = Repository(Path.cwd())
    config = load_repo_config(repo.root)
    store = Store(repo.root)
    job_count = parse_jobs(jobs)
    config = mine_executor(config, executor=executor, ray_address=ray_address, dry_run=dry_run)
    if rewrite_model is not None and not rewrite_prompts:
        raise UsageError("--rewrite-model only applies with --rewrite-prompts")
    # Chosen before any verification: a missing backend is one error, not a warning per task.
    rewriter = _rewriter(repo, rewrite_model) if rewrite_prompts else None
    with exclusive(store.root, command="gitgauge mine", wait=wait, on_wait=warn):
        remove_stale(repo, report=warn)
        progress = MineProgress()
        cluster = open_cluster(config, ray_address, jobs=job_count) if not dry_run else None
        try:
            summary = mine_history(
                repo,
                config,
                store,
                last=last,
                require_body=require_body,
                force=force,
                dry_run=dry_run,
                jobs=job_count,
                warn=warn,
                events=progress.events(),
                prepare_task=rewriter.prepare_task if rewriter else None,
                asked=asked,
                verifier=cluster.verifier(repo, config) if cluster else None,
            )
        finally:
            progress.clear()
            if cluster is not None:
                cluster.close()
    print_mine_summary(
        summary,
        store,
        last=config.mine.last if last is None else last,
        test_timeout_ms=config.timeouts.test,
    )
    if rewriter is not None:
        _print_rewrite_totals(rewriter.totals, rewriter.describe())
    return summary


def _rewriter(repo: Repository, model: str | None) -> Rewriter:
    """The prompt rewriter `--rewrite-model` asks for (`mine --rewrite-prompts`, `rewrite`)."""
    return Rewriter.create(repo, model=model or DEFAULT_REWRITE_MODEL, warn=warn, env=os.environ)


def _print_rewrite_totals(totals: RewriteTotals, how: str) -> None:
    cost = "not reported" if totals.cost_usd is None else f"${totals.cost_usd:.4f}"
    say(f"prompts rewritten: {totals.rewritten} (original kept: {totals.kept}), by {how}")
    say(f"  rewrite tokens:  {totals.input_tokens} in, {totals.output_tokens} out; cost: {cost}")


def rewrite(
    task: RewriteTaskOption = None,
    rewrite_model: RewriteModelOption = None,
    force: RewriteForceOption = False,
    wait: WaitOption = False,
) -> None:
    """Rewrite the prompts of tasks already mined into spoiler-free ones (trusted repos only)."""
    guarded(lambda: rewrite_prompts(task=task, rewrite_model=rewrite_model, force=force, wait=wait))


def rewrite_prompts(
    *, task: str | None, rewrite_model: str | None, force: bool, wait: bool
) -> None:
    """`gitgauge rewrite`: the tasks' prompts rewritten under the `.gitgauge/` lock, each told."""
    repo = Repository(Path.cwd())
    store = Store(repo.root)
    rewriter = _rewriter(repo, rewrite_model)

    def report(done: Task, outcome: str) -> None:
        if outcome == "skipped":
            say(f"skipped    {done.id}  [already rewritten; --force to rewrite again]")
        else:
            say(f"{outcome:<10} {done.id}")

    with exclusive(store.root, command="gitgauge rewrite", wait=wait, on_wait=warn):
        outcome = rewrite_tasks(
            store, rewriter, task_id=task, force=force, warn=warn, on_task=report
        )
    if not (outcome.rewritten or outcome.kept or outcome.skipped):
        say(f"no tasks in {store.tasks_dir}/: run `gitgauge mine` first")
        return
    say("")
    _print_rewrite_totals(rewriter.totals, rewriter.describe())


class MineProgress(StatusLine):
    """One line per candidate; on a terminal, also a transient "verifying ..." line."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.started = 0

    def events(self) -> MineEvents:
        return MineEvents(
            on_start=self.start,
            on_verdict=self.verdict,
            on_skip=self.skip,
            on_total=self.add,
            on_error=self.error,
        )

    def add(self, count: int) -> None:
        with self.lock:
            self.total += count

    def start(self, commit: Commit) -> None:
        with self.lock:
            self.started += 1
            number = f"[{self.started}/{self.total}] " if self.total else ""
        self.show(f"{number}verifying {commit.sha[:8]} {commit.subject[:60]}")

    def verdict(self, verdict: Verdict) -> None:
        self.clear()
        commit = verdict.commit
        if verdict.task is not None:
            note = f" ({verdict.detail})" if verdict.detail else ""
            say(f"verified  {commit.sha[:8]} {commit.subject}  -> {verdict.task.id}{note}")
        else:
            say(
                f"rejected  {commit.sha[:8]} {commit.subject}  [{verdict.reason}: {verdict.detail}]"
            )

    def error(self, error: CandidateError) -> None:
        self.clear()
        commit = error.commit
        say(f"error     {commit.sha[:8]} {commit.subject}  [{error.message}]")

    def skip(self, commit: Commit, why: str) -> None:
        self.clear()
        say(f"skipped   {commit.sha[:8]} {commit.subject}  [{why}]")


def _print_rule_counts(counts: RuleCounts) -> None:
    """Each rule that took or dropped a commit, so a missing commit has a named reason."""
    subject_rules = [label for label in SUBJECT_RULES.values() if label in counts.taken]
    subject_rules += [label for label in SUBJECT_RULES.values() if label in counts.dropped]
    if not subject_rules:
        return
    say("  by subject rule (taken / dropped):")
    for label in dict.fromkeys(subject_rules):
        say(f"    {label + ':':<26}{counts.taken[label]} / {counts.dropped[label]}")
    drops = [rule for rule in PATH_DROPS if counts.dropped[rule]]
    if drops:
        say("  then dropped by file rule:")
        for rule in drops:
            say(f"    {rule + ':':<26}{counts.dropped[rule]}")
    say("  (`gitgauge mine --explain SHA` shows the decision for one commit)")


def _print_errors(summary: MineSummary) -> None:
    if summary.errors:
        count = len(summary.errors)
        say(f"errors:            {count} (no verdict: `gitgauge mine` verifies them again)")


def print_mine_summary(
    summary: MineSummary,
    store: Store,
    *,
    last: int | None = None,
    test_timeout_ms: int = Timeouts().test,
) -> None:
    """The summary; with `last` (the commits asked for), advice when few tasks came out or a
    candidate outran `test_timeout_ms` (`timeouts.test`)."""
    rejected = sum(summary.rejected.values())
    say("")
    say(f"commits scanned:   {summary.scanned}")
    if (summary.merges and not summary.merges_mined) or summary.roots:
        merges = 0 if summary.merges_mined else summary.merges  # counted below instead
        say(
            f"  not considered:  {plural(merges, 'merge commit')}, "
            f"{plural(summary.roots, 'root commit')}"
        )
    _print_rule_counts(summary.rules)
    say(f"candidates:        {summary.candidates}")
    if summary.already_mined:
        say(f"  already mined:   {summary.already_mined}")
    if summary.duplicates:
        say(f"  duplicates:      {len(summary.duplicates)} (the same patch as a kept candidate)")
        for commit, kept in summary.duplicates:
            say(f"    {commit.sha[:8]} duplicate of {kept}")
    if summary.judged_before:
        say(f"  judged before:   {summary.judged_before} (--force judges them again)")
    say(f"  skipped (title-only): {summary.skipped_title_only}")
    say(
        f"verified:          {len(summary.tasks)} "
        f"(rich: {summary.verified_rich}, title-only: {summary.verified_title_only})"
    )
    if summary.no_test_passed_at_parent:
        say(
            f"  no test passed at the parent: {summary.no_test_passed_at_parent} "
            "(may repair the environment rather than a bug: review them)"
        )
    if summary.fail_to_pass_outside_fix:
        say(
            f"  FAIL_TO_PASS in files the fix did not change: {summary.fail_to_pass_outside_fix} "
            "(real only if they failed before it for the reason it repairs: review them)"
        )
    _print_errors(summary)
    say(f"rejected:          {rejected}")
    for reason in REJECT_REASONS:
        if summary.rejected.get(reason):
            say(f"  {reason}: {summary.rejected[reason]}")
    for mined in summary.kinds:  # each other kind's own lines (`--merges`, `--chains`)
        for line in mined.lines():
            say(line)
    if summary.every_task:
        say(f"tasks saved in {store.tasks_dir}/")
    if last is not None:
        for line in closing_advice(summary, last=last, test_timeout_ms=test_timeout_ms):
            say(line)
