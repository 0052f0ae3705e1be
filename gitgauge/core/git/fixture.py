"""A git-skill fixture's own directory, and the one runner of a fixture's shell commands.

A fixture (`kinds/fixture/`) brings its repository as shell commands (`setup`), from a pack the
user imported: data, not gitgauge's code. They run here, with bash, in the sandbox when there is
one (`core/sandbox.py`), under a pinned environment, so the same fixture builds the same
repository on every machine and for every pair:

- author, committer and their dates fixed, `TZ=UTC`, `LC_ALL=C.UTF-8`;
- no system git configuration and none of the user's: the global configuration is a file of the
  pair's own (identity, `init.defaultBranch=main`, `protocol.file.allow=always`, no signing), so a
  fixture's own `git config user.name` still wins and its `git config --global` stays inside;
- no editor or pager that would wait for a person (`GIT_EDITOR=true`, `GIT_PAGER=cat`).

The pair's whole directory (`pair/`: the repository `repo/` and the siblings a setup makes, such
as `../lib-bare`) is writable; nothing else of gitgauge's is. The same runner executes what a
fixture asks of its repository (a `self_check`, a `git_output` assertion) and a text-mode answer's
commands. `Snapshot` reads the repository's work tree through a git directory and index of
gitgauge's own (never through the fixture's `.git`), for the diff an agent's work made.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitgauge.core import process
from gitgauge.core.errors import GitGaugeError
from gitgauge.core.git.checkout import (
    AgentDiff,
    diff_records,
    init_git_dir,
    owned_git,
    write_patch,
)
from gitgauge.core.sandbox import Mounts, Sandbox

PINNED_DATE = "2024-01-01T00:00:00+00:00"
IDENTITY_NAME = "GitBench Fixture"
IDENTITY_EMAIL = "fixture@gitgauge.invalid"
GLOBAL_CONFIG = (
    f"[user]\n\tname = {IDENTITY_NAME}\n\temail = {IDENTITY_EMAIL}\n"
    "[init]\n\tdefaultBranch = main\n"
    '[protocol "file"]\n\tallow = always\n'
    "[commit]\n\tgpgsign = false\n"
    "[tag]\n\tgpgsign = false\n"
    "[advice]\n\tdetachedHead = false\n"
)
"""The pair's own global git configuration (what `protocol.file.allow` local submodules need)."""
TOLERATED_FAILURE = re.compile(r"\s*git\s+(?:merge|rebase|cherry-pick)(?:\s|$)")
"""Setup commands whose exit 1 is the state wanted (a conflict), not a failure."""
COMMAND_SECONDS = 60.0
"""One fixture command (a setup step, a probe, an answer's command)."""
ANSWER_ENV = "GITGAUGE_ANSWER"
AFTER_AGENT_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("log.showSignature", "false"),
)
"""Settings for what reads a repository an agent has configured (`hardened`): a program it
named as fsmonitor, hook or signature checker does not run while gitgauge reads the state."""
OUTPUT_LIMIT = 1 << 20
"""What of a command's output is kept (a fixture's probes print a log, a diff, a file)."""


class FixtureSetupFailed(GitGaugeError):
    """A fixture's setup command failed: the fixture is broken (or needs what is missing here)."""


@dataclass(frozen=True)
class ShellOutput:
    """What one fixture command printed."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def failure(self) -> str:
        said = " ".join((self.stderr.strip() or self.stdout.strip()).split())[-300:]
        what = "timed out" if self.timed_out else f"exited {self.exit_code}"
        return f"`{self.command}` {what}" + (f": {said}" if said else "")


def pinned_git_env(home: Path) -> dict[str, str]:
    """The git side of the pinned environment: the pair's global config, fixed dates, no
    editor or pager (the agent gets it too, with its own HOME)."""
    return {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_DATE": PINNED_DATE,
        "GIT_COMMITTER_DATE": PINNED_DATE,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_EDITOR": "true",
        "GIT_SEQUENCE_EDITOR": "true",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "TZ": "UTC",
        "LC_ALL": "C.UTF-8",
    }


def without_git_variables(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without any GIT_* variable: an inherited GIT_AUTHOR_NAME or GIT_CONFIG_COUNT
    would make the fixture's repository the user's, not the pack's."""
    return {key: value for key, value in env.items() if not key.startswith("GIT_")}


class FixtureDirectory:
    """One pair's fixture directory, in a temporary holder of gitgauge's:

    - `pair/`: the fixture's own directory, the repository `pair/repo/` and the siblings its
      setup makes; writable for the fixture's commands and an agent-mode agent;
    - `home/`: HOME of the fixture's commands and the global git config of everything that
      runs git there (the agent's too);
    - `answer/`: where `$GITGAUGE_ANSWER` points;
    - `scratch/`: where a text-mode agent works (no repository in sight);
    - `snapshot.git`: gitgauge's own git directory over `pair/repo/` (`Snapshot`).
    """

    def __init__(self, holder: Path) -> None:
        self.holder = holder
        self.root = holder / "pair"
        self.repo = self.root / "repo"
        self.home = holder / "home"
        self.answer_dir = holder / "answer"
        self.answer_file = self.answer_dir / "answer.txt"
        self.scratch = holder / "scratch"

    @classmethod
    def make(cls, holder: Path) -> FixtureDirectory:
        """The directory's folders in `holder` (an empty directory of gitgauge's, removed by
        its owner)."""
        made = cls(holder)
        for folder in (made.repo, made.home, made.answer_dir, made.scratch):
            folder.mkdir(parents=True)
        (made.home / ".gitconfig").write_text(GLOBAL_CONFIG, encoding="utf-8")
        return made

    # -- environments and mounts ---------------------------------------------------------------

    def command_env(self) -> dict[str, str]:
        """The pinned environment of the fixture's own commands (setup, probes, answers)."""
        env = without_git_variables(process.clean_env(cwd=self.repo))
        return {**env, "HOME": str(self.home), **pinned_git_env(self.home)}

    def agent_env(self) -> dict[str, str]:
        """What an agent's environment gets on top of its own: git pinned as for the setup
        (its HOME stays its own), and `$GITGAUGE_ANSWER`."""
        return {**pinned_git_env(self.home), ANSWER_ENV: str(self.answer_file)}

    def command_mounts(self) -> Mounts:
        return Mounts(workspace=self.repo, writable=(self.root, self.home))

    # -- running -------------------------------------------------------------------------------

    def run(
        self,
        command: str,
        *,
        sandbox: Sandbox | None,
        timeout_seconds: float = COMMAND_SECONDS,
        env: Mapping[str, str] | None = None,
        wrapper: Sequence[str] | None = None,
        cwd: Path | None = None,
        hardened: bool = False,
    ) -> ShellOutput:
        """`command` with bash in the repository, in the sandbox (the pair's directory
        writable), under the pinned environment (or `env` and `wrapper`, an agent's own, for
        gold's commands); `hardened` after an agent worked there (`AFTER_AGENT_CONFIG`)."""
        if wrapper is None:
            wrapper = sandbox.argv(self.command_mounts(), agent=False) if sandbox else ()
        environment = dict(env) if env is not None else self.command_env()
        if hardened:
            environment.update(_config_env(AFTER_AGENT_CONFIG))
        result = process.run(
            ["bash", "-c", command],
            cwd=cwd or self.repo,
            env=environment,
            timeout_seconds=timeout_seconds,
            tail_bytes=OUTPUT_LIMIT,
            wrapper=wrapper,
        )
        if result.start_error is not None:
            return ShellOutput(command, None, "", result.start_error)
        return ShellOutput(
            command, result.exit_code, result.stdout_tail, result.stderr_tail, result.timed_out
        )

    def run_all(
        self,
        commands: Sequence[str],
        *,
        sandbox: Sandbox | None,
        timeout_seconds: float,
        allowed: Sequence[tuple[int, ...] | None] | None = None,
    ) -> list[ShellOutput | None]:
        """`commands` in order, each with bash on its own (a `cd` does not carry over, as in
        GitBench), in ONE sandbox: a sandbox costs tens of milliseconds to start, a fixture
        has a dozen commands before its agent. Stops after a command whose exit code is not in
        its `allowed` codes (None: any); an entry is None for a command not reached. Only for
        what runs before any agent: every command can write the others' output files."""
        batch = self.holder / f"batch-{os.urandom(4).hex()}"
        batch.mkdir()
        limit = f"timeout -k 5 {COMMAND_SECONDS:g} " if shutil.which("timeout") else ""
        lines = ["set +e"]
        for index, command in enumerate(commands):
            out = shlex.quote(str(batch / str(index)))
            lines.append(
                f"{limit}bash -c {shlex.quote(command)} </dev/null >{out}.out 2>{out}.err; "
                f"echo $? >{out}.code"
            )
            codes = allowed[index] if allowed is not None else None
            if codes is not None:
                tests = " || ".join(f"[ $(cat {out}.code) = {code} ]" for code in codes)
                lines.append(f"{{ {tests}; }} || exit 0")
        mounts = Mounts(workspace=self.repo, writable=(self.root, self.home, batch))
        process.run(
            ["bash", "-c", "\n".join(lines)],
            cwd=self.repo,
            env=self.command_env(),
            timeout_seconds=timeout_seconds,
            wrapper=sandbox.argv(mounts, agent=False) if sandbox else (),
        )
        found: list[ShellOutput | None] = []
        for index, command in enumerate(commands):
            code = _read(batch / f"{index}.code").strip()
            if not code:
                found.append(None)
                continue
            exit_code = int(code) if code.isdigit() else None
            found.append(
                ShellOutput(
                    command,
                    exit_code,
                    _read(batch / f"{index}.out"),
                    _read(batch / f"{index}.err"),
                    timed_out=exit_code == 124 and bool(limit),
                )
            )
        return found

    def build(
        self, setup: Sequence[str], *, sandbox: Sandbox | None, timeout_seconds: float
    ) -> None:
        """Run the fixture's setup commands in order (`run_all`); exit 1 of `git merge`,
        `git rebase` or `git cherry-pick` is the conflict the fixture wants. Anything else
        failing raises `FixtureSetupFailed` naming the command."""
        allowed = [(0, 1) if TOLERATED_FAILURE.match(command) else (0,) for command in setup]
        ran = self.run_all(setup, sandbox=sandbox, timeout_seconds=timeout_seconds, allowed=allowed)
        for index, (command, output) in enumerate(zip(setup, ran, strict=True)):
            if output is None:
                raise FixtureSetupFailed(f"setup.{index}: `{command}` not reached in time")
            if output.exit_code not in allowed[index]:
                raise FixtureSetupFailed(f"setup.{index}: {output.failure()}")

    def read_answer(self) -> str | None:
        """What the agent wrote to `$GITGAUGE_ANSWER` (a plain file only), or None."""
        try:
            if not self.answer_file.is_file() or self.answer_file.is_symlink():
                return None
            with open(self.answer_file, "rb") as handle:
                return handle.read(OUTPUT_LIMIT).decode("utf-8", "replace")
        except OSError:
            return None


def _config_env(settings: Sequence[tuple[str, str]]) -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(OUTPUT_LIMIT).decode("utf-8", "replace")
    except OSError:
        return ""


class Snapshot:
    """The work tree of a fixture's repository read through gitgauge's own git directory and
    index (`snapshot.git` in the holder): what the agent changed, as a tree and a diff. The
    fixture's `.git`, and any repository nested in the work tree (a submodule's checkout), are
    left out and never entered."""

    def __init__(self, directory: FixtureDirectory) -> None:
        self.work_tree = directory.repo
        self.git_dir = directory.holder / "snapshot.git"
        self.index = directory.holder / "snapshot.index"
        init_git_dir(self.git_dir, stores=())

    def _git(self, *args: str) -> str:
        return owned_git(self.git_dir, *args, work_tree=self.work_tree, index=self.index)

    def read(self, *, exclude: Sequence[str] = ()) -> str:
        """The work tree (but `exclude` and nested repositories) as a tree of gitgauge's."""
        self.index.unlink(missing_ok=True)
        skipped = [*_nested_repositories(self.work_tree), *exclude]
        self._git("add", "--all", "--", ".", *(f":(exclude,literal){path}" for path in skipped))
        return self._git("write-tree").strip()

    def diff(self, start: str, end: str) -> AgentDiff:
        return diff_records(self.git_dir, start, end, work_tree=self.work_tree, index=self.index)

    def write_patch(self, start: str, end: str, dest: Path, *, limit_bytes: int) -> int | None:
        return write_patch(
            self.git_dir,
            start,
            end,
            work_tree=self.work_tree,
            index=self.index,
            dest=dest,
            limit_bytes=limit_bytes,
        )


def _nested_repositories(root: Path) -> list[str]:
    """Directories below `root` that hold a `.git` (a submodule's checkout, a clone)."""
    nested: list[str] = []
    for here, dirs, files in os.walk(root):
        path = Path(here)
        if path != root and (".git" in dirs or ".git" in files):
            nested.append(path.relative_to(root).as_posix())
            dirs[:] = []
            continue
        dirs[:] = [name for name in dirs if name != ".git"]
    return nested
