"""A geometry value from a result row as a GeoJSON geometry, so a chart can draw it on a map.

What a spatial query returns depends on the engine and on the SQL: a SpatiaLite
column comes back as SpatiaLite's own BLOB, ``AsBinary``/``ST_AsBinary`` as
WKB bytes, a PostGIS column (through psycopg) and SpatiaLite's ``AsEWKB`` as
hex (E)WKB text, ``AsText`` as WKT, ``AsGeoJSON`` as GeoJSON text. All of them
are read here, without SpatiaLite or any GIS library; anything else is None.
Z and M ordinates are dropped: a plain map draws x and y.
"""
from __future__ import annotations

import json
import re
import struct
from typing import Any

__all__ = ["to_geojson", "coordinates_of", "readable"]

Geometry = dict[str, Any]
KINDS = {1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString", 6: "MultiPolygon",
         7: "GeometryCollection"}
_BY_NAME = {name.upper(): name for name in KINDS.values()}
_HEX = re.compile(r"(?:00|01)[0-9a-fA-F]{40,}")
MAX_PARTS = 1_000_000  # a count in a blob larger than this is not a geometry (a corrupt or foreign blob)


def to_geojson(value: Any) -> Geometry | None:
    """The GeoJSON geometry ``value`` holds (bytes or text in any of the forms above), or None."""
    try:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _from_binary(bytes(value))
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("{"):
                return _from_json(text)
            if _HEX.fullmatch(text) and len(text) % 2 == 0:
                return _from_binary(bytes.fromhex(text))
            return _Wkt(text).geometry()
    except (ValueError, struct.error, IndexError, KeyError, TypeError, RecursionError):
        return None
    return None


def readable(value: Any) -> Any:
    """A binary or hex-WKB geometry as GeoJSON text (what a JSON reader can use); any other value as it is."""
    binary = isinstance(value, (bytes, bytearray, memoryview))
    if binary or (isinstance(value, str) and _HEX.fullmatch(value)):
        geometry = to_geojson(value)
        if geometry is not None:
            return json.dumps(geometry, separators=(",", ":"))
    return value


def coordinates_of(geometry: Geometry) -> list[list[float]]:
    """Every position of a GeoJSON geometry (for bounds and size checks)."""
    if geometry["type"] == "GeometryCollection":
        return [p for g in geometry["geometries"] for p in coordinates_of(g)]
    out: list[list[float]] = []

    def walk(item: Any) -> None:
        if item and isinstance(item[0], (int, float)):
            out.append(item)
        else:
            for inner in item:
                walk(inner)

    walk(geometry["coordinates"])
    return out


def _from_json(text: str) -> Geometry | None:
    data = json.loads(text)
    if isinstance(data, dict) and data.get("type") == "Feature":
        data = data.get("geometry")
    if not isinstance(data, dict) or data.get("type") not in KINDS.values():
        return None
    key = "geometries" if data["type"] == "GeometryCollection" else "coordinates"
    return {"type": data["type"], key: data[key]} if isinstance(data.get(key), list) else None


def _from_binary(blob: bytes) -> Geometry | None:
    """SpatiaLite's BLOB (0x00, byte order, SRID, MBR, 0x7C, ..., 0xFE) or (E)WKB."""
    if len(blob) > 43 and blob[0] == 0 and blob[1] in (0, 1) and blob[38] == 0x7C and blob[-1] == 0xFE:
        reader = _Binary(blob, 39, "<" if blob[1] == 1 else ">")
        geometry = reader.body(reader.kind())
        return geometry if reader.at == len(blob) - 1 else None
    if len(blob) >= 5 and blob[0] in (0, 1):
        reader = _Binary(blob, 0, "<")
        geometry = reader.wkb()
        return geometry if reader.at == len(blob) else None
    return None


class _Binary:
    """Reads WKB, EWKB and the body of a SpatiaLite BLOB (whose parts start with 0x69 instead of a byte order)."""

    def __init__(self, blob: bytes, at: int, order: str) -> None:
        self.blob, self.at, self.order = blob, at, order
        self.spatialite = at > 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from(self.order + fmt, self.blob, self.at)
        self.at += struct.calcsize(self.order + fmt)
        return values

    def count(self) -> int:
        (n,) = self.take("I")
        if n > MAX_PARTS:
            raise ValueError("not a geometry")
        return n

    def kind(self) -> tuple[int, int]:
        """(the base type 1..7, ordinates per position) from an ISO, EWKB or SpatiaLite type code."""
        (code,) = self.take("I")
        extra = bool(code & 0x80000000) + bool(code & 0x40000000)
        if code & 0x20000000:
            self.take("i")  # EWKB's SRID
        code &= 0x0FFFFFFF
        thousands, base = divmod(code, 1000)
        if base not in KINDS or thousands > 3:
            raise ValueError("not a geometry")
        return base, 2 + extra + {0: 0, 1: 1, 2: 1, 3: 2}[thousands]

    def wkb(self) -> Geometry:
        """One geometry with its own header: byte order (WKB) or the 0x69 entity mark (SpatiaLite)."""
        (mark,) = self.take("B")
        if self.spatialite:
            if mark != 0x69:
                raise ValueError("not a SpatiaLite entity")
        else:
            self.order = "<" if mark == 1 else ">"
        return self.body(self.kind())

    def body(self, kind: tuple[int, int]) -> Geometry:
        base, dims = kind
        name = KINDS[base]
        if base == 7:
            return {"type": name, "geometries": [self.wkb() for _ in range(self.count())]}
        if base >= 4:
            parts = [self.wkb()["coordinates"] for _ in range(self.count())]
            return {"type": name, "coordinates": parts}
        return {"type": name, "coordinates": self.coordinates(base, dims)}

    def coordinates(self, base: int, dims: int) -> Any:
        def position() -> list[float]:
            return list(self.take("d" * dims)[:2])

        def line() -> list[list[float]]:
            return [position() for _ in range(self.count())]

        if base == 1:
            return position()
        if base == 2:
            return line()
        return [line() for _ in range(self.count())]


class _Wkt:
    """A small recursive reader of WKT (and EWKT's ``SRID=n;`` prefix)."""

    TOKEN = re.compile(r"\s*([A-Za-z]+|\(|\)|,|[-+0-9.eE]+)")

    def __init__(self, text: str) -> None:
        text = re.sub(r"^SRID=\d+;", "", text, flags=re.I)
        self.tokens = self.TOKEN.findall(text)
        if "".join(self.tokens) != re.sub(r"\s+", "", text):
            raise ValueError("not WKT")
        self.at = 0

    def next(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def geometry(self) -> Geometry | None:
        geometry = self.tagged()
        return geometry if self.at == len(self.tokens) else None

    def tagged(self) -> Geometry | None:
        name = _BY_NAME.get(self.next().upper())
        if name is None:
            raise ValueError("not WKT")
        while self.peek().upper() in ("Z", "M", "ZM"):
            self.next()
        if self.peek().upper() == "EMPTY":
            self.next()
            return None
        if name == "GeometryCollection":
            parts = self.items(self.tagged)
            return {"type": name, "geometries": [g for g in parts if g]}
        depth = {"Point": 0, "LineString": 1, "Polygon": 2, "MultiPoint": 1, "MultiLineString": 2,
                 "MultiPolygon": 3}[name]
        coordinates = self.nested(depth)
        if name == "Point":
            coordinates = coordinates[0]
        return {"type": name, "coordinates": coordinates}

    def items(self, read: Any) -> list[Any]:
        if self.next() != "(":
            raise ValueError("not WKT")
        out = [read()]
        while self.peek() == ",":
            self.next()
            out.append(read())
        if self.next() != ")":
            raise ValueError("not WKT")
        return out

    def nested(self, depth: int) -> Any:
        """``depth`` 0: ``(x y)``; each level more: a parenthesised list (MULTIPOINT's points may lack them)."""
        if depth == 0 or (depth == 1 and self.tokens[self.at + 1] != "("):
            return self.items(self.position)
        return self.items(lambda: self.nested(depth - 1) if depth > 1 else self.nested(0)[0])

    def position(self) -> list[float]:
        values = []
        while self.peek() not in (",", ")", ""):
            values.append(float(self.next()))
        if len(values) < 2:
            raise ValueError("not WKT")
        return values[:2]
