"""The built-in task kinds, one package each, registered in `gitgauge.core.kinds` on import:
`fix` (a bug fix proved fail-to-pass), `merge` (a recorded merge's conflicts), `chain` (`rebase`
and `commits`: a file-commit chain cleaned up or committed anew) and `fixture` (a git-skill
fixture in a repository of its own). Each package is its kind's whole slice: how it is mined,
how a pair's workspace starts, how it is graded, its prompt and its report columns.

A new kind is one package here (a `TaskKind` subclass with `@register`) plus its import below;
see docs/architecture.md, "Task kinds".
"""

# Imported in the order reports show the kinds: the registry keeps registration order.
# isort: off
from gitgauge.kinds import fix, merge
from gitgauge.kinds import chain
from gitgauge.kinds import fixture
# isort: on

__all__ = ["fix", "merge", "chain", "fixture"]
