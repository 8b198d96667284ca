"""Spatial join repair: a column the query's tables lack, reached by location instead of by key.

On a spatial database the 1.5B often writes the attribute of the place a row
lies in as if the row stored it: ``SELECT COUNT(*) FROM scenicSpots WHERE
province = '新疆维吾尔自治区'`` when only ``cities`` has ``province`` and a spot
is in a city because its point is inside the city's polygon; or ``WHERE district
= '玄武区'`` when ``districts`` is a table of polygons. It also calls every
geometry ``Shape``. Of the 22 spatial queries that did not run in issue 29's
failure table, these were 9; no key joins the tables, so the FK join repair
(``kgsql.correct.repair``) cannot help. The geometry types can
(``kgsql.schema.spatial_pairs``). Per SELECT (its own FROM items only), without a
model call:

* a geometry column the table lacks (``hotels.Shape`` when hotels store
  ``Location``) becomes the table's own geometry column, when the SELECT has a
  single FROM item or the column names it;
* a column no FROM item has, owned by exactly one other table that relates to
  exactly one FROM item by containment or crossing (a point inside a polygon, a
  line crossing a polygon...; not by distance, which needs a number the question
  gives), is read from that table joined on the relation;
* otherwise a column named after a table of polygons (``district`` ->
  ``districts``) is read as that table's name column (``name``, or the table's
  one label) joined the same way.

Pairs that share a foreign key are left to the FK repair; anything ambiguous
is left alone. The repaired query is an ordinary candidate: checked and run,
so a wrong repair costs one execution.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.lookup import label_column
from kgsql.correct.repair import Scope, own_columns, qualify_all, rewrite_selects, written
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.schema.spatial_pairs import Pairing, geometry_column, pairing
from kgsql.sql.dialects import sqlglot_name
from kgsql.sql.names import parse_sql

__all__ = ["repair_spatial_joins"]


def _has(table: Table, column: str) -> bool:
    return any(c.name.lower() == column.lower() for c in table.columns)


def _geometry_names(schema: DatabaseSchema) -> set[str]:
    return {c.name.lower() for t in schema.tables for c in t.columns if c.spatial is not None}


def _singular(name: str) -> str:
    low = name.lower()
    if low.endswith("ies"):
        return low[:-3] + "y"
    return low[:-1] if low.endswith("s") and not low.endswith("ss") else low


def _name_column(schema: DatabaseSchema, table: Table) -> Column | None:
    """The column that names a row of ``table``: one called ``name``, else its one label column."""
    named = [c for c in table.columns if c.name.lower() == "name"]
    return named[0] if len(named) == 1 else label_column(schema, table)


def _outer_has(select: exp.Select, column: str, schema: DatabaseSchema) -> bool:
    """Whether a table of a query around ``select`` has ``column`` (an unqualified name may be its)."""
    tables = {t.name.lower(): t for t in schema.tables}
    outer = select.parent
    while outer is not None:
        if isinstance(outer, exp.Select) and any(
                _has(tables[t.name.lower()], column) for t in outer.find_all(exp.Table) if t.name.lower() in tables):
            return True
        outer = outer.parent
    return False


def _fix_geometry(scope: Scope, col: exp.Column, names: set[str]) -> bool:
    """``Shape`` on a table whose geometry is ``Location``: the table's own geometry column."""
    if col.name.lower() not in names or (not col.table and _outer_has(scope.select, col.name, scope.schema)):
        return False
    if col.table:
        table = scope.by_alias.get(col.table.lower())
    else:
        table = next(iter(scope.by_alias.values())) if len(scope.by_alias) == 1 else None
    if table is None or _has(table, col.name):
        return False
    geometry = geometry_column(table)
    if geometry is None:
        return False
    col.set("this", exp.to_identifier(geometry.name))
    return True


class _Located:
    """The one (FROM item, other table) pair related by containment or crossing, for each candidate table."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        schema = scope.schema
        self.keyed = {frozenset((fk.table.lower(), fk.ref_table.lower())) for fk in schema.foreign_keys}

    def relation(self, table: Table) -> tuple[str, Pairing] | None:
        """(the FROM alias, the pairing) when exactly one FROM item relates to ``table`` by location."""
        found: list[tuple[str, Pairing]] = []
        for alias, present in self.scope.by_alias.items():
            if frozenset((present.name.lower(), table.name.lower())) in self.keyed:
                return None  # a key joins them: the FK repair's case
            p = pairing(present, table)
            if p is not None and not p.measured:
                found.append((alias, p))
        return found[0] if len(found) == 1 else None


def _owner(scope: Scope, located: _Located, column: str) -> tuple[Table, Column, str, Pairing] | None:
    """(the table to join, the column to read, the FROM alias it relates to, the pairing)."""
    absent = [t for t in scope.schema.tables if t.name.lower() not in scope.alias_of]
    owners = []
    for table in absent:
        if _has(table, column):
            related = located.relation(table)
            if related is not None:
                owners.append((table, next(c for c in table.columns if c.name.lower() == column.lower()), *related))
    if owners:
        return owners[0] if len(owners) == 1 else None
    named = [t for t in absent if _singular(t.name) == _singular(column)]
    if len(named) != 1:
        return None
    related = located.relation(named[0])
    name = _name_column(scope.schema, named[0])
    if related is None or name is None or related[1].verb not in ("inside", "crossing"):
        return None
    return (named[0], name, *related)


def _location_condition(scope: Scope, table: Table, new: str, alias: str, p: Pairing,
                        dialect: str) -> exp.Expression | None:
    """The pairing as a join condition between ``table`` (to be joined as ``new``) and the FROM item ``alias``."""
    refs = {id(table): new, id(scope.by_alias[alias]): written(scope, alias)}
    columns = {"kgsql_first": exp.column(p.first_geometry.name, table=refs[id(p.first)]),
               "kgsql_second": exp.column(p.second_geometry.name, table=refs[id(p.second)])}
    on = parse_sql(p.condition("kgsql_first", "kgsql_second", dialect), sqlglot_name(dialect))
    if not isinstance(on, exp.Condition):
        return None
    for placeholder in list(on.find_all(exp.Column)):
        if placeholder.name in columns:
            placeholder.replace(columns[placeholder.name].copy())
    return on


def _repair_select(select: exp.Select, schema: DatabaseSchema, dialect: str) -> bool:
    scope = Scope(select, schema)
    if not scope.ok:
        return False
    names = _geometry_names(schema)
    outputs = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias) and e.alias}
    located = _Located(scope)
    changed = qualified = False
    for col in own_columns(select):
        if _fix_geometry(scope, col, names):
            changed = True
            continue
        qualifier = col.table.lower()
        if ((qualifier and qualifier not in scope.by_alias) or scope.holders(col.name)
                or col.name.lower() in outputs or (not qualifier and _outer_has(select, col.name, schema))):
            continue  # an enclosing query's alias or column, a column a FROM item has, an output name
        owner = _owner(scope, located, col.name)
        if owner is None:
            continue
        table, column, alias, p = owner
        new = scope.fresh_alias(table.name)
        on = _location_condition(scope, table, new, alias, p, dialect)
        if on is None:
            continue
        if not qualified:
            qualify_all(scope)  # before the join, so the new table's columns cannot make others ambiguous
            qualified = True
        scope.add_join(table, new, on)
        col.set("this", exp.to_identifier(column.name))
        col.set("table", exp.to_identifier(new))
        changed = True
    return changed


def repair_spatial_joins(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with geometry names and located attributes repaired, or None when nothing applies (and on
    any database without geometry columns)."""
    if not _geometry_names(ctx.schema):
        return None
    return rewrite_selects(ctx, sql, lambda select: _repair_select(select, ctx.schema, ctx.dialect),
                           dialect=sqlglot_name(ctx.dialect))
