"""A function call's name and arguments, read one way whether sqlglot knows the function or not.

sqlglot parses ``ST_Distance(a, b)`` into a named node (``StDistance``) and
SpatiaLite's ``Distance(a, b, 1)`` into ``Anonymous``; rules that look for a
function by name and read its arguments need both in one shape.
"""
from __future__ import annotations

from typing import Final

from sqlglot import exp

__all__ = ["DISTANCES", "RELATIONS", "WITHIN_DISTANCE", "function_call", "is_spatial_cast"]

#: The distance between two geometries, by SpatiaLite's and PostGIS's names (as :func:`function_call` gives them).
DISTANCES: Final = frozenset({"distance", "st_distance"})
#: Predicates of two geometries (SpatiaLite's, PostGIS's and the bounding-box ``Mbr`` names).
RELATIONS: Final = frozenset(
    prefix + name for prefix in ("", "st_", "mbr") for name in
    ("within", "contains", "intersects", "touches", "crosses", "overlaps", "covers", "coveredby", "equals"))
#: Two geometries within a distance of each other, the distance the third argument.
WITHIN_DISTANCE: Final = frozenset({"ptdistwithin", "st_dwithin"})


def function_call(node: exp.Func) -> tuple[str, list[exp.Expression]]:
    """(lower-case function name, its arguments in order) of any function node."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower(), list(node.expressions)
    return node.sql_name().lower(), [v for v in node.args.values() if isinstance(v, exp.Expression)]


def is_spatial_cast(node: exp.Expression, *types: str) -> bool:
    """Is ``node`` a cast to one of ``types`` (default: geometry or geography), as ``x::geography`` parses?"""
    return isinstance(node, exp.Cast) and node.to.is_type(*(types or ("geometry", "geography")))
