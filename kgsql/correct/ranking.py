"""Rankings that skip what is not known: "the shortest hero" is not one whose height is NULL or 0.

``ORDER BY height_cm LIMIT 1`` runs and returns a row, and in SQLite that row
is a hero without a height: SQLite sorts NULL first in ascending order
(PostgreSQL in descending order). Documentation often says which stored
values mean "missing" too (``NULL or 0``, parsed into the column's value
meaning, :mod:`kgsql.schema.meanings`), and 0 is the smallest height. This
rewrite adds ``col IS NOT NULL`` (and ``col <> 0`` for a documented missing 0,
in an ascending ranking) to a ranked SELECT -- one ``ORDER BY`` key that is
a schema column, with a ``LIMIT`` -- when the graph's statistics say the
column holds NULLs, or its documentation names missing markers.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.db.engine import engine_for_dialect
from kgsql.schema.model import Column
from kgsql.sql.names import resolved_columns

__all__ = ["rank_known_values"]


def _nulls_first_when_ascending(dialect: str) -> bool | None:
    """Does an ascending ORDER BY put NULLs first in ``dialect``? (None: NULLs last either way, or unknown.)"""
    engine = engine_for_dialect(dialect)
    return engine.nulls_first_when_ascending if engine is not None else None


def _has_nulls(column: Column) -> bool:
    fraction = column.stats.null_fraction
    return bool(fraction) or "NULL" in column.value_meaning.missing


def _conditions(ordered: exp.Ordered, column: Column, dialect: str) -> list[exp.Expression]:
    """sqlglot's parser records where the dialect puts NULLs (``nulls_first``); the table is the fallback."""
    descending = bool(ordered.args.get("desc"))
    explicit = ordered.args.get("nulls_first")
    if explicit is None:
        ascending_first = _nulls_first_when_ascending(dialect)
        nulls_come_first = ascending_first is not None and descending != ascending_first
    else:
        nulls_come_first = bool(explicit)
    target = ordered.this.copy()
    found: list[exp.Expression] = []
    if nulls_come_first and _has_nulls(column):
        found.append(exp.Not(this=exp.Is(this=target.copy(), expression=exp.Null())))
    if not descending and "0" in column.value_meaning.missing:
        found.append(exp.NEQ(this=target.copy(), expression=exp.Literal.number(0)))
    return found


def _already_filtered(select: exp.Select, target: exp.Expression) -> bool:
    where = select.args.get("where")
    return where is not None and any(c == target for c in where.find_all(exp.Column))


def rank_known_values(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with unknown values kept out of its ranked SELECTs; None when nothing applies."""
    def filter_unknown(tree: exp.Expression) -> bool:
        columns = resolved_columns(tree, ctx.names)
        changed = False
        for select in list(tree.find_all(exp.Select)):
            order = select.args.get("order")
            if order is None or select.args.get("limit") is None or len(order.expressions) != 1:
                continue
            ordered = order.expressions[0]
            target = ordered.this
            found = columns.get(id(target)) if isinstance(target, exp.Column) else None
            if found is None or _already_filtered(select, target):
                continue
            conditions = _conditions(ordered, found[1], ctx.dialect)
            if conditions:
                where = select.args.get("where")
                kept = [where.this] if where is not None else []
                select.set("where", exp.Where(this=exp.and_(*kept, *conditions, copy=False)))
                changed = True
        return changed

    return rewrite_tree(ctx, sql, filter_unknown)
