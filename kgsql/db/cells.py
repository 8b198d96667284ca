"""A cell value as two results compare it, whichever engine returned it.

SQLite, PostgreSQL and DuckDB hand back one number as int, float or Decimal, and a query may compute it
another way (``30`` against ``30.0``, ``AVG`` against ``SUM / COUNT``); text is text. Comparing results
(another engine's, kgsql.lab.cross_engine_compare; another reading of a question, kgsql.correct.opinions)
compares these keys, not the values as returned.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Final

__all__ = ["SIGNIFICANT", "normalise"]

SIGNIFICANT: Final = 9


def normalise(value: Any) -> Any:
    """A value as compared: numbers as ("n", float to 9 significant digits), text as ("s", text)."""
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, (int, float, Decimal)):
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            return ("n", str(x))
        return ("n", float(f"{x:.{SIGNIFICANT}g}") + 0.0)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return ("b", bytes(value).hex())
    return ("s", str(value))
