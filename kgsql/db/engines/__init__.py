"""The built-in engines (SQLite, PostgreSQL/PostGIS, DuckDB), and one open engine per database.

Each engine is one class in one module here, registered when the module is
imported (:func:`kgsql.db.engine.register_engine`); importing this package
(as :mod:`kgsql.db` does) imports the built-in ones, like sqlglot's
``dialects`` package. A database is named by a string everywhere (a path or
a URL: :mod:`kgsql.db.target`), and the three things kgsql does with one —
read its schema, run a guarded query, list a column's text values —
dispatch here on that string. An ``in_process`` engine (SQLite) stays on its
own modules; every other one goes through one open
:class:`~kgsql.db.engine.Engine` per URL and process (connections are
reused across questions, each engine runs one query at a time).
"""
from __future__ import annotations

import atexit
import os
import threading
from typing import Any, Final

from kgsql.db.engine import Engine
# The built-in engines register themselves; SQLite first, as error messages list them in this order.
from kgsql.db.engines import sqlite as _sqlite  # noqa: F401,I001
from kgsql.db.engines import postgres as _postgres  # noqa: F401
from kgsql.db.engines import duckdb as _duckdb  # noqa: F401
from kgsql.db.guard import QueryResult
from kgsql.db.target import Target, engine_class, engine_of, parse_target
from kgsql.schema.model import DatabaseSchema

__all__ = ["CatalogConnection", "Engine", "catalog_connection", "close_all", "engine_class", "engine_for", "engine_of", "execute", "read_schema", "text_values"]

_OPEN: dict[str, Engine] = {}
_LOCK: Final = threading.Lock()


def engine_for(db: str | os.PathLike[str] | Target) -> Engine:
    """The open engine of a database that is not in-process (opened on first use, then shared)."""
    target = db if isinstance(db, Target) else parse_target(os.fspath(db))
    with _LOCK:
        engine = _OPEN.get(target.url)
        if engine is None:
            engine = _OPEN[target.url] = _new_engine(target)
        return engine


def _new_engine(target: Target) -> Engine:
    engine = target.engine_class
    if engine.in_process:
        raise ValueError(f"{target.display} is a {engine.label} database; it has no engine object")
    return engine(target)


def close_all() -> None:
    """Close every engine this process opened (at exit, and in tests between servers)."""
    with _LOCK:
        engines = list(_OPEN.values())
        _OPEN.clear()
    for engine in engines:
        try:
            engine.close()
        except Exception:  # noqa: BLE001 - closing must not fail the caller
            pass


atexit.register(close_all)


def execute(db: str | os.PathLike[str] | Target, sql: str, *, timeout_s: float, max_rows: int,
            max_bytes: int) -> QueryResult:
    """One guarded query on a non-SQLite database: the static layers, then the engine's read-only run."""
    from kgsql.db.statement import validate_query

    engine = engine_for(db)
    statement = validate_query(sql, dialect=engine.dialect)
    return engine.execute(statement, timeout_s=timeout_s, max_rows=max_rows, max_bytes=max_bytes)


def read_schema(target: Target, name: str | None = None, *, sample_rows: int, value_examples: int,
                with_stats: bool = True) -> DatabaseSchema:
    """A non-SQLite database's schema, named ``name`` (default: the target's own name)."""
    return engine_for(target).read_schema(name or target.name, sample_rows=sample_rows,
                                          value_examples=value_examples, with_stats=with_stats)


class _Rows:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None


class CatalogConnection:
    """``conn.execute(sql).fetchall()/.fetchone()`` over an engine's own statements.

    For ingest code written against a DB-API connection (join discovery), so
    the same plain SQL runs on every engine. Not for generated SQL: that goes
    through :func:`execute`.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def execute(self, sql: str) -> _Rows:
        return _Rows(self._engine.run(sql))


def catalog_connection(db: str | os.PathLike[str] | Target) -> CatalogConnection:
    """A :class:`CatalogConnection` to a non-SQLite database."""
    return CatalogConnection(engine_for(db))


def text_values(db: str | os.PathLike[str], table: str, column: str, *, scan_rows: int, max_chars: int,
                limit: int) -> list[str]:
    """The most frequent short text values of a column of a non-SQLite database."""
    return engine_for(db).text_values(table, column, scan_rows=scan_rows, max_chars=max_chars, limit=limit)
