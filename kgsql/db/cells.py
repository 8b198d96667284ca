"""A cell value as two results compare it, whichever engine returned it, and as a person reads it.

SQLite, PostgreSQL and DuckDB hand back one number as int, float or Decimal, and a query may compute it
another way (``30`` against ``30.0``, ``AVG`` against ``SUM / COUNT``); text is text. Comparing results
(another engine's, kgsql.lab.cross_engine_compare; another reading of a question, kgsql.correct.opinions)
compares these keys, not the values as returned. :func:`shown` is the text a result table shows for a
cell, on every surface that prints one.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Final

__all__ = ["SHOWN_SIGNIFICANT", "SIGNIFICANT", "normalise", "shown"]

SIGNIFICANT: Final = 9
#: A real is shown to this many significant digits, as the sqlite3 shell shows it.
SHOWN_SIGNIFICANT: Final = 15


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


def shown(value: Any) -> str:
    """A cell as the sqlite3 shell shows it: NULL, and a real to 15 significant digits (``AVG`` gives 11.35,
    not the binary float's 11.350000000000001; 3.0 stays 3.0); anything else as it is."""
    if value is None:
        return "NULL"
    if isinstance(value, float) and math.isfinite(value):
        text = f"{value:.{SHOWN_SIGNIFICANT}g}"
        return text if any(c in text for c in ".e") else text + ".0"
    return str(value)
