"""The extreme a compass superlative asks for: the westernmost province is the one reaching furthest west.

Asked "Which province is the westernmost?", the 1.5B writes ``ORDER BY X(Shape) DESC LIMIT 1``: the wrong
end, and ``X`` of a polygon is NULL on SpatiaLite (an error on PostGIS), so the order is arbitrary. The
word says which coordinate and which end: west is the smallest x (longitude), east the largest, south the
smallest y (latitude), north the largest; for a shape, the extreme of its bounding box on that side (a
point's own coordinate). A rewrite of every candidate on a spatial database, when the question names one
compass direction as a superlative ("westernmost", "most northern", "furthest south") and a SELECT is
ordered by one coordinate of a geometry column (``X``, ``Y``, a bounding-box extreme, of the column or of
its centroid): ordered by the extreme the word names, in the direction it names, rows without a geometry
last, in the engine's form (``MbrMinX(g)`` on SpatiaLite, ``ST_XMin(g)`` on PostGIS).
"""
from __future__ import annotations

import re
from typing import Final

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_selects
from kgsql.schema.spatial_pairs import geometry_names
from kgsql.sql.calls import function_call
from kgsql.sql.dialects import spatial_forms, sqlglot_name

__all__ = ["order_by_compass"]

_COMPASS: Final = re.compile(
    r"\b(?:(west|east|north|south)ernmost|(?:most|furthest|farthest)\s+(west|east|north|south)(?:ern)?)\b",
    re.IGNORECASE)
#: direction -> (index into SpatialForms.bounds: min x, max x, min y, max y; descending)
_EXTREMES: Final = {"west": (0, False), "east": (1, True), "south": (2, False), "north": (3, True)}
#: One coordinate of a geometry, by SpatiaLite's and PostGIS's names.
_COORDINATES: Final = frozenset({"x", "y", "st_x", "st_y", "mbrminx", "mbrmaxx", "mbrminy", "mbrmaxy",
                                 "st_xmin", "st_xmax", "st_ymin", "st_ymax"})
_CENTRES: Final = frozenset({"centroid", "st_centroid", "pointonsurface", "st_pointonsurface"})


def _direction(question: str) -> str | None:
    """The one compass direction the question asks the extreme of; None for none or several."""
    found = {(m.group(1) or m.group(2)).lower() for m in _COMPASS.finditer(question)}
    return found.pop() if len(found) == 1 else None


def _only_argument(node: exp.Expression, names: frozenset[str]) -> exp.Expression | None:
    """The one argument of ``node`` when it is a call of one of ``names`` with one argument, else None."""
    if not isinstance(node, exp.Func):
        return None
    name, args = function_call(node)
    return args[0] if name in names and len(args) == 1 else None


def _geometry(key: exp.Expression, geometries: set[str]) -> exp.Column | None:
    """The geometry column ``key`` takes one coordinate of (through a centroid), else None."""
    inner = _only_argument(key, _COORDINATES)
    centre = _only_argument(inner, _CENTRES) if inner is not None else None
    inner = centre if centre is not None else inner  # X(Centroid(g)): g
    return inner if isinstance(inner, exp.Column) and inner.name.lower() in geometries else None


def order_by_compass(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` ordered by the extreme its question's compass superlative names (module docstring), or None."""
    direction = _direction(ctx.question)
    forms = spatial_forms(ctx.dialect)
    if direction is None or forms is None:
        return None
    geometries = geometry_names(ctx.schema)
    side, descending = _EXTREMES[direction]
    dialect = sqlglot_name(ctx.dialect)

    def reorder(select: exp.Select) -> bool:
        order = select.args.get("order")
        keys = order.expressions if order is not None else []
        geometry = _geometry(keys[0].this, geometries) if len(keys) == 1 else None
        if geometry is None:
            return False
        extreme = exp.maybe_parse(forms.bounds[side].format(g=geometry.sql(dialect=dialect)), dialect=dialect)
        keys[0].set("this", extreme)
        keys[0].set("desc", descending)
        keys[0].set("nulls_first", False)
        return True

    return rewrite_selects(ctx, sql, reorder, dialect=dialect)
