"""Text literals spelt as the database spells them: ``race = 'human'`` where the column holds ``'Human'``.

Stored values carry their writers' habits (capitals, trailing spaces) and a
question's words do not, so a model that copies the question's spelling
writes a filter that matches nothing: the query runs and says "none". When a
compared literal (``=``, ``IN``) occurs nowhere in its column but exactly one
stored value equals it up to case and surrounding spaces, this rewrite puts
that value in its place before the query runs. Two or more such values (or
none) leave the literal alone: the value tips of an empty result then name
the candidates for the model to choose.
"""
from __future__ import annotations

from typing import Any, Callable

from sqlglot import exp

from kgsql.correct.context import CheckContext
from kgsql.correct.repair import rewrite_tree
from kgsql.correct.values import literal_comparisons, quote_identifier, quote_table, quote_text, value_exists
from kgsql.db.guard import execute_query
from kgsql.errors import KgsqlError

__all__ = ["compared_literals", "match_literals"]

PROBE_TIMEOUT_S = 2.0


def _stored_spelling(conn: object, table: str, column: str, text: str) -> str | None:
    """The one stored value equal to ``text`` up to case and outer spaces; None if it is stored as
    written, or if there are none or several."""
    if value_exists(conn, table, column, text, timeout_s=PROBE_TIMEOUT_S):
        return None
    t, c = quote_table(conn, table), quote_identifier(column)
    folded = (f"SELECT DISTINCT {c} FROM {t} WHERE lower(trim({c})) = {quote_text(text.strip().lower())} "
              f"LIMIT 2")
    rows = execute_query(conn, folded, timeout_s=PROBE_TIMEOUT_S, max_rows=2).rows
    return str(rows[0][0]) if len(rows) == 1 and rows[0][0] is not None else None


def compared_literals(ctx: CheckContext, tree: exp.Expression, keep: Callable[[exp.Literal], bool] = lambda _: True,
                      *, max_checks: int = 8) -> tuple[Any, list[tuple[str, str, exp.Literal]]]:
    """(the shared connection, each ``col = 'text'`` of ``tree`` that ``keep`` accepts); no connection
    (None, []) when the file cannot be opened."""
    compared = [(t, c, lit) for t, c, op, lit in literal_comparisons(tree, ctx.names)
                if op == "=" and keep(lit)][:max_checks]
    if not compared or not ctx.path:
        return None, []
    try:
        return ctx.connection(), compared
    except KgsqlError:
        return None, []


def match_literals(ctx: CheckContext, sql: str) -> str | None:
    """``sql`` with each compared literal in its stored spelling; None when none needed it."""
    def respell(tree: exp.Expression) -> bool:
        conn, compared = compared_literals(ctx, tree)
        changed = False
        for table, column, literal in compared:
            try:
                stored = _stored_spelling(conn, table, column, literal.this)
            except KgsqlError:
                continue
            if stored is not None and stored != literal.this:
                literal.set("this", stored)
                changed = True
        return changed

    return rewrite_tree(ctx, sql, respell) if ctx.path else None
