"""A place's whole geometry where a query reads one row of it.

Asked "What hotels are within one kilometre of Guangzhou Road?", the 1.5B writes
``WHERE Distance(Location, (SELECT Shape FROM roads WHERE Name = '广州路'), 1) <= 1000``. A scalar
subquery gives its first row only, and a road, a river or a rail line is often stored as many rows
(segments; in the spatial set's traffic database 40,984 road rows carry 3,242 names): the distance is to
one segment picked by storage order, and 54 hotels are found where 121 lie within a kilometre of the road
(PostgreSQL refuses such a subquery outright: "more than one row returned by a subquery").

A rewrite of every candidate: a scalar subquery that selects one geometry column (no aggregate, grouping,
ordering or LIMIT), given to a function as an argument, whose rows are more than one (a probe counts
them, up to :data:`MAX_ROWS`), reads the union of all of them instead (SpatiaLite's ``GUnion``, PostGIS's
``ST_Union``: both aggregates). A distance to it is the distance to the nearest part, a crossing of it
a crossing of any part, a length the whole length. What decides is the database's own rows, so any
database whose places span several rows gets it; a subquery of one row is left as it is.

A second rewrite (:func:`named_geometries`, its own switch) reads a place the query names where a geometry
belongs: ``Intersects(roads.Shape, '东风路')`` (a text is no geometry: SpatiaLite answers -1, nothing
matches) becomes ``Intersects(roads.Shape, (SELECT GUnion(Shape) FROM roads WHERE Name = '东风路'))``,
when one geometry table's text column holds the name (probed; the table of the call's other geometry
first when several do). PostGIS's form of the mistake is a name cast to a geometry,
``ST_Distance(location::geography, '南京市文物局'::geometry)`` ("parse error - invalid geometry"): the name
inside the cast is read the same way, the cast kept, also where no column stands beside it
(``ST_Distance('北海公园'::geometry, '恭王府'::geometry)``: the cast says the text is meant as a place).
"""
from __future__ import annotations

from typing import Final

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.functions import knowledge
from kgsql.correct.located_values import geometry_holders
from kgsql.correct.repair import rewrite_tree
from kgsql.errors import KgsqlError
from kgsql.schema.model import Column, Table
from kgsql.schema.spatial_pairs import geometry_column
from kgsql.sql.calls import function_call, is_spatial_cast
from kgsql.sql.dialects import dialect_of, function_kb, sqlglot_name
from kgsql.sql.names import schema_table

__all__ = ["MAX_ROWS", "UNIONS", "named_geometries", "whole_geometries"]

#: The aggregate union of geometries, per spatial dialect.
UNIONS: Final = {"spatialite": "GUnion", "postgis": "ST_Union"}
#: A subquery of more rows than this is left alone (a union of thousands of shapes is slow, and rarely meant).
MAX_ROWS: Final = 1000


def _geometry_subquery(ctx: CheckContext, node: exp.Expression) -> tuple[exp.Select, exp.Column] | None:
    """(the SELECT, its column) when ``node`` is a scalar subquery reading one geometry column as it is."""
    while isinstance(node, exp.Paren):
        node = node.this
    if not isinstance(node, exp.Subquery) or not isinstance(node.this, exp.Select):
        return None
    select = node.this
    if len(select.expressions) != 1 or any(select.args.get(k) for k in ("group", "order", "limit", "having")):
        return None
    column = select.expressions[0].unalias()
    if not isinstance(column, exp.Column):
        return None
    for source in select.find_all(exp.Table):
        table = schema_table(source, ctx.names.tables)
        if table is not None and column.table.lower() in ("", source.alias_or_name.lower()) and any(
                c.name.lower() == column.name.lower() and c.spatial is not None for c in table.columns):
            return select, column
    return None


def _rows_over_one(ctx: CheckContext, select: exp.Select) -> bool:
    """Does the subquery give more than one row (and at most :data:`MAX_ROWS`)? Unsure (it does not run on
    its own, being correlated, say): False."""
    counted = select.copy()
    counted.set("expressions", [exp.Literal.number(1)])
    probe = exp.select(exp.Count(this=exp.Star())).from_(counted.limit(MAX_ROWS + 1).subquery("rows"))
    try:
        rows = ctx.execute(probe.sql(dialect=sqlglot_name(ctx.dialect))).rows
    except KgsqlError:
        return False
    return bool(rows) and 1 < int(rows[0][0]) <= MAX_ROWS


def whole_geometries(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with each place read from one row of many read as their union (module docstring), or None."""
    union = UNIONS.get(dialect_of(ctx.schema))
    if union is None:
        return None

    def widen(tree: exp.Expression) -> bool:
        changed = False
        for call in list(tree.find_all(exp.Func)):
            if isinstance(call, exp.AggFunc):
                continue
            for argument in list(call.iter_expressions()):
                found = _geometry_subquery(ctx, argument)
                if found is None or not _rows_over_one(ctx, found[0]):
                    continue
                column = found[1]
                column.replace(exp.Anonymous(this=union, expressions=[column.copy()]))
                changed = True
        return changed

    return rewrite_tree(ctx, sql, widen)


def _geometry_tables(ctx: CheckContext) -> dict[str, list[Table]]:
    """Lower-case geometry column name -> the tables that have one so named."""
    by_column: dict[str, list[Table]] = {}
    for table in ctx.schema.tables:
        for column in table.columns:
            if column.spatial is not None:
                by_column.setdefault(column.name.lower(), []).append(table)
    return by_column


def _holder(ctx: CheckContext, text: str, near: list[Table]) -> tuple[Table, Column, Column] | None:
    """(geometry table, its text column holding ``text``, its geometry column): the one holder, or the one
    among the tables ``near`` (the call's own) when several hold it."""
    holders = geometry_holders(ctx, text, unsure=False)  # a failed probe finds no place to read
    if len(holders) > 1:
        holders = [h for h in holders if h[0] in near]
    if len(holders) != 1:
        return None
    table, column = holders[0]
    return table, column, geometry_column(table)  # type: ignore[return-value]


def _uncast(argument: exp.Expression) -> exp.Expression:
    """A call's argument as written inside a cast to a geometry or geography (PostGIS's ``x::geography``)."""
    return argument.this if is_spatial_cast(argument) else argument


def _is_text(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def named_geometries(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with each place name given where a geometry belongs read as that place's geometry (module
    docstring), or None."""
    union = UNIONS.get(dialect_of(ctx.schema))
    if union is None:
        return None

    geometries = _geometry_tables(ctx)
    kb = knowledge(function_kb(ctx.dialect) or "spatialite")

    def read_places(tree: exp.Expression) -> bool:
        changed = False
        for call in list(tree.find_all(exp.Func)):
            if isinstance(call, exp.Cast):
                continue  # the cast is read as part of the call it is an argument of
            written = list(call.iter_expressions())
            # a text cast to a geometry ('北海公园'::geometry) stands for a place in any call
            cast = [a.this for a in written if is_spatial_cast(a) and _is_text(a.this)]
            # a bare text only in a spatial function beside one of the database's geometry columns
            # (instr(location, 'x') is text work, whatever column is called location)
            spatial = kb is not None and kb.function(function_call(call)[0]) is not None
            texts = [a for a in written if _is_text(a)] if spatial else []
            near = [t for a in map(_uncast, written) if isinstance(a, exp.Column)
                    for t in geometries.get(a.name.lower(), [])] if texts or cast else []
            for text in cast + (texts if near else []):
                found = _holder(ctx, text.this, near)
                if found is None:
                    continue
                table, column, geometry = found
                place = exp.select(exp.Anonymous(this=union, expressions=[exp.column(geometry.name)])).from_(
                    exp.to_table(table.name)).where(exp.EQ(this=exp.column(column.name), expression=text.copy()))
                text.replace(place.subquery())
                changed = True
        return changed

    return rewrite_tree(ctx, sql, read_places)
