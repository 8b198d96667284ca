"""Column types of a copy: SQLite's affinity and stored values -> one engine-neutral type.

Why: SQLite is dynamically typed, so a column's declared type says little
(``number``, ``bool``, ``""``, text in an INTEGER column). The target type
comes from the declared type's affinity *and* the values actually stored;
:class:`Logical` then spells it for PostgreSQL/PostGIS or DuckDB. A column
whose values do not fit its declared type falls back to text (or double for
fractions in an integer column), with the reason for the load report.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["GEOMETRY_NAMES", "Logical", "geometry_logical", "plan_type", "sqlite_affinity"]

#: SpatiaLite's geometry type names -> PostGIS's spelling.
GEOMETRY_NAMES: Final[dict[str, str]] = {
    "GEOMETRY": "Geometry", "POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon",
    "MULTIPOINT": "MultiPoint", "MULTILINESTRING": "MultiLineString", "MULTIPOLYGON": "MultiPolygon",
    "GEOMETRYCOLLECTION": "GeometryCollection",
}
_DIMS: Final[dict[str, str]] = {"": "", "XY": "", "Z": "Z", "XYZ": "Z", "M": "M", "XYM": "M", "ZM": "ZM", "XYZM": "ZM"}
_CHAR_TYPE = re.compile(r"^\s*(?:N?VAR)?N?CHAR(?:ACTER)?(?:\s+VARYING)?\s*\(\s*(\d+)\s*\)\s*$"
                        r"|^\s*(?:VARYING|NATIVE)\s+CHARACTER\s*\(\s*(\d+)\s*\)\s*$", re.I)
_DECIMAL_TYPE = re.compile(r"^\s*(?:DECIMAL|NUMERIC|DEC|NUMBER)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*$", re.I)
_DATE_TYPE = re.compile(r"^\s*(DATE|DATETIME|TIMESTAMP|TIME)\b", re.I)
_ISO = (("date", re.compile(r"^\d{4}-\d{2}-\d{2}$"), "%Y-%m-%d"),
        ("timestamp", re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"), "%Y-%m-%d %H:%M:%S"),
        ("time", re.compile(r"^\d{2}:\d{2}:\d{2}$"), "%H:%M:%S"))


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


def geometry_logical(registered: tuple[str, int | None] | None,
                     rows: list[tuple[Any, Any, Any]]) -> tuple[Logical, str]:
    """The PostGIS type of a geometry column: its values' single type and SRID, else the registered ones.

    ``registered`` is the column's :attr:`~kgsql.ingest.copy.source.SourceColumn.geometry` (passed in: the
    source module imports this one)."""
    def split(name: str) -> tuple[str, str]:
        parts = str(name).upper().split()
        base = re.sub(r"(Z|M|ZM)$", "", parts[0]) if parts[0] not in GEOMETRY_NAMES else parts[0]
        dims = _DIMS.get(parts[1] if len(parts) > 1 else parts[0][len(base):], "")
        return base, dims

    reg_type, reg_srid = registered or ("GEOMETRY", None)
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
    name = GEOMETRY_NAMES.get(base, "Geometry") + dims
    return Logical("geometry", geometry=name, srid=srid), note
