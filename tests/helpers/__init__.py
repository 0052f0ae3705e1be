"""The code the tests share, by responsibility; conftest.py holds only pytest's hooks and
fixtures. A test module imports what it needs from here (`from helpers.repos import GitRepo`),
never from conftest.

- `repos/`: `GitRepo` (a real repository built with the git CLI, commits at pinned dates),
  `new_repo`, the sample projects' test runner (`runner_source`, `RUN_TESTS`); the histories of
  `chains` (file-commit chains), `merges` (merges of each kind), `sample` (the mining
  sample project, its config and environment) and `tagged` (a project whose suite asserts the
  version it reads from its tags).
- `cli`: the real CLI, `run_gitgauge` (through `prestarted`), `start_gitgauge`, and a process
  left running (`start_in_background`, `in_background`).
- `prestarted`: the per-worker server that forks `python -m gitgauge` runs (also its program).
- `environment`: `isolate` (HOME and git's config in the test's directory), `isolated`,
  `path_without_claude`.
- `processes`: `pid_alive`, `processes_with`, waiting for a process or a file.
- `results`: reading what gitgauge wrote (runs in order, results, tasks, a journal, `mine`'s
  summary), and `watch` (a kind's module fixture watching its checkout, journal and temporary
  folder).
- `records`: records made by hand (`fix_task`, `result`).
- `configs`: agent configs written for a run and their `-c` arguments.
- `demo`: the mined demo as the `gitgauge run` tests use it.
- `actions`: GitHub Actions' `pull_request` job for `gitgauge ci` (the pull request's commits, the
  event file, the runner's variables, the check's comment among the fake GitHub's).
- `adapters`: an adapter's context outside `gitgauge run`.
- `harbor`: exported Harbor folders loaded by Harbor's own task model (or its documented
  layout), and their `solution/solve.sh` and `tests/test.sh` run on a copy of the base.
- `workspace`: acting as the agent in a pair's real workspace.
- `ray_cluster`: a real two-node Ray cluster on loopback addresses, once per module (`cluster`),
  the flags and run folder the Ray tests read, the environments with no Ray and with another
  gitgauge version, and the interrupt and node-kill helpers (`marks`).
- `node_pair`: a pair planned and run on a node in this process (`plan`, `node_run`, `run_pair`).
- `demo_runs`: `gitgauge run` on the demo with fake-claude configs, and its results.
- `pytest_project`: the small pytest project the mining and export tests share (its first
  files, the fixes and the tests that prove them).
- `chain_judge`: the fake chain judge (`fewer_commits_win`) and the series a judge request shows.
- `hostile`: issue 34's one-task project and the cheats every kind of task is attacked with.
- `wheels`: a pure-Python wheel written by hand (an offline dependency for `init --env`).
- `files`: `write_files`, a folder of plain files written by hand.
- `fixture_tasks`: fixture tasks (GitBench's format) by hand: a fixture read by the real format
  checker, its probes run on a repository, a pair's repository state, a scorer's verdict.
- `js_words`: the words project the JavaScript tests mine, and mocha and tape from
  `$GITGAUGE_JS_RUNNERS` linked into it (`js_runners`, `linked_repo`, `commit_words`).
- `components`: real components (`require`: skipped locally, failed under `CI=true`; bubblewrap;
  the real claude CLI and its offline environment).
- `fakes/`: the fake `claude` executable, and loopback fakes of the Anthropic Messages API,
  the OpenAI Responses API and GitHub's REST API for a pull request's comments (`github_api`),
  on one server (`fakes.loopback`).

Two files here run as programs, so they import only the standard library: `prestarted.py`
(started by path as the server) and `fakes/claude.py` (run by path through its `#!` line).
"""
