"""Dates as SQLite stores them: text, compared as text.

SQLite has no date type: dates are text (``2019-10-08``, ``2020-03-10T12:00:00``)
and its date functions return text. Three habits of models trained on other
databases run without an error and answer wrongly (or fail where a rewrite is
certain):

* ``strftime('%Y', d) = 2019`` or ``substr(d, 1, 4) = 2019``: text never
  equals a number in SQLite, so the filter matches nothing. The number is
  written as the text the function returns (``'2019'``; months and days
  zero-padded: ``strftime('%m', d) = 9`` -> ``'09'``);
* ``YEAR(d)``, ``MONTH(d)``, ``DAY(d)`` (MySQL's, as BIRD's evidence writes
  them) do not exist in SQLite: they become ``CAST(strftime('%Y', d) AS
  INTEGER)`` and so on, which compare with numbers as meant;
* ``event_date = '2019-10-08'`` on a column whose values carry a time
  (``2019-10-08T12:00:00``) matches nothing: when the date occurs only as the
  start of stored values (one probe), the comparison becomes ``LIKE
  '2019-10-08%'``.
"""
from __future__ import annotations

import re

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.literals import PROBE_TIMEOUT_S, compared_literals
from kgsql.correct.repair import rewrite_tree
from kgsql.correct.values import value_exists
from kgsql.errors import KgsqlError

__all__ = ["sqlite_dates"]

_SQLITE = frozenset({"sqlite", "spatialite"})
_PARTS = {exp.Year: "%Y", exp.Month: "%m", exp.Day: "%d"}
_PADDED = {"%m": 2, "%d": 2, "%H": 2, "%M": 2, "%S": 2, "%Y": 4}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _text_of(node: exp.Expression) -> int | None:
    """Digits the text-valued ``node`` returns (0: any width), or None when it is not text-valued."""
    if isinstance(node, exp.TimeToStr):
        fmt = node.args.get("format")
        text = fmt.this if isinstance(fmt, exp.Literal) else ""
        return _PADDED.get(text, 0)
    if isinstance(node, exp.Substring):
        return 0
    return None


def _quote_numbers(tree: exp.Expression) -> bool:
    changed = False
    for node in list(tree.find_all(exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        for side, other in ((node.this, node.expression), (node.expression, node.this)):
            width = _text_of(side)
            if width is None or not (isinstance(other, exp.Literal) and not other.is_string and other.is_int):
                continue
            other.replace(exp.Literal.string(other.this.zfill(width)))
            changed = True
            break
    return changed


def _standard_parts(tree: exp.Expression) -> bool:
    changed = False
    for kind, fmt in _PARTS.items():
        for node in list(tree.find_all(kind)):
            text = exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), node.this.copy()])
            node.replace(exp.Cast(this=text, to=exp.DataType.build("INTEGER")))
            changed = True
    return changed


def _dates_with_times(ctx: CheckContext, tree: exp.Expression) -> bool:
    conn, compared = compared_literals(ctx, tree, lambda lit: bool(_DATE.match(lit.this))
                                       and isinstance(lit.parent, exp.EQ))
    changed = False
    for table, column, literal in compared:
        try:
            if value_exists(conn, table, column, literal.this, timeout_s=PROBE_TIMEOUT_S):
                continue
            if not any(value_exists(conn, table, column, literal.this + tail, op="LIKE", timeout_s=PROBE_TIMEOUT_S)
                       for tail in ("T%", " %")):
                continue
        except KgsqlError:
            continue
        comparison = literal.parent
        column_node = comparison.expression if comparison.this is literal else comparison.this
        comparison.replace(exp.Like(this=column_node.copy(), expression=exp.Literal.string(literal.this + "%")))
        changed = True
    return changed


def sqlite_dates(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with its dates compared as SQLite stores them; None when nothing needed it."""
    if ctx.dialect not in _SQLITE:
        return None

    def as_text(tree: exp.Expression) -> bool:
        changed = _standard_parts(tree)
        changed = _quote_numbers(tree) or changed
        return _dates_with_times(ctx, tree) or changed

    return rewrite_tree(ctx, sql, as_text)
