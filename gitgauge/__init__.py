"""gitgauge: mine fail-to-pass tasks from a repository's own history and compare agent setups."""

__version__ = "0.1.0"
