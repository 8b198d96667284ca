"""PostGIS repairs: lon/lat lengths, areas and distances in metres, predicates as booleans.

On a ``geometry`` column in a geographic SRID (4326, WGS 84 longitude and
latitude) PostGIS's ``ST_Length``, ``ST_Area``, ``ST_Perimeter`` and
``ST_Distance`` return degrees, which answer no question a user asks; the
same functions on ``::geography`` return metres. Small models write the
geometry form even when the prompt's function notes say otherwise (the
PostGIS runs in docs/engines.md), and the query runs, so no error tip can
catch it. The graph knows each geometry column's SRID, so this rule casts
the arguments to geography, without a model call, before the candidate is
run. ``ST_DWithin`` is cast too when its radius is a number above 1 (a
radius of more than a degree, ~111 km, on lon/lat data is meant in metres).
SpatiaLite's metre forms are the same functions with an extra argument
(``GLength(g, 1)``, ``Area(g, 1)``, ``Distance(a, b, 1)``), which the function
notes teach and small models forget: :func:`ellipsoid_units` adds it on lon/lat
geometry (on by default since session 22, docs/eval.md). Both rules measure a
scalar subquery's geometry as the column it selects (``Distance(h.Location,
(SELECT Shape FROM roads WHERE name = ..))``), the form small models write
most for "within 500 metres of X".

The same pass drops SpatiaLite's ``= 1`` after a spatial predicate
(``ST_Contains(a, b) = 1``): PostGIS predicates return boolean, and
PostgreSQL refuses ``boolean = integer`` (the habit cost a question in the
PostGIS run), and the reverse of the cast: a model that learnt ``::geography``
puts it where PostGIS has no geography form (``ST_Within(p.location::geography,
c.shape)``: "function st_within(geography, geometry) does not exist", two
questions of the PostGIS run of session 27), so the cast is dropped there.
"""
from __future__ import annotations

from typing import Final

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.schema.geometry_units import GEOGRAPHIC_SRIDS, is_lon_lat
from kgsql.sql.calls import function_call, is_spatial_cast
from kgsql.sql.dialects import dialect_of
from kgsql.sql.distance_units import bounds_in_metres, stated_distances
from kgsql.sql.to_postgis import booleans

__all__ = ["GEOGRAPHIC_SRIDS", "GEOMETRY_ONLY", "ellipsoid_units", "geography_units", "stated_distances_in_metres"]

_MEASURES: Final = frozenset({"st_length", "st_area", "st_perimeter", "st_distance"})
#: PostGIS functions a model writes with ``::geography`` that have no geography form (a subset of those; checked
#: against a real PostGIS: tests/engines/test_engine_prompts.py).
GEOMETRY_ONLY: Final = frozenset({"st_within", "st_contains", "st_touches", "st_crosses", "st_overlaps",
                                  "st_equals", "st_disjoint", "st_x", "st_y", "st_xmin", "st_xmax", "st_ymin",
                                  "st_ymax", "st_union"})


def _geographic_columns(ctx: CheckContext) -> set[str]:
    """Lower-cased names of geometry columns in a geographic SRID (bare and ``table.column``)."""
    names: set[str] = set()
    for table in ctx.schema.tables:
        for column in table.columns:
            if column.spatial is not None and is_lon_lat(column.spatial) and \
                    not column.type.lower().startswith("geography"):
                names |= {column.name.lower(), f"{table.name}.{column.name}".lower()}
    return names


def _is_geography(node: exp.Expression) -> bool:
    return is_spatial_cast(node, "geography")


def _geometry_read(node: exp.Expression) -> exp.Expression | None:
    """What an argument measures: itself, or the one value a scalar subquery selects
    (``Distance(h.Location, (SELECT Shape FROM roads WHERE name = ..))``); None for a subquery of many."""
    while isinstance(node, (exp.Paren, exp.Subquery, exp.Select)) or (  # (SELECT ..)::geometry, as named_geometry
            is_spatial_cast(node, "geometry") and isinstance(node.this, (exp.Paren, exp.Subquery))):  # writes a place
        if isinstance(node, exp.Select):
            if len(node.expressions) != 1:
                return None
            node = node.expressions[0].unalias()
        else:
            node = node.this
    return node


def _on_geographic_data(node: exp.Expression, geographic: set[str]) -> bool:
    """The argument reads a lon/lat geometry column (directly or as a scalar subquery's value) and is not
    already geography."""
    read = _geometry_read(node)
    if read is None or _is_geography(read) or read.find(exp.Select):
        return False
    columns = list(read.find_all(exp.Column))
    return bool(columns) and all(c.name.lower() in geographic for c in columns)


def _radius_in_metres(node: exp.Expression) -> bool:
    """A number above 1, or a product of numbers (``10 * 1000``, as ``distance_units`` writes "10 km")."""
    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.Mul):
        factors = [f.unnest() if isinstance(f, exp.Paren) else f for f in (node.this, node.expression)]
        if all(isinstance(f, exp.Literal) and f.is_number for f in factors):
            return float(factors[0].this) * float(factors[1].this) > 1
    return isinstance(node, exp.Literal) and not node.is_string and float(node.this) > 1


def geography_units(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with its length/area/distance calls on lon/lat geometry cast to geography, no geography
    given where only geometry is taken, and its predicates compared as booleans; None when nothing needed it."""
    if dialect_of(ctx.schema) != "postgis":
        return None
    geographic = _geographic_columns(ctx)
    tree = ctx.tree(sql)
    if tree is None:
        return None
    tree = tree.copy()
    changed = False
    for call in list(tree.find_all(exp.Func)):
        name, args = function_call(call)
        if name in GEOMETRY_ONLY:
            for cast in [a for a in args if _is_geography(a)]:
                cast.replace(cast.this.copy())
                changed = True
            continue
        if name not in _MEASURES | {"st_dwithin"} or not args:
            continue
        geoms = args[:2] if name in ("st_distance", "st_dwithin") else args[:1]
        if name == "st_dwithin" and (len(args) < 3 or not _radius_in_metres(args[2])):
            continue
        if not all(_on_geographic_data(g, geographic) for g in geoms):
            continue
        for g in geoms:
            g.replace(exp.Cast(this=g.copy(), to=exp.DataType.build("geography", dialect="postgres")))
        changed = True
    compared = tree.transform(booleans)
    if compared.sql(dialect="postgres") != tree.sql(dialect="postgres"):
        tree, changed = compared, True
    return tree.sql(dialect="postgres", normalize_functions=False) if changed else None


#: SpatiaLite measures and how many geometries each takes before its ``use_ellipsoid`` argument.
_ELLIPSOID_MEASURES: Final = {"glength": 1, "st_length": 1, "area": 1, "st_area": 1, "perimeter": 1,
                              "st_perimeter": 1, "distance": 2, "st_distance": 2}


def ellipsoid_units(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with SpatiaLite's lengths, areas and distances of lon/lat geometry measured on the
    ellipsoid, in metres (``GLength(Shape)`` -> ``GLength(Shape, 1)``); None when nothing needed it."""
    if dialect_of(ctx.schema) != "spatialite":
        return None
    geographic = _geographic_columns(ctx)

    def in_metres(tree: exp.Expression) -> bool:
        changed = False
        for call in list(tree.find_all(exp.Func)):
            name, args = function_call(call)
            arity = _ELLIPSOID_MEASURES.get(name)
            if arity is None or len(args) != arity or not all(_on_geographic_data(g, geographic) for g in args):
                continue
            written = str(call.this) if isinstance(call, exp.Anonymous) else name
            call.replace(exp.Anonymous(this=written, expressions=[a.copy() for a in args] + [exp.Literal.number(1)]))
            changed = True
        return changed

    return rewrite_tree(ctx, sql, in_metres)


def stated_distances_in_metres(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with a distance the question (or its evidence) states in kilometres or miles, written as the
    bare number against a measure in metres, in metres: ``Distance(r.Shape, c.Location, 1) <= 20`` for "within
    20 km" -> ``<= 20 * 1000`` (:mod:`kgsql.sql.distance_units`). Runs before :func:`geography_units` and
    :func:`ellipsoid_units`, which put lon/lat measures in metres (an ``ST_DWithin`` radius of ``1 * 1000`` is
    one they cast; ``1`` would read as a degree); None when nothing needed it."""
    said = f"{ctx.question}\n{ctx.evidence}"
    if not stated_distances(said):  # most questions: no copy of the tree for nothing
        return None
    return rewrite_tree(ctx, sql, lambda tree: bounds_in_metres(said, tree))
