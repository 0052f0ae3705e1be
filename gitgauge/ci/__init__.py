"""`gitgauge ci`: a pull request's harness change (CLAUDE.md, AGENTS.md, .claude/) measured on
the repository's own tasks and posted as one comment, a module per responsibility: the CI's
context (`actions.py`), the harness files between two refs (`refs.py`), the two sides' configs
(`sides.py`), the task cache and sample (`tasks.py`), the GitHub REST API door (`github.py`),
the gate and the comment (`verdict.py`) and the use case (`flow.py`)."""
