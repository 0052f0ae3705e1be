"""The built wheel carries what `gitgauge init` and the demo need, and works installed (not
editable) in a fresh virtualenv, without network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import gitgauge

PROJECT_ROOT = Path(__file__).parents[1]
# Build artefacts and caches of a developer's checkout must not leak into the wheel under test.
_NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".venv",
    "venv",
    ".gitgauge",
)


def run(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (_importable("setuptools") and _importable("wheel")):
        pytest.fail("building the wheel needs setuptools and wheel: pip install -e '.[test]'")
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    shutil.copytree(PROJECT_ROOT, source, ignore=_NOT_SOURCES, symlinks=True)
    dist = base / "dist"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--quiet", "-w", str(dist), str(source)],
        cwd=base,
    )
    [built] = dist.glob("gitgauge-*.whl")
    return built


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_the_wheel_holds_every_module_of_the_package(wheel: Path) -> None:
    # pyproject.toml lists the packages by hand (two are data folders mapped in): a new
    # sub-package missing from that list would import here and fail once installed.
    names = set(zipfile.ZipFile(wheel).namelist())
    source = Path(gitgauge.__file__).parent
    modules = {
        path.relative_to(source.parent).as_posix()
        for path in source.rglob("*.py")
        if "demo_sample" not in path.parts
    }
    assert modules - names == set()


def test_wheel_contains_the_init_templates_and_the_demo_sample(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "gitgauge/template/gitgauge.yaml" in names
    assert "gitgauge/template/gitignore" in names
    assert "gitgauge/demo_sample/history.yaml" in names
    assert "gitgauge/__main__.py" in names
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("gitgauge/template/gitgauge.yaml").decode("utf-8")
    assert shipped == (PROJECT_ROOT / ".gitgauge-template" / "gitgauge.yaml").read_text(
        encoding="utf-8"
    )
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        assert "gitgauge = gitgauge.cli:main" in archive.read(entry_points).decode("utf-8")


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel installed; its dependencies come from this interpreter."""
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        cwd=venv.parent,
    )
    python = venv / "bin" / "python"
    venv_site = Path(
        run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=venv.parent,
        ).strip()
    )
    if sys.prefix != sys.base_prefix:
        # This interpreter is itself a virtualenv, whose packages --system-site-packages does not
        # see: offer them through a .pth file, less the editable gitgauge of this checkout.
        farm = venv / "test-env-packages"
        farm.mkdir()
        for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
            for entry in Path(site).iterdir():
                lowered = entry.name.lower()
                if lowered.startswith(("gitgauge", "__editable__")) or entry.suffix == ".pth":
                    continue
                if not (farm / entry.name).exists():
                    (farm / entry.name).symlink_to(entry)
        (venv_site / "test-env-packages.pth").write_text(f"{farm}\n", encoding="utf-8")
    run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", "--no-index", "--force-reinstall", str(wheel)],
        cwd=venv.parent,
        env=_clean_env(),
    )
    return venv


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def test_installed_package_comes_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    location = run(
        [str(installed / "bin" / "python"), "-c", "import gitgauge; print(gitgauge.__file__)"],
        cwd=tmp_path,
        env=_clean_env(),
    )
    assert Path(location.strip()).resolve().is_relative_to(installed.resolve())


def test_installed_gitgauge_init_writes_both_files(installed: Path, tmp_path: Path) -> None:
    repo = tmp_path / "project"
    (repo / "src").mkdir(parents=True)
    run(["git", "init", "-q", str(repo)], cwd=tmp_path)

    output = run([str(installed / "bin" / "gitgauge"), "init"], cwd=repo / "src", env=_clean_env())

    assert (repo / "gitgauge.yaml").read_text(encoding="utf-8") == (
        PROJECT_ROOT / ".gitgauge-template" / "gitgauge.yaml"
    ).read_text(encoding="utf-8")
    assert (repo / ".gitgauge" / ".gitignore").is_file()
    assert "created" in output


def test_installed_python_dash_m_gitgauge_version(installed: Path, tmp_path: Path) -> None:
    output = run(
        [str(installed / "bin" / "python"), "-m", "gitgauge", "--version"],
        cwd=tmp_path,
        env=_clean_env(),
    )
    assert output.strip() == f"gitgauge {gitgauge.__version__}"
