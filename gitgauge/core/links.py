"""Linked dependencies that point back into the user's checkout, and how each worktree gets its own.

`worktree.link: [.venv]` with the project installed editable (`pip install -e .`) links a venv
whose `__editable__*.pth` file (or finder module, or `direct_url.json`) names the checkout: every
worktree's tests would import the checkout's code, not the worktree's. An npm/pnpm/yarn workspace
has the same trap: `node_modules/<pkg>` is a symlink into the checkout's `packages/`.

`inspect` finds those references in every linked directory; then each worktree gets
- for Python, its own copies of those paths first on `PYTHONPATH` (`python_env`), which wins over
  the `.pth` entries and the editable finders (they come after `PYTHONPATH` on `sys.path` and
  `sys.meta_path`);
- for node, a real `node_modules` directory of symlinks to the checkout's entries, except that
  workspace packages point at the worktree's own copies (`link_into`).
A reference the worktree cannot have (a build directory git does not track) is a `LinkError`
that names the file and the fix.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from gitgauge.core.errors import GitGaugeError

_SITE_PACKAGES_GLOBS = (
    "lib/python*/site-packages",
    "lib64/python*/site-packages",
    "Lib/site-packages",
    "lib/site-packages",
)


class LinkError(GitGaugeError):
    """A linked directory points into the checkout in a way a worktree cannot follow."""


@dataclass(frozen=True)
class NodeLink:
    """A symlink in a linked directory that leads back into the checkout."""

    link_dir: str
    """The `worktree.link` entry holding it (`node_modules`)."""
    entry: str
    """Its path inside the linked directory (`@scope/pkg-a`)."""
    target: str
    """Where it leads, relative to the checkout (`packages/a`)."""


@dataclass
class Redirections:
    python_paths: list[str] = field(default_factory=list)
    """Checkout-relative directories the linked Python environment imports from (`src`, `.`)."""
    node_links: list[NodeLink] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    """One line per reference found: which file, pointing where."""

    def add_python(self, path: str, source: str) -> None:
        if path not in self.python_paths:
            self.python_paths.append(path)
        self.found.append(f"{source} imports from your checkout ({path or '.'})")


def inspect(source_root: Path, names: Sequence[str]) -> Redirections:
    """What the `worktree.link` directories of `source_root` point at inside `source_root`."""
    root = source_root.resolve()
    linked = [root / name for name in names]
    found = Redirections()
    editable: list[tuple[Path, str]] = []
    for name in names:
        top = source_root / name
        if not top.is_dir():  # a venv symlinked from elsewhere may still name the checkout
            continue
        for site in _site_dirs(top):
            _inspect_site(site, source_root, root, linked, found, editable)
        _inspect_node(top, name, source_root, root, linked, found)
    if editable and not found.python_paths:
        dist_info, project = editable[0]
        raise LinkError(
            f"{_show(dist_info, source_root)}: {dist_info.parent.name} is installed editable from "
            f"your checkout ({project or '.'}), and gitgauge cannot tell where it imports from, "
            f"so every worktree would test your checkout's code: remove it from worktree.link "
            f"and install into the worktree with setupCommand "
            f"(e.g. `python -m venv .venv && .venv/bin/pip install -e .`)"
        )
    return found


def python_env(
    redirections: Redirections, worktree: Path, *, inherited: str | None
) -> dict[str, str]:
    """`PYTHONPATH` with the worktree's own copies of the checkout's import paths first."""
    if not redirections.python_paths:
        return {}
    entries = [
        str(worktree / path) if path else str(worktree) for path in redirections.python_paths
    ]
    if inherited:
        entries.append(inherited)
    return {"PYTHONPATH": os.pathsep.join(entries)}


def worktree_env(source_root: Path, names: Sequence[str], worktree: Path) -> dict[str, str]:
    """The environment additions a command in `worktree` needs (see `python_env`)."""
    if not names:
        return {}
    return python_env(inspect(source_root, names), worktree, inherited=os.environ.get("PYTHONPATH"))


def announce(
    source_root: Path,
    names: Sequence[str],
    *,
    tracked: Callable[[str], bool],
    warn: Callable[[str], None],
) -> Redirections:
    """Inspect once before any work, saying what will be redirected. Raises `LinkError` when a
    reference leads to a part of the checkout git does not track (a build directory): a fresh
    worktree has no copy of it."""
    redirections = inspect(source_root, names)
    for path in redirections.python_paths + [n.target for n in redirections.node_links]:
        if not tracked(path):
            source = next(line for line in redirections.found if f"({path or '.'})" in line)
            raise LinkError(
                f"worktree.link: {source}, which git does not track, so a worktree has no copy "
                f"of it and would test your checkout's code: remove the directory from "
                f"worktree.link and install into the worktree with setupCommand "
                f"(e.g. `python -m venv .venv && .venv/bin/pip install -e .`)"
            )
    for line in redirections.found:
        warn(f"worktree.link: {line}; each worktree uses its own copy instead")
    return redirections


def link_into(source_root: Path, worktree: Path, name: str) -> bool:
    """Make `name` in the worktree a directory of symlinks to the checkout's entries, with the
    entries that lead back into the checkout re-pointed at the worktree's own copies. False
    when `name` has no such entries (a plain symlink of the whole directory does then)."""
    redirected = [n for n in inspect(source_root, [name]).node_links if n.link_dir == name]
    if not redirected:
        return False
    targets = {n.entry: worktree / n.target for n in redirected}
    _shadow(source_root / name, worktree / name, "", targets)
    return True


def _shadow(source: Path, dest: Path, prefix: str, targets: dict[str, Path]) -> None:
    dest.mkdir(parents=True)
    for entry in sorted(source.iterdir()):
        key = f"{prefix}{entry.name}"
        if key in targets:
            (dest / entry.name).symlink_to(targets[key], target_is_directory=True)
        elif any(k.startswith(key + "/") for k in targets):
            _shadow(entry, dest / entry.name, key + "/", targets)
        elif entry.name == ".bin" and entry.is_dir() and not entry.is_symlink():
            _copy_relative_links(entry, dest / entry.name)
        else:
            (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())


def _copy_relative_links(source: Path, dest: Path) -> None:
    """`.bin/tool -> ../pkg/cli.js`: copied as is, the link resolves inside the shadow directory
    (so a workspace package's binary runs the worktree's code)."""
    dest.mkdir()
    for entry in sorted(source.iterdir()):
        text = os.readlink(entry) if entry.is_symlink() else None
        if text is not None and not os.path.isabs(text):
            (dest / entry.name).symlink_to(text)
        else:
            (dest / entry.name).symlink_to(entry)


def _site_dirs(top: Path) -> list[Path]:
    dirs = [site for pattern in _SITE_PACKAGES_GLOBS for site in sorted(top.glob(pattern))]
    if any(top.glob("*.pth")):  # a linked site-packages or `--target` directory itself
        dirs.append(top)
    unique: dict[Path, Path] = {}
    for site in dirs:  # venvs link lib64 to lib
        unique.setdefault(site.resolve(), site)
    return list(unique.values())


def _inspect_site(
    site: Path,
    source_root: Path,
    root: Path,
    linked: list[Path],
    found: Redirections,
    editable: list[tuple[Path, str]],
) -> None:
    shown = _show(site, source_root)
    for pth in sorted(site.glob("*.pth")):
        for line in _lines(pth):
            if line.startswith(("import ", "import\t")):
                for module in _imported_modules(line):
                    finder = site / f"{module}.py"
                    for import_root in _finder_roots(finder) if finder.is_file() else []:
                        where = f"{shown}/{finder.name}"
                        _add_python(Path(import_root), where, root, linked, found)
            else:
                entry = Path(line) if os.path.isabs(line) else site / line
                _add_python(entry, f"{shown}/{pth.name}", root, linked, found)
    for egg_link in sorted(site.glob("*.egg-link")):
        lines = _lines(egg_link)
        if lines:
            _add_python(Path(lines[0]), f"{shown}/{egg_link.name}", root, linked, found)
    for entry in sorted(site.iterdir()):
        if entry.is_symlink():  # flit install --symlink: site-packages/pkg -> checkout/src/pkg
            target = entry.resolve()
            if _inside(target, root, linked):
                _add_python(target.parent, f"{shown}/{entry.name}", root, linked, found)
    for direct_url in sorted(site.glob("*.dist-info/direct_url.json")):
        project = _editable_project(direct_url)
        if project is not None and _inside(project, root, linked):
            editable.append((direct_url, _relative(project, root)))


def _add_python(
    path: Path, source: str, root: Path, linked: list[Path], found: Redirections
) -> None:
    resolved = path.resolve()
    if _inside(resolved, root, linked):
        found.add_python(_relative(resolved, root), source)


def _imported_modules(line: str) -> list[str]:
    try:
        tree = ast.parse(line)
    except SyntaxError:
        return []
    return [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]


def _finder_roots(finder: Path) -> list[str]:
    """The import roots an editable finder module maps to.

    setuptools writes `MAPPING = {'pkg': '/checkout/src/pkg'}` (the root is the path less the
    package's dotted name); other backends name the paths as plain strings (a package
    directory's root is its parent).
    """
    try:
        tree = ast.parse(finder.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
    roots: list[str] = []
    for node in ast.walk(tree):
        target: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id == "MAPPING" and isinstance(value, ast.Dict):
            for key, location in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(location, ast.Constant):
                    package, import_root = str(key.value), Path(str(location.value))
                    for _ in package.split("."):
                        import_root = import_root.parent
                    roots.append(str(import_root))
    if roots:
        return roots
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if os.path.isabs(text) and os.path.exists(text):
                named = Path(text)
                is_package = named.is_dir() and (named / "__init__.py").exists()
                roots.append(str(named.parent if is_package or named.suffix == ".py" else named))
    return roots


def _editable_project(direct_url: Path) -> Path | None:
    try:
        record = json.loads(direct_url.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not (record.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(record.get("url", "")))
    return Path(unquote(url.path)).resolve() if url.scheme == "file" else None


def _inspect_node(
    top: Path, name: str, source_root: Path, root: Path, linked: list[Path], found: Redirections
) -> None:
    """Symlinks among a linked directory's entries, and among its `@scope/` entries."""
    try:
        entries = sorted(top.iterdir())
    except OSError:
        return
    candidates: list[tuple[str, Path]] = []
    for entry in entries:
        if entry.name.startswith("@") and entry.is_dir() and not entry.is_symlink():
            candidates += [
                (f"{entry.name}/{child.name}", child) for child in sorted(entry.iterdir())
            ]
        else:
            candidates.append((entry.name, entry))
    for key, entry in candidates:
        if not entry.is_symlink():
            continue
        target = entry.resolve()
        if target.is_dir() and _inside(target, root, linked):
            relative = _relative(target, root)
            found.node_links.append(NodeLink(link_dir=name, entry=key, target=relative))
            found.found.append(f"{_show(entry, source_root)} links to your checkout ({relative})")


def _inside(path: Path, root: Path, linked: list[Path]) -> bool:
    """Inside the checkout, and not inside a linked directory (those are shared by design)."""
    if not path.is_relative_to(root):
        return False
    return not any(path.is_relative_to(link.resolve()) for link in linked if link.exists())


def _relative(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return "" if relative == "." else relative


def _show(path: Path, source_root: Path) -> str:
    try:
        return path.relative_to(source_root).as_posix()
    except ValueError:
        return str(path)


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
