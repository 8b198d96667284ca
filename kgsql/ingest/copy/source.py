"""Reading the source: every user table of a SQLite/SpatiaLite file, with rows, keys and geometry.

Why: the plan needs more than a schema reader gives: every row in memory
(types come from the stored values), SQLite's unique indexes and foreign
keys as declared, and for each geometry column its WKB, SRID and type per
row. Geometry columns are those registered in ``geometry_columns``, declared
POINT/LINESTRING/..., or any other column whose values are all SpatiaLite
geometries (a BLOB, an empty or a misspelt type). A table is read whole:
this is for benchmark-sized databases, not for warehouses.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kgsql.errors import KgsqlError
from kgsql.ingest.copy.types import GEOMETRY_NAMES

__all__ = ["LoadError", "SourceColumn", "SourceTable", "read_source"]

_GEOMETRY_CODES: Final[dict[int, str]] = {0: "GEOMETRY", 1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT",
                                          5: "MULTILINESTRING", 6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION"}
#: SpatiaLite's own views (its metadata), never the user's.
_SPATIALITE_VIEWS: Final = frozenset({"geom_cols_ref_sys", "spatial_ref_sys_all", "vector_layers", "vector_layers_auth",
                                      "vector_layers_statistics", "vector_layers_field_infos"})


class LoadError(KgsqlError):
    """The copy cannot be made (bad input, target not empty, engine refused); one line says why."""


@dataclass
class SourceColumn:
    name: str
    declared: str
    not_null: bool
    pk_position: int
    geometry: tuple[str, int | None] | None = None  # registered/declared type and SRID, for spatial columns


@dataclass
class SourceTable:
    name: str
    columns: list[SourceColumn]
    rows: list[list[Any]] = field(default_factory=list)
    geometry_rows: dict[int, list[tuple[Any, Any, Any]]] = field(default_factory=dict)  # col -> (wkb, srid, type)
    unique: list[list[str]] = field(default_factory=list)
    foreign_keys: list[tuple[str, list[tuple[str, str | None]]]] = field(default_factory=list)  # (ref table, pairs)
    unreadable: dict[str, int] = field(default_factory=dict)  # geometry column -> values that are no geometry

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in sorted((c for c in self.columns if c.pk_position), key=lambda c: c.pk_position)]

    def column(self, name: str | None) -> SourceColumn | None:
        for c in self.columns:
            if name is not None and c.name.lower() == name.lower():
                return c
        return None


def read_source(path: Path) -> tuple[list[SourceTable], list[str]]:
    """Every user table of a SQLite/SpatiaLite file with its rows, keys and foreign keys; and the views skipped."""
    from kgsql.db.connect import SPATIALITE_SYSTEM_TABLES, decode_lenient, has_geometry_columns, open_database
    from kgsql.ingest.reader import user_tables

    conn = open_database(path)
    try:
        conn.text_factory = decode_lenient
        spatial = has_geometry_columns(conn)
        registered = _registered_geometry(conn) if spatial else {}
        views = [str(n) for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY rowid")
                 if not (spatial and str(n).lower() in SPATIALITE_SYSTEM_TABLES | _SPATIALITE_VIEWS)]
        tables = [_read_table(conn, tname, spatial, registered) for tname in user_tables(conn, spatial=spatial)]
        return tables, views
    except KgsqlError:
        raise
    except Exception as exc:  # sqlite3.DatabaseError of either module
        raise LoadError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()


def _read_table(conn: Any, tname: str, spatial: bool,
                registered: dict[tuple[str, str], tuple[str, int | None]]) -> SourceTable:
    """One table: its columns (geometry ones found), every row, its unique column sets and foreign keys."""
    from kgsql.ingest.reader import quote_identifier as q

    cols = [SourceColumn(str(n), str(t or ""), bool(nn), int(pk))
            for _cid, n, t, nn, _d, pk in conn.execute(f"PRAGMA table_info({q(tname)})").fetchall()]
    table = SourceTable(tname, cols)
    if spatial:
        for c in cols:
            c.geometry = _geometry_of(conn, tname, c, registered)
    exprs = []
    for c in cols:
        qc = q(c.name)
        exprs.append(f"AsBinary({qc}), SRID({qc}), GeometryType({qc}), {qc} IS NOT NULL" if c.geometry else qc)
    raw = conn.execute(f"SELECT {', '.join(exprs)} FROM {q(tname)}").fetchall()
    for row in raw:
        out: list[Any] = []
        i = 0
        for k, c in enumerate(cols):
            if c.geometry:
                table.geometry_rows.setdefault(k, []).append((row[i], row[i + 1], row[i + 2]))
                out.append(row[i])
                if row[i] is None and row[i + 3]:
                    table.unreadable[c.name] = table.unreadable.get(c.name, 0) + 1
                i += 4
            else:
                out.append(row[i])
                i += 1
        table.rows.append(out)
    table.unique = _unique_sets(conn, tname, table.primary_key)
    table.foreign_keys = _foreign_keys(conn, tname)
    return table


def _registered_geometry(conn: Any) -> dict[tuple[str, str], tuple[str, int | None]]:
    out: dict[tuple[str, str], tuple[str, int | None]] = {}
    try:
        rows = conn.execute("SELECT f_table_name, f_geometry_column, geometry_type, srid "
                            "FROM geometry_columns").fetchall()
    except Exception:  # noqa: BLE001 - a legacy layout: content decides
        return out
    for table, column, gtype, srid in rows:
        if isinstance(gtype, int):
            dims = {1: "Z", 2: "M", 3: "ZM"}.get(gtype // 1000, "")
            name = _GEOMETRY_CODES.get(gtype % 1000, "GEOMETRY") + (" " + dims if dims else "")
        else:
            name = str(gtype).upper()
        out[(str(table).lower(), str(column).lower())] = (name, int(srid) if srid is not None else None)
    return out


def _geometry_of(conn: Any, table: str, col: SourceColumn,
                 registered: dict[tuple[str, str], tuple[str, int | None]]) -> tuple[str, int | None] | None:
    from kgsql.ingest.reader import quote_identifier as q

    reg = registered.get((table.lower(), col.name.lower()))
    if reg is not None:
        return reg
    declared = col.declared.strip().upper()
    base = re.sub(r"\s*(Z|M|ZM|XYZ|XYM|XYZM)$", "", declared)
    if base in GEOMETRY_NAMES:
        return (declared, None)
    # any other column whose values are all SpatiaLite geometries (a BLOB, an empty or a misspelt type)
    qc = q(col.name)
    total, blobs, parsed = conn.execute(f"SELECT count({qc}), count(CASE WHEN typeof({qc}) = 'blob' THEN 1 END), "
                                        f"count(GeometryType({qc})) FROM {q(table)}").fetchone()
    if total and total == blobs == parsed:
        return ("GEOMETRY", None)
    return None


def _unique_sets(conn: Any, table: str, primary_key: list[str]) -> list[list[str]]:
    from kgsql.ingest.reader import quote_identifier as q

    out: list[list[str]] = []
    for row in conn.execute(f"PRAGMA index_list({q(table)})").fetchall():
        name, unique, origin = row[1], row[2], row[3]
        partial = row[4] if len(row) > 4 else 0
        if not unique or partial or origin == "pk":
            continue
        cols = [str(r[2]) for r in conn.execute(f"PRAGMA index_info({q(name)})").fetchall()]
        if not cols or any(c in (None, "None") for c in cols):
            continue  # an index on an expression
        if {c.lower() for c in cols} == {c.lower() for c in primary_key} or cols in out:
            continue
        out.append(cols)
    return out


def _foreign_keys(conn: Any, table: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    from kgsql.ingest.reader import quote_identifier as q

    groups: dict[int, tuple[str, list[tuple[str, str | None]]]] = {}
    for row in conn.execute(f"PRAGMA foreign_key_list({q(table)})").fetchall():
        fid, _seq, ref_table, from_col, to_col = row[:5]
        pair = (str(from_col), None if to_col is None else str(to_col))
        groups.setdefault(int(fid), (str(ref_table), []))[1].append(pair)
    return [groups[k] for k in sorted(groups, reverse=True)]  # PRAGMA lists the last declared first
