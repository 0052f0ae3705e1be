"""Errors the core raises and the exit codes the CLI maps them to.

Only `cli/` prints and exits; everything else raises a `GitGaugeError` whose message says what
happened, to which file/key/commit, and what to do next. This module imports nothing from gitgauge.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, documented in the README."""

    OK = 0
    ERROR = 1  # an expected error: bad config, not a git repository, unknown task...
    USAGE = 2  # bad command-line usage (typer/click uses 2 as well)
    # `run` stopped a config whose agent cannot work (not logged in, a bad model, refused
    # credentials, no quota, an unreachable API, its command not found, or the same adapter
    # error in its first pairs) and finished the others: not a bad config (1), not a clean run
    # (0); a CI job can tell "fix the agent's setup, then --resume" from both.
    CONFIG_STOPPED = 3
    # `ci --fail-if` / `--min-rate`: the comparison ran and its verdict fails the gate the
    # workflow asked for (the comment is posted first).
    GATE_FAILED = 4
    # `ci` refused to run a pull request from a fork without `--allow-forks`: its harness files
    # are untrusted input an agent holding the API key would follow.
    CI_REFUSED = 5
    INTERRUPTED = 130  # SIGINT/SIGTERM: 128 + SIGINT, as shells report it


class GitGaugeError(Exception):
    """An expected failure with a one-line, actionable message."""

    exit_code: ExitCode = ExitCode.ERROR


class ConfigError(GitGaugeError):
    """gitgauge.yaml or an agent config is missing, unparsable or invalid."""


class NotAGitRepository(GitGaugeError):
    """The current directory is not inside a git work tree."""


class GitError(GitGaugeError):
    """A git command failed in a way gitgauge cannot work around."""


class TaskError(GitGaugeError):
    """A task file is missing, corrupt, or an id matches nothing."""


class UsageError(GitGaugeError):
    """A flag or argument has a value gitgauge cannot use."""

    exit_code = ExitCode.USAGE


class AdapterError(GitGaugeError):
    """An agent adapter cannot be set up at all (e.g. its binary is missing)."""


class ConfigStopped(GitGaugeError):
    """`run` stopped one or more configs whose first pairs all failed the same way that no
    retry fixes; the rest of the run finished."""

    exit_code = ExitCode.CONFIG_STOPPED


class Interrupted(GitGaugeError):
    """The user pressed Ctrl-C or the process got SIGTERM; cleanup has run."""

    exit_code = ExitCode.INTERRUPTED


class GateFailed(GitGaugeError):
    """`gitgauge ci`'s verdict fails the gate `--fail-if` or `--min-rate` set."""

    exit_code = ExitCode.GATE_FAILED


class CiRefused(GitGaugeError):
    """`gitgauge ci` will not run this pull request (from a fork, without `--allow-forks`)."""

    exit_code = ExitCode.CI_REFUSED
