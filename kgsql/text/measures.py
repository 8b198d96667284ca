"""What a superlative asks to measure, and what a name measures: does "the longest" meet ``ORDER BY Area(...)``?

A question's superlative often fixes the quantity its answer is ranked by: "the longest river" is ranked by a
length, "the oldest singer" by an age or a date. A query that ranks by another quantity (the demo's small
model answered "Which river is the longest?" by its provinces' area) returns a plausible row that answers
another question. Both sides are read from words only: a superlative of :data:`SUPERLATIVES` and the words of
a column's or a function's name (``length_km``, ``GLength``, ``ST_Area``). Words that fit several quantities
("largest": area, population, capacity ...; "highest": anything) are left out, so a mismatch is only
claimed where both sides are plain.
"""
from __future__ import annotations

import re
from typing import Iterable

from kgsql.text.words import singular_forms, split_identifier

__all__ = ["QUANTITIES", "SUPERLATIVES", "asked_quantities", "named_quantity"]

#: Quantity -> the words of a name that measure it (singular forms; ``GLength`` splits as ``g length``).
QUANTITIES: dict[str, frozenset[str]] = {
    "length": frozenset({"length", "len", "long", "km", "kilometre", "kilometer", "mile", "distance", "glength",
                         "perimeter", "metre", "meter"}),
    "duration": frozenset({"duration", "runtime", "millisecond", "minute", "second", "hour"}),
    # an hour, a minute, a second: a duration or a time of day (a name with them measures nothing plain)
    "time": frozenset({"age", "birth", "born", "dob", "date", "year", "founded", "established", "created",
                       "built", "opened", "since", "time", "timestamp", "hour", "minute", "second"}),
    "area": frozenset({"area", "surface"}),
    "height": frozenset({"height", "elevation", "altitude", "tall"}),
    "weight": frozenset({"weight", "mass", "kg"}),
    "price": frozenset({"price", "cost", "fee", "fare"}),
    "speed": frozenset({"speed", "velocity"}),
    "population": frozenset({"population", "inhabitant"}),
}

#: A superlative (or a "most/least ..." phrase) -> the quantities its answer may be ranked by.
SUPERLATIVES: dict[str, frozenset[str]] = {
    "longest": frozenset({"length", "duration", "time"}),
    "shortest": frozenset({"length", "duration", "time", "height"}),  # "the shortest person"
    "oldest": frozenset({"time"}),
    "youngest": frozenset({"time"}),
    "newest": frozenset({"time"}),
    "earliest": frozenset({"time"}),
    "latest": frozenset({"time"}),
    "most recent": frozenset({"time"}),
    "tallest": frozenset({"height", "length"}),  # a height in metres: ORDER BY meters
    "heaviest": frozenset({"weight"}),
    "lightest": frozenset({"weight"}),
    "fastest": frozenset({"speed", "duration", "time"}),
    "slowest": frozenset({"speed", "duration", "time"}),
    "cheapest": frozenset({"price"}),
    "most expensive": frozenset({"price"}),
    "least expensive": frozenset({"price"}),
    "most populous": frozenset({"population"}),
    "least populous": frozenset({"population"}),
}
_SUPERLATIVE = re.compile(r"\b(" + "|".join(sorted(SUPERLATIVES, key=len, reverse=True)).replace(" ", r"\s+")
                          + r")\b", re.I)
_AT_THE = re.compile(r"\bat\s+the\s+$", re.I)  # "shipped by 2020 at the latest": a bound, not a ranking


def asked_quantities(question: str) -> tuple[list[str], frozenset[str]]:
    """The superlatives a question says and the quantities any of them may be ranked by (none: no plain
    superlative)."""
    said = [" ".join(m.group(1).lower().split()) for m in _SUPERLATIVE.finditer(question)
            if not _AT_THE.search(question[:m.start()])]
    return said, frozenset().union(*(SUPERLATIVES[s] for s in said))


def named_quantity(names: Iterable[str]) -> str | None:
    """The one quantity the words of ``names`` (a column's, a function's) measure; None when they measure
    none or more than one (``length / area``: a ratio is neither)."""
    found = {quantity for name in names for word in split_identifier(name) for quantity, measures in QUANTITIES.items()
             if singular_forms(word) & measures}
    return found.pop() if len(found) == 1 else None
