"""The rows of what crosses from an agent to the grader (issue 34): 8c, grading a pair whose agent
adds files (the additions rule, the grading interpreter asked about each new module) against the
same pair whose agent only edits (what grading cost before the rule); 8d, gitgauge's own peak
memory when an agent writes a huge file (over `run.limits`, streamed by git and never read)
against an agent that writes a small one.

Both run `gitgauge run` on the verification repository's tasks, with `script` agents, and read
what the pairs recorded (`gradingSeconds`) or what the process used (VmHWM).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from common import GITGAUGE, Bench, BenchError, Row, Verification, measure, ms, say, verdict
from repos import write_repo_config

GRADING_GOAL = 1.2
"""Grading a pair with the additions rule may cost at most this many times grading without."""
MEMORY_GOAL = 1.1
"""Peak memory with a huge file of the agent's may be at most this many times a small one's."""

EDITOR = "import pathlib\npathlib.Path('README.md').write_text('edited\\n')\n"
ADDER = EDITOR + (
    "pathlib.Path('helpers_of_agent').mkdir()\n"
    "pathlib.Path('helpers_of_agent/__init__.py').write_text('X = 1\\n')\n"
    "pathlib.Path('extra_module.py').write_text('Y = 2\\n')\n"
    "pathlib.Path('src/extra.txt').write_text('data\\n')\n"
    "pathlib.Path('tests/test_own.py').write_text('def test_own():\\n    pass\\n')\n"
    "pathlib.Path('settings.cfg').write_text('[x]\\n')\n"
)


def writer(megabytes: int) -> str:
    return (
        "import os, pathlib\n"
        f"with open('blob.bin', 'wb') as out:\n"
        f"    for _ in range({megabytes}):\n"
        "        out.write(os.urandom(1 << 20))\n"
    )


def _config(bench: Bench, name: str, script: str) -> Path:
    program = bench.root / f"{name}.py"
    program.write_text(script, encoding="utf-8")
    config = bench.root / f"{name}.yaml"
    config.write_text(
        f"name: {name}\nadapter: script\ncommand: '{sys.executable} {program}'\n", encoding="utf-8"
    )
    return config


def _results(repo: Path, config: str) -> list[dict[str, object]]:
    """The results of the one run of `config` (each config here runs once)."""
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in (repo / ".gitgauge" / "runs").glob(f"*/results/{config}/*.json")
    ]


def additions_rows(bench: Bench, verified: Verification) -> None:
    repo = verified.repo
    say("row 8c: grading / pair, an agent that adds files vs one that only edits")
    write_repo_config(repo)
    configs = {"editor": _config(bench, "editor", EDITOR), "adder": _config(bench, "adder", ADDER)}
    seconds: dict[str, float] = {}
    for name, config in configs.items():
        _, env = bench.test_log(f"additions-{name}")
        ran = measure([*GITGAUGE, "run", "-c", str(config)], cwd=repo, env=env, check=False)
        if ran.exit_code != 0:
            raise BenchError(f"row 8c: run -c {name} failed: {ran.stderr}")
        results = _results(repo, name)
        graded = [float(r["gradingSeconds"]) for r in results if r.get("gradingSeconds")]  # type: ignore[arg-type]
        if name == "adder" and not all(r.get("dropped") for r in results):
            raise BenchError("row 8c: the adder's test file and configuration were not dropped")
        if not graded:
            raise BenchError(f"row 8c: no pair of {name} was graded")
        seconds[name] = sum(graded) / len(graded)
    ratio = seconds["adder"] / seconds["editor"]
    bench.rows.append(
        Row(
            "8c",
            "grading / pair, the agent adds 6 files (additions rule, interpreter asked)",
            ms(seconds["adder"]),
            f"the agent only edits: {ms(seconds['editor'])}",
            f"{ratio:.2f}x",
            f"<= {GRADING_GOAL}x",
            verdict(ratio, at_most=GRADING_GOAL),
        )
    )
    huge = 200 if bench.sizes.candidates >= 40 else 40
    say(f"row 8d: gitgauge's peak memory, an agent writing {huge} MB vs 1 MB")
    task = _results(repo, "editor")[0]["task"]
    peaks: dict[int, int] = {}
    for megabytes in (1, huge):
        config = _config(bench, f"writer{megabytes}", writer(megabytes))
        _, env = bench.test_log(f"writer-{megabytes}")
        ran = measure([*GITGAUGE, "run", "--task", str(task), "-c", str(config)], cwd=repo, env=env)
        (result,) = _results(repo, f"writer{megabytes}")
        expected = "patch-too-large" if megabytes == huge else None
        if result.get("errorKind") != expected:
            raise BenchError(f"row 8d: {megabytes} MB ended {result.get('errorKind')}")
        if ran.peak_kib is None:
            bench.rows.append(Row("8d", "peak memory, huge file", "n/a (no /proc)", "-", "-"))
            return
        peaks[megabytes] = ran.peak_kib
    ratio = peaks[huge] / peaks[1]
    bench.rows.append(
        Row(
            "8d",
            f"gitgauge's peak memory, the agent writes {huge} MB (over run.limits)",
            f"{peaks[huge] / 1024:.0f} MiB",
            f"the agent writes 1 MB: {peaks[1] / 1024:.0f} MiB",
            f"{ratio:.2f}x",
            f"<= {MEMORY_GOAL}x",
            verdict(ratio, at_most=MEMORY_GOAL),
        )
    )
