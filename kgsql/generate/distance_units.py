"""A distance the question gives in kilometres or miles, compared in the query as the bare number.

"Which cities lie within 20 km of the Silver River?" answered with ``Distance(r.Shape, c.Location, 1) <= 20``
(seen with the local 1.5B on the shipped example): SpatiaLite's and PostGIS's distances and lengths come in
metres (degrees on lon/lat data without the ellipsoid argument), never kilometres, so the bound is a
thousand times too small and the query runs, with rows. The number the question says, written unchanged
against a distance or length call (or as ``PtDistWithin``/``ST_DWithin``'s radius), is that mistake; a
query that converts (``20 * 1000``, ``20000``, ``Distance(...) / 1000``) is left alone.
"""
from __future__ import annotations

import re
from typing import Final

from sqlglot import exp

from kgsql.sql.calls import DISTANCES, WITHIN_DISTANCE, function_call

__all__ = ["stated_distances", "unconverted_distance"]

_WORDS: Final = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0,
                 "eight": 8.0, "nine": 9.0, "ten": 10.0, "a": 1.0}
_STATED: Final = re.compile(r"\b(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a)\s*-?\s*"
                            r"(km|kms|kilomet(?:er|re)s?|miles?)\b", re.IGNORECASE)
#: Calls that measure in metres (or degrees), never in kilometres or miles.
_MEASURES: Final = DISTANCES | frozenset({"glength", "st_length", "perimeter", "st_perimeter"})
_COMPARISONS: Final = (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ)


def stated_distances(question: str) -> list[tuple[float, str]]:
    """The distances the question states in kilometres or miles: ``[(20.0, "20 km")]``."""
    out = []
    for match in _STATED.finditer(question):
        number = match.group(1).lower()
        out.append((_WORDS[number] if number in _WORDS else float(number), match.group(0)))
    return out


def _number(node: exp.Expression | None) -> float | None:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    return float(node.this) if isinstance(node, exp.Literal) and node.is_number else None


def _bounds(tree: exp.Expression) -> list[tuple[float, exp.Expression]]:
    """(number, the call it bounds) for each measure compared with a bare number, and each radius."""
    out: list[tuple[float, exp.Expression]] = []
    for call in tree.find_all(exp.Func):
        name, args = function_call(call)
        if name in WITHIN_DISTANCE and len(args) >= 3:
            radius = _number(args[2])
            if radius is not None:
                out.append((radius, call))
        if name not in _MEASURES:
            continue
        parent = call.parent
        while isinstance(parent, exp.Paren):
            parent = parent.parent
        if isinstance(parent, _COMPARISONS):
            number = _number(parent.expression if parent.this.unnest() is call else parent.this)
            if number is not None:
                out.append((number, call))
    return out


def unconverted_distance(question: str, tree: exp.Expression | None,
                         dialect: str | None = None) -> tuple[str, str] | None:
    """(what the question says, the call as the model wrote it) where the query writes a stated distance's
    number unconverted against a measure in metres; None otherwise."""
    stated = [(value, text) for value, text in stated_distances(question) if value > 0]
    if tree is None or not stated:
        return None
    for number, call in _bounds(tree):
        for value, text in stated:
            if number == value:
                return text, call.sql(dialect=dialect, normalize_functions=False)
    return None
