"""The built-in export formats, registered on import (`formats.FORMATS` imports this)."""

from gitgauge.exporting import harbor, swebench

__all__ = ["harbor", "swebench"]
