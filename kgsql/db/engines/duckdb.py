"""DuckDB files, embedded: read-only by construction.

The file is opened with ``read_only=True`` (DuckDB refuses every write and
DDL statement on it), ``enable_external_access=false`` (no other file can be
read, written or attached: ``read_csv('/etc/passwd')``, ``COPY ... TO``,
``ATTACH`` all fail) and ``lock_configuration=true`` (no query can switch
either back), with extension auto-install/auto-load off. DuckDB allocates
in its own threads, outside anything Python can watch, so the connection
also gets DuckDB's own ``memory_limit`` (:data:`MEMORY_SHARE` of the guard's
per-query budget: DuckDB fails the query with its own out-of-memory error
before the worker process running it (:mod:`kgsql.db.isolate`) is killed at
the whole budget) and :data:`THREADS` threads (one query of several
workers must not take every core). DuckDB has no
statement timeout, so a timer interrupts the connection when a query's time
is up. The static layers of :func:`kgsql.db.statement.validate_query` run
first, as for every engine.

The catalog comes from DuckDB's own table functions (``duckdb_tables()``,
``duckdb_columns()``, ``duckdb_constraints()``), which know keys and foreign
keys. DuckDB's spatial extension would have to be downloaded, so DuckDB
files are read without geometry support.
"""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any, Final

from kgsql.db.engine import register_engine
from kgsql.db.engines.base import (
    OneConnection,
    Pattern,
    column_stats,
    fetch_capped,
    first_line,
    quote_identifier,
    sql_literal,
)
from kgsql.db.guard import QueryResult
from kgsql.db.sql_errors import QueryResourceError, QueryTimeoutError, SQLQueryError
from kgsql.db.statement import _unsafe
from kgsql.errors import DatabaseFileError
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table

__all__ = ["DUCKDB_MAGIC", "MEMORY_SHARE", "READ_ONLY_CONFIG", "THREADS", "DuckDBEngine", "connection_config"]

#: Bytes 8-11 of every DuckDB file (after an 8-byte checksum).
DUCKDB_MAGIC: Final = b"DUCK"

#: Share of the guard's per-query memory budget given to DuckDB's ``memory_limit``.
MEMORY_SHARE: Final = 0.5
#: DuckDB threads per connection (each SQL worker holds its own connection).
THREADS: Final = 1

#: The connection settings that make a DuckDB file read-only and closed to the rest of the file system.
READ_ONLY_CONFIG: Final[dict[str, Any]] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def connection_config() -> dict[str, Any]:
    """:data:`READ_ONLY_CONFIG` plus the memory limit and thread count, read at connect time (the guard's
    budget may have been changed); locked with the rest, so no query can raise them."""
    import kgsql.db.guard as guard

    return {**READ_ONLY_CONFIG, "memory_limit": f"{max(1, int(guard.MEMORY_MB * MEMORY_SHARE))}MB",
            "threads": THREADS}


_PATTERNS: Final[tuple[Pattern, ...]] = (
    ("no_such_table", re.compile(r"Table with name (?P<name>\S+) does not exist")),
    ("no_such_column", re.compile(r'Referenced column "(?P<name>[^"]+)" not found')),
    ("no_such_column", re.compile(r'Values list "\w+" does not have a column named "(?P<name>[^"]+)"')),
    ("no_such_column", re.compile(r'Table "[^"]+" does not have a column named "(?P<name>[^"]+)"')),
    ("no_such_table", re.compile(r'Referenced table "(?P<name>[^"]+)" not found')),
    ("ambiguous_column", re.compile(r'Ambiguous reference to column name "(?P<name>[^"]+)"')),
    ("no_such_function", re.compile(r"Function with name (?P<name>\S+) does not exist")),
    ("wrong_arguments", re.compile(r"No function matches the given name and argument types '(?P<name>\w+)\(")),
    ("syntax", re.compile(r'syntax error at or near "(?P<name>[^"]*)"')),
    ("syntax", re.compile(r"Parser Error")),
)


#: Function-name prefixes refused on DuckDB: other files and databases, extensions, settings.
DENIED_PREFIXES: Final = (
    "read_", "glob", "parquet_", "sniff_csv", "query", "iceberg_", "delta_", "sqlite_scan",
    "sqlite_attach", "postgres_", "mysql_", "httpfs", "load_", "install_", "checkpoint",
    "force_checkpoint", "enable_", "disable_", "set_", "reset_",
)


@register_engine
class DuckDBEngine(OneConnection):
    """One DuckDB file, opened read-only; one query at a time."""

    name = "duckdb"
    label = "DuckDB"
    schemes = ("duckdb",)
    suffixes = (".duckdb", ".ddb")
    fence_names = frozenset({"duckdb"})
    example = "duckdb:///path.duckdb"
    denied_prefixes = DENIED_PREFIXES
    error_patterns = _PATTERNS
    # DuckDB puts NULLs last both ways (None) and divides integers exactly (integer_division False).

    @classmethod
    def matches_header(cls, header: bytes) -> bool:
        return header[8:12] == DUCKDB_MAGIC

    def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        try:
            import duckdb
        except ImportError as exc:  # pragma: no cover - an optional dependency
            raise DatabaseFileError("DuckDB files need the duckdb package: pip install 'kgsql[duckdb]'") from exc
        path = Path(self.target.path or "")
        if not path.is_file():
            raise DatabaseFileError(f"DuckDB file not found: {path}")
        try:
            self._conn = duckdb.connect(str(path), read_only=True, config=connection_config())
        except duckdb.Error as exc:
            raise DatabaseFileError(f"cannot open DuckDB file {path}: {first_line(exc)}") from exc
        return self._conn

    def execute(self, statement: str, *, timeout_s: float, max_rows: int, max_bytes: int) -> QueryResult:
        import duckdb

        with self._lock:
            conn = self._connection()
            timer = threading.Timer(timeout_s, conn.interrupt)
            started = time.perf_counter()
            timer.start()
            try:
                cursor = conn.execute(statement)
                columns = [d[0] for d in cursor.description or ()]
                return fetch_capped(cursor.fetchmany, columns, statement, started,
                                    max_rows=max_rows, max_bytes=max_bytes)
            except duckdb.InterruptException as exc:
                raise QueryTimeoutError(timeout_s, sql=statement) from exc
            except duckdb.OutOfMemoryException as exc:
                raise QueryResourceError(first_line(exc), sql=statement) from exc
            except (duckdb.PermissionException, duckdb.InvalidInputException) as exc:
                message = first_line(exc)
                if "read-only" in message or "Permission" in message or "configuration" in message:
                    raise _unsafe(f"DuckDB refused the statement: {message}") from exc
                raise SQLQueryError("other", message, sql=statement) from exc
            except duckdb.Error as exc:
                message = first_line(exc)
                kind, name = self.classify_error(message)
                raise SQLQueryError(kind, message, name=name, sql=statement) from exc
            finally:
                timer.cancel()

    def run(self, sql: str) -> list[tuple[Any, ...]]:
        import duckdb

        try:
            return self._connection().execute(sql).fetchall()
        except duckdb.Error as exc:
            raise DatabaseFileError(f"{self.target.display}: {first_line(exc)}") from exc

    def read_schema(self, name: str, *, sample_rows: int, value_examples: int, with_stats: bool) -> DatabaseSchema:
        with self._lock:
            names = [str(t) for (t,) in self.run(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                "AND schema_name = current_schema() AND NOT internal UNION ALL "
                "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() "
                "AND schema_name = current_schema() AND NOT internal ORDER BY 1")]
            keys: dict[str, set[str]] = {}
            links: list[tuple[str, list[str], str, list[str]]] = []
            for kind, table, cols, ref_table, ref_cols in self.run(
                    "SELECT constraint_type, table_name, constraint_column_names, referenced_table, "
                    "referenced_column_names FROM duckdb_constraints() WHERE database_name = current_database() "
                    "AND schema_name = current_schema() AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')"):
                if kind == "PRIMARY KEY":
                    keys.setdefault(str(table), set()).update(str(c) for c in cols)
                else:
                    links.append((str(table), [str(c) for c in cols], str(ref_table), [str(c) for c in ref_cols]))
            tables: list[Table] = []
            for tname in names:
                table = Table(name=tname, row_count=int(self.run(f"SELECT count(*) FROM {quote_identifier(tname)}")[0][0]))
                for cname, ctype, nullable in self.run(
                        f"SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
                        f"WHERE database_name = current_database() AND schema_name = current_schema() "
                        f"AND table_name = {sql_literal(tname)} ORDER BY column_index"):
                    col = Column(name=str(cname), type=str(ctype), is_primary_key=cname in keys.get(tname, ()),
                                 not_null=not nullable)
                    if with_stats and table.row_count:
                        col.stats, col.value_examples = column_stats(
                            self.run, quote_identifier(tname), str(cname), str(ctype), sample_rows=sample_rows,
                            n_examples=value_examples)
                    table.columns.append(col)
                tables.append(table)
        fks = [ForeignKey(t, c, rt, rc) for t, cols, rt, rcols in links for c, rc in zip(cols, rcols)]
        return DatabaseSchema(name=name, tables=tables, foreign_keys=fks, path=self.target.display,
                              dialect="duckdb")
