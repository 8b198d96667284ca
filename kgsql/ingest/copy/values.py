"""Values of a copy: each stored SQLite value converted to its column's target type.

Why: a column that falls back to text must hold the text SQLite itself
gives its numbers (``CAST(x AS TEXT)``: ``1.0``, ``1.0e+20``, 15 significant
digits), or queries comparing that text would answer differently on the
copy; NUL characters, which PostgreSQL's text cannot hold, are removed and
counted for the load report.
"""
from __future__ import annotations

import decimal
import functools
from typing import Any

from kgsql.ingest.copy.types import Logical

__all__ = ["convert"]


def _cast_text(value: Any) -> str:
    """SQLite's text of a number (``CAST(x AS TEXT)``): ``1.0``, ``1.0e+20``, 15 significant digits."""
    return str(value) if isinstance(value, int) else _sqlite_float_text(float(value))


@functools.lru_cache(maxsize=65_536)
def _sqlite_float_text(value: float) -> str:
    global _MEMORY
    if _MEMORY is None:
        from kgsql.db.connect import sqlite3

        _MEMORY = sqlite3.connect(":memory:", check_same_thread=False)
    return str(_MEMORY.execute("SELECT CAST(? AS TEXT)", (value,)).fetchone()[0])


_MEMORY: Any = None


def convert(value: Any, logical: Logical, nuls: list[int]) -> Any:
    """A stored value as the target column holds it; ``nuls[0]`` counts the texts NUL characters were removed from."""
    if value is None:
        return None
    kind = logical.kind
    if kind in ("text", "varchar", "date", "timestamp", "time"):
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", errors="replace")
        text = value if isinstance(value, str) else _cast_text(value)
        if "\x00" in text:
            nuls[0] += 1
            text = text.replace("\x00", "")
        return text
    if kind == "double":
        return float(value)
    if kind == "numeric":
        return decimal.Decimal(repr(value)) if isinstance(value, float) else decimal.Decimal(value)
    if kind == "int":
        return int(value)
    return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else value
