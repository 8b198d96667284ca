"""SQLite's own functions, as self-correction tells the model about them: the SQLite way of writing
another dialect's function, and the signatures of a few core functions.

They are the SQLite engine's facts (``SQLiteEngine.function_equivalents`` and
``function_signatures``), so the correction rules ask the database's engine
for them and another engine brings its own.
"""
from __future__ import annotations

from typing import Final

__all__ = ["FUNCTION_EQUIVALENTS", "FUNCTION_SIGNATURES"]

#: Functions of other SQL dialects that SQLite lacks -> what to write instead.
FUNCTION_EQUIVALENTS: Final[dict[str, str]] = {
    "year": "strftime('%Y', d)",
    "month": "strftime('%m', d)",
    "day": "strftime('%d', d)",
    "datediff": "julianday(d1) - julianday(d2)",
    "date_part": "strftime(format, d)",
    "to_char": "strftime(format, d)",
    "getdate": "date('now')",
    "now": "datetime('now')",
    "curdate": "date('now')",
    "isnull": "ifnull(x, y)",
    "nvl": "ifnull(x, y)",
    "len": "length(x)",
    "char_length": "length(x)",
    "if": "iif(condition, x, y)",
    "left": "substr(x, 1, n)",
    "right": "substr(x, -n)",
    "position": "instr(x, y)",
    "locate": "instr(x, y)",
    "charindex": "instr(x, y)",
    "ceiling": "ceil(x)",
    "stddev": "a subquery (SQLite has no standard deviation)",
    "array_agg": "group_concat(x)",
    "string_agg": "group_concat(x, separator)",
    "listagg": "group_concat(x, separator)",
}

#: A few SQLite core signatures for wrong-argument-count tips.
FUNCTION_SIGNATURES: Final[dict[str, str]] = {
    "substr": "substr(x, start, length)",
    "substring": "substr(x, start, length)",
    "round": "round(x, digits)",
    "strftime": "strftime(format, time, modifier, ...)",
    "instr": "instr(x, y)",
    "replace": "replace(x, from, to)",
    "ifnull": "ifnull(x, y)",
    "iif": "iif(condition, x, y)",
    "nullif": "nullif(x, y)",
    "length": "length(x)",
    "abs": "abs(x)",
    "upper": "upper(x)",
    "lower": "lower(x)",
    "trim": "trim(x) or trim(x, characters)",
    "julianday": "julianday(time, modifier, ...)",
    "date": "date(time, modifier, ...)",
    "count": "count(x) or count(*)",
    "sum": "sum(x)",
    "avg": "avg(x)",
}
