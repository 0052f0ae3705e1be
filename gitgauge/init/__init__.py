"""`gitgauge init`: a working gitgauge.yaml from what the project's own files say, one module a
responsibility:

- `template.py`: the commented template (`.gitgauge-template/`) and `gitgauge examples`;
- `files.py`: the project's files as the checkouts will hold them (HEAD's paths, their text);
- `python.py`, `javascript.py`: what a Python or a JavaScript project's files say (runner,
  layout, interpreter, package manager, the command that runs only the tests, per-test reports);
- `commandline.py`: a package.json script read as shell words (which part runs the tests);
- `declared.py`, `environment.py`: what a project declares it needs, and the environment
  `init --env` makes from it (uv, else python -m venv and pip; `npm ci` for JavaScript);
- `measure.py`: the detected command run once at HEAD as `mine` runs it, and the timeouts from it;
- `render.py`: the file written, and the change proposed to an existing one (a diff);
- `flow.py`: the use case the CLI calls (`run_init`).
"""

from __future__ import annotations

from gitgauge.init.template import (
    EXAMPLES_DIR,
    TEMPLATE_FILES,
    InitOutcome,
    init,
    template_text,
    write_examples,
)

__all__ = [
    "EXAMPLES_DIR",
    "TEMPLATE_FILES",
    "InitOutcome",
    "init",
    "template_text",
    "write_examples",
]
