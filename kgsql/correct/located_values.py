"""A place name compared with a column that never holds it, read from the table that does, joined by location.

Asked "Which city is Tiantai Mountain located in?", the 1.5B writes ``SELECT name FROM cities WHERE name =
'天台山景区'``: the value is a scenic spot's name, not a city's, and the query runs empty. The database knows
where the name lives (``scenicSpots.name``) and how the two tables relate (a point inside a polygon,
:mod:`kgsql.schema.spatial_pairs`). A rewrite of every candidate on a spatial database: a ``col = 'text'``
on a geometry table whose column never holds the text, when exactly one other geometry table holds it in
one text column and relates to the first by containment or crossing, becomes that table joined by location
with the comparison moved to it (``SELECT cities.name FROM cities JOIN scenicSpots ON
Within(scenicSpots.Location, cities.Shape) = 1 WHERE scenicSpots.name = '天台山景区'``). Values are probed
on the database (one-row queries), so nothing changes where the text is found where it was compared.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import Scope, qualify_all, rewrite_selects
from kgsql.correct.spatial_joins import located_condition
from kgsql.correct.values import value_exists
from kgsql.db.engines.base import is_text_type
from kgsql.errors import KgsqlError
from kgsql.schema.model import Column, Table
from kgsql.schema.spatial_pairs import geometry_column
from kgsql.sql.dialects import sqlglot_name

__all__ = ["geometry_holders", "locate_values"]

def _holds(ctx: CheckContext, table: Table, column: str, text: str, unsure: bool = True) -> bool:
    try:
        return value_exists(ctx.connection(), table.name, column, text)
    except KgsqlError:
        return unsure  # a probe that fails: as the caller's safe side says


def geometry_holders(ctx: CheckContext, text: str, besides: Table | None = None, *,
                     unsure: bool = True) -> list[tuple[Table, Column]]:
    """Every (geometry table, text column) other than ``besides`` that holds ``text``. A probe that fails
    counts as holding it when ``unsure`` (here: an unsure place is ambiguous rather than misplaced), else as
    not holding it (where one holder is what triggers a rewrite)."""
    return [(t, c) for t in ctx.schema.tables if t is not besides and geometry_column(t) is not None
            for c in t.columns if c.spatial is None and is_text_type(c.type)
            and _holds(ctx, t, c.name, text, unsure)]


def _comparisons(scope: Scope) -> list[tuple[exp.EQ, exp.Column, exp.Literal, str]]:
    """The WHERE's ``col = 'text'`` of this SELECT: (the equality, column, literal, FROM alias)."""
    where = scope.select.args.get("where")
    found = []
    for eq in where.find_all(exp.EQ) if where is not None else []:
        if eq.find_ancestor(exp.Select) is not scope.select:
            continue
        col, lit = eq.this, eq.expression
        if isinstance(col, exp.Literal):
            col, lit = lit, col
        if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string):
            continue
        holders = [col.table.lower()] if col.table else scope.holders(col.name)
        if len(holders) == 1 and holders[0] in scope.by_alias:
            found.append((eq, col, lit, holders[0]))
    return found


def _locate(ctx: CheckContext, select: exp.Select) -> bool:
    scope = Scope(select, ctx.schema)
    if not scope.ok:
        return False
    for eq, col, lit, alias in _comparisons(scope):
        table = scope.by_alias[alias]
        if geometry_column(table) is None or _holds(ctx, table, col.name, lit.this):
            continue
        holders = geometry_holders(ctx, lit.this, table)
        if len(holders) != 1 or holders[0][0].name.lower() in scope.alias_of:
            continue
        holder, column = holders[0]
        joined = scope.fresh_alias(holder.name)
        condition = located_condition(scope, holder, joined, alias, ctx.dialect)
        if condition is None:
            continue
        qualify_all(scope)  # the new table may share the query's bare column names
        scope.add_join(holder, joined, condition)
        eq.replace(exp.EQ(this=exp.column(column.name, table=joined), expression=lit.copy()))
        return True
    return False


def locate_values(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with a place name read from the table that holds it, joined by location (module docstring);
    None when nothing applies (and on any database without geometry)."""
    if not ctx.path or not any(geometry_column(t) is not None for t in ctx.schema.tables):
        return None
    return rewrite_selects(ctx, sql, lambda select: _locate(ctx, select), dialect=sqlglot_name(ctx.dialect))
