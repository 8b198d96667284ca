"""Join conditions that join nothing get the condition that does: the two tables' key, else their location.

Asked which district a station is in, the 1.5B joins ``subwaystations`` and
``districts`` and, when its first condition fails, writes one that cannot be
one: ``ON T1.adcode = T1.adcode`` (true for every pair), ``ON T2.province =
T2.province`` (often the FK join repair's requalification of ``T1.province``), or
``ON T1.address = T2.name`` (no pair at all). These queries run, so no error
tip catches them; on issue 29's spatial set they were the commonest wrong
answers (the failure table's "no spatial relation"). The schema knows what
does join the two tables: a foreign key (``subwaystations.adcode ->
districts.administrative_division_code``), else, for two geometry tables, the
relation their geometry types give (``kgsql.schema.spatial_pairs``: a point
inside a polygon, a line crossing a polygon...). Per SELECT, a JOIN's ``ON a =
b`` gets that condition when

* the two sides are the same column of one FROM item (a tautology), and
  exactly one other FROM item is keyed or located to the joined table; or
* the sides are columns of two geometry tables that share no key, relate by
  location, and the equality matches no pair of rows (checked on the database).

An equality that matches rows is kept (a code join that works is a join), as
are joins by distance (a point and a point), which need a number the question
gives.

The spatial form of the tautology gets the same treatment: a relation of a
geometry with itself (``ON Intersects(T2.Shape, T2.Shape) = 1``, true of every
pair); and a distance of a geometry from itself (``Distance(r.Shape, r.Shape)``,
always 0) measures from the one other FROM item with a geometry instead. Ten
of the 151 wrong answers of session 21's spatial run had one of the two.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import Scope, rewrite_selects, written
from kgsql.correct.spatial_joins import located_condition
from kgsql.errors import KgsqlError
from kgsql.schema.joins import FKGraph, fk_graph
from kgsql.schema.spatial_pairs import geometry_column
from kgsql.sql.calls import DISTANCES, RELATIONS, function_call
from kgsql.sql.dialects import sqlglot_name

__all__ = ["fix_join_conditions"]

def _same_geometry(call: exp.Func, names: frozenset[str]) -> exp.Column | None:
    """The column when ``call`` is one of ``names`` applied to one column twice (``Intersects(a.g, a.g)``)."""
    name, args = function_call(call)
    if name not in names or len(args) < 2 or not all(isinstance(a, exp.Column) for a in args[:2]):
        return None
    first, second = args[0], args[1]
    same = (first.name.lower(), first.table.lower()) == (second.name.lower(), second.table.lower())
    return first if same else None  # type: ignore[return-value]


def _self_relation(on: exp.Expression) -> exp.Column | None:
    """The geometry an ON condition relates to itself (``Intersects(T2.Shape, T2.Shape) = 1`` or bare)."""
    if isinstance(on, exp.EQ) and isinstance(on.expression, exp.Literal) and on.expression.this == "1":
        on = on.this
    return _same_geometry(on, RELATIONS) if isinstance(on, exp.Func) else None


def _alias_of(scope: Scope, column: exp.Column, joined: str) -> str | None:
    """The FROM alias a column of the ON condition belongs to (unqualified: the joined table's, if it has it)."""
    if column.table:
        return column.table.lower() if column.table.lower() in scope.by_alias else None
    holders = scope.holders(column.name)
    if joined in holders:
        return joined
    return holders[0] if len(holders) == 1 else None


def _key_condition(scope: Scope, g: FKGraph, joined: str, other: str) -> exp.Expression | None:
    """``joined.key = other.key`` on the first foreign key between the two FROM items' tables, if any."""
    fks = g.fks(scope.by_alias[joined].name, scope.by_alias[other].name)
    if not fks or scope.by_alias[joined] is scope.by_alias[other]:
        return None
    fk = fks[0]
    alias = {scope.by_alias[joined].name: written(scope, joined), scope.by_alias[other].name: written(scope, other)}
    return exp.EQ(this=exp.column(fk.column, table=alias[fk.table]),
                  expression=exp.column(fk.ref_column, table=alias[fk.ref_table]))


def _condition(ctx: CheckContext, scope: Scope, g: FKGraph, joined: str, other: str) -> exp.Expression | None:
    """What joins the two FROM items: their key, else their location relation; None when neither does."""
    key = _key_condition(scope, g, joined, other)
    if key is not None:
        return key
    return located_condition(scope, scope.by_alias[joined], written(scope, joined), other, ctx.dialect)


def _matches_nothing(ctx: CheckContext, scope: Scope, a: str, b: str, on: exp.EQ) -> bool:
    """Whether ``on`` joins no row of ``a`` to any row of ``b`` (a probe on the database; unsure: False)."""
    ta, tb = scope.by_alias[a], scope.by_alias[b]
    probe = exp.select("1").from_(exp.alias_(exp.to_table(ta.name), a, table=True)).join(
        exp.alias_(exp.to_table(tb.name), b, table=True), on=on.copy()).limit(1)
    try:
        return not ctx.execute(probe.sql(dialect=sqlglot_name(ctx.dialect))).rows
    except KgsqlError:
        return False


def _join_tautology(ctx: CheckContext, scope: Scope, g: FKGraph, join: exp.Join, alias: str,
                    order: list[str]) -> bool:
    """A condition true of every pair, on a column of FROM item ``alias``, replaced by what joins the joined
    table to its one partner (the items before it when ``alias`` is the joined table, else ``alias``)."""
    joined = join.this.alias_or_name.lower()
    partners = order[:order.index(joined)] if alias == joined else [alias]
    conditions = [c for c in (_condition(ctx, scope, g, joined, p) for p in partners) if c is not None]
    if len(conditions) != 1:
        return False
    join.set("on", conditions[0])
    return True


def _fix(ctx: CheckContext, scope: Scope, g: FKGraph, join: exp.Join, order: list[str]) -> bool:
    on = join.args.get("on")
    if on is None or not isinstance(join.this, exp.Table):
        return False
    joined = join.this.alias_or_name.lower()
    itself = _self_relation(on)
    if itself is not None:  # a geometry related to itself
        alias = _alias_of(scope, itself, joined)
        return alias is not None and _join_tautology(ctx, scope, g, join, alias, order)
    if not isinstance(on, exp.EQ):
        return False
    sides = [on.this, on.expression]
    if not all(isinstance(s, exp.Column) for s in sides):
        return False
    aliases = {_alias_of(scope, s, joined) for s in sides}  # type: ignore[arg-type]
    if None in aliases:
        return False
    if len(aliases) == 1:  # a tautology (one column equal to itself)
        if sides[0].name.lower() != sides[1].name.lower():
            return False  # two columns of one table: a filter written in ON, not a join that joins nothing
        return _join_tautology(ctx, scope, g, join, aliases.pop(), order)  # type: ignore[arg-type]
    if joined not in aliases:
        return False
    (other,) = aliases - {joined}
    if (g.fks(scope.by_alias[joined].name, scope.by_alias[other].name)
            or geometry_column(scope.by_alias[joined]) is None):
        return False  # a keyed pair's own condition is the key repairs' business
    located = located_condition(scope, scope.by_alias[joined], written(scope, joined), other, ctx.dialect)
    if located is None or not _matches_nothing(ctx, scope, other, joined, on):
        return False
    join.set("on", located)
    return True


def _fix_select(ctx: CheckContext, select: exp.Select, g: FKGraph) -> bool:
    scope = Scope(select, ctx.schema)
    if not scope.ok:
        return False
    from_ = select.args.get("from_")
    joins = select.args.get("joins") or []
    order = [from_.this.alias_or_name.lower()] + [j.this.alias_or_name.lower() for j in joins]
    changed = False
    for join in joins:
        changed = _fix(ctx, scope, g, join, order) or changed
    return _measure_between(scope, order) or changed


def _measure_between(scope: Scope, order: list[str]) -> bool:
    """``Distance(a.g, a.g)`` -> ``Distance(a.g, b.h)`` when ``b`` is the one other FROM item with a geometry."""
    changed = False
    for call in [f for f in scope.select.find_all(exp.Func) if f.find_ancestor(exp.Select) is scope.select]:
        column = _same_geometry(call, DISTANCES)
        alias = _alias_of(scope, column, "") if column is not None else None
        others = [a for a in order if a != alias and a in scope.by_alias
                  and geometry_column(scope.by_alias[a]) is not None]
        if alias is None or len(others) != 1:
            continue
        geometry = geometry_column(scope.by_alias[others[0]])
        assert geometry is not None  # others have one
        function_call(call)[1][1].replace(exp.column(geometry.name, table=written(scope, others[0])))
        changed = True
    return changed


def fix_join_conditions(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with join conditions that join nothing replaced by the key or location condition; None when
    nothing applies."""
    g = fk_graph(ctx.schema)
    return rewrite_selects(ctx, sql, lambda select: _fix_select(ctx, select, g), dialect=sqlglot_name(ctx.dialect))
