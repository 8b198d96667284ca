"""Read one SQLite / SpatiaLite file into a ``DatabaseSchema``.

Everything ingest knows about a database comes from here: tables, columns,
types, keys, foreign keys, row counts, value examples, statistics and the
geometry metadata of spatial columns. Descriptions and profiles are merged in
later (``kgsql.ingest.profile``), so this module only reads the file.

Statistics are computed over at most ``sample_rows`` rows per table (the first
rows in rowid order) so a 100k-row table costs a bounded scan; the row count
itself is always exact.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from kgsql.db.connect import (
    SPATIALITE_SYSTEM_TABLES,
    Connection,
    has_geometry_columns,
    open_database,
    sqlite3,
)
from kgsql.db.engine import file_suffixes
from kgsql.errors import DatabaseFileError, InputError
from kgsql.schema.model import (
    Column,
    ColumnStats,
    DatabaseSchema,
    ForeignKey,
    SpatialInfo,
    Table,
    shorten_example,
)

GEOMETRY_TYPE_NAMES = frozenset(
    {
        "GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING",
        "MULTIPOLYGON", "GEOMETRYCOLLECTION",
    }
)

#: SpatiaLite 4+ stores geometry_columns.geometry_type as an OGC code.
_GEOMETRY_CODES = {
    0: "GEOMETRY", 1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT",
    5: "MULTILINESTRING", 6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION",
}

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")

DEFAULT_SAMPLE_ROWS = 100_000
DEFAULT_VALUE_EXAMPLES = 5


def quote_identifier(name: str) -> str:
    """Quote a SQLite identifier (double quotes, embedded quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def database_name_for(path: Path) -> str:
    """A database's default name: the file stem (Spider's ``<db>/<db>.sqlite`` gives ``db``)."""
    return path.stem


def user_tables(conn: Connection, *, spatial: bool) -> list[str]:
    """Names of the user's tables, without SQLite/SpatiaLite internals.

    Excluded: ``sqlite_*`` tables, virtual tables and their shadow tables
    (R*Tree spatial indexes, FTS), and, in a spatial database, SpatiaLite's
    metadata tables.
    """
    rows = conn.execute(
        "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
    ).fetchall()
    virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    result = []
    for name, _sql in rows:
        low = name.lower()
        if low.startswith("sqlite_") or name in virtual:
            continue
        if any(low.startswith(v.lower() + "_") for v in virtual):
            continue
        if spatial and low in SPATIALITE_SYSTEM_TABLES:
            continue
        result.append(name)
    return result


def _registered_geometry(conn: Connection) -> dict[tuple[str, str], tuple[str, int | None]]:
    """``geometry_columns`` rows keyed by (table, column), lower-cased."""
    out: dict[tuple[str, str], tuple[str, int | None]] = {}
    try:
        rows = conn.execute(
            "SELECT f_table_name, f_geometry_column, geometry_type, srid FROM geometry_columns"
        ).fetchall()
    except Exception:  # legacy layouts: fall back to content detection alone
        return out
    for table, column, gtype, srid in rows:
        name = _GEOMETRY_CODES.get(int(gtype) % 1000, "GEOMETRY") if isinstance(gtype, int) else str(gtype)
        out[(str(table).lower(), str(column).lower())] = (name, srid)
    return out


def _spatial_info(conn: Connection, table: str, column: str, registered: tuple[str, int | None] | None) -> SpatialInfo | None:
    """Geometry type, SRID and extent of a geometry column, read from its values."""
    qt, qc = quote_identifier(table), quote_identifier(column)
    try:
        kinds = conn.execute(
            f"SELECT GeometryType({qc}) AS g, SRID({qc}) AS s, count(*) FROM {qt} "
            f"WHERE {qc} IS NOT NULL GROUP BY g, s ORDER BY count(*) DESC LIMIT 5"
        ).fetchall()
    except Exception:
        kinds = []
    kinds = [k for k in kinds if k[0] is not None]
    if not kinds and registered is None:
        return None
    if kinds:
        types = sorted({str(k[0]).split(" ")[0].upper() for k in kinds})
        gtype = types[0] if len(types) == 1 else "GEOMETRY"
        srid = kinds[0][1]
    else:
        gtype, srid = registered  # type: ignore[misc]
    extent = None
    try:
        row = conn.execute(
            f"SELECT min(MbrMinX({qc})), min(MbrMinY({qc})), max(MbrMaxX({qc})), max(MbrMaxY({qc})) FROM {qt}"
        ).fetchone()
        if row and None not in row:
            extent = [float(v) for v in row]
    except Exception:
        extent = None
    return SpatialInfo(geometry_type=gtype, srid=int(srid) if srid is not None else None, extent=extent)


def _looks_spatial(decl_type: str) -> bool:
    return decl_type.strip().upper() in GEOMETRY_TYPE_NAMES


def _column_stats(
    conn: Connection, table: str, column: str, *, sample_rows: int, n_examples: int
) -> tuple[ColumnStats, list[str]]:
    """Distinct count, null fraction, min/max (numbers and dates), text sample and frequent values."""
    qt, qc = quote_identifier(table), quote_identifier(column)
    source = f"(SELECT {qc} AS v FROM {qt} LIMIT {int(sample_rows)})"
    total, nulls, distinct, numeric, blobs, lo, hi = conn.execute(
        "SELECT count(*), sum(v IS NULL), count(DISTINCT v), "
        "sum(typeof(v) IN ('integer', 'real')), sum(typeof(v) = 'blob'), min(v), max(v) "
        f"FROM {source}"
    ).fetchone()
    stats = ColumnStats(
        distinct_count=int(distinct or 0),
        null_fraction=(float(nulls) / total) if total else None,
    )
    non_null = (total or 0) - (nulls or 0)
    if non_null and numeric == non_null:
        stats.min, stats.max = lo, hi
    elif non_null and isinstance(lo, str) and isinstance(hi, str) and _ISO_DATE.match(lo) and _ISO_DATE.match(hi):
        stats.min, stats.max = lo, hi
    examples: list[str] = []
    if non_null and not blobs:
        rows = conn.execute(
            f"SELECT v, count(*) AS n FROM {source} WHERE v IS NOT NULL AND trim(v) != '' "
            f"GROUP BY v ORDER BY n DESC, v LIMIT {int(n_examples)}"
        ).fetchall()
        examples = [shorten_example(v) for v, _n in rows]
        if numeric != non_null:
            stats.sample = examples[:3]
    return stats, examples




def _foreign_keys(
    conn: Connection, tables: list[Table]
) -> tuple[list[ForeignKey], list[ForeignKey]]:
    """Resolve ``PRAGMA foreign_key_list`` case-insensitively against real names.

    An FK without a target column means the target's primary key. FKs whose
    target table or column does not exist are returned separately (dangling)
    so they can be reported rather than dropped silently.
    """
    by_name = {t.name.lower(): t for t in tables}
    good: list[ForeignKey] = []
    dangling: list[ForeignKey] = []
    for table in tables:
        rows = conn.execute(f"PRAGMA foreign_key_list({quote_identifier(table.name)})").fetchall()
        for _id, seq, ref_table, from_col, to_col in (r[:5] for r in rows):
            target = by_name.get(str(ref_table).lower())
            src_col = _real_column(table, from_col)
            if to_col is None and target is not None:
                pk = target.primary_key
                to_col = pk[seq] if seq < len(pk) else None
            dst_col = _real_column(target, to_col) if target is not None and to_col else None
            if target is None or src_col is None or dst_col is None:
                dangling.append(ForeignKey(table.name, str(from_col), str(ref_table), str(to_col)))
                continue
            fk = ForeignKey(table.name, src_col, target.name, dst_col)
            if fk not in good:
                good.append(fk)
    return good, dangling


def _real_column(table: Table | None, name: str | None) -> str | None:
    if table is None or name is None:
        return None
    for col in table.columns:
        if col.name.lower() == str(name).lower():
            return col.name
    return None


def read_database(
    path: str | os.PathLike[str],
    name: str | None = None,
    *,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    value_examples: int = DEFAULT_VALUE_EXAMPLES,
    with_stats: bool = True,
) -> DatabaseSchema:
    """Read a database's schema, keys, statistics and examples.

    ``path`` is a SQLite/SpatiaLite file, or any name :func:`kgsql.db.target.parse_target`
    takes (a PostgreSQL or DuckDB URL, a ``.duckdb`` file, a :class:`~kgsql.db.target.Target`),
    read through its engine (:mod:`kgsql.db.engines`).
    """
    if sample_rows < 1:
        raise InputError(f"sample_rows must be a positive number of rows, not {sample_rows}")
    from kgsql.db import engines
    from kgsql.db.target import Target, is_url, parse_target, require_file_engine

    target = path if isinstance(path, Target) else parse_target(os.fspath(path))
    if not target.engine_class.in_process:
        require_file_engine(target)  # a SQLite file named x.duckdb: one line, not DuckDB's error
        return engines.read_schema(target, name, sample_rows=sample_rows, value_examples=value_examples,
                                   with_stats=with_stats)
    if isinstance(path, Target) or is_url(os.fspath(path)):
        path = target.path  # type: ignore[assignment]  # sqlite:///file; a plain path is kept as given
    p = Path(path)
    conn = open_database(p)
    try:
        return _read_open_database(conn, p, name, sample_rows=sample_rows, value_examples=value_examples,
                                   with_stats=with_stats)
    except sqlite3.DatabaseError as exc:  # corrupt past the pages open_database checks
        raise DatabaseFileError(f"corrupt or unreadable SQLite database {p}: {exc}") from exc
    finally:
        conn.close()


def _read_open_database(
    conn: Connection, p: Path, name: str | None, *, sample_rows: int, value_examples: int, with_stats: bool
) -> DatabaseSchema:
    spatial = has_geometry_columns(conn)
    registered = _registered_geometry(conn) if spatial else {}
    tables: list[Table] = []
    for tname in user_tables(conn, spatial=spatial):
        info = conn.execute(f"PRAGMA table_info({quote_identifier(tname)})").fetchall()
        row_count = conn.execute(f"SELECT count(*) FROM {quote_identifier(tname)}").fetchone()[0]
        table = Table(name=tname, row_count=int(row_count))
        for _cid, cname, ctype, notnull, _default, pk in info:
            col = Column(name=cname, type=ctype or "", is_primary_key=bool(pk), not_null=bool(notnull))
            reg = registered.get((tname.lower(), cname.lower()))
            if spatial and (reg is not None or _looks_spatial(col.type) or (ctype or "").upper() == "BLOB"):
                col.spatial = _spatial_info(conn, tname, cname, reg)
            if with_stats and col.spatial is None:
                col.stats, col.value_examples = _column_stats(
                    conn, tname, cname, sample_rows=sample_rows, n_examples=value_examples
                )
            table.columns.append(col)
        tables.append(table)
    fks, dangling = _foreign_keys(conn, tables)
    return DatabaseSchema(
        name=name or database_name_for(p),
        tables=tables,
        foreign_keys=fks,
        dangling_foreign_keys=dangling,
        path=str(p.resolve()),
        is_spatial=spatial,
    )


def find_databases(root: str | os.PathLike[str]) -> list[Path]:
    """SQLite (and DuckDB) files under ``root``: a single file, a folder of files, or Spider's ``database/<db>/<db>.sqlite``.

    Symlinked folders are followed (``root`` itself and any below it), each
    real folder searched once so a link cycle ends; a file reached by two
    paths is listed once. Sorted by name so multi-database ingests are
    deterministic. A missing ``root`` gives an empty list.
    """
    p = Path(root)
    if p.is_file():
        return [p]
    suffixes = file_suffixes()  # every file engine's
    found: dict[str, Path] = {}
    seen_dirs: set[str] = set()
    for folder, dirs, files in os.walk(p, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen_dirs:
            dirs[:] = []
            continue
        seen_dirs.add(real)
        dirs.sort()
        for name in sorted(files):
            f = Path(folder) / name
            if f.suffix.lower() in suffixes and f.is_file():
                found.setdefault(os.path.realpath(f), f)
    return sorted(found.values(), key=lambda f: (f.stem.lower(), str(f)))


def require_databases(root: str | os.PathLike[str]) -> list[Path]:
    """:func:`find_databases`, but a missing ``root`` or one without databases is a DatabaseFileError."""
    p = Path(root)
    if not p.exists():
        raise DatabaseFileError(f"path not found: {p}")
    paths = find_databases(p)
    if not paths:
        raise DatabaseFileError(f"no databases (*.sqlite, *.sqlite3, *.db, *.duckdb) under {p}")
    return paths
