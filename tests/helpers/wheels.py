"""A pure-Python wheel written by hand (a zip of the module and its `.dist-info`), so a test can
give a project a dependency that no registry and no interpreter of this machine has: pip (or uv)
installs it offline from a folder named by `--find-links` (`PIP_FIND_LINKS`, `UV_FIND_LINKS`)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def write_wheel(folder: Path, name: str, version: str, module: str) -> Path:
    """`folder/<name>-<version>-py3-none-any.whl` holding `<name>.py` with `module`'s text."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}.py": module,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: gitgauge-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
    }
    records = []
    for path, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        records.append(f"{path},sha256={encoded},{len(text.encode())}")
    records.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(records) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel
