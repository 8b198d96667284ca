"""The pieces every chart spec is made of: rows as inline data, field definitions, tooltips.

Fields are named c0, c1, ... after the column's position, not its name: a
column such as ``T1.name`` or ``X(Location)`` would read as a nested path in
Vega-Lite; the column's name is each field's title instead.
"""
from __future__ import annotations

import math
from typing import Any, Sequence


def field(columns: Sequence[str], i: int, kind: str, **more: Any) -> dict[str, Any]:
    """A Vega-Lite field definition of column ``i``, titled with the column's name."""
    return {"field": f"c{i}", "type": kind, "title": str(columns[i]), **more}


def plain(value: Any) -> Any:
    """A value as JSON the chart can read (NaN and infinities as null, anything unusual as text)."""
    if value is None or isinstance(value, (str, int)) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def values(rows: Sequence[Sequence[Any]], keep: Sequence[int]) -> list[dict[str, Any]]:
    """The rows as inline data: one object per row with the kept columns' fields."""
    return [{f"c{i}": plain(row[i]) for i in keep} for row in rows]


def tooltip(columns: Sequence[str], keep: Sequence[int], kinds: dict[int, str],
            prefix: str = "") -> list[dict[str, Any]]:
    """Hovering a mark shows the kept columns by name (``prefix``: where a map's features keep them)."""
    return [{"field": f"{prefix}c{i}", "type": kinds.get(i, "nominal"), "title": str(columns[i])} for i in keep]
