"""The built-in task kinds, one module each, registered in `gitgauge.core.kinds` on import:
`fix` (a bug fix proved fail-to-pass), `merge` (a recorded merge's conflicts), `rebase` and
`commits` (a file-commit chain cleaned up or committed anew; shared code in `chain.py`) and
`fixture` (a git-skill fixture in a repository of its own).

A new kind is one module here (a `TaskKind` subclass with `@register`) plus its imports below;
see docs/architecture.md, "Task kinds".
"""

# Imported in the order reports show the kinds: the registry keeps registration order.
# isort: off
from gitgauge.kinds import fix, merge
from gitgauge.kinds import rebase, commits
from gitgauge.kinds import fixture
# isort: on

__all__ = ["fix", "merge", "rebase", "commits", "fixture"]
