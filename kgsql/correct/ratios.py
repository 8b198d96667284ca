"""Ratios of integers divided as real numbers: ``COUNT(x) * 100 / COUNT(*)`` is 0 or 100 in SQLite.

SQLite and PostgreSQL divide two integers as integers, so a percentage or a
ratio written the natural way (``SUM(CASE WHEN ... THEN 1 ELSE 0 END) * 100 /
COUNT(*)``) runs, returns a number, and is wrong: no error for a tip to catch,
and no question asks for a truncated ratio. Written by people, such queries
carry ``CAST(... AS REAL)``; small models leave it out. This rewrite casts
the dividend of every division whose two sides are integers, as the schema's
declared types and SQL's integer-valued forms say (counts, integer columns
and literals, sums/min/max of those, CASE/IIF choosing between integers, and
arithmetic of integers). DuckDB's ``/`` already divides as real numbers, so
nothing changes there.
"""
from __future__ import annotations

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.db.engine import engine_for_dialect
from kgsql.schema.model import Column
from kgsql.sql.names import resolved_columns

__all__ = ["cast_ratios"]

_AGGREGATES_KEEPING_TYPE = (exp.Sum, exp.Min, exp.Max, exp.Abs)
_ARITHMETIC = (exp.Mul, exp.Add, exp.Sub, exp.Mod)


def _is_integer_type(column: Column) -> bool:
    return "INT" in (column.type or "").upper()


def _integer(node: exp.Expression | None, columns: dict[int, tuple[str, Column]]) -> bool:
    """True when ``node`` is integer-valued for certain (unknown: False, so nothing is cast wrongly)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if node is None:
        return False
    if isinstance(node, exp.Count):
        return True
    if isinstance(node, exp.Literal):
        return not node.is_string and node.is_int
    if isinstance(node, exp.Null):
        return True  # CASE ... ELSE NULL: NULL does not make the other branches real
    if isinstance(node, exp.Column):
        found = columns.get(id(node))
        return found is not None and _is_integer_type(found[1])
    if isinstance(node, exp.Cast):
        return node.to.is_type(*exp.DataType.INTEGER_TYPES)
    if isinstance(node, _AGGREGATES_KEEPING_TYPE):
        return _integer(node.this, columns)
    if isinstance(node, _ARITHMETIC):
        return _integer(node.this, columns) and _integer(node.expression, columns)
    if isinstance(node, exp.Case):
        branches = [i.args.get("true") for i in node.args.get("ifs") or []]
        return bool(branches) and all(_integer(b, columns) for b in [*branches, node.args.get("default")]
                                      if b is not None)
    if isinstance(node, exp.If):
        return _integer(node.args.get("true"), columns) and (
            node.args.get("false") is None or _integer(node.args.get("false"), columns))
    return False


def cast_ratios(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with the dividend of each integer-by-integer division cast to REAL; None when none."""
    engine = engine_for_dialect(ctx.dialect)
    if engine is None or not engine.integer_division:  # only where ``/`` of two integers truncates
        return None

    def cast(tree: exp.Expression) -> bool:
        divisions = list(tree.find_all(exp.Div))
        columns = resolved_columns(tree, ctx.names) if divisions else {}
        changed = False
        for div in divisions:
            if _integer(div.this, columns) and _integer(div.expression, columns):
                div.this.replace(exp.Cast(this=div.this.copy(), to=exp.DataType.build("REAL")))
                changed = True
        return changed

    return rewrite_tree(ctx, sql, cast)
