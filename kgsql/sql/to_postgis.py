"""SpatiaLite SQL rewritten for PostGIS: function names, and metres where SpatiaLite asked for them.

sqlglot transpiles SQLite's syntax to PostgreSQL's but knows nothing of
spatial functions, and the two systems disagree on more than names: in
SpatiaLite ``GLength(g, 1)`` is a length in metres, in PostGIS the same
question is ``ST_Length(g::geography)``. Knowledge written for a SpatiaLite
database — a profile's derived expressions, a spatial benchmark's gold SQL —
goes through :func:`to_postgis` before it is shown for, or run on, a PostGIS
copy of that database.
"""
from __future__ import annotations

from typing import Final

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

__all__ = ["booleans", "to_postgis"]

#: SpatiaLite function -> (PostGIS function, how many leading arguments are geometries). With one more
#: argument than that, equal to 1 (SpatiaLite's "use the ellipsoid"), the geometries become ``::geography``.
_METRE_FORMS: Final[dict[str, tuple[str, int]]] = {
    "glength": ("ST_Length", 1), "st_length": ("ST_Length", 1), "length": ("ST_Length", 1),
    "area": ("ST_Area", 1), "st_area": ("ST_Area", 1),
    "perimeter": ("ST_Perimeter", 1), "st_perimeter": ("ST_Perimeter", 1),
    "distance": ("ST_Distance", 2), "st_distance": ("ST_Distance", 2),
}
#: SpatiaLite names with another PostGIS name and the same arguments (MakePoint(x, y, srid) is
#: ST_Point(x, y, srid): ST_MakePoint's third argument is Z).
_RENAMES: Final[dict[str, str]] = {
    "makepoint": "ST_Point", "x": "ST_X", "y": "ST_Y", "centroid": "ST_Centroid", "within": "ST_Within",
    "contains": "ST_Contains", "intersects": "ST_Intersects", "touches": "ST_Touches", "crosses": "ST_Crosses",
    "overlaps": "ST_Overlaps", "disjoint": "ST_Disjoint", "equals": "ST_Equals", "intersection": "ST_Intersection",
    "buffer": "ST_Buffer", "astext": "ST_AsText", "geomfromtext": "ST_GeomFromText", "srid": "ST_SRID",
    "geometrytype": "GeometryType", "startpoint": "ST_StartPoint", "endpoint": "ST_EndPoint",
    "numpoints": "ST_NPoints", "st_numpoints": "ST_NPoints", "numgeometries": "ST_NumGeometries",
    "envelope": "ST_Envelope", "convexhull": "ST_ConvexHull", "gunion": "ST_Union", "st_union": "ST_Union",
    "transform": "ST_Transform", "azimuth": "ST_Azimuth", "pointonsurface": "ST_PointOnSurface",
    "mbrintersects": "ST_Intersects", "mbrwithin": "ST_Within", "mbrcontains": "ST_Contains",
    "closestpoint": "ST_ClosestPoint", "collect": "ST_Collect",
    "mbrminx": "ST_XMin", "mbrmaxx": "ST_XMax", "mbrminy": "ST_YMin", "mbrmaxy": "ST_YMax",
}


def _geography(node: exp.Expression) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build("geography", dialect="postgres"))


def _call(name: str, args: list[exp.Expression]) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=args)


def _is_one(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and not node.is_string and node.this in ("1", "1.0")


def _rewrite(node: exp.Expression) -> exp.Expression:
    if not isinstance(node, exp.Func):
        return node
    name = (node.this if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
    args = list(node.expressions) if isinstance(node, exp.Anonymous) else [
        a for a in node.args.values() if isinstance(a, exp.Expression)]
    if name in _METRE_FORMS:
        target, geoms = _METRE_FORMS[name]
        if len(args) == geoms + 1 and _is_one(args[geoms]):
            return _call(target, [_geography(a) for a in args[:geoms]])
        if len(args) == geoms:
            return _call(target, args)
    if name == "ptdistwithin" and len(args) >= 3:  # PtDistWithin(a, b, metres[, 1]) on lon/lat data
        return _call("ST_DWithin", [_geography(args[0]), _geography(args[1]), args[2]])
    if name in _RENAMES:  # sqlglot reads some as its own functions (CONTAINS), the rest as anonymous
        return _call(_RENAMES[name], args)
    return node


#: PostGIS predicates return boolean where SpatiaLite's return 0/1.
_PREDICATES: Final = frozenset({
    "st_within", "st_contains", "st_intersects", "st_touches", "st_crosses", "st_overlaps", "st_disjoint",
    "st_equals", "st_dwithin", "st_covers", "st_coveredby",
})


def _is_predicate(node: exp.Expression) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() in _PREDICATES


def booleans(node: exp.Expression) -> exp.Expression:
    """``ST_Within(a, b) = 1`` -> ``ST_Within(a, b)``; ``= 0`` -> ``NOT ST_Within(a, b)``."""
    if isinstance(node, (exp.EQ, exp.NEQ)):
        left, right = node.this, node.expression
        if _is_predicate(right):
            left, right = right, left
        if _is_predicate(left) and isinstance(right, exp.Literal) and right.this in ("0", "1"):
            true = (right.this == "1") == isinstance(node, exp.EQ)
            return left.copy() if true else exp.Not(this=left.copy())
    return node


def to_postgis(sql: str) -> str:
    """``sql`` (SpatiaLite) as PostGIS SQL; the text unchanged when sqlglot cannot parse it."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError, ValueError):
        return sql
    for node in sorted(tree.find_all(exp.Func), key=lambda n: -n.depth):  # innermost first
        new = _rewrite(node)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree.transform(booleans).sql(dialect="postgres", normalize_functions=False)
