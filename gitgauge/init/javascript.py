"""What a JavaScript project's files say about running its tests: the package manager (its lock
file), the test runner (package.json's test script, else its dependencies), the command that runs
only the tests (the runner itself from `node_modules/.bin`, never `npm test`, whose pre- and
post-scripts run linters and audits too), `node_modules` linked into every checkout, and per-test
reports as docs/guide/per-test-verdicts.md gives them for each runner."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gitgauge.core import process
from gitgauge.init.commandline import Word, commands, words
from gitgauge.init.files import ProjectFiles, json_document
from gitgauge.init.records import Choice, Detected, Unreadable

RUNNERS = ("vitest", "jest", "mocha", "ava", "tape")
"""The runners read from package.json, in the order its dependencies are tried."""
LOCK_FILES = (
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
    ("yarn.lock", "yarn"),
    ("pnpm-lock.yaml", "pnpm"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
)
PACKAGE_MANAGERS = ("npm", "yarn", "pnpm", "bun")
WRAPPERS = ("npx", "cross-env", "env", "nyc", "c8")
"""Words before the runner that only start it (coverage, variables): the runner runs alone."""
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
NODE_JUNIT = (20, 13)
"""node's test runner writes JUnit XML from 20.13 on; before, its TAP is read."""
REPORT = '"$GITGAUGE_JUNIT_XML"'
LOOKED_FOR = (
    "test script running mocha, jest, vitest, tape, ava or `node --test` (or one of them in "
    "its dependencies)"
)

# Options each runner's reporting replaces, or that would keep it watching instead of exiting.
DROPPED: dict[str, tuple[str, ...]] = {
    "mocha": ("--reporter", "-R", "--reporter-options", "--reporter-option", "-O"),
    "jest": ("--reporters",),
    "vitest": ("--reporter", "--outputFile"),
    "node": ("--test-reporter", "--test-reporter-destination"),
    "ava": (),
    "tape": (),
}
WATCH = ("--watch", "-w", "--watchAll")


@dataclass(frozen=True)
class Invocation:
    runner: str
    """mocha, jest, vitest, tape, ava, or node (`node --test`)."""
    assignments: tuple[str, ...]
    """Variables the script sets for it (`NODE_ENV=test`), as written."""
    args: tuple[Word, ...]
    source: str


def detect_javascript(
    files: ProjectFiles, *, env: Mapping[str, str]
) -> Detected | Unreadable | None:
    """The command that runs only the project's tests, with how each part was chosen; None
    without a package.json, `Unreadable` when it names no runner gitgauge knows."""
    if not files.has("package.json"):
        return None
    package, problem = json_document(files.text("package.json") or "")
    if package is None:
        return Unreadable(f"package.json is {problem}: could not read its test runner")
    found = package.get("scripts")
    scripts: dict[str, Any] = found if isinstance(found, dict) else {}
    invocation = _from_script(scripts, "test") or _from_dependencies(package, files)
    if invocation is None:
        return Unreadable(f"package.json has no {LOOKED_FOR}")
    manager, manager_source = _package_manager(files, package)
    pnp = files.has(".pnp.cjs") or files.has(".pnp.js")
    command, report = _command(
        invocation, package, env, prefix="yarn " if pnp else None, root=files.root
    )
    avoided = [f"{name} `{scripts[name]}`" for name in ("pretest", "posttest") if name in scripts]
    only = "; the runner alone" + (
        f" (not `{manager} test`, which also runs {' and '.join(avoided)})" if avoided else ""
    )
    choices = [
        Choice("package manager", manager, manager_source),
        Choice("testCommand", command, invocation.source + only),
        Choice("per-test reports", report, "docs/guide/per-test-verdicts.md"),
    ]
    link: tuple[str, ...] = ()
    notes: list[str] = []
    if not pnp:
        link = ("node_modules",)
        choices.insert(
            2,
            Choice(
                "worktree.link",
                "[node_modules]",
                "the repository's node_modules, hidden by the sandbox: linked into every checkout",
            ),
        )
        notes += _install_notes(files.root, invocation.runner, manager)
    return Detected(
        "javascript", command, link, tuple(choices), tuple(notes), package_manager=manager
    )


def _from_script(scripts: Mapping[str, Any], name: str, depth: int = 0) -> Invocation | None:
    """The runner a script starts, following `npm run X` (and yarn's, pnpm's, bun's)."""
    script = scripts.get(name)
    if not isinstance(script, str) or depth > 5:
        return None
    for command in commands(script):
        assignments, rest = _leading(words(command))
        if not rest:
            continue
        program = PurePosixPath(rest[0].value).name
        if program in RUNNERS or (program == "node" and any(w.value == "--test" for w in rest)):
            source = f"package.json scripts.{name}: `{command}`"
            return Invocation(program, tuple(assignments), tuple(rest[1:]), source)
        if program in PACKAGE_MANAGERS:
            target = _script_named(program, [word.value for word in rest[1:]])
            found = _from_script(scripts, target, depth + 1) if target else None
            if found is not None:
                return found
    return None


def _leading(command: list[Word]) -> tuple[list[str], list[Word]]:
    """(the variables set before the program, the program and its arguments), past the words
    that only start it (`npx`, `cross-env`, coverage tools and their options)."""
    assignments: list[str] = []
    wrapped = False
    index = 0
    while index < len(command):
        value = command[index].value
        if ASSIGNMENT.match(value):
            assignments.append(command[index].raw)
        elif value in WRAPPERS:
            wrapped = True
        elif not (wrapped and value.startswith("-")):  # else a wrapper's own option
            break
        index += 1
    return assignments, command[index:]


def _script_named(manager: str, args: list[str]) -> str | None:
    """The script `npm run X`, `npm test`, `yarn X`, `pnpm run X` or `bun run X` starts."""
    if not args:
        return None
    if args[0] in ("test", "t"):
        return "test"
    if args[0] in ("run", "run-script") and len(args) > 1:
        return args[1]
    if manager in ("yarn", "pnpm") and not args[0].startswith("-"):
        return args[0]
    return None


def _from_dependencies(package: Mapping[str, Any], files: ProjectFiles) -> Invocation | None:
    declared: dict[str, Any] = {}
    for key in ("devDependencies", "dependencies"):
        if isinstance(package.get(key), dict):
            declared.update(package[key])
    for runner in RUNNERS:
        if runner not in declared:
            continue
        args: tuple[Word, ...] = ()
        if runner == "tape":  # tape runs the files it is given, and has no default
            folder = next(
                (f for f in ("test", "tests") if any(p.startswith(f"{f}/") for p in files.paths)),
                None,
            )
            if folder is None:
                continue
            args = (Word(f"'{folder}/*.js'", f"{folder}/*.js"),)
        return Invocation(runner, (), args, f"package.json dependencies: {runner}")
    return None


def _package_manager(files: ProjectFiles, package: Mapping[str, Any]) -> tuple[str, str]:
    for name, manager in LOCK_FILES:
        if files.has(name) or (files.root / name).is_file():
            return manager, name
    declared = package.get("packageManager")
    if isinstance(declared, str) and declared.split("@")[0] in PACKAGE_MANAGERS:
        return declared.split("@")[0], f'package.json "packageManager": "{declared}"'
    return "npm", "no lock file: npm"


def _command(
    invocation: Invocation,
    package: Mapping[str, Any],
    env: Mapping[str, str],
    *,
    prefix: str | None,
    root: Path,
) -> tuple[str, str]:
    """(testCommand, how per-test reports arrive), as docs/guide/per-test-verdicts.md says."""
    runner = invocation.runner
    args = _kept(invocation.args, runner)
    program = "node" if runner == "node" else (prefix or "node_modules/.bin/") + runner
    before = list(invocation.assignments)
    if runner == "mocha":
        after = ["--reporter", "xunit", "--reporter-options", f"output={REPORT}"]
        report = "mocha's xunit reporter (JUnit XML, each test's file named)"
    elif runner == "vitest":
        args = [word for word in args if word not in ("run", "watch", "dev")]
        args.insert(0, "run")
        after = ["--reporter=default", "--reporter=junit", f"--outputFile.junit={REPORT}"]
        report = "vitest's junit reporter (JUnit XML)"
    elif runner == "jest" and _declares(package, "jest-junit"):
        before.append(f"JEST_JUNIT_OUTPUT_FILE={REPORT}")
        after = ["--reporters=default", "--reporters=jest-junit"]
        report = "jest-junit (JUnit XML)"
    elif runner == "jest":
        after = []
        report = "none: jest writes JUnit XML through jest-junit (npm i -D jest-junit, then init)"
    elif runner == "ava":
        after = ["--tap"]
        report = "TAP on stdout (ava --tap), read with nothing to configure"
    elif runner == "node" and _node_version(env, root) >= NODE_JUNIT:
        after = ["--test-reporter=junit", f"--test-reporter-destination={REPORT}"]
        report = "node's junit reporter (JUnit XML)"
    else:  # tape, and node's runner before 20.13
        after = []
        report = "TAP on stdout, read with nothing to configure"
    return " ".join([*before, program, *args, *after]), report


def _kept(args: tuple[Word, ...], runner: str) -> list[str]:
    """The script's arguments as written, less the reporter and watch options replaced."""
    dropped = DROPPED[runner]
    kept: list[str] = []
    skip_value = False
    for word in args:
        if skip_value:
            skip_value = False
            continue
        name = word.value.split("=", 1)[0]
        if name in WATCH or (name.split(".", 1)[0] in dropped):
            skip_value = "=" not in word.value and name not in WATCH
            continue
        kept.append(word.raw)
    return kept


def _declares(package: Mapping[str, Any], name: str) -> bool:
    return any(
        isinstance(package.get(key), dict) and name in package[key]
        for key in ("devDependencies", "dependencies")
    )


def _node_version(env: Mapping[str, str], root: Path) -> tuple[int, int]:
    result = process.run(["node", "--version"], cwd=root, env=dict(env), timeout_seconds=30)
    found = re.match(r"v(\d+)\.(\d+)", result.stdout_tail.strip()) if result.ok else None
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _install_notes(root: Path, runner: str, manager: str) -> list[str]:
    install = {
        "npm": "npm ci",
        "yarn": "yarn install",
        "pnpm": "pnpm install",
        "bun": "bun install",
    }
    modules = root / "node_modules"
    if not modules.is_dir():
        return [
            f"no node_modules yet: run `{install[manager]}` (or `gitgauge init --env`) before "
            "`gitgauge mine`; it is linked into every checkout"
        ]
    if runner != "node" and not (modules / ".bin" / runner).exists():
        return [f"node_modules/.bin/{runner} is missing: run `{install[manager]}`"]
    return []
