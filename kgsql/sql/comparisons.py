"""A comparison's two sides: the column a test reads, and what it compares it with.

``x = 'a'``, ``'a' = x``, ``x != 'a'``, ``x LIKE 'a%'`` and ``x IN ('a', 'b')`` all say one thing about one
column; rules that read such tests (a key compared with a label, a number column compared with a word)
want the column and the values whatever the order they were written in.
"""
from __future__ import annotations

from sqlglot import exp

__all__ = ["COMPARISONS", "compared"]

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
