"""``Registry``: named things of one kind (methods, benchmarks...), looked up with a did-you-mean.

Each kind keeps its own module-level API (``register_method``/``get_method``,
``register_benchmark``/``get_benchmark``); this is what they share, so an
unknown name reads the same everywhere.
"""
from __future__ import annotations

import difflib
from typing import Generic, Iterator, TypeVar

from kgsql.errors import KgsqlError, UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """Items by name, in registration order; ``get`` of an unknown name raises ``error`` with the closest name."""

    def __init__(self, kind: str, *, error: type[KgsqlError] = UnknownNameError, sorted_names: bool = False) -> None:
        self.kind = kind
        self.error = error
        self.sorted_names = sorted_names
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        self._items[name] = item
        return item

    def unregister(self, name: str) -> T | None:
        """Forget ``name`` (tests register and remove their own)."""
        return self._items.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._items) if self.sorted_names else list(self._items)

    def get(self, name: str) -> T:
        if name not in self._items:
            close = difflib.get_close_matches(name, list(self._items), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise self.error(f"unknown {self.kind} '{name}'{hint} (known: {', '.join(self.names())})")
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def values(self) -> list[T]:
        return list(self._items.values())
