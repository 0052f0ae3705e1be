"""The rows of `gitgauge run`: its overhead per config x task pair with the noop adapter, on
the verification repository (4, and 4b with `run.history: full`) and on a large tree (4c)."""

from __future__ import annotations

from pathlib import Path

from common import (
    GITGAUGE,
    Bench,
    BenchError,
    Row,
    Verification,
    measure,
    ms,
    say,
    task_texts,
)
from repos import write_repo_config


def run_rows(bench: Bench, verified: Verification) -> None:
    """Rows 4 and 4b, on the tasks `verified` mined."""
    # Two test runs a pair (the fix's tests, then the base suite) and one worktree.
    plain = run_overhead(bench, "4", "run overhead / pair (noop adapter)", verified)
    sandbox_cost(bench, verified, plain)
    run_overhead(
        bench,
        "4b",
        "run overhead / pair (noop adapter), run.history: full",
        verified,
        history="full",
    )


def run_row_large_tree(bench: Bench, verified: Verification) -> None:
    """Row 4c, on the tasks mined in the large-tree repository."""
    run_overhead(
        bench,
        "4c",
        f"run overhead / pair (noop adapter), {bench.sizes.large_tree_files:,}-file tree",
        verified,
    )


def run_available(bench: Bench, repo: Path) -> bool:
    probe = measure([*GITGAUGE, "run", "--help"], cwd=repo, check=False)
    if probe.exit_code != 0:
        bench.notes.append("rows 4: `gitgauge run --help` failed: run is not available")
    return probe.exit_code == 0


def run_overhead(
    bench: Bench,
    number: str,
    label: str,
    verified: Verification,
    *,
    history: str = "isolated",
) -> float | None:
    """`gitgauge run` of the noop adapter on every mined task: (wall - test time) / pairs.
    Returns the wall time (None when `run` is not available)."""
    repo, clock, bare = verified.repo, verified.clock, verified.bare
    if not run_available(bench, repo):
        bench.rows.append(Row(number, label, "n/a (run not available)", "-", "-"))
        return None
    say(f"row {number}: run -c noop.yaml (run.history: {history})")
    config = bench.root / "noop.yaml"
    config.write_text("name: noop\nadapter: noop\n", encoding="utf-8")
    write_repo_config(repo, history=history)
    log, env = bench.test_log("run")
    try:
        result = measure([*GITGAUGE, "run", "-c", str(config)], cwd=repo, env=env)
    finally:
        write_repo_config(repo)
    pairs = len(task_texts(repo))
    runs, test_seconds = clock.total(log)
    if runs != 2 * pairs:
        raise BenchError(f"run: expected {2 * pairs} test runs, counted {runs}")
    overhead = (result.seconds - test_seconds) / pairs
    bench.rows.append(
        Row(
            number,
            label,
            f"{ms(overhead)} (wall {result.seconds:.2f} s - {runs} tests {test_seconds:.2f} s)",
            f"test run: {ms(clock.wall)}; worktree add + remove: {ms(bare)}",
            f"{overhead / clock.wall:.2f}x test, {overhead / bare:.2f}x worktree",
        )
    )
    return result.seconds


SANDBOX_GOAL_SECONDS = 0.050
"""The sandbox may cost a pair at most this much (two sandboxed test runs with noop)."""


def sandbox_cost(bench: Bench, verified: Verification, plain_wall: float | None) -> None:
    """Row 4d: row 4's run again inside the bubblewrap sandbox: (wall - row 4's wall) / pairs."""
    number, label = "4d", "sandbox cost / pair (noop adapter, run.sandbox: bwrap)"
    repo = verified.repo
    if plain_wall is None:
        bench.rows.append(Row(number, label, "n/a (run not available)", "-", "-"))
        return
    probe = measure([*GITGAUGE, "run", "--help"], cwd=repo, check=False)
    if "--sandbox" not in probe.stdout:
        bench.rows.append(Row(number, label, "n/a (no --sandbox)", "-", "-"))
        return
    say(f"row {number}: run -c noop.yaml (run.sandbox: bwrap)")
    config = bench.root / "noop.yaml"
    write_repo_config(repo, sandbox="bwrap")
    try:
        result = measure([*GITGAUGE, "run", "-c", str(config)], cwd=repo, check=False)
    finally:
        write_repo_config(repo)
    if result.exit_code != 0:
        bench.notes.append(f"row 4d: the sandboxed run failed (no working bwrap?): {result.stderr}")
        bench.rows.append(Row(number, label, "n/a (bwrap not working)", "-", "-"))
        return
    pairs = len(task_texts(repo))
    cost = (result.seconds - plain_wall) / pairs
    bench.rows.append(
        Row(
            number,
            label,
            f"{ms(cost)} (wall {result.seconds:.2f} s - row 4's {plain_wall:.2f} s)",
            f"unsandboxed pair (row 4): {ms(plain_wall / pairs)}",
            f"{result.seconds / plain_wall:.2f}x an unsandboxed pair",
            f"< {ms(SANDBOX_GOAL_SECONDS)}",
            "yes" if cost < SANDBOX_GOAL_SECONDS else "NO",
        )
    )
