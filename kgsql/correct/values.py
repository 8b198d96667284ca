"""Values rule: string literals that occur nowhere in the column they are compared with.

Each ``col = 'text'`` (or IN / LIKE) on a schema column is checked with a
one-row probe on the context's shared read-only connection, through the
guard; a miss names the closest real values. Runs when a query returned no
rows.
"""
from __future__ import annotations

import difflib
import os
from typing import Any

from sqlglot import exp

from kgsql.correct.context import CheckContext, EmptyRule
from kgsql.correct.tip import Tip
from kgsql.db.guard import QueryResult, execute_query
from kgsql.db.target import engine_class
from kgsql.errors import KgsqlError
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.names import SchemaNames, SourceCache, resolve, scopes

__all__ = ["ON_EMPTY", "check_values", "literal_comparisons", "quote_identifier", "quote_table", "quote_text",
           "value_exists",
           "value_tips"]


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_table(conn: Any, table: str) -> str:
    """``table`` of the schema graph quoted for the engine ``conn`` reaches (a PostgreSQL table outside the
    search path is ``schema.table``)."""
    return engine_class(conn).quote_table(table)


def quote_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def literal_comparisons(tree: exp.Expression, names: SchemaNames) -> list[tuple[str, str, str, exp.Literal]]:
    """(table, column, operator, literal node) for each ``col = 'text'`` / IN / LIKE on a schema column."""
    out: list[tuple[str, str, str, exp.Literal]] = []
    cache: SourceCache = {}
    for scope in scopes(tree):
        for node in scope.expression.find_all(exp.EQ, exp.In, exp.Like):
            if isinstance(node, exp.In):
                pairs = [(node.this, e, "=") for e in node.expressions]
            elif isinstance(node, exp.Like):
                pairs = [(node.this, node.expression, "LIKE")]
            else:
                pairs = [(node.this, node.expression, "="), (node.expression, node.this, "=")]
            for col, lit, op in pairs:
                if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string):
                    continue
                if col.find_ancestor(exp.Select) is not scope.expression:
                    continue
                status, found = resolve(col, scope, names, cache)
                if status != "ok" or len(found) != 1 or found[0].table is None:
                    continue
                column = names.columns[found[0].table.lower()].get(col.name.lower())
                if column is not None and column.spatial is None:
                    out.append((found[0].table, column.name, op, lit))
    return out


def value_exists(conn: Any, table: str, column: str, text: str, *, op: str = "=", timeout_s: float = 2.0) -> bool:
    """Does ``table.column`` hold a value ``op`` ``text`` (one-row probe through the guard)?"""
    probe = f"SELECT 1 FROM {quote_table(conn, table)} WHERE {quote_identifier(column)} {op} {quote_text(text)} LIMIT 1"
    return bool(execute_query(conn, probe, timeout_s=timeout_s, max_rows=1).rows)


def _literal_filters(tree: exp.Expression, names: SchemaNames) -> list[tuple[str, str, str, str]]:
    """(table, column, operator, text) for each ``col = 'text'`` / IN / LIKE on a schema column."""
    return list(dict.fromkeys((t, c, op, lit.this) for t, c, op, lit in literal_comparisons(tree, names)))


def check_values(ctx: CheckContext, sql: str, *, value_index: Any = None, max_checks: int = 8,
                 timeout_s: float = 2.0) -> list[Tip]:
    """Tips for string literals ``sql`` compares with a column that never holds them.

    The probes run on ``ctx``'s shared connection (opened if needed); the
    closest real values come from ``value_index`` (a
    :class:`kgsql.retrieve.values.ValueIndex`) when given, else by
    ``difflib`` over at most 2000 distinct values. Checks that fail (timeout,
    unreadable file) are skipped silently.
    """
    tree = ctx.tree(sql) if ctx.path else None
    if tree is None:
        return []
    filters = _literal_filters(tree, ctx.names)[:max_checks]
    if not filters:
        return []
    try:
        conn = ctx.connection()
    except KgsqlError:
        return []
    tips: list[Tip] = []
    for table, column, op, text in filters:
        try:
            if value_exists(conn, table, column, text, op=op, timeout_s=timeout_s):
                continue
            similar = _similar_values(conn, table, column, text, op, value_index, timeout_s)
        except KgsqlError:
            continue
        tips.append(_value_tip(table, column, op, text, similar))
    return tips


def value_tips(sql: str, schema: DatabaseSchema, db_path: str | os.PathLike[str] | None, *,
               value_index: Any = None, max_checks: int = 8, timeout_s: float = 2.0) -> list[Tip]:
    """:func:`check_values` on the file ``db_path`` (none when it is None), with a connection of its own."""
    with CheckContext(schema, path=db_path if db_path is not None else "") as ctx:
        return check_values(ctx, sql, value_index=value_index, max_checks=max_checks, timeout_s=timeout_s)


def _on_empty(ctx: CheckContext, sql: str, result: QueryResult) -> list[Tip]:
    return check_values(ctx, sql)


def _value_tip(table: str, column: str, op: str, text: str, similar: list[str]) -> Tip:
    shown = text if len(text) <= 60 else text[:57] + "..."
    where = f"{table}.{column}"
    if op == "LIKE":
        sentence = f"No value of the column '{where}' matches the pattern '{shown}'"
    else:
        sentence = f"The value '{shown}' does not occur in the column '{where}'"
    if len(similar) == 1:
        sentence += f"; the closest value is '{similar[0]}'."
    elif similar:
        sentence += f"; similar values are {', '.join(_quote_value(v) for v in similar)}."
    else:
        sentence += "."
    return Tip("value_not_found", sentence, where)


def _quote_value(value: str) -> str:
    """A cell value in single quotes, as the tips quote values."""
    return f"'{value}'"


def _similar_values(conn: Any, table: str, column: str, text: str, op: str, value_index: Any,
                    timeout_s: float) -> list[str]:
    """Up to 3 real values of ``table.column`` closest to ``text``: same text in another case first."""
    needle = text.replace("%", " ").replace("_", " ").strip() if op == "LIKE" else text
    if not needle:
        return []
    if value_index is not None:
        try:
            matches = value_index.search(needle, top_k=50, min_score=0.5)
            found = [m.value for m in matches
                     if m.table.lower() == table.lower() and m.column.lower() == column.lower()]
            if found:
                return list(dict.fromkeys(found))[:3]
        except Exception:  # noqa: BLE001 - the index is an optional speed-up; fall back to scanning
            pass
    c = quote_identifier(column)
    text_only = f"typeof({c}) = 'text'" if not isinstance(conn, str) else f"{c} IS NOT NULL"  # str: an engine's URL
    sql = f"SELECT DISTINCT {c} FROM {quote_table(conn, table)} WHERE {text_only} LIMIT 2000"
    values = [str(r[0]) for r in execute_query(conn, sql, timeout_s=timeout_s, max_rows=2000).rows]
    low = needle.lower()
    same = [v for v in values if v.lower() == low]
    if same:
        return same[:3]
    scored = []
    for v in values:
        ratio = difflib.SequenceMatcher(None, low, v.lower()).ratio()
        if len(low) >= 3 and (low in v.lower() or v.lower() in low):
            ratio = max(ratio, 0.85)
        if ratio >= 0.6:
            scored.append((ratio, v))
    scored.sort(key=lambda p: (-p[0], p[1]))
    return [v for _r, v in scored[:3]]


#: Runs when a query returned no rows (see kgsql.correct.rules.EMPTY_RULES).
ON_EMPTY: EmptyRule = _on_empty
