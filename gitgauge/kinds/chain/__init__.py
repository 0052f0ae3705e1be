"""`kind: rebase` and `kind: commits`: a file-commit chain of your history cleaned up in an
interactive rebase, or committed anew (`mine --chains`). What both share is `kind.py` (the checks
and the judge's turn); each kind is a module of its own; `mine.py` finds the chains, `judge.py`
asks a model to compare a series with the original.
"""

# Imported in the order reports show the kinds.
# isort: off
from gitgauge.kinds.chain import rebase, commits
# isort: on

__all__ = ["rebase", "commits"]
