"""One generic registry for every extension point: task kinds, agent adapters, executors and
export formats. A registry maps a name to a thing, keeps registration order (reports list the
kinds in it), loads its built-ins on first use (by importing the module that registers them, the
way a plugin registry loads its entry points), and says, for an unknown name, which names exist.

    ADAPTERS: Registry[type[Adapter]] = Registry("adapter", builtins="...adapters.builtins")

    @ADAPTERS.register("script")
    class Script(Adapter): ...

    ADAPTERS.get("script")        # the class; an unknown name raises, listing the known ones
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from gitgauge.core.errors import GitGaugeError, TaskError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names -> registered things of one extension point."""

    def __init__(
        self,
        what: str,
        *,
        builtins: str | None = None,
        error: type[GitGaugeError] = TaskError,
    ) -> None:
        self.what = what
        """What one entry is, for messages (`task kind`, `adapter`)."""
        self.builtins = builtins
        """The module whose import registers the built-in entries (imported on first use)."""
        self.error = error
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        """Register `entry` under `name` (a later registration of the name replaces it)."""
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Forget the entry called `name` (a test's own kind, once the test is done)."""
        self._entries.pop(name, None)

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator registering what it decorates under `name`."""

        def decorate(entry: T) -> T:
            return self.add(name, entry)

        return decorate

    def find(self, name: str) -> T | None:
        """The entry called `name`, or None."""
        self._load_builtins()
        return self._entries.get(name)

    def get(self, name: str) -> T:
        """The entry called `name`; an unknown one is an `error` listing the known ones."""
        found = self.find(name)
        if found is None:
            raise self.error(f"unknown {self.what} {name!r} (known: {', '.join(self.sorted())})")
        return found

    def names(self) -> list[str]:
        """Every name, in registration order."""
        self._load_builtins()
        return list(self._entries)

    def sorted(self) -> list[str]:
        return sorted(self.names())

    def __iter__(self) -> Iterator[T]:
        return iter([self._entries[name] for name in self.names()])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def _load_builtins(self) -> None:
        # Every time, not only while empty: a thread that finds the registry half filled (another
        # thread is importing the built-ins) waits here for that import to finish.
        if self.builtins is not None:
            importlib.import_module(self.builtins)
