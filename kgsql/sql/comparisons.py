"""A SELECT's conditions, and a comparison's two sides: the column a test reads, and what it compares it with.

``x = 'a'``, ``'a' = x``, ``x != 'a'``, ``x LIKE 'a%'`` and ``x IN ('a', 'b')`` all say one thing about one
column; rules that read such tests (a key compared with a label, a number column compared with a word)
want the column and the values whatever the order they were written in. Rules that ask what ties a
SELECT's tables together (a cross join) read the parts of its ON clauses and WHERE one by one.
"""
from __future__ import annotations

from sqlglot import exp

__all__ = ["COMPARISONS", "compared", "conjuncts", "select_conditions"]

#: The tests :func:`compared` reads.
COMPARISONS = (exp.EQ, exp.NEQ, exp.In, exp.Like)


def compared(node: exp.Expression) -> tuple[exp.Expression, list[exp.Expression]]:
    """(the side that is a column, else the left one; the values it is compared with) of a test of
    :data:`COMPARISONS` (``IN``: its list, empty for ``IN (SELECT ...)``)."""
    if isinstance(node, exp.In):
        return node.this, list(node.expressions)
    if isinstance(node.this, exp.Column) or not isinstance(node.expression, exp.Column):
        return node.this, [node.expression]
    return node.expression, [node.this]


def conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    """The parts of an AND chain (a WHERE clause read through), none for no condition."""
    if condition is None:
        return []
    node = condition.this if isinstance(condition, exp.Where) else condition
    return list(node.flatten()) if isinstance(node, exp.And) else [node]


def select_conditions(select: exp.Select) -> list[exp.Expression]:
    """The parts of every ON clause of this SELECT's joins, then of its WHERE."""
    joins = select.args.get("joins") or []
    return [p for j in joins for p in conjuncts(j.args.get("on"))] + conjuncts(select.args.get("where"))
