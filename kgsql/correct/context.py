"""The state self-correction keeps for one question: schema, names, parsed SQL, one connection.

One :class:`CheckContext` serves every candidate query of a question: it
runs each candidate in a killable worker process
(:func:`kgsql.db.isolate.execute_isolated`, which keeps the worker's
connection to the file open between candidates), opens one read-only
connection in this process on first use for kgsql's own value probes
(through :func:`kgsql.db.guard.execute_query`, which restores the
connection after every query), parses each SQL text once, and builds the
schema's name view once.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable

from sqlglot import exp

from kgsql.db.connect import Connection, open_database
from kgsql.correct.tip import Tip
from kgsql.db.guard import QueryResult
from kgsql.db.isolate import execute_isolated
from kgsql.schema.model import DatabaseSchema
from kgsql.db.target import engine_class
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.names import SchemaNames, parse_sql

__all__ = ["CheckContext", "EmptyRule", "ErrorRule"]


class CheckContext:
    """One question's checking state; a context manager that closes its connection.

    ``path``: the database file or URL (default: ``schema.path``); ``dialect``:
    one of the dialects of :mod:`kgsql.sql.dialects` (default: the schema's), which
    decides how SQL is parsed and which spatial function names are suggested; ``allow_tables``:
    tables the file has but the schema does not list (see
    :class:`~kgsql.sql.names.SchemaNames`); ``shown_tables``: the tables the
    prompt showed, in its order (a repair choosing between tables prefers the
    first of them; empty: the whole schema was shown). ``timeout_s`` and ``max_rows`` apply to the
    candidates run by :meth:`execute`.
    """

    def __init__(self, schema: DatabaseSchema, question: str = "", *, timeout_s: float = 30.0,
                 max_rows: int = 10_000, path: str | os.PathLike[str] | None = None, dialect: str | None = None,
                 allow_tables: Iterable[str] = (), evidence: str = "", shown_tables: Iterable[str] = ()) -> None:
        self.schema = schema
        self.shown_tables = tuple(t.lower() for t in shown_tables)
        self.question = question
        self.evidence = evidence  # what the question came with (a rewrite may respect what it names)
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.path = schema.path if path is None else path
        self.dialect = dialect or dialect_of(schema)
        self._allow_tables = tuple(allow_tables)
        self._names: SchemaNames | None = None
        self._trees: dict[str, exp.Expression | None] = {}
        self._conn: Connection | None = None

    @property
    def names(self) -> SchemaNames:
        """The schema's case-insensitive name view (built once)."""
        if self._names is None:
            self._names = SchemaNames(self.schema, self._allow_tables)
        return self._names

    def tree(self, sql: str) -> exp.Expression | None:
        """The parsed ``sql`` (in the database's dialect), cached per text; None when it does not parse.

        The tree is shared: callers must not change it.
        """
        if sql not in self._trees:
            self._trees[sql] = parse_sql(sql, sqlglot_name(self.dialect))
        return self._trees[sql]

    def connection(self) -> Connection | str:
        """The shared read-only connection, opened on first use (raises what ``open_database`` raises).

        For a PostgreSQL/DuckDB database it is the URL itself: the engine keeps
        one open connection per database (:mod:`kgsql.db.engines`).
        """
        if not engine_class(self.path).in_process:
            return os.fspath(self.path)
        if self._conn is None:
            self._conn = open_database(self.path, read_only=True)
        return self._conn

    def execute(self, sql: str) -> QueryResult:
        """Run one candidate in a killable worker; raises exactly what ``execute_query`` raises."""
        return execute_isolated(self.path, sql, timeout_s=self.timeout_s, max_rows=self.max_rows)

    def close(self) -> None:
        """Close the connection, if one was opened; the context can open a new one later."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> CheckContext:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


#: A rule for one error kind: (context, sql, the name SQLite's message names, SQLite's message)
#: -> tips, or None when the rule cannot use the error (the generic tip is given instead).
ErrorRule = Callable[[CheckContext, str, str | None, str], list[Tip] | None]
#: A rule for a query that ran but returned no rows: (context, sql, result) -> tips.
EmptyRule = Callable[[CheckContext, str, QueryResult], list[Tip]]
