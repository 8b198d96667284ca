"""Review an answer as it is made: its explanation and its flags, from the SQL and the graph (no model call).

Both methods (the staged ones and the agent) call :func:`review` on the answer they return, so every surface
(the CLI, the service and its page, the notebook, the MCP ``ask`` tool) reads ``answer.explanation`` and
``answer.warnings`` from one place. Stored values are probed on the database read-only; a database that
cannot be opened just leaves them unmatched.
"""
from __future__ import annotations

from typing import Any

from sqlglot.errors import SqlglotError

from kgsql.correct.confidence import hesitation_line
from kgsql.correct.context import CheckContext
from kgsql.correct.values import quote_identifier, quote_table, quote_text
from kgsql.db.guard import execute_query
from kgsql.errors import KgsqlError
from kgsql.generate.explain import ValueProbe, explain_sql
from kgsql.generate.fanout import RowProbe
from kgsql.generate.flags import answer_flags
from kgsql.schema.model import DatabaseSchema

__all__ = ["review", "row_probe", "value_probe"]


def _first_row(ctx: CheckContext, sql: str) -> tuple[Any, ...] | None:
    """The first row ``sql`` returns on the answer's database (read-only, 2 s at most), or None: no row, or a
    probe the database refused (a review never fails an answer)."""
    try:
        rows = execute_query(ctx.connection(), sql, timeout_s=2.0, max_rows=1).rows
    except (KgsqlError, OSError, ValueError):
        return None
    return tuple(rows[0]) if rows else None


def value_probe(ctx: CheckContext) -> ValueProbe:
    """A probe that asks the database whether ``table.column`` holds ``text`` (one row at most, read-only)."""
    def probe(table: str, column: str, text: str) -> str | None:
        sql = (f"SELECT {quote_identifier(column)} FROM {quote_table(ctx.connection(), table)} "
               f"WHERE {quote_identifier(column)} = {quote_text(text)} LIMIT 1")
        row = _first_row(ctx, sql)
        return str(row[0]) if row else None

    return probe


def row_probe(ctx: CheckContext) -> RowProbe:
    """A probe that asks the database whether a query returns a row (read-only, one row at most)."""
    return lambda sql: _first_row(ctx, sql) is not None


def review(answer: Any, schema: DatabaseSchema) -> Any:
    """Fill ``answer.explanation`` and ``answer.warnings`` (and return the answer); a review that cannot
    be made is left empty, never raised: the answer matters more than its review."""
    if not answer.sql:
        return answer
    try:
        with CheckContext(schema) as ctx:
            explanation = explain_sql(answer.sql, schema, probe=value_probe(ctx) if schema.path else None)
            flags = answer_flags(question=answer.standalone or answer.question, sql=answer.sql, schema=schema,
                                 explanation=explanation, rows=answer.rows, error=answer.error,
                                 first_sql=answer.candidates[0] if answer.candidates else "",
                                 rounds=answer.rounds, exists=row_probe(ctx) if schema.path else None,
                                 opinions=answer.opinions)
    except (KgsqlError, SqlglotError, RecursionError, ValueError, KeyError, AttributeError, TypeError):
        return answer  # a query sqlglot reads oddly: the answer stands, unreviewed
    explanation.hesitation = hesitation_line(getattr(answer, "least_sure", None) or {})
    answer.explanation = explanation.to_dict()
    answer.warnings = [f.to_dict() for f in flags]
    return answer
