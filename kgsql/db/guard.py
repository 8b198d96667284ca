"""Guarded execution of LLM-written SQL: the only way kgsql runs generated SQL.

Generated SQL is untrusted input run against people's data, so every path
(pipeline, schema tips, the agent's ExecuteSQL tool, eval) goes through
:func:`execute_query`. Four independent layers stand between the SQL and a
write; any one of them alone stops it:

1. **Lexical** (:func:`~kgsql.db.statement.split_statements` in
   :mod:`kgsql.db.statement`): a tokenizer that follows SQLite's own rules
   for strings, quoted identifiers and comments splits on ``;`` and requires
   exactly one non-empty statement starting with SELECT, WITH or VALUES.
2. **Parse** (:func:`~kgsql.db.statement.validate_query`, sqlglot, same
   module): the statement must parse as one query (SELECT, a set operation,
   VALUES) and contain no write/DDL/command node, no call to a known
   non-allowed function (:func:`is_denied_function`) and no argument past a
   bound (:func:`kgsql.db.functions.argument_problem`).
3. **SQLite's authorizer** (authoritative; :mod:`kgsql.db.authorizer`):
   while the statement is compiled, SQLite asks :func:`make_authorizer`
   about every action; everything except SELECT, READ, recursive CTEs,
   functions on the allow-list (:data:`kgsql.db.functions.ALLOWED_FUNCTIONS`)
   and a few read-only introspection pragmas is denied. This is SQLite's own
   view of the compiled statement, so no parser disagreement can get past it.
4. **Connection**: a ``mode=ro`` URI plus ``PRAGMA query_only=ON`` (from
   :func:`kgsql.db.connect.open_database`), defensive mode and
   ``trusted_schema=OFF`` (:func:`kgsql.db.connect.harden`, applied to a
   caller's connection for the duration of the query too, by
   :func:`kgsql.db.budget.harden_for_query`), and extension loading switched
   off while user SQL runs (SpatiaLite is loaded only by kgsql's connection
   setup).

Error style: rejected SQL raises :class:`UnsafeSQLError` (with ``.reason``);
a statement that SQLite cannot run raises :class:`SQLQueryError`, a
``QueryExecutionError`` carrying ``.kind`` (see :data:`ERROR_KINDS`), ``.name``
(the table/column/function/token the message names, if any) and
``.sqlite_message`` (SQLite's raw text), so self-correction can act on them.
Running out of time raises :class:`QueryTimeoutError` (kind ``timeout``),
running out of memory :class:`QueryResourceError` (kind ``resource``). The
errors and the mapping of SQLite's messages to kinds live in
:mod:`kgsql.db.sql_errors`.

Function policy (:mod:`kgsql.db.functions`): the authorizer allows only the
functions on an allow-list of read-only SQLite and SpatiaLite functions; the
static layers reject the known non-allowed names and bound the arguments of
functions whose cost grows with a literal (``ST_Buffer``'s quadrant segments).

Resource limits (defaults in ``docs/limits.md``), per query: ``timeout_s``,
checked every :data:`PROGRESS_STEPS` VM instructions and by a watchdog
thread, and ``memory_mb`` (default :data:`MEMORY_MB`), split between SQLite's
process-wide heap limit, the size of one value, the fetched rows and the
process's resident memory. How each is enforced, and what still gets past
them in-process (one long GEOS call; :mod:`kgsql.db.isolate` runs generated
SQL in a killable worker for that), is in :mod:`kgsql.db.budget`.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Final, Literal

from kgsql.db.authorizer import READ_ONLY_PRAGMAS, make_authorizer
from kgsql.db.budget import (
    Budget,
    MemoryGrowth,
    Watchdog,
    harden_for_query,
    heap_acquire,
    heap_release,
    row_bytes,
)
from kgsql.db.connect import Connection, decode_lenient, open_database, sqlite3
from kgsql.db.functions import is_allowed_function, is_denied_function
from kgsql.db.sql_errors import (
    ERROR_KINDS,
    ErrorKind,
    QueryResourceError,
    QueryTimeoutError,
    SQLQueryError,
    classify_sqlite_error,
)
from kgsql.db.result import QueryResult
from kgsql.db.statement import MAX_SQL_CHARS, _unsafe, split_statements, validate_query
from kgsql.db.target import engine_class
from kgsql.errors import UnsafeSQLError

__all__ = [
    "ERROR_KINDS",
    "MAX_SQL_CHARS",
    "READ_ONLY_PRAGMAS",
    "ErrorKind",
    "QueryResourceError",
    "QueryResult",
    "QueryTimeoutError",
    "SQLQueryError",
    "classify_sqlite_error",
    "execute_query",
    "is_denied_function",
    "make_authorizer",
    "split_statements",
    "validate_query",
]

#: SQLite VM instructions between two timeout checks (cheap: one clock read).
PROGRESS_STEPS: Final = 2_000
#: Memory budget of one query in MiB when ``execute_query`` gets no ``memory_mb``
#: (read at call time, so assigning it changes the default for every caller).
MEMORY_MB: float = 512.0
#: Runs a query on a database that is not SQLite (PostgreSQL, DuckDB): :func:`kgsql.db.engines.execute`,
#: handed in by :mod:`kgsql.db` when the package loads. Passed in, not imported: the engines import this
#: module (:class:`QueryResult`, :data:`MEMORY_MB`), so importing them here would make an import cycle.
run_on_engine: Callable[..., QueryResult] | None = None


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


def execute_query(
    db: str | os.PathLike[str] | Connection,
    sql: str,
    *,
    timeout_s: float = 30.0,
    max_rows: int = 10_000,
    memory_mb: float | None = None,
    max_bytes: int | None = None,
    lenient_text: bool = False,
) -> QueryResult:
    """Run one read-only query through all guard layers and return its rows.

    ``db`` is a database path (opened read-only, SpatiaLite loaded when the
    file is spatial, closed afterwards), a PostgreSQL/DuckDB URL (run by
    :mod:`kgsql.db.engines` in the engine's read-only mode) or an open connection (used as is;
    its authorizer and progress handler are removed afterwards and its
    ``query_only``, ``trusted_schema``, defensive mode and value-size limits
    restored). ``memory_mb`` is the query's memory budget (default
    :data:`MEMORY_MB`), ``max_bytes`` the size of the fetched rows after which
    fetching stops (default an eighth of the budget; see the module docstring
    for how the budget is split). Raises UnsafeSQLError when the SQL is
    rejected, SQLQueryError / QueryTimeoutError / QueryResourceError when
    SQLite cannot run it, DatabaseFileError when the path is not a usable
    database. A connection must not be used by another thread while this
    runs (the handlers are per connection); a caller's own authorizer is
    replaced, not restored. ``lenient_text`` decodes TEXT that is not UTF-8
    by dropping the bad bytes (Spider's test-suite does; some of its
    databases hold such bytes) instead of failing the fetch.
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    if max_rows < 0:
        raise ValueError("max_rows must be >= 0")
    memory_mb = MEMORY_MB if memory_mb is None else memory_mb
    if memory_mb <= 0:
        raise ValueError("memory_mb must be positive")
    if max_bytes is not None and max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    budget = Budget.of(memory_mb, max_bytes)
    if isinstance(db, (str, os.PathLike)) and not engine_class(db).in_process:  # PostgreSQL, DuckDB: their own run
        if run_on_engine is None:  # Python loads kgsql/db/__init__.py, which hands it in, before this module
            raise RuntimeError("kgsql.db.guard.run_on_engine is unset: import kgsql.db, not the guard alone")
        return run_on_engine(db, sql, timeout_s=timeout_s, max_rows=max_rows, max_bytes=budget.result)
    try:
        statement = validate_query(sql)
        parse_failed = False
    except UnsafeSQLError as exc:
        if not getattr(exc, "parse_error", False):
            raise
        # sqlglot could not parse it; let SQLite say what is wrong (below).
        statement, parse_failed = split_statements(sql)[0], True

    own = isinstance(db, (str, os.PathLike, Path))
    conn = open_database(db, read_only=True) if own else db
    text_factory = conn.text_factory
    if lenient_text:
        conn.text_factory = decode_lenient
    try:
        try:
            return _run_guarded(
                conn, statement, timeout_s, max_rows, budget, explain_only=parse_failed, restore=not own
            )
        except _SchemaNeedsTrust:  # a view calls an allowed function SpatiaLite did not mark innocuous
            return _run_guarded(
                conn, statement, timeout_s, max_rows, budget, explain_only=parse_failed, restore=not own,
                trust_schema=True,
            )
    finally:
        if own:
            conn.close()
        else:
            conn.text_factory = text_factory


_AUTH_MESSAGES: Final = frozenset({"not authorized", "authorization denied"})
_UNSAFE_USE: Final = re.compile(r"^unsafe use of (?P<name>[^\s(]+)\(\)$")


class _SchemaNeedsTrust(Exception):
    """Internal: retry the statement with ``trusted_schema=ON``.

    With ``trusted_schema=OFF`` SQLite refuses functions not marked innocuous
    inside views, and SpatiaLite marks none of its functions, so a view using
    ``ST_Area`` fails with "unsafe use of ST_Area()". The functions of a view
    pass the authorizer's allow-list like the query's own, so when the function
    SQLite names is on the allow-list the statement is retried once with
    ``trusted_schema=ON`` (the authorizer still checks every function).
    """


class _Deadline:
    """The query's deadline as SQLite's progress handler sees it.

    Kept as an object (not a closure) so the helpers that classify an error
    can ask whether it was the deadline that stopped the statement.
    """

    def __init__(self) -> None:
        self.at = float("inf")  # set just before the statement runs
        self.timed_out = False

    def on_progress(self) -> int:
        """SQLite's progress handler: non-zero stops the statement once the deadline has passed."""
        if time.monotonic() > self.at:
            self.timed_out = True
            return 1
        return 0


def _run_guarded(
    conn: Connection,
    statement: str,
    timeout_s: float,
    max_rows: int,
    budget: Budget,
    *,
    explain_only: bool = False,
    restore: bool = False,
    trust_schema: bool = False,
) -> QueryResult:
    """Execute under the authorizer, query_only, a deadline and the memory budget (layers 3 and 4).

    With ``explain_only`` the statement is only compiled (``EXPLAIN``), to get
    SQLite's own error for SQL sqlglot could not parse; if it compiles, it is
    still rejected, since only SQL both parsers understand is run.
    """
    previous_query_only = conn.execute("PRAGMA query_only").fetchone()[0] if restore else None
    denied: list[str] = []
    deadline = _Deadline()
    _disable_extension_loading(conn)
    conn.execute("PRAGMA query_only = ON")
    undo_settings = harden_for_query(conn, budget, trust_schema)
    token = id(deadline)
    heap_limited = False
    watchdog: Watchdog | None = None
    cursor = None
    try:
        heap_limited = heap_acquire(token, budget.heap)
        deadline.at = time.monotonic() + timeout_s
        watchdog = Watchdog(conn, deadline.at, MemoryGrowth(), budget.watch)
        conn.set_authorizer(make_authorizer(denied))
        conn.set_progress_handler(deadline.on_progress, PROGRESS_STEPS)
        started = time.perf_counter()
        watchdog.start()
        try:
            cursor = conn.cursor()
            columns, rows, truncated_by = _execute_and_fetch(cursor, statement, max_rows, budget, explain_only)
        except BaseException:
            watchdog.stop()
            raise
    except MemoryError as exc:
        raise _resource_error(f"out of memory{': ' + str(exc) if str(exc) else ''}", budget, statement) from exc
    except (sqlite3.Warning, sqlite3.ProgrammingError) as exc:
        raise _interface_error(exc, statement) from exc
    except sqlite3.DatabaseError as exc:
        raise _database_error(exc, statement, denied, trust_schema=trust_schema, watchdog=watchdog,
                              deadline=deadline, timeout_s=timeout_s, budget=budget) from exc
    finally:
        _clean_up(conn, watchdog, cursor, heap_token=token if heap_limited else None,
                  undo_settings=undo_settings if restore else None, previous_query_only=previous_query_only)
    return QueryResult(
        columns=columns,
        rows=rows,
        truncated=bool(truncated_by),
        elapsed_s=time.perf_counter() - started,
        sql=statement,
        truncated_by=truncated_by,
    )


def _disable_extension_loading(conn: Connection) -> None:
    """Switch off extension loading while user SQL runs (layer 4): only kgsql's setup loads SpatiaLite."""
    try:
        conn.enable_load_extension(False)
    except AttributeError:  # pragma: no cover - sqlite3 built without extension support
        pass


def _execute_and_fetch(
    cursor: sqlite3.Cursor, statement: str, max_rows: int, budget: Budget, explain_only: bool
) -> tuple[list[str], list[tuple[Any, ...]], Literal["", "rows", "bytes"]]:
    """Run the statement and fetch its rows up to ``max_rows`` and the budget's result bytes.

    Its own function so that the guard's setup and cleanup read as one piece;
    on any failure the rows fetched so far are dropped at once, since the
    traceback keeps this frame alive.
    """
    columns: list[str] = []
    rows: list[tuple[Any, ...]] = []
    truncated_by: Literal["", "rows", "bytes"] = ""
    try:
        if explain_only:
            cursor.execute("EXPLAIN " + statement)
            raise _unsafe("SQLite accepts this statement but sqlglot cannot parse it; rewrite it in plain SQLite SQL")
        cursor.execute(statement)
        columns = [d[0] for d in cursor.description or ()]
        size = 0
        for row in cursor if cursor.description else ():
            if len(rows) >= max_rows:
                truncated_by = "rows"
                break
            size += row_bytes(row)
            if size > budget.result:
                truncated_by = "bytes"
                break
            rows.append(tuple(row))
        row = None
    except BaseException:
        rows.clear()  # the traceback keeps this frame, so drop the fetched rows now
        row = None
        raise
    return columns, rows, truncated_by


def _resource_error(message: str, budget: Budget, statement: str) -> QueryResourceError:
    """A QueryResourceError for ``statement`` that names the query's memory budget."""
    return QueryResourceError(message, budget_bytes=budget.total, sql=statement)


def _interface_error(exc: sqlite3.Warning | sqlite3.ProgrammingError, statement: str) -> Exception:
    """The guard's error for a statement Python's sqlite3 module refused before SQLite ran it."""
    if "one statement" in str(exc):  # Python's sqlite3 found a second statement
        return _unsafe(f"SQLite refused the statement: {exc}")
    return SQLQueryError("other", str(exc), sql=statement)  # e.g. unbound ? parameters


def _database_error(
    exc: sqlite3.DatabaseError,
    statement: str,
    denied: list[str],
    *,
    trust_schema: bool,
    watchdog: Watchdog | None,
    deadline: _Deadline,
    timeout_s: float,
    budget: Budget,
) -> Exception:
    """The guard's error for SQLite's: a refusal, a schema needing trust, a limit hit, or a plain SQL error.

    The checks run in this order: the authorizer's refusal first, so no other
    reading of the message can hide it.
    """
    message = str(exc)
    kind, name = classify_sqlite_error(message)
    refused = "SQLite authorizer denied " + (", ".join(dict.fromkeys(denied)) or "an action")
    if message in _AUTH_MESSAGES or message.startswith("not authorized to use"):
        return _unsafe(refused)
    unsafe_use = _UNSAFE_USE.match(message.strip())
    if unsafe_use and not is_allowed_function(unsafe_use.group("name")):
        return _unsafe(f"the database schema calls {unsafe_use.group('name')}(), which is not allowed")
    if unsafe_use and not trust_schema:
        return _SchemaNeedsTrust(message)
    if watchdog is not None and watchdog.fired == "memory":
        return _resource_error("process memory grew past the budget", budget, statement)
    if deadline.timed_out or (watchdog is not None and watchdog.fired == "timeout"):
        return QueryTimeoutError(timeout_s, sql=statement)
    if kind == "resource":
        return _resource_error(message, budget, statement)
    if "readonly" in message.replace(" ", "").lower():
        return _unsafe(f"attempt to write a read-only database: {message}")
    if denied and kind == "other":  # e.g. a SpatiaLite function failing on a denied write
        return _unsafe(f"{refused} ({message})")
    return SQLQueryError(kind, message, name=name, sql=statement)


def _clean_up(
    conn: Connection,
    watchdog: Watchdog | None,
    cursor: sqlite3.Cursor | None,
    *,
    heap_token: int | None,
    undo_settings: Callable[[], None] | None,
    previous_query_only: Any,
) -> None:
    """Undo what :func:`_run_guarded` set up, in every path: stop the watchdog, close the cursor, drop the
    handlers, give back the heap allowance and, on a caller's connection (``undo_settings`` given), restore
    its settings and ``query_only``."""
    if watchdog is not None:
        watchdog.stop()
    if cursor is not None:
        cursor.close()
    conn.set_progress_handler(None, PROGRESS_STEPS)
    conn.set_authorizer(None)
    if heap_token is not None:
        heap_release(heap_token)
    if undo_settings is not None:
        undo_settings()
        if not previous_query_only:
            conn.execute("PRAGMA query_only = OFF")
