"""Copy a SQLite/SpatiaLite file into PostgreSQL (PostGIS) or a new DuckDB file, keys and all.

    python -m kgsql.lab.load_engine SQLITE_FILE TARGET_URL [--replace] [--keep-case] [--text-dates] [--json OUT]
    python -m kgsql.lab.load_engine --spatial [SPATIALITE_FILE] [--json OUT]

Why: kgsql reads PostgreSQL and DuckDB databases as well as SQLite ones, and
the only way to know it answers the same on each is the same data in each.
Spider and the spatial benchmark ship as SQLite files, so this copies one
into the other engines (:mod:`kgsql.lab.cross_engine` then compares schemas
and query results; the engine tests build their databases with it).

What it does, table by table in SQLite's order:

* Column types come from the declared type's SQLite affinity *and* the
  values actually stored (SQLite is dynamically typed): INTEGER affinity
  holding only integers -> ``bigint``; REAL -> ``double precision``;
  ``DECIMAL(p,s)`` whose values fit -> ``numeric(p,s)``; ``varchar(n)`` whose
  values fit -> ``varchar(n)`` (``char(n)`` too: PostgreSQL's blank-padded
  ``char`` would change the values); DATE/DATETIME/TIME columns holding ISO
  text (``2020-01-31``, ``2020-01-31 12:00:00``) -> ``date``/``timestamp``/``time``
  (``--text-dates`` keeps them text); an empty or unknown declared type
  (``number``, ``bool``, ``""``) follows its values. A column whose values do
  not fit its declared type (text in an INTEGER column, ``'T'`` in a ``bool``)
  falls back to ``text``, with SQLite's own text for its numbers, and is
  reported.
* Primary keys, UNIQUE constraints (SQLite's unique indexes) and foreign keys
  are declared when the data satisfies them after the conversion; a foreign
  key whose target is not a primary key or unique column set, whose column
  types differ, or that references a missing table, is skipped and reported.
  PostgreSQL gets a foreign key the rows violate as ``NOT VALID`` (declared,
  not checked); DuckDB checks every row and cannot defer, so it skips it, and
  a table is created after the tables it references there.
* Geometry columns of a SpatiaLite file (registered in ``geometry_columns``,
  declared POINT/LINESTRING/..., or any other column whose values are all
  SpatiaLite geometries: a BLOB, an empty or a misspelt type) become
  PostGIS ``geometry(<Type>, <SRID>)`` columns with a GiST index, read with
  ``AsBinary``/``SRID`` and written with ``ST_GeomFromWKB``; DuckDB (no spatial
  extension offline) keeps the WKB as a BLOB.
* PostgreSQL names are folded to lower case by default, as PostgreSQL folds
  unquoted names, so SQL written for SQLite (``SELECT Name FROM Singer``)
  finds them; ``--keep-case`` keeps SQLite's spelling (queries must then quote
  mixed-case names). DuckDB keeps the spelling and matches any case.

Rows go through ``COPY`` (psycopg) into PostgreSQL, and through one
``INSERT ... SELECT unnest(list)`` per column batch into DuckDB (its
``executemany`` inserts row by row: 50,000 rows take 20 s, unnest 0.15 s).
PostgreSQL gets everything in one transaction; a DuckDB file that fails
half-way is removed. A table is read whole into memory: this is for
benchmark-sized databases, not for warehouses.

``--spatial`` starts a throwaway PostGIS server (:mod:`kgsql.lab.pg_cluster`),
loads a SpatiaLite file (default: the spatial benchmark's traffic database)
and checks that every geometry column comes back from
:func:`kgsql.ingest.reader.read_database` with the SQLite reader's geometry
type and SRID.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import decimal
import functools
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from kgsql.db.engines.base import first_line
from kgsql.errors import InputError, KgsqlError
from kgsql.secrets import redact

__all__ = ["DEFAULT_SPATIAL_FILE", "LoadError", "LoadReport", "check_spatial", "load", "main", "plan_type",
           "sqlite_affinity"]

#: The spatial benchmark's traffic database (dataset1), relative to the repository's parent folder.
DEFAULT_SPATIAL_FILE: Final = Path(__file__).resolve().parents[3] / "shared" / "data" / "spatial" / "dataset1" / \
    "traffic" / "traffic.sqlite"
#: Rows per DuckDB insert statement.
DUCKDB_BATCH: Final = 50_000
#: PostgreSQL truncates longer identifiers (in bytes).
PG_MAX_IDENTIFIER: Final = 63

_GEOMETRY_NAMES: Final[dict[str, str]] = {
    "GEOMETRY": "Geometry", "POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon",
    "MULTIPOINT": "MultiPoint", "MULTILINESTRING": "MultiLineString", "MULTIPOLYGON": "MultiPolygon",
    "GEOMETRYCOLLECTION": "GeometryCollection",
}
_GEOMETRY_CODES: Final[dict[int, str]] = {0: "GEOMETRY", 1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT",
                                          5: "MULTILINESTRING", 6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION"}
#: SpatiaLite's own views (its metadata), never the user's.
_SPATIALITE_VIEWS: Final = frozenset({"geom_cols_ref_sys", "spatial_ref_sys_all", "vector_layers", "vector_layers_auth",
                                      "vector_layers_statistics", "vector_layers_field_infos"})
_DIMS: Final[dict[str, str]] = {"": "", "XY": "", "Z": "Z", "XYZ": "Z", "M": "M", "XYM": "M", "ZM": "ZM", "XYZM": "ZM"}
_CHAR_TYPE = re.compile(r"^\s*(?:N?VAR)?N?CHAR(?:ACTER)?(?:\s+VARYING)?\s*\(\s*(\d+)\s*\)\s*$"
                        r"|^\s*(?:VARYING|NATIVE)\s+CHARACTER\s*\(\s*(\d+)\s*\)\s*$", re.I)
_DECIMAL_TYPE = re.compile(r"^\s*(?:DECIMAL|NUMERIC|DEC|NUMBER)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*$", re.I)
_DATE_TYPE = re.compile(r"^\s*(DATE|DATETIME|TIMESTAMP|TIME)\b", re.I)
_ISO = (("date", re.compile(r"^\d{4}-\d{2}-\d{2}$"), "%Y-%m-%d"),
        ("timestamp", re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"), "%Y-%m-%d %H:%M:%S"),
        ("time", re.compile(r"^\d{2}:\d{2}:\d{2}$"), "%H:%M:%S"))


class LoadError(KgsqlError):
    """The copy cannot be made (bad input, target not empty, engine refused); one line says why."""


# --------------------------------------------------------------------------- types


def sqlite_affinity(declared: str) -> str:
    """SQLite's column affinity for a declared type (the five rules of datatype3.html, in order)."""
    d = (declared or "").upper()
    if "INT" in d:
        return "INTEGER"
    if "CHAR" in d or "CLOB" in d or "TEXT" in d:
        return "TEXT"
    if "BLOB" in d or not d.strip():
        return "BLOB"
    if "REAL" in d or "FLOA" in d or "DOUB" in d:
        return "REAL"
    return "NUMERIC"


@dataclass(frozen=True)
class Logical:
    """An engine-neutral column type: kind plus its parameters."""

    kind: str  # int, double, numeric, varchar, text, date, timestamp, time, blob, geometry
    precision: int = 0
    scale: int = 0
    length: int = 0
    geometry: str = ""  # PostGIS type name, e.g. "Point", "MultiPolygonZ"
    srid: int | None = None

    def pg(self) -> str:
        return {
            "int": "bigint", "double": "double precision", "text": "text", "date": "date",
            "timestamp": "timestamp", "time": "time", "blob": "bytea",
            "numeric": f"numeric({self.precision},{self.scale})", "varchar": f"varchar({self.length})",
            "geometry": (f"geometry({self.geometry},{self.srid})" if self.srid is not None
                         else f"geometry({self.geometry})"),
        }[self.kind]

    def duckdb(self) -> str:
        if self.kind == "numeric":
            return f"DECIMAL({self.precision},{self.scale})" if self.precision <= 38 else "DOUBLE"
        return {"int": "BIGINT", "double": "DOUBLE", "text": "VARCHAR", "varchar": "VARCHAR", "date": "DATE",
                "timestamp": "TIMESTAMP", "time": "TIME", "blob": "BLOB", "geometry": "BLOB"}[self.kind]

    def family(self, engine: str) -> str:
        """Types a foreign key may join: PostgreSQL's btree families, DuckDB's exact types."""
        if engine == "duckdb":
            return self.duckdb()
        return {"varchar": "text", "numeric": "numeric"}.get(self.kind, self.kind)


def plan_type(declared: str, values: Sequence[Any], *, text_dates: bool = False) -> tuple[Logical, str]:
    """The target type of a column from its declared type and stored values, and why it is not the declared one.

    The reason is "" when the values fit the declared type (the usual case);
    otherwise it says what did not fit (the column then falls back to text,
    or to double for fractions in an integer column).
    """
    aff = sqlite_affinity(declared)
    kinds = {type(v) for v in values if v is not None}
    kinds = {int if k is bool else k for k in kinds}
    decl = declared.strip() or "(none)"
    if bytes in kinds:
        if kinds == {bytes}:
            return Logical("blob"), "" if aff == "BLOB" else f"binary values in a {decl} column"
        return Logical("text"), f"binary and other values mixed in a {decl} column"
    if str in kinds:
        example = next(v for v in values if isinstance(v, str))
        date = _DATE_TYPE.match(declared)
        if date and kinds == {str}:
            if text_dates:
                return Logical("text"), ""
            kind = _iso_kind([v for v in values if v is not None])
            if kind:
                return Logical(kind), ""
            return Logical("text"), f"not ISO {date.group(1).lower()} text, e.g. {example[:40]!r}"
        if aff == "TEXT":
            length = _char_length(declared)
            if length and all(len(v) <= length for v in values if isinstance(v, str)):
                return Logical("varchar", length=length), ""
            return Logical("text"), ""
        if aff == "BLOB" and kinds == {str}:
            return Logical("text"), ""
        return Logical("text"), f"text in a {decl} column, e.g. {example[:40]!r}"
    if not kinds:  # no values: the declared type alone
        return _declared_only(declared, aff, text_dates=text_dates), ""
    # numbers only
    numeric = _decimal_spec(declared)
    if aff == "TEXT":  # TEXT affinity stores numbers as text; defensive
        return Logical("text"), f"numbers in a {decl} column"
    if numeric and aff != "REAL" and _fits_decimal(values, *numeric):
        return Logical("numeric", precision=numeric[0], scale=numeric[1]), ""
    if kinds == {int} and aff != "REAL":
        return Logical("int"), ""
    if aff == "INTEGER":
        example = next(v for v in values if isinstance(v, float))
        return Logical("double"), f"fractions in a {decl} column, e.g. {example!r}"
    return Logical("double"), ""


def _declared_only(declared: str, aff: str, *, text_dates: bool) -> Logical:
    date = _DATE_TYPE.match(declared)
    if date and not text_dates:
        word = date.group(1).upper()
        return Logical("date" if word == "DATE" else "time" if word == "TIME" else "timestamp")
    if aff == "INTEGER":
        return Logical("int")
    if aff == "REAL":
        return Logical("double")
    if aff == "TEXT":
        length = _char_length(declared)
        return Logical("varchar", length=length) if length else Logical("text")
    if aff == "NUMERIC":
        numeric = _decimal_spec(declared)
        return Logical("numeric", precision=numeric[0], scale=numeric[1]) if numeric else Logical("double")
    return Logical("text")  # no declared type, no values


def _char_length(declared: str) -> int:
    m = _CHAR_TYPE.match(declared or "")
    if not m:
        return 0
    n = int(m.group(1) or m.group(2))
    return n if 0 < n <= 10_485_760 else 0


def _decimal_spec(declared: str) -> tuple[int, int] | None:
    m = _DECIMAL_TYPE.match(declared or "")
    if not m:
        return None
    p, s = int(m.group(1)), int(m.group(2) or 0)
    return (p, s) if 0 < p <= 1000 and 0 <= s <= p else None


def _fits_decimal(values: Iterable[Any], precision: int, scale: int) -> bool:
    limit = decimal.Decimal(10) ** (precision - scale)
    for v in values:
        if v is None:
            continue
        d = decimal.Decimal(repr(v)) if isinstance(v, float) else decimal.Decimal(v)
        if not d.is_finite() or abs(d) >= limit or d != round(d, scale):
            return False
    return True


def _iso_kind(texts: Sequence[str]) -> str:
    """"date"/"timestamp"/"time" when every text is that ISO form (and a valid value), else ""."""
    for kind, pattern, fmt in _ISO:
        if all(pattern.match(t) for t in texts):
            try:
                for t in texts:
                    _dt.datetime.strptime(t, fmt)
            except ValueError:
                return ""
            return kind
    return ""


# --------------------------------------------------------------------------- the source file


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
    from kgsql.ingest.reader import quote_identifier as q
    from kgsql.ingest.reader import user_tables

    conn = open_database(path)
    try:
        conn.text_factory = decode_lenient
        spatial = has_geometry_columns(conn)
        registered = _registered_geometry(conn) if spatial else {}
        views = [str(n) for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY rowid")
                 if not (spatial and str(n).lower() in SPATIALITE_SYSTEM_TABLES | _SPATIALITE_VIEWS)]
        tables: list[SourceTable] = []
        for tname in user_tables(conn, spatial=spatial):
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
            tables.append(table)
        return tables, views
    except KgsqlError:
        raise
    except Exception as exc:  # sqlite3.DatabaseError of either module
        raise LoadError(f"cannot read {path}: {exc}") from exc
    finally:
        conn.close()


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
    if base in _GEOMETRY_NAMES:
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


def _cast_text(value: Any) -> str:
    """SQLite's text of a number (``CAST(x AS TEXT)``): ``1.0``, ``1.0e+20``, 15 significant digits."""
    return str(value) if isinstance(value, int) else _sqlite_float_text(float(value))


@functools.lru_cache(maxsize=65_536)
def _sqlite_float_text(value: float) -> str:
    global _MEMORY
    if _MEMORY is None:
        from kgsql.db.connect import sqlite3

        _MEMORY = sqlite3.connect(":memory:", check_same_thread=False)
    return str(_MEMORY.execute("SELECT CAST(? AS TEXT)", (value,)).fetchone()[0])


_MEMORY: Any = None


# --------------------------------------------------------------------------- the plan


@dataclass
class ColumnPlan:
    source: str
    name: str
    declared: str
    logical: Logical
    not_null: bool
    reason: str = ""


@dataclass
class TablePlan:
    source: SourceTable
    name: str
    columns: list[ColumnPlan]
    values: list[list[Any]]  # converted, column by column
    primary_key: list[str] = field(default_factory=list)  # source names
    unique: list[list[str]] = field(default_factory=list)
    foreign_keys: list[ForeignKeyPlan] = field(default_factory=list)

    def target_names(self, source_names: Iterable[str]) -> list[str]:
        by = {c.source.lower(): c.name for c in self.columns}
        return [by[s.lower()] for s in source_names]

    def logical(self, source_name: str) -> Logical:
        return next(c.logical for c in self.columns if c.source.lower() == source_name.lower())

    def keys(self, source_names: Sequence[str]) -> list[tuple[Any, ...]]:
        idx = [next(i for i, c in enumerate(self.columns) if c.source.lower() == s.lower()) for s in source_names]
        return list(zip(*(self.values[i] for i in idx))) if self.values and self.values[0] else []


@dataclass
class ForeignKeyPlan:
    table: str
    columns: list[str]
    ref_table: str
    ref_columns: list[str]
    not_valid: bool = False

    def __str__(self) -> str:
        return f"{self.table}({', '.join(self.columns)}) -> {self.ref_table}({', '.join(self.ref_columns)})"


@dataclass
class LoadReport:
    """What a load did: the target, per-table rows and types, keys declared and skipped, and why."""

    source: str
    target: str
    engine: str
    names: str
    seconds: float = 0.0
    tables: list[dict[str, Any]] = field(default_factory=list)
    primary_keys: int = 0
    unique_constraints: int = 0
    foreign_keys: list[str] = field(default_factory=list)
    foreign_keys_not_valid: list[str] = field(default_factory=list)
    skipped_foreign_keys: list[dict[str, str]] = field(default_factory=list)
    skipped_keys: list[dict[str, str]] = field(default_factory=list)
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    geometry: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(int(t["rows"]) for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rows": self.rows}


def _convert(value: Any, logical: Logical, nuls: list[int]) -> Any:
    if value is None:
        return None
    kind = logical.kind
    if kind in ("text", "varchar", "date", "timestamp", "time"):
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", errors="replace")
        text = value if isinstance(value, str) else _cast_text(value)
        if "\x00" in text:
            nuls[0] += 1
            text = text.replace("\x00", "")
        return text
    if kind == "double":
        return float(value)
    if kind == "numeric":
        return decimal.Decimal(repr(value)) if isinstance(value, float) else decimal.Decimal(value)
    if kind == "int":
        return int(value)
    return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else value


def _geometry_logical(col: SourceColumn, rows: list[tuple[Any, Any, Any]]) -> tuple[Logical, str]:
    """The PostGIS type of a geometry column: its values' single type and SRID, else the registered ones."""
    def split(name: str) -> tuple[str, str]:
        parts = str(name).upper().split()
        base = re.sub(r"(Z|M|ZM)$", "", parts[0]) if parts[0] not in _GEOMETRY_NAMES else parts[0]
        dims = _DIMS.get(parts[1] if len(parts) > 1 else parts[0][len(base):], "")
        return base, dims

    reg_type, reg_srid = col.geometry or ("GEOMETRY", None)
    seen = {split(t) for _wkb, _srid, t in rows if t}
    srids = {int(s) for wkb, s, _t in rows if wkb is not None and s is not None}
    note = ""
    if len(seen) == 1:
        base, dims = seen.pop()
    elif seen:
        dimset = {d for _b, d in seen}
        base, dims = "GEOMETRY", (dimset.pop() if len(dimset) == 1 else "")
        note = f"mixed geometry types ({', '.join(sorted(b + d for b, d in seen))}): generic geometry"
    else:
        base, dims = split(reg_type)
    if len(srids) > 1:
        srid = None
        note = (note + "; " if note else "") + f"mixed SRIDs {sorted(srids)}: no SRID constraint"
    else:
        srid = srids.pop() if srids else reg_srid
    name = _GEOMETRY_NAMES.get(base, "Geometry") + dims
    return Logical("geometry", geometry=name, srid=srid), note


def plan_tables(tables: list[SourceTable], engine: str, *, fold: bool, text_dates: bool,
                report: LoadReport) -> list[TablePlan]:
    """Target names and types, converted values, and the keys the data satisfies."""
    plans: list[TablePlan] = []
    seen_tables: dict[str, str] = {}
    for st in tables:
        tname = st.name.lower() if fold else st.name
        _check_name(tname, engine, seen_tables, f"table {st.name!r}")
        columns: list[ColumnPlan] = []
        values: list[list[Any]] = []
        seen_cols: dict[str, str] = {}
        nuls = [0]
        for k, sc in enumerate(st.columns):
            cname = sc.name.lower() if fold else sc.name
            _check_name(cname, engine, seen_cols, f"column {st.name}.{sc.name!r}")
            raw = [row[k] for row in st.rows]
            if sc.geometry is not None:
                logical, reason = _geometry_logical(sc, st.geometry_rows.get(k, []))
                converted = [None if wkb is None else (bytes(wkb), srid)
                             for wkb, srid, _t in st.geometry_rows.get(k, [])]
                if reason:
                    report.notes.append(f"{st.name}.{sc.name}: {reason}")
            else:
                logical, reason = plan_type(sc.declared, raw, text_dates=text_dates)
                converted = [_convert(v, logical, nuls) for v in raw]
            columns.append(ColumnPlan(sc.name, cname, sc.declared, logical, sc.not_null, reason))
            values.append(converted)
            if reason and sc.geometry is None:
                report.fallbacks.append({"table": st.name, "column": sc.name, "declared": sc.declared,
                                         "type": logical.pg() if engine == "postgres" else logical.duckdb(),
                                         "reason": reason})
        for cname, n in st.unreadable.items():
            report.notes.append(f"{st.name}.{cname}: {n} values are no geometry SpatiaLite reads; loaded as NULL")
        if nuls[0]:
            report.notes.append(f"{st.name}: removed NUL characters from {nuls[0]} text values")
        plan = TablePlan(st, tname, columns, values)
        for cols, what in [(st.primary_key, "primary key")] + [(u, "unique") for u in st.unique]:
            if not cols:
                continue
            problem = _key_problem(plan, cols, primary=what == "primary key")
            if problem:
                report.skipped_keys.append({"table": st.name, "columns": ", ".join(cols), "kind": what,
                                            "reason": problem})
            elif what == "primary key":
                plan.primary_key = cols
            else:
                plan.unique.append(cols)
        plans.append(plan)
    return plans


def _check_name(name: str, engine: str, seen: dict[str, str], what: str) -> None:
    key = name.lower() if engine == "duckdb" else name
    if key in seen:
        raise LoadError(f"{what} collides with {seen[key]!r} in the target"
                        + ("" if engine == "duckdb" else "; --keep-case keeps SQLite's spelling"))
    seen[key] = name
    if engine == "postgres" and len(name.encode("utf-8")) > PG_MAX_IDENTIFIER:
        raise LoadError(f"{what} is longer than PostgreSQL's {PG_MAX_IDENTIFIER}-byte identifiers")


def _key_problem(plan: TablePlan, cols: list[str], *, primary: bool) -> str:
    keys = plan.keys(cols)
    if primary and any(v is None for key in keys for v in key):
        return "has NULL values"
    keys = [k for k in keys if None not in k]  # UNIQUE lets NULLs repeat
    if len(set(keys)) != len(keys):
        return "has duplicate values after the type conversion"
    if any(plan.logical(c).kind == "geometry" for c in cols):
        return "is a geometry column"
    return ""


def plan_foreign_keys(plans: list[TablePlan], engine: str, report: LoadReport) -> list[TablePlan]:
    """Each table's foreign keys that the target can hold; the tables in creation order (DuckDB: parents first)."""
    by_name = {p.source.name.lower(): p for p in plans}
    edges: dict[str, set[str]] = {p.source.name.lower(): set() for p in plans}
    for plan in plans:
        for ref_table, pairs in plan.source.foreign_keys:
            label = (f"{plan.source.name}({', '.join(a for a, _ in pairs)}) -> "
                     f"{ref_table}({', '.join(str(b) for _, b in pairs)})")
            fk, reason = _resolve_fk(plan, by_name.get(ref_table.lower()), pairs, engine)
            if fk is None:
                report.skipped_foreign_keys.append({"fk": label, "reason": reason})
                continue
            parent = by_name[fk.ref_table.lower()]
            label = str(fk)
            missing = _violations(plan, fk.columns, parent, fk.ref_columns)
            if missing and engine == "duckdb":
                report.skipped_foreign_keys.append(
                    {"fk": label, "reason": f"{missing} rows reference no row of {fk.ref_table} "
                                            f"(DuckDB checks every row)"})
                continue
            if engine == "duckdb":
                child, ref = plan.source.name.lower(), parent.source.name.lower()
                if child != ref and _reaches(edges, ref, child):
                    report.skipped_foreign_keys.append(
                        {"fk": label, "reason": "closes a cycle of foreign keys (DuckDB creates parents first)"})
                    continue
                if child == ref and _combined_waves(
                        plan, [f for f in plan.foreign_keys if f.ref_table == f.table] + [fk]) is None:
                    report.skipped_foreign_keys.append(
                        {"fk": label, "reason": "rows reference each other in a cycle (DuckDB inserts parents first)"})
                    continue
                if child != ref:
                    edges[child].add(ref)
            fk.not_valid = bool(missing)
            plan.foreign_keys.append(fk)
            (report.foreign_keys_not_valid if missing else report.foreign_keys).append(
                label + (f" [NOT VALID: {missing} rows without a match]" if missing else ""))
    if engine != "duckdb":
        return plans
    ordered: list[TablePlan] = []
    done: set[str] = set()
    while len(ordered) < len(plans):
        for plan in plans:
            name = plan.source.name.lower()
            if name not in done and edges[name] <= done:
                ordered.append(plan)
                done.add(name)
                break
    moved = [p.source.name for p, q in zip(ordered, plans) if p is not q]
    if moved:
        report.notes.append("DuckDB creation order puts referenced tables first: "
                            + ", ".join(p.source.name for p in ordered))
    return ordered


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack.extend(edges.get(node, ()))
    return False


def _resolve_fk(plan: TablePlan, parent: TablePlan | None, pairs: list[tuple[str, str | None]],
                engine: str) -> tuple[ForeignKeyPlan | None, str]:
    if parent is None:
        return None, "references a table that does not exist"
    ref_cols: list[str | None] = [b for _, b in pairs]
    if all(b is None for b in ref_cols):
        pk = parent.source.primary_key
        if len(pk) != len(pairs):
            return None, f"references {parent.source.name}'s primary key, which has {len(pk)} columns"
        ref_cols = list(pk)
    cols: list[str] = []
    refs: list[str] = []
    for (a, _), b in zip(pairs, ref_cols):
        child_col, parent_col = plan.source.column(a), parent.source.column(b)
        if child_col is None or parent_col is None:
            return None, f"column {a if child_col is None else b!r} does not exist"
        cols.append(child_col.name)
        refs.append(parent_col.name)
    keys = [parent.primary_key] + parent.unique
    match = next((k for k in keys if k and {c.lower() for c in k} == {r.lower() for r in refs}), None)
    if match is None:
        why = "is not a primary key or unique column set"
        if any({c.lower() for c in k} == {r.lower() for r in refs} for k in
               [parent.source.primary_key] + parent.source.unique):
            why = "is a key whose data the target cannot hold as one (see skipped keys)"
        return None, f"{parent.source.name}({', '.join(refs)}) {why}"
    for c, r in zip(cols, refs):
        if plan.logical(c).family(engine) != parent.logical(r).family(engine):
            a, b = plan.logical(c), parent.logical(r)
            shown = (a.pg(), b.pg()) if engine == "postgres" else (a.duckdb(), b.duckdb())
            return None, f"types differ: {plan.source.name}.{c} {shown[0]} vs {parent.source.name}.{r} {shown[1]}"
    # the referenced key's own column order (DuckDB requires it)
    order = {r.lower(): i for i, r in enumerate(match)}
    pairs_sorted = sorted(zip(cols, refs), key=lambda cr: order[cr[1].lower()])
    return ForeignKeyPlan(plan.source.name, [c for c, _ in pairs_sorted], parent.source.name,
                          [r for _, r in pairs_sorted]), ""


def _violations(child: TablePlan, cols: list[str], parent: TablePlan, refs: list[str]) -> int:
    targets = set(parent.keys(refs))
    return sum(1 for key in child.keys(cols) if None not in key and key not in targets)


# --------------------------------------------------------------------------- writers


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _write_postgres(target: Any, plans: list[TablePlan], *, replace: bool, report: LoadReport) -> None:
    import psycopg

    from kgsql.db.credentials import connect_url

    try:
        conn = psycopg.connect(connect_url(target), autocommit=False, connect_timeout=10, application_name="kgsql-load")
    except psycopg.Error as exc:
        raise LoadError(f"cannot connect to {target.display}: {first_line(exc)}") from exc
    try:
        with conn:
            names = [p.name for p in plans]
            existing = [r[0] for r in conn.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relname = ANY(%s) AND pg_table_is_visible(c.oid) "
                "AND c.relkind IN ('r', 'p', 'v', 'm', 'f')", (names,)).fetchall()]
            if existing and not replace:
                raise LoadError(f"{target.display} already has table(s) {', '.join(sorted(existing))}; "
                                f"--replace drops them first")
            for name in existing:
                conn.execute(f"DROP TABLE IF EXISTS {_q(name)} CASCADE")
            if any(c.logical.kind == "geometry" for p in plans for c in p.columns):
                _ensure_postgis(conn, target)
            for plan in plans:
                _pg_table(conn, plan)
                _pg_keys(conn, plan, report)
            for plan in plans:
                parent_of = {p.source.name: p for p in plans}
                for fk in plan.foreign_keys:
                    parent = parent_of[fk.ref_table]
                    stmt = (f"ALTER TABLE {_q(plan.name)} ADD FOREIGN KEY "
                            f"({', '.join(_q(c) for c in plan.target_names(fk.columns))}) REFERENCES {_q(parent.name)} "
                            f"({', '.join(_q(c) for c in parent.target_names(fk.ref_columns))})"
                            + (" NOT VALID" if fk.not_valid else ""))
                    try:
                        with conn.transaction():
                            conn.execute(stmt)
                    except psycopg.Error as exc:
                        _drop_fk(report, str(fk), f"PostgreSQL refused it: {first_line(exc)}")
    except psycopg.Error as exc:
        raise LoadError(f"{target.display}: {first_line(exc)}") from exc
    finally:
        conn.close()


def _ensure_postgis(conn: Any, target: Any) -> None:
    import psycopg

    if conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'").fetchone()[0]:
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    except psycopg.Error as exc:
        raise LoadError(f"{target.display} has no PostGIS and cannot create it ({first_line(exc)}); "
                        f"the geometry columns need it: CREATE EXTENSION postgis") from exc


def _pg_table(conn: Any, plan: TablePlan) -> None:
    cols = ", ".join(f"{_q(c.name)} {c.logical.pg()}{' NOT NULL' if c.not_null else ''}" for c in plan.columns)
    conn.execute(f"CREATE TABLE {_q(plan.name)} ({cols})")
    geometry = [i for i, c in enumerate(plan.columns) if c.logical.kind == "geometry"]
    n_rows = len(plan.values[0]) if plan.values else 0
    if not n_rows:
        return
    if not geometry:
        names = ", ".join(_q(c.name) for c in plan.columns)
        with conn.cursor() as cur, cur.copy(f"COPY {_q(plan.name)} ({names}) FROM STDIN") as copy:
            for row in zip(*plan.values):
                copy.write_row(row)
        return
    # geometry: COPY WKB and SRID into a staging table, then ST_GeomFromWKB(wkb, srid) into the table
    staging = "kgsql_load_staging"
    spec, select, expanded = [], [], []
    for i, c in enumerate(plan.columns):
        if i in geometry:
            spec += [f"c{i} bytea", f"s{i} integer"]
            srid = c.logical.srid if c.logical.srid is not None else 0
            select.append(f"ST_GeomFromWKB(c{i}, coalesce(s{i}, {int(srid)}))")
        else:
            spec.append(f"c{i} {c.logical.pg()}")
            select.append(f"c{i}")
    conn.execute(f"CREATE TEMP TABLE {staging} ({', '.join(spec)}) ON COMMIT DROP")
    with conn.cursor() as cur, cur.copy(f"COPY {staging} FROM STDIN") as copy:
        for row in zip(*plan.values):
            expanded.clear()
            for i, v in enumerate(row):
                if i in geometry:
                    expanded.extend(v if v is not None else (None, None))
                else:
                    expanded.append(v)
            copy.write_row(expanded)
    conn.execute(f"INSERT INTO {_q(plan.name)} SELECT {', '.join(select)} FROM {staging}")
    conn.execute(f"DROP TABLE {staging}")
    for i in geometry:
        conn.execute(f"CREATE INDEX ON {_q(plan.name)} USING gist ({_q(plan.columns[i].name)})")


def _pg_keys(conn: Any, plan: TablePlan, report: LoadReport) -> None:
    import psycopg

    for cols, kind in [(plan.primary_key, "PRIMARY KEY")] + [(u, "UNIQUE") for u in plan.unique]:
        if not cols:
            continue
        try:
            with conn.transaction():
                conn.execute(f"ALTER TABLE {_q(plan.name)} ADD {kind} "
                             f"({', '.join(_q(c) for c in plan.target_names(cols))})")
        except psycopg.Error as exc:
            report.skipped_keys.append({"table": plan.source.name, "columns": ", ".join(cols), "kind": kind.lower(),
                                        "reason": f"PostgreSQL refused it: {first_line(exc)}"})
            if kind == "PRIMARY KEY":
                plan.primary_key = []
            else:
                plan.unique.remove(cols)


def _drop_fk(report: LoadReport, label: str, reason: str) -> None:
    for bucket in (report.foreign_keys, report.foreign_keys_not_valid):
        for item in list(bucket):
            if item.startswith(label):
                bucket.remove(item)
    report.skipped_foreign_keys.append({"fk": label, "reason": reason})


def _write_duckdb(path: Path, plans: list[TablePlan], *, replace: bool, report: LoadReport) -> None:
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
            conn.execute(f"CREATE TABLE {_q(plan.name)} ({', '.join(parts)})")
            self_fks = [fk for fk in plan.foreign_keys if fk.ref_table == fk.table]
            waves = _combined_waves(plan, self_fks) if self_fks else None  # DuckDB checks each batch on insert
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


def _combined_waves(plan: TablePlan, fks: list[ForeignKeyPlan]) -> list[list[int]] | None:
    """Row indexes in batches where every self-reference of a row points into earlier batches; None on a cycle."""
    refs = [plan.keys(fk.columns) for fk in fks]
    keys = [plan.keys(fk.ref_columns) for fk in fks]
    pending = list(range(len(keys[0])))
    inserted: list[set[tuple[Any, ...]]] = [set() for _ in fks]
    waves: list[list[int]] = []
    while pending:
        wave = [i for i in pending if all(None in r[i] or r[i] in s for r, s in zip(refs, inserted))]
        if not wave:
            return None
        waves.append(wave)
        for k, s in zip(keys, inserted):
            s.update(k[i] for i in wave)
        chosen = set(wave)
        pending = [i for i in pending if i not in chosen]
    return waves


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


# --------------------------------------------------------------------------- entry points


def load(sqlite_file: str | os.PathLike[str], target_url: str, *, replace: bool = False,
         keep_case: bool | None = None, text_dates: bool = False) -> LoadReport:
    """Copy a SQLite/SpatiaLite file into the PostgreSQL database or new DuckDB file ``target_url`` names.

    ``keep_case`` None folds names to lower case for PostgreSQL and keeps them
    for DuckDB. Raises LoadError (or another KgsqlError) with one line that
    never holds the password.
    """
    from kgsql.db.connect import check_sqlite_file
    from kgsql.db.target import parse_target

    started = time.perf_counter()
    source = Path(sqlite_file)
    if not source.is_file():
        raise LoadError(f"SQLite file not found: {source}")
    check_sqlite_file(source)
    target = parse_target(target_url)
    if target.engine == "sqlite":
        raise LoadError(f"{target.display} is a SQLite file; the target must be postgresql://... or duckdb:///path")
    fold = (target.engine == "postgres") if keep_case is None else not keep_case
    report = LoadReport(source=str(source.resolve()), target=target.display, engine=target.engine,
                        names="lower case" if fold else "as in SQLite")
    tables, views = read_source(source)
    if not tables:
        raise LoadError(f"{source} has no tables")
    if views:
        report.notes.append(f"views not copied: {', '.join(views)}")
    plans = plan_tables(tables, target.engine, fold=fold, text_dates=text_dates, report=report)
    plans = plan_foreign_keys(plans, target.engine, report)
    if target.engine == "postgres":
        _write_postgres(target, plans, replace=replace, report=report)
    else:
        _write_duckdb(Path(target.path or ""), plans, replace=replace, report=report)
    for plan in sorted(plans, key=lambda p: [t.name for t in tables].index(p.source.name)):
        report.tables.append({
            "name": plan.source.name, "target": plan.name, "rows": len(plan.source.rows),
            "columns": [{"name": c.name, "declared": c.declared,
                         "type": c.logical.pg() if target.engine == "postgres" else c.logical.duckdb()}
                        for c in plan.columns]})
        for c in plan.columns:
            if c.logical.kind == "geometry":
                report.geometry.append({"table": plan.name, "column": c.name, "type": c.logical.geometry,
                                        "srid": c.logical.srid,
                                        "stored_as": "geometry" if target.engine == "postgres" else "WKB BLOB"})
    report.primary_keys = sum(1 for p in plans if p.primary_key)
    report.unique_constraints = sum(len(p.unique) for p in plans)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def check_spatial(sqlite_file: str | os.PathLike[str] = DEFAULT_SPATIAL_FILE, *, cluster: Any = None,
                  database: str = "traffic") -> dict[str, Any]:
    """Load a SpatiaLite file into a fresh PostGIS database and compare its geometry columns with SQLite's.

    ``cluster`` is a started :class:`~kgsql.lab.pg_cluster.TempCluster`
    (default: one started and removed here). The result has the load report,
    every geometry column as SQLite and PostGIS read it, and ``ok``: every
    SQLite geometry column came back with the same type, SRID and extent, and
    every table with the same row count.
    """
    from kgsql.db import engines
    from kgsql.ingest.reader import read_database
    from kgsql.lab.pg_cluster import TempCluster

    source = Path(sqlite_file)
    if not source.is_file():
        raise LoadError(f"SpatiaLite file not found: {source}")
    if cluster is None:
        with TempCluster() as own:
            return check_spatial(source, cluster=own, database=database)
    if not cluster.postgis:
        raise LoadError("PostGIS is not installed for this PostgreSQL server (Debian: postgresql-15-postgis-3)")
    url = cluster.create_database(database, postgis=True)
    try:
        report = load(source, url)
        t0 = time.perf_counter()
        pg = read_database(url, with_stats=False)
        read_s = time.perf_counter() - t0
    finally:
        engines.close_all()
    lite = read_database(source, with_stats=False)

    def geometry(schema: Any) -> dict[tuple[str, str], dict[str, Any]]:
        return {(t.name.lower(), c.name.lower()): {"table": t.name, "column": c.name, "type": c.spatial.geometry_type,
                                                   "srid": c.spatial.srid, "db_type": c.type,
                                                   "extent": c.spatial.extent}
                for t in schema.tables for c in t.columns if c.spatial is not None}

    before, after = geometry(lite), geometry(pg)
    columns = []
    for key, a in sorted(before.items()):
        b = after.get(key)
        same = b is not None and (a["type"].split()[0], a["srid"]) == (str(b["type"]).split()[0], b["srid"])
        extent_same = b is not None and (a["extent"] is None) == (b["extent"] is None) and all(
            abs(x - y) <= 1e-9 * max(1.0, abs(x)) for x, y in zip(a["extent"] or [], b["extent"] or []))
        columns.append({"table": a["table"], "column": a["column"], "sqlite": [a["type"], a["srid"]],
                        "postgis": [b["type"], b["srid"]] if b else None, "postgis_type": b["db_type"] if b else None,
                        "extent": a["extent"], "extent_same": extent_same, "same": same and extent_same})
    counts = {t.name.lower(): t.row_count for t in lite.tables}
    rows_same = all(counts.get(t.name.lower()) == t.row_count for t in pg.tables) and len(pg.tables) == len(lite.tables)
    gist = cluster.sql("SELECT count(*) FROM pg_indexes WHERE indexdef ILIKE '%USING gist%' "
                       "AND schemaname = 'public'", database=database)[0][0]
    return {"source": str(source), "load": report.as_dict(), "tables": len(pg.tables), "rows_same": rows_same,
            "geometry_columns": columns, "gist_indexes": int(gist), "read_seconds": round(read_s, 3),
            "extra_in_postgis": sorted(f"{t}.{c}" for t, c in set(after) - set(before)),
            "ok": rows_same and bool(columns) and all(c["same"] for c in columns)}


def _print_report(report: LoadReport) -> None:
    print(f"{report.source} -> {report.target}: {len(report.tables)} tables, {report.rows} rows "
          f"in {report.seconds:.2f} s (names {report.names})")
    print(f"  keys: {report.primary_keys} primary, {report.unique_constraints} unique; foreign keys: "
          f"{len(report.foreign_keys)} declared, {len(report.foreign_keys_not_valid)} NOT VALID, "
          f"{len(report.skipped_foreign_keys)} skipped")
    for f in report.fallbacks:
        print(f"  type: {f['table']}.{f['column']} declared {f['declared'] or '(none)'} -> {f['type']}: {f['reason']}")
    for k in report.skipped_keys:
        print(f"  skipped {k['kind']} {k['table']}({k['columns']}): {k['reason']}")
    for fk in report.foreign_keys_not_valid:
        print(f"  foreign key {fk}")
    for s in report.skipped_foreign_keys:
        print(f"  skipped foreign key {s['fk']}: {s['reason']}")
    for g in report.geometry:
        srid = g["srid"] if g["srid"] is not None else "none"
        print(f"  geometry {g['table']}.{g['column']}: {g['type']}, SRID {srid} ({g['stored_as']})")
    for note in report.notes:
        print(f"  note: {note}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.load_engine", description=__doc__.splitlines()[0],
                                epilog="Targets: postgresql://user[:password]@host[:port]/db, "
                                       "duckdb:///abs/path.duckdb")
    p.add_argument("sqlite_file", nargs="?", type=Path, help="the SQLite/SpatiaLite file to copy")
    p.add_argument("target_url", nargs="?", help="postgresql://... (an existing database) or duckdb:///new.duckdb")
    p.add_argument("--replace", action="store_true", help="drop the target's tables of the same names "
                                                          "(DuckDB: overwrite the file)")
    p.add_argument("--keep-case", action="store_true", help="keep SQLite's spelling of names in PostgreSQL "
                                                            "(default: lower case, as PostgreSQL folds unquoted names)")
    p.add_argument("--text-dates", action="store_true", help="keep DATE/DATETIME columns as text")
    p.add_argument("--spatial", action="store_true",
                   help="start a throwaway PostGIS server, load SQLITE_FILE (default: the spatial benchmark's "
                        "traffic database) and check its geometry columns read back")
    p.add_argument("--json", type=Path, help="write the report here")
    args = p.parse_args(argv)
    prog = "kgsql.lab.load_engine"
    try:
        if args.spatial:
            if args.target_url:
                raise InputError("--spatial loads into its own throwaway server; give no TARGET_URL")
            result = check_spatial(args.sqlite_file or DEFAULT_SPATIAL_FILE)
            _print_report(LoadReport(**{k: v for k, v in result["load"].items() if k != "rows"}))
            print(f"read back {result['tables']} tables in {result['read_seconds']:.2f} s; "
                  f"row counts {'match' if result['rows_same'] else 'DIFFER'}; {result['gist_indexes']} GiST indexes")
            for c in result["geometry_columns"]:
                print(f"  {c['table']}.{c['column']}: SQLite {c['sqlite'][0]}/{c['sqlite'][1]}  "
                      f"PostGIS {c['postgis_type']}, extent {'same' if c['extent_same'] else 'DIFFERENT'} "
                      f"-> {'same' if c['same'] else 'DIFFERENT'}")
            if result["extra_in_postgis"]:
                print(f"  geometry the SQLite reader does not see (values are geometries, type is not): "
                      f"{', '.join(result['extra_in_postgis'])}")
            print("spatial check: " + ("ok" if result["ok"] else "FAILED"))
            out: dict[str, Any] = result
            code = 0 if result["ok"] else 1
        else:
            if not args.sqlite_file or not args.target_url:
                raise InputError("give SQLITE_FILE and TARGET_URL (or --spatial)")
            report = load(args.sqlite_file, args.target_url, replace=args.replace,
                          keep_case=True if args.keep_case else None, text_dates=args.text_dates)
            _print_report(report)
            out, code = report.as_dict(), 0
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    except (KgsqlError, OSError) as exc:
        print(f"{prog}: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
