"""What every database engine behind a driver shares: one connection, statistics, capped fetches.

The engine itself is one :class:`~kgsql.db.engine.Engine` class (re-exported
here). SQLite keeps its own modules (:mod:`kgsql.ingest.reader`,
:mod:`kgsql.db.guard`): it is a file opened in-process, with an authorizer
kgsql controls. The engines here are reached through a driver, so what they
share is written once: one connection and lock (:class:`OneConnection`), the
statistics and value queries (plain SQL both PostgreSQL and DuckDB run), the
row fetch under the caps, and turning a driver's error text into the error
kinds self-correction acts on (:func:`classify_message`).
"""
from __future__ import annotations

import datetime as _dt
import decimal
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from kgsql.db.budget import row_bytes
from kgsql.db.engine import Engine, Target
from kgsql.db.result import QueryResult
from kgsql.db.sql_errors import Pattern, classify_message
from kgsql.schema.model import ColumnStats, shorten_example
from kgsql.secrets import redact

__all__ = ["Engine", "Fetch", "OneConnection", "Pattern", "first_line", "classify_message", "column_stats", "fetch_capped",
           "plain_value", "quote_identifier", "sql_literal", "text_values"]

#: Rows fetched per round trip from a server-side cursor.
FETCH_BATCH: Final = 500


class OneConnection(Engine):
    """The state every driver engine shares: its target, one driver connection (opened on first use), one lock.

    One connection per database and process, used by one statement at a
    time: queries of a service's threads wait for each other rather than
    opening a connection each.
    """

    def __init__(self, target: Target) -> None:
        super().__init__(target)
        self._conn: Any = None
        self._lock = threading.Lock()

    def run(self, sql: str) -> list[tuple[Any, ...]]:  # pragma: no cover - each engine runs its own
        raise NotImplementedError

    def text_values(self, table: str, column: str, *, scan_rows: int, max_chars: int, limit: int) -> list[str]:
        with self._lock:
            return text_values(self.run, self.quote_table(table), column, scan_rows=scan_rows, max_chars=max_chars,
                               limit=limit)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def first_line(exc: BaseException) -> str:
    """A driver error as one line, credentials masked."""
    lines = str(exc).strip().splitlines()
    return redact(lines[0] if lines else type(exc).__name__)


def quote_identifier(name: str) -> str:
    """An identifier in double quotes (embedded quotes doubled): PostgreSQL and DuckDB alike."""
    return '"' + name.replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """A string literal in single quotes (embedded quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


def plain_value(value: Any) -> Any:
    """A driver value as JSON-friendly Python: Decimal to int/float, dates to ISO text, bytes kept."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() and abs(value) < 2**63 else float(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, _dt.datetime) else value.isoformat()
    if isinstance(value, memoryview):
        return bytes(value)
    return value


class Fetch:
    """Rows pulled in batches until a cap: ``max_rows`` rows or ``max_bytes`` of row data."""

    def __init__(self, max_rows: int, max_bytes: int) -> None:
        self.max_rows = max_rows
        self.max_bytes = max_bytes
        self.rows: list[tuple[Any, ...]] = []
        self.truncated_by = ""
        self._size = 0

    def take(self, batch: Iterable[Sequence[Any]]) -> bool:
        """Add a batch; False once a cap is reached (stop fetching)."""
        for row in batch:
            if len(self.rows) >= self.max_rows:
                self.truncated_by = "rows"
                return False
            values = tuple(plain_value(v) for v in row)
            self._size += row_bytes(values)
            if self._size > self.max_bytes:
                self.truncated_by = "bytes"
                return False
            self.rows.append(values)
        return True


def fetch_capped(fetchmany: Callable[[int], Sequence[Sequence[Any]]], columns: list[str], statement: str,
                 started: float, *, max_rows: int, max_bytes: int) -> QueryResult:
    """A :class:`QueryResult` of a cursor's rows, read :data:`FETCH_BATCH` at a time under the caps."""
    fetch = Fetch(max_rows, max_bytes)
    while True:
        batch = fetchmany(FETCH_BATCH)
        if not batch or not fetch.take(batch):
            break
    return QueryResult(columns=columns, rows=fetch.rows, truncated=bool(fetch.truncated_by),
                       elapsed_s=time.perf_counter() - started, sql=statement,
                       truncated_by=fetch.truncated_by)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- statistics and values

_NUMERIC_TYPE = re.compile(r"\b(int|integer|bigint|smallint|tinyint|hugeint|ubigint|uinteger|usmallint|utinyint|"
                           r"int2|int4|int8|numeric|decimal|real|double|float|float4|float8|money)\b", re.I)
_DATE_TYPE = re.compile(r"^(date|timestamp|timestamptz)\b", re.I)


def column_stats(run: Callable[[str], list[tuple[Any, ...]]], table_sql: str, column: str, type_: str, *,
                 sample_rows: int, n_examples: int) -> tuple[ColumnStats, list[str]]:
    """Distinct count, null fraction, min/max (numbers, dates), a text sample and the frequent values.

    The same meaning as the SQLite reader's statistics, over the first
    ``sample_rows`` rows; ``run`` executes one statement and returns its rows.
    Types come from the catalog, so no per-value type test is needed. ``table_sql``: the table as the
    engine quotes it (``Engine.quote_table``).
    """
    qt, qc = table_sql, quote_identifier(column)
    source = f"(SELECT {qc} AS v FROM {qt} LIMIT {int(sample_rows)}) AS s"
    numeric = bool(_NUMERIC_TYPE.search(type_))
    dated = bool(_DATE_TYPE.match(type_.strip()))
    bounds = ", min(v), max(v)" if numeric or dated else ""
    row = run(f"SELECT count(*), count(*) - count(v), count(DISTINCT v){bounds} FROM {source}")[0]
    total, nulls, distinct = (int(x or 0) for x in row[:3])
    stats = ColumnStats(distinct_count=distinct, null_fraction=(nulls / total) if total else None)
    if bounds and total > nulls:
        stats.min, stats.max = plain_value(row[3]), plain_value(row[4])
    examples: list[str] = []
    if total > nulls and not re.search(r"\b(bytea|blob|json|jsonb|geometry|geography)\b", type_, re.I):
        text = "CAST(v AS VARCHAR)"
        rows = run(f"SELECT {text} AS t, count(*) AS n FROM {source} WHERE v IS NOT NULL AND trim({text}) <> '' "
                   f"GROUP BY t ORDER BY n DESC, t LIMIT {int(n_examples)}")
        examples = [shorten_example(str(v)) for v, _n in rows]
        if not numeric:
            stats.sample = examples[:3]
    return stats, examples


def text_values(run: Callable[[str], list[tuple[Any, ...]]], table_sql: str, column: str, *, scan_rows: int,
                max_chars: int, limit: int) -> list[str]:
    """The most frequent text values of a text column, at most ``max_chars`` long; ``table_sql`` quoted."""
    qt, qc = table_sql, quote_identifier(column)
    rows = run(f"SELECT v, count(*) AS n FROM (SELECT {qc} AS v FROM {qt} LIMIT {int(scan_rows)}) AS s "
               f"WHERE length(v) BETWEEN 1 AND {int(max_chars)} GROUP BY v ORDER BY n DESC, v LIMIT {int(limit)}")
    return [str(v) for v, _n in rows]


def is_text_type(type_: str) -> bool:
    """A character column: the only kind the value index reads."""
    return bool(re.search(r"\b(text|varchar|char|character|string|bpchar|name|citext)\b", type_, re.I))
