"""A count of something the database does not hold: the counting form of an empty result.

"How many professors are in the accounting department?" answered ``SELECT count(*) FROM professor WHERE
dept_code = 'ACCOUNTING'`` returns one row, ``0``, and looks like an answer; the codes are ``ACCT``. The
database, asked read-only, says whether the column holds the text in any spelling (case, surrounding
spaces) and whether it holds anything at all.
"""
from __future__ import annotations

from typing import Any, Sequence

from sqlglot import exp

from kgsql.generate.explain import Explanation
from kgsql.generate.fanout import RowProbe
from kgsql.sql.dialects import engine_of_dialect

__all__ = ["unmatched_count"]


def _is_zero(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


def unmatched_count(tree: exp.Expression, rows: Sequence[Sequence[Any]], explanation: Explanation,
                    exists: RowProbe, dialect: str | None = None) -> tuple[str, str] | None:
    """A COUNT that came to 0 (the counting form of an empty result) while a filter compares a column with a text
    it holds in no spelling (``dept_code = 'ACCOUNTING'`` where the codes are ``ACCT``): what is counted is not
    in the database. A text stored with other case or spaces (``' ATO'``), or a column that holds nothing, is
    the database's own zero: the database is asked, read-only, for the column's value without case and
    surrounding spaces, and for any value at all. Returned: (``table.column``, the text), or None."""
    if len(rows) != 1 or not any(_is_zero(v) for v in rows[0]) or not all(_is_zero(v) or v is None for v in rows[0]) \
            or tree.find(exp.Count) is None:
        return None
    for step in explanation.filters:
        if step.op != "=" or step.stored is not None or not any(ch.isalpha() for ch in step.value):
            continue
        table, _, column = step.column.rpartition(".")
        spelled = exp.EQ(this=exp.Lower(this=exp.Trim(this=exp.column(column, quoted=True))),
                         expression=exp.Lower(this=exp.Trim(this=exp.Literal.string(step.value))))  # one folding
        near = exp.select("1").from_(_table_node(table, dialect)).where(spelled)
        some = exp.select("1").from_(_table_node(table, dialect)).where(
            exp.Not(this=exp.Is(this=exp.column(column, quoted=True), expression=exp.Null())))
        # a row back: the column holds values, none of them near; an empty column's zero is the database's own;
        # a probe the database refuses returns no row, and flags nothing
        unmatched = exp.and_(exp.Not(this=exp.Exists(this=near)), exp.Exists(this=some))
        if exists(exp.select("1").where(unmatched).sql(dialect=dialect)):
            return step.column, step.value
    return None


def _table_node(name: str, dialect: str | None) -> exp.Table:
    """A table of the schema graph as its engine quotes it (on PostgreSQL ``hr.staff`` is ``staff`` of schema
    ``hr``; elsewhere one identifier, spaces and dots included)."""
    engine = engine_of_dialect(dialect or "")
    return exp.to_table(engine.quote_table(name), dialect=engine.name)
