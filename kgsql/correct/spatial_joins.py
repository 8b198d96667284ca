"""Spatial join repair: a column the query's tables lack, reached by location instead of by key.

On a spatial database the 1.5B often writes the attribute of the place a row
lies in as if the row stored it: ``SELECT COUNT(*) FROM scenicSpots WHERE
province = '新疆维吾尔自治区'`` when only ``cities`` has ``province`` and a spot
is in a city because its point is inside the city's polygon; or ``WHERE district
= '玄武区'`` when ``districts`` is a table of polygons. It also calls every
geometry ``Shape``. Of the 22 spatial queries that did not run in issue 29's
failure table, about 9 were of these kinds; no key joins the tables, so the FK join repair
(``kgsql.correct.repair``) cannot help. The geometry types can
(``kgsql.schema.spatial_pairs``). Per SELECT (its own FROM items only), without a
model call:

* a geometry column the table lacks (``hotels.Shape`` when hotels store
  ``Location``) becomes the table's own geometry column, and a ``length`` or
  ``area`` a table of lines or polygons does not store becomes its measure in
  metres (``GLength(Shape, 1)``: one database of the spatial set stores road
  lengths, its twin does not), when the SELECT has a single FROM item or the
  column names it;
* a column no FROM item has, owned by exactly one other table that relates to
  exactly one FROM item by containment or crossing (a point inside a polygon, a
  line crossing a polygon...; not by distance, which needs a number the question
  gives), is read from that table joined on the relation;
* a column qualified by a table the query never put in FROM (``FROM hotels
  WHERE districts.name = '玄武区'``) is read from that table joined under its
  name, when it relates to exactly one FROM item the same way;
* otherwise a column named after a table of polygons (``district`` ->
  ``districts``) is read as that table's name column (``name``, or the table's
  one label) joined the same way.

Pairs that share a foreign key are left to the FK repair; anything ambiguous
is left alone. The repaired query is an ordinary candidate: checked and run,
so a wrong repair costs one execution.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.lookup import label_column
from kgsql.correct.repair import (Scope, enclosing_names, has_column, own_columns, qualify_all, rewrite_selects,
                                  written)
from kgsql.schema.geometry_units import measure
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.schema.spatial_pairs import geometry_column, geometry_names, pairing
from kgsql.sql.dialects import spatial_forms, sqlglot_name
from kgsql.sql.names import parse_sql, schema_table

__all__ = ["located_condition", "located_partners", "repair_spatial_joins"]


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
                has_column(found, column) for t in outer.find_all(exp.Table)
                if (found := schema_table(t, tables)) is not None):
            return True
        outer = outer.parent
    return False


#: Names a query gives a measure the table does not store -> what :func:`measure` must measure.
_MEASURE_NAMES: Final = {"length": "length", "len": "length", "shape_leng": "length", "shape_length": "length",
                         "area": "area", "shape_area": "area"}


def _lacking(scope: Scope, col: exp.Column) -> Table | None:
    """The FROM item a geometry-ish column is written on (its qualifier, or the one FROM item) when it lacks it."""
    if col.table:
        table = scope.by_alias.get(col.table.lower())
    elif len(scope.by_alias) == 1 and not _outer_has(scope.select, col.name, scope.schema):
        table = next(iter(scope.by_alias.values()))
    else:
        return None
    return None if table is None or has_column(table, col.name) else table


def _fix_geometry(scope: Scope, col: exp.Column, names: set[str], dialect: str) -> bool:
    """``Shape`` on a table whose geometry is ``Location``: the table's own geometry column; ``length`` or
    ``area`` on a table of lines or polygons that stores none: the measure in metres (``GLength(Shape, 1)``)."""
    wanted = _MEASURE_NAMES.get(col.name.lower())
    if col.name.lower() not in names and wanted is None:
        return False
    table = _lacking(scope, col)
    geometry = geometry_column(table) if table is not None else None
    if geometry is None:
        return False
    if wanted is None:
        col.set("this", exp.to_identifier(geometry.name))
        return True
    ref = exp.column(geometry.name, table=col.table or None).sql(dialect=sqlglot_name(dialect))
    forms = spatial_forms(dialect)
    found = measure(geometry, ref, forms) if forms is not None else None
    expression = parse_sql(found[1], sqlglot_name(dialect)) if found is not None and found[0] == wanted else None
    if not isinstance(expression, exp.Expression):
        return False
    col.replace(expression)
    return True


def located_partners(scope: Scope, table: Table, among: Iterable[str]) -> list[str]:
    """The FROM aliases among ``among`` whose tables relate to ``table`` by containment or crossing; none when
    a foreign key links ``table`` to any FROM item (the key repairs' case)."""
    keyed = {frozenset((fk.table.lower(), fk.ref_table.lower())) for fk in scope.schema.foreign_keys}
    if any(frozenset((t.name.lower(), table.name.lower())) in keyed for t in scope.by_alias.values()):
        return []
    found = []
    for alias in among:
        p = pairing(scope.by_alias[alias], table)
        if p is not None and not p.measured and scope.by_alias[alias] is not table:
            found.append(alias)
    return found


def _related(scope: Scope, table: Table) -> str | None:
    """The one FROM alias that relates to ``table`` by location, else None."""
    partners = located_partners(scope, table, list(scope.by_alias))
    return partners[0] if len(partners) == 1 else None


def _owner(scope: Scope, column: str) -> tuple[Table, Column, str] | None:
    """(the table to join, the column to read, the FROM alias it relates to by location)."""
    absent = [t for t in scope.schema.tables if t.name.lower() not in scope.alias_of]
    owners = []
    for table in absent:
        if has_column(table, column):
            related = _related(scope, table)
            if related is not None:
                owners.append((table, next(c for c in table.columns if c.name.lower() == column.lower()), related))
    if owners:
        return owners[0] if len(owners) == 1 else None
    named = [t for t in absent if _singular(t.name) == _singular(column)]
    if len(named) != 1:
        return None
    related = _related(scope, named[0])
    name = _name_column(scope.schema, named[0])
    if related is None or name is None:
        return None
    return named[0], name, related


def _named_absent(scope: Scope, col: exp.Column) -> tuple[Table, str] | None:
    """``districts.name`` where neither this SELECT's FROM nor a query around it has ``districts``: (the table,
    the one FROM alias it relates to by location) when it has the column, else None."""
    qualifier = col.table.lower()
    if not qualifier or qualifier in scope.by_alias or qualifier in enclosing_names(scope.select):
        return None
    table = next((t for t in scope.schema.tables if t.name.lower() == qualifier), None)
    if table is None or table.name.lower() in scope.alias_of or not has_column(table, col.name):
        return None
    related = _related(scope, table)
    return (table, related) if related is not None else None


def located_condition(scope: Scope, table: Table, alias: str, other: str, dialect: str) -> exp.Expression | None:
    """How ``table`` (written as ``alias``) relates by containment or crossing to the FROM item ``other``, as a
    join condition; None when they relate by distance or not at all."""
    partner = scope.by_alias[other]
    p, forms = pairing(table, partner), spatial_forms(dialect)
    if p is None or p.measured or partner is table or forms is None:
        return None
    refs = {id(table): alias, id(partner): written(scope, other)}
    columns = {"kgsql_first": exp.column(p.first_geometry.name, table=refs[id(p.first)]),
               "kgsql_second": exp.column(p.second_geometry.name, table=refs[id(p.second)])}
    on = parse_sql(p.condition("kgsql_first", "kgsql_second", forms), sqlglot_name(dialect))
    if not isinstance(on, exp.Condition):
        return None
    for placeholder in list(on.find_all(exp.Column)):
        if placeholder.name in columns:
            placeholder.replace(columns[placeholder.name].copy())
    return on


def _qualified(scope: Scope) -> bool:
    """Qualifies the SELECT's columns before a join, so the new table's columns cannot make others ambiguous."""
    qualify_all(scope)
    return True


def _repair_select(select: exp.Select, schema: DatabaseSchema, dialect: str) -> bool:
    scope = Scope(select, schema)
    if not scope.ok:
        return False
    names = geometry_names(schema)
    outputs = {e.alias.lower() for e in select.expressions if isinstance(e, exp.Alias) and e.alias}
    changed = qualified = False
    for col in own_columns(select):
        if not col.table and col.name.lower() in outputs:
            continue  # an output's name (ORDER BY length)
        if _fix_geometry(scope, col, names, dialect):
            changed = True
            continue
        qualifier = col.table.lower()
        named = _named_absent(scope, col)
        if named is not None:  # the query names a table it never put in FROM: joined by location, under its name
            on = located_condition(scope, named[0], col.table, named[1], dialect)
            if on is not None:
                qualified = qualified or _qualified(scope)
                scope.add_join(named[0], col.table, on)
                changed = True
            continue
        if ((qualifier and qualifier not in scope.by_alias) or scope.holders(col.name)
                or (not qualifier and _outer_has(select, col.name, schema))):
            continue  # an enclosing query's alias or column, a column a FROM item has
        owner = _owner(scope, col.name)
        if owner is None:
            continue
        table, column, alias = owner
        new = scope.fresh_alias(table.name)
        on = located_condition(scope, table, new, alias, dialect)
        if on is None:
            continue
        qualified = qualified or _qualified(scope)
        scope.add_join(table, new, on)
        col.set("this", exp.to_identifier(column.name))
        col.set("table", exp.to_identifier(new))
        changed = True
    return changed


def repair_spatial_joins(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with geometry names and located attributes repaired, or None when nothing applies (and on
    any database without geometry columns)."""
    if not geometry_names(ctx.schema):
        return None
    return rewrite_selects(ctx, sql, lambda select: _repair_select(select, ctx.schema, ctx.dialect),
                           dialect=sqlglot_name(ctx.dialect))
