"""A distance the question gives in kilometres or miles, compared in the query as the bare number.

"Which cities lie within 20 km of the Silver River?" answered with ``Distance(r.Shape, c.Location, 1) <= 20``
(seen with the local 1.5B on the shipped example): SpatiaLite's and PostGIS's distances and lengths come in
metres (degrees on lon/lat data without the ellipsoid argument), never kilometres, so the bound is a
thousand times too small and the query runs, with rows. The number the question says, written unchanged
against a distance or length call (or as ``PtDistWithin``/``ST_DWithin``'s radius), is that mistake; a
query that converts (``20 * 1000``, ``20000``, ``Distance(...) / 1000``) is left alone.
:func:`unconverted_distance` names it (the answer's ``distance-unit`` flag); :func:`bounds_in_metres` writes
the bound in metres (``20 * 1000``; the correction loop's ``distance_units`` rewrite).
"""
from __future__ import annotations

import re
from typing import Final, NamedTuple

from sqlglot import exp

from kgsql.sql.calls import DISTANCES, WITHIN_DISTANCE, function_call

__all__ = ["Stated", "bounds_in_metres", "stated_distances", "number_text", "unconverted_distance",
           "within_distances"]

_WORDS: Final = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0,
                 "eight": 8.0, "nine": 9.0, "ten": 10.0, "a": 1.0}
_NUMBER: Final = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|a)"
_STATED: Final = re.compile(rf"\b{_NUMBER}\s*-?\s*(km|kms|kilomet(?:er|re)s?|miles?)\b", re.IGNORECASE)
#: "within 10 km", "within 500 meters": the distance a question asks things to lie within.
_WITHIN: Final = re.compile(rf"\bwithin\s+(?:a\s+(?:radius|distance)\s+of\s+)?{_NUMBER}\s*-?\s*"
                            r"(km|kms|kilomet(?:er|re)s?|miles?|m|met(?:er|re)s?)\b", re.IGNORECASE)
#: Calls that measure in metres (or degrees), never in kilometres or miles.
_MEASURES: Final = DISTANCES | frozenset({"glength", "st_length", "perimeter", "st_perimeter"})
_COMPARISONS: Final = (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.EQ)


class Stated(NamedTuple):
    """A distance as the question states it: its number, the words, and metres in one of its unit."""

    value: float
    text: str
    metres: float


def _stated(match: re.Match[str]) -> Stated:
    number, unit = match.group(1).lower(), match.group(2).lower()
    metres = 1000.0 if unit.startswith("k") else 1609.344 if unit.startswith("mi") else 1.0
    return Stated(_WORDS[number] if number in _WORDS else float(number), match.group(0), metres)


def stated_distances(question: str) -> list[Stated]:
    """The distances the question states in kilometres or miles: ``[Stated(20.0, "20 km", 1000.0)]``."""
    return [_stated(m) for m in _STATED.finditer(question)]


def within_distances(text: str) -> list[Stated]:
    """The distances ``text`` asks things to lie *within*, in any unit of length: ``within 500 meters`` ->
    ``[Stated(500.0, "within 500 meters", 1.0)]``."""
    return [_stated(m) for m in _WITHIN.finditer(text)]


def _literal(node: exp.Expression | None) -> exp.Literal | None:
    node = node.unnest() if isinstance(node, exp.Paren) else node
    return node if isinstance(node, exp.Literal) and node.is_number else None


def _bounds(tree: exp.Expression) -> list[tuple[exp.Literal, exp.Expression]]:
    """(the number, the call it bounds) for each measure compared with a bare number, and each radius."""
    out: list[tuple[exp.Literal, exp.Expression]] = []
    for call in tree.find_all(exp.Func):
        name, args = function_call(call)
        if name in WITHIN_DISTANCE and len(args) >= 3:
            radius = _literal(args[2])
            if radius is not None:
                out.append((radius, call))
        if name not in _MEASURES:
            continue
        parent = call.parent
        while isinstance(parent, exp.Paren):
            parent = parent.parent
        if isinstance(parent, _COMPARISONS):
            number = _literal(parent.expression if parent.this.unnest() is call else parent.this)
            if number is not None:
                out.append((number, call))
    return out


def _unconverted(text: str, tree: exp.Expression) -> list[tuple[exp.Literal, exp.Expression, Stated]]:
    """Each bound of ``tree`` written as the bare number of a distance ``text`` states, with that distance."""
    stated = [s for s in stated_distances(text) if s.value > 0]
    out = []
    for number, call in _bounds(tree) if stated else ():
        match = next((s for s in stated if float(number.this) == s.value), None)
        if match is not None:
            out.append((number, call, match))
    return out


def unconverted_distance(question: str, tree: exp.Expression | None,
                         dialect: str | None = None) -> tuple[str, str] | None:
    """(what the question says, the call as the model wrote it) where the query writes a stated distance's
    number unconverted against a measure in metres; None otherwise."""
    found = _unconverted(question, tree) if tree is not None else []
    if not found:
        return None
    _number, call, stated = found[0]
    return stated.text, call.sql(dialect=dialect, normalize_functions=False)


def bounds_in_metres(text: str, tree: exp.Expression) -> bool:
    """Write each bound of ``tree`` that is the bare number of a distance ``text`` states (a question and its
    evidence) in metres, ``<= 20`` -> ``<= 20 * 1000``, in place; True when any was."""
    done: set[int] = set()
    for number, _call, stated in _unconverted(text, tree):
        if id(number) not in done:  # a number found twice is converted once
            done.add(id(number))
            number.replace(exp.Mul(this=number.copy(), expression=exp.Literal.number(number_text(stated.metres))))
    return bool(done)


def number_text(value: float) -> str:
    """A number as SQL writes it: ``1000``, ``1609.344``."""
    return str(int(value)) if value.is_integer() else repr(value)
