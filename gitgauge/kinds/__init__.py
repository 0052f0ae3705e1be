"""The built-in task kinds, one module each, registered in `gitgauge.core.kinds` on import:
`fix` (a bug fix proved fail-to-pass), `merge` (a recorded merge's conflicts) and `fixture` (a
git-skill fixture in a repository of its own).

A new kind is one module here (a `TaskKind` subclass with `@register`) plus its imports below;
see docs/architecture.md, "Task kinds".
"""

from gitgauge.kinds import fix, fixture, merge

__all__ = ["fix", "fixture", "merge"]
