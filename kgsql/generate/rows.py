"""The first rows of a table, for "c example rows" under a schema (ACT-SQL §2.1).

Rows are read through the SQL guard (read-only connection, timeout, row cap)
from ``schema.path``, and only the columns the (possibly selected) schema
shows, so a prompt never reveals a column its schema left out. Geometry is
shown as WKT (SpatiaLite's ``AsText``), other BLOBs as ``<blob>``, and long
values are cut, because one free-text cell can otherwise swamp a prompt.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from kgsql.db.guard import execute_query
from kgsql.errors import KgsqlError
from kgsql.generate.render import table_ref
from kgsql.schema.model import DatabaseSchema, Table

DEFAULT_MAX_CHARS = 80
ROWS_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class RowSample:
    """Column names and the first rows of one table, values already as display text."""

    table: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def display_value(value: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """One cell as prompt text: NULL for None, tabs/newlines flattened, long text cut."""
    if value is None:
        return "NULL"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "<blob>"
    text = " ".join(str(value).split()) if isinstance(value, str) else str(value)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


_CACHE: dict[tuple[Any, ...], RowSample] = {}
_LOCK = threading.Lock()


def _file_key(path: str) -> tuple[str, int, int]:
    st = os.stat(path)
    return (os.path.abspath(path), st.st_size, st.st_mtime_ns)


def _select_list(table: Table, wkt: bool) -> str:
    parts = []
    for col in table.columns:
        if col.spatial is not None:
            parts.append(f"AsText({_q(col.name)})" if wkt else "NULL")
        else:
            parts.append(_q(col.name))
    return ", ".join(parts) or "*"


def sample_rows(schema: DatabaseSchema, table: Table, n: int, *,
                max_chars: int = DEFAULT_MAX_CHARS) -> RowSample | None:
    """The first ``n`` rows of ``table`` (its shown columns only), or None when
    the schema has no readable database file or the table cannot be read."""
    if n <= 0 or not schema.path or not os.path.isfile(schema.path) or not table.columns:
        return None
    key = (_file_key(schema.path), table.name, tuple(c.name for c in table.columns), n, max_chars)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    spatial = any(c.spatial is not None for c in table.columns)
    result, used_wkt = None, False
    for wkt in ((True, False) if spatial else (False,)):
        sql = f"SELECT {_select_list(table, wkt)} FROM {_q(table.name)} LIMIT {int(n)}"
        try:
            result, used_wkt = execute_query(schema.path, sql, timeout_s=ROWS_TIMEOUT_S, max_rows=n), wkt
            break
        except KgsqlError:  # no SpatiaLite, odd table: try without WKT, then give up
            continue
    if result is None:
        return None
    rows = []
    for raw in result.rows:
        cells = []
        for col, value in zip(table.columns, raw):
            if col.spatial is not None and not used_wkt:
                cells.append("<geometry>")
            else:
                cells.append(display_value(value, max_chars))
        rows.append(tuple(cells))
    sample = RowSample(table.name, tuple(c.name for c in table.columns), tuple(rows))
    with _LOCK:
        _CACHE[key] = sample
    return sample


def render_rows(sample: RowSample) -> str:
    """ACT-SQL's block (util/prompt.py): count line, tab-separated header and rows, in ``/* */``."""
    lines = ["/*", f"{len(sample.rows)} example rows from table {table_ref(sample.table)}:", "\t".join(sample.columns)]
    lines += ["\t".join(row) for row in sample.rows]
    lines.append("*/")
    return "\n".join(lines)
