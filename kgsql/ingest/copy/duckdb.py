"""Writing a planned copy into a new DuckDB file.

Why: DuckDB checks every key and foreign key as rows go in and cannot defer
the check, so tables are created with their constraints, parents first, and
a self-referencing table's rows go in waves (see
:func:`~kgsql.ingest.copy.plan.combined_waves`). Its ``executemany`` inserts
row by row (50,000 rows take 20 s), so each batch is one ``INSERT ... SELECT
unnest(list)`` per column (0.15 s). Without the spatial extension (none
offline) geometry columns keep their WKB as a BLOB. A file that fails half
way is removed.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from kgsql.db.engines.base import first_line
from kgsql.db.engines.base import quote_identifier as _q
from kgsql.ingest.copy.plan import TablePlan, combined_waves
from kgsql.ingest.copy.report import LoadReport
from kgsql.ingest.copy.source import LoadError

__all__ = ["DUCKDB_BATCH", "write_duckdb"]

#: Rows per DuckDB insert statement.
DUCKDB_BATCH: Final = 50_000


def write_duckdb(path: Path, plans: list[TablePlan], *, replace: bool, report: LoadReport) -> None:
    """Create the DuckDB file ``path`` with the planned tables (``replace``: overwrite one that exists)."""
    import duckdb

    wal = path.with_name(path.name + ".wal")
    if path.exists():
        if not replace:
            raise LoadError(f"{path} already exists; --replace overwrites it")
        path.unlink()
        wal.unlink(missing_ok=True)
    if not path.parent.is_dir():
        raise LoadError(f"folder not found: {path.parent}")
    conn = duckdb.connect(str(path), config={"autoinstall_known_extensions": False,
                                             "autoload_known_extensions": False})
    ok = False
    try:
        conn.execute("BEGIN")
        parent_of = {p.source.name: p for p in plans}
        for plan in plans:
            conn.execute(_duck_create(plan, parent_of))
            self_fks = [fk for fk in plan.foreign_keys if fk.ref_table == fk.table]
            waves = combined_waves(plan, self_fks) if self_fks else None  # DuckDB checks each batch on insert
            n_rows = len(plan.values[0]) if plan.values else 0
            for wave in (waves or [list(range(n_rows))]):
                for start in range(0, len(wave), DUCKDB_BATCH):
                    _duck_insert(conn, plan, wave[start:start + DUCKDB_BATCH])
        conn.execute("COMMIT")
        ok = True
    except duckdb.Error as exc:
        raise LoadError(f"DuckDB refused the copy into {path}: {first_line(exc)}") from exc
    finally:
        conn.close()
        if not ok:
            path.unlink(missing_ok=True)
            wal.unlink(missing_ok=True)
    if any(c.logical.kind == "geometry" for p in plans for c in p.columns):
        report.notes.append("DuckDB has no spatial extension here: geometry columns hold their WKB as BLOB")


def _duck_create(plan: TablePlan, parent_of: dict[str, TablePlan]) -> str:
    """The CREATE TABLE statement of a table with its columns, keys and foreign keys."""
    parts = [f"{_q(c.name)} {c.logical.duckdb()}{' NOT NULL' if c.not_null else ''}" for c in plan.columns]
    if plan.primary_key:
        parts.append(f"PRIMARY KEY ({', '.join(_q(c) for c in plan.target_names(plan.primary_key))})")
    for cols in plan.unique:
        parts.append(f"UNIQUE ({', '.join(_q(c) for c in plan.target_names(cols))})")
    for fk in plan.foreign_keys:
        parent = parent_of[fk.ref_table]
        parts.append(f"FOREIGN KEY ({', '.join(_q(c) for c in plan.target_names(fk.columns))}) "
                     f"REFERENCES {_q(parent.name)} "
                     f"({', '.join(_q(c) for c in parent.target_names(fk.ref_columns))})")
    return f"CREATE TABLE {_q(plan.name)} ({', '.join(parts)})"


def _duck_insert(conn: Any, plan: TablePlan, rows: list[int]) -> None:
    if not rows:
        return
    selects, params = [], []
    for i, c in enumerate(plan.columns):
        kind = c.logical.kind
        column = plan.values[i]
        if kind == "geometry":
            params.append([None if column[r] is None else column[r][0] for r in rows])
            selects.append("unnest(?::BLOB[])")
        elif kind in ("numeric", "date", "timestamp", "time"):
            params.append([None if column[r] is None else str(column[r]) for r in rows])
            selects.append(f"unnest(?::VARCHAR[])::{c.logical.duckdb()}")
        else:
            params.append([column[r] for r in rows])
            selects.append(f"unnest(?::{c.logical.duckdb()}[])")
    conn.execute(f"INSERT INTO {_q(plan.name)} SELECT {', '.join(selects)}", params)
