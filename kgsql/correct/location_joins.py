"""Location joins: two geometry tables joined on a condition that joins nothing get their location relation.

Asked which district a station is in, the 1.5B joins ``subwaystations`` and
``districts`` as if they shared a key, and when none fits it writes one that
cannot be one: ``ON T1.adcode = T1.adcode`` (true for every pair), ``ON
T2.province = T2.province``, or ``ON T1.address = T2.name`` (no pair at all).
These queries run, so no error tip catches them; on issue 29's spatial set they
were the commonest wrong answers (the failure table's "no spatial relation").
The geometry types say how the two tables do relate
(``kgsql.schema.spatial_pairs``: a point inside a polygon, a line crossing a
polygon...). Per SELECT, a JOIN's ``ON a = b`` becomes that relation when

* the two sides name the same FROM item (a tautology, or a condition on one
  table only), and exactly one other FROM item relates to the joined table by
  location; or
* the sides are columns of two FROM items that share no foreign key, relate by
  location, and the equality matches no pair of rows (checked on the database).

An equality that does match rows is kept (``subwaystations.adcode =
districts.administrative_division_code`` is a real code join), as are joins by
distance (a point and a point), which need a number the question gives.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import Scope, rewrite_selects
from kgsql.correct.spatial_joins import located_condition, located_partners
from kgsql.errors import KgsqlError
from kgsql.schema.model import DatabaseSchema
from kgsql.schema.spatial_pairs import geometry_column
from kgsql.sql.dialects import sqlglot_name

__all__ = ["location_joins"]


def _alias_of(scope: Scope, column: exp.Column, joined: str) -> str | None:
    """The FROM alias a column of the ON condition belongs to (unqualified: the joined table's, if it has it)."""
    if column.table:
        return column.table.lower() if column.table.lower() in scope.by_alias else None
    holders = scope.holders(column.name)
    if joined in holders:
        return joined
    return holders[0] if len(holders) == 1 else None


def _matches_nothing(ctx: CheckContext, scope: Scope, a: str, b: str, on: exp.EQ) -> bool:
    """Whether ``on`` joins no row of ``a`` to any row of ``b`` (a probe on the database; unsure: False)."""
    ta, tb = scope.by_alias[a], scope.by_alias[b]
    probe = exp.select("1").from_(exp.alias_(exp.to_table(ta.name), a, table=True)).join(
        exp.alias_(exp.to_table(tb.name), b, table=True), on=on.copy()).limit(1)
    try:
        return not ctx.execute(probe.sql(dialect=sqlglot_name(ctx.dialect))).rows
    except KgsqlError:
        return False


def _relocate(ctx: CheckContext, scope: Scope, join: exp.Join, order: list[str]) -> bool:
    on = join.args.get("on")
    target = join.this
    if not isinstance(on, exp.EQ) or not isinstance(target, exp.Table):
        return False
    joined = target.alias_or_name.lower()
    if geometry_column(scope.by_alias[joined]) is None:
        return False
    sides = [on.this, on.expression]
    if not all(isinstance(s, exp.Column) for s in sides):
        return False
    aliases = {_alias_of(scope, s, joined) for s in sides}  # type: ignore[arg-type]
    if None in aliases:
        return False
    earlier = order[:order.index(joined)]
    if len(aliases) == 1:  # a tautology or a condition on one table: relate the joined table to its one partner
        (alias,) = aliases
        partners = located_partners(scope, scope.by_alias[joined], earlier if alias == joined else [alias])
    elif joined in aliases:  # the joined table against an earlier one: kept when the equality matches rows
        (other,) = aliases - {joined}
        if not located_partners(scope, scope.by_alias[joined], [other]) or not _matches_nothing(ctx, scope, other, joined, on):
            return False
        partners = [other]
    else:
        return False
    if len(partners) != 1:
        return False
    condition = located_condition(scope, scope.by_alias[joined], joined, partners[0], ctx.dialect)
    if condition is None:
        return False
    join.set("on", condition)
    return True


def _relocate_select(ctx: CheckContext, select: exp.Select) -> bool:
    scope = Scope(select, ctx.schema)
    if not scope.ok:
        return False
    from_ = select.args.get("from_")
    order = [from_.this.alias_or_name.lower()] + [j.this.alias_or_name.lower() for j in select.args.get("joins") or []]
    changed = False
    for join in select.args.get("joins") or []:
        changed = _relocate(ctx, scope, join, order) or changed
    return changed


def _spatial(schema: DatabaseSchema) -> bool:
    return any(geometry_column(t) is not None for t in schema.tables)


def location_joins(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with joins that join nothing between located tables replaced by their relation; None when
    nothing applies (always on a database without geometry)."""
    if not _spatial(ctx.schema):
        return None
    return rewrite_selects(ctx, sql, lambda select: _relocate_select(ctx, select), dialect=sqlglot_name(ctx.dialect))
