"""The built-in task kinds, one module each, registered in `gitgauge.core.kinds` on import:
`fix` (a bug fix proved fail-to-pass) and `merge` (a recorded merge's conflicts).

A new kind is one module here (a `TaskKind` subclass with `@register`) plus its imports below;
see docs/architecture.md, "Task kinds".
"""

from gitgauge.kinds import fix, merge

__all__ = ["fix", "merge"]
