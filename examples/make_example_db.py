"""Build ``examples/geo/geo.sqlite``: a tiny SpatiaLite database for the quick start.

A made-up country of four provinces, a dozen cities and three rivers, with
real geometry (WGS84 polygons, points and lines), primary and foreign keys,
and a many-to-many bridge (``river_cities``) so join paths are interesting.
Run it again to rebuild the file from scratch; the output is deterministic.

    python examples/make_example_db.py [OUT]
"""
from __future__ import annotations

import sys
from pathlib import Path

from kgsql.db.connect import open_database

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "geo" / "geo.sqlite"

PROVINCES = [
    # id, name, capital city id, population, polygon corners (lon/lat)
    (1, "Northmark", 1, 1_250_000, [(10.0, 52.0), (12.0, 52.0), (12.0, 53.5), (10.0, 53.5)]),
    (2, "Eastvale", 4, 830_000, [(12.0, 51.0), (14.0, 51.0), (14.0, 53.5), (12.0, 53.5)]),
    (3, "Southreach", 7, 2_100_000, [(10.0, 50.0), (12.0, 50.0), (12.0, 52.0), (10.0, 52.0)]),
    (4, "Westmoor", 10, 410_000, [(8.0, 50.0), (10.0, 50.0), (10.0, 53.5), (8.0, 53.5)]),
]

CITIES = [
    # id, name, province id, population, is_capital, founded, lon, lat
    (1, "Harbourg", 1, 540_000, 1, 1188, 10.9, 53.1),
    (2, "Kestrel Bay", 1, 88_000, 0, 1420, 11.6, 53.3),
    (3, "Lindholm", 1, 61_500, 0, 1302, 10.4, 52.4),
    (4, "Oster", 2, 310_000, 1, 1241, 13.2, 52.6),
    (5, "Brenna", 2, 45_200, 0, 1517, 12.7, 51.4),
    (6, "Falkenrode", 2, 29_800, 0, 1650, 13.8, 53.2),
    (7, "Sudstadt", 3, 1_020_000, 1, 1090, 11.1, 51.2),
    (8, "Millbrook", 3, 132_000, 0, 1345, 10.5, 50.6),
    (9, "Cedar Falls", 3, 77_400, 0, 1799, 11.7, 50.3),
    (10, "Moorhaven", 4, 118_000, 1, 1275, 9.1, 52.0),
    (11, "Greywater", 4, 36_900, 0, 1466, 8.6, 50.9),
    (12, "Thornby", 4, 12_300, 0, 1702, 9.5, 53.2),
]

RIVERS = [
    # id, name, length_km, line vertices
    (1, "Silver River", 412.0, [(8.2, 52.2), (9.1, 52.0), (10.4, 52.4), (10.9, 53.1), (11.6, 53.45)]),
    (2, "Amber River", 268.5, [(13.9, 51.1), (12.7, 51.4), (11.1, 51.2), (10.5, 50.6)]),
    (3, "Little Fen", 96.0, [(11.7, 50.3), (11.2, 50.1), (10.6, 50.05)]),
]

RIVER_CITIES = [(1, 10), (1, 3), (1, 1), (1, 2), (2, 5), (2, 7), (2, 8), (3, 9)]

SCHEMA = """
CREATE TABLE provinces (
    province_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    capital_city_id INTEGER,
    population INTEGER
);
CREATE TABLE cities (
    city_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    province_id INTEGER NOT NULL REFERENCES provinces(province_id),
    population INTEGER,
    is_capital INTEGER,
    founded INTEGER
);
CREATE TABLE rivers (
    river_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    length_km REAL
);
CREATE TABLE river_cities (
    river_id INTEGER NOT NULL REFERENCES rivers(river_id),
    city_id INTEGER NOT NULL REFERENCES cities(city_id),
    PRIMARY KEY (river_id, city_id)
);
"""


def wkt_polygon(corners: list[tuple[float, float]]) -> str:
    ring = corners + corners[:1]
    return "POLYGON((" + ", ".join(f"{x} {y}" for x, y in ring) + "))"


def wkt_line(points: list[tuple[float, float]]) -> str:
    return "LINESTRING(" + ", ".join(f"{x} {y}" for x, y in points) + ")"


def build(out: Path = DEFAULT_OUT) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    tmp.touch()
    conn = open_database(tmp, read_only=False, spatial=True, check=False)
    try:
        conn.execute("SELECT InitSpatialMetadata(1, 'WGS84')")
        conn.executescript(SCHEMA)
        conn.execute("SELECT AddGeometryColumn('provinces', 'Shape', 4326, 'POLYGON', 'XY')")
        conn.execute("SELECT AddGeometryColumn('cities', 'Location', 4326, 'POINT', 'XY')")
        conn.execute("SELECT AddGeometryColumn('rivers', 'Shape', 4326, 'LINESTRING', 'XY')")
        for pid, name, capital, pop, corners in PROVINCES:
            conn.execute(
                "INSERT INTO provinces VALUES (?, ?, ?, ?, GeomFromText(?, 4326))",
                (pid, name, capital, pop, wkt_polygon(corners)),
            )
        for cid, name, pid, pop, cap, founded, lon, lat in CITIES:
            conn.execute(
                "INSERT INTO cities VALUES (?, ?, ?, ?, ?, ?, MakePoint(?, ?, 4326))",
                (cid, name, pid, pop, cap, founded, lon, lat),
            )
        for rid, name, length, points in RIVERS:
            conn.execute(
                "INSERT INTO rivers VALUES (?, ?, ?, GeomFromText(?, 4326))",
                (rid, name, length, wkt_line(points)),
            )
        conn.executemany("INSERT INTO river_cities VALUES (?, ?)", RIVER_CITIES)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    tmp.replace(out)
    return out


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
