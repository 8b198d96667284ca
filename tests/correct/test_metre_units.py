"""SpatiaLite measures of lon/lat geometry in metres (``ellipsoid_units``), and the units a geometry column's
note states (``measure_note``), on the shipped SpatiaLite example and on hand-made metadata (issue 29)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.units import ellipsoid_units
from kgsql.ingest.reader import read_database
from kgsql.schema.geometry_units import is_lon_lat, measure_note
from kgsql.schema.model import Column, SpatialInfo
from kgsql.sql.dialects import spatial_forms


@pytest.fixture
def geo(example_db: Path):  # type: ignore[no-untyped-def]
    with CheckContext(read_database(example_db), "How long is the Silver River in kilometres?") as ctx:
        yield ctx


@pytest.mark.parametrize("sql,metres", [
    ("SELECT GLength(Shape) / 1000 FROM rivers WHERE name = 'Silver River'",
     "SELECT GLength(Shape, 1) / 1000 FROM rivers WHERE name = 'Silver River'"),
    ("SELECT p.name FROM provinces AS p ORDER BY Area(p.Shape) DESC LIMIT 1",
     "SELECT p.name FROM provinces AS p ORDER BY Area(p.Shape, 1) DESC LIMIT 1"),
    ("SELECT Distance(a.Location, b.Location) FROM cities AS a, cities AS b WHERE a.city_id < b.city_id",
     "SELECT Distance(a.Location, b.Location, 1) FROM cities AS a CROSS JOIN cities AS b WHERE a.city_id < b.city_id"),
    # a scalar subquery's geometry is measured as the column it selects
    ("SELECT name FROM cities WHERE Distance(Location, (SELECT Shape FROM rivers WHERE name = 'Silver River')) < 5000",
     "SELECT name FROM cities WHERE Distance(Location, (SELECT Shape FROM rivers WHERE name = 'Silver River'), 1) "
     "< 5000"),
])
def test_lon_lat_measures_take_the_ellipsoid_argument(geo: CheckContext, sql: str, metres: str) -> None:
    assert ellipsoid_units(geo, sql) == metres


def test_the_metre_form_runs_and_is_in_metres(geo: CheckContext) -> None:
    degrees = geo.execute("SELECT GLength(Shape) FROM rivers ORDER BY river_id LIMIT 1").rows[0][0]
    rewritten = ellipsoid_units(geo, "SELECT GLength(Shape) FROM rivers ORDER BY river_id LIMIT 1")
    metres = geo.execute(rewritten).rows[0][0]
    assert 50_000 < metres / degrees < 200_000  # a degree is ~111 km


@pytest.mark.parametrize("sql", [
    "SELECT GLength(Shape, 1) FROM rivers",             # already in metres
    "SELECT GeodesicLength(Shape) FROM rivers",         # a metre function of its own
    "SELECT length_km FROM rivers",                     # no geometry
    "SELECT Distance(MakePoint(0, 0), MakePoint(1, 1))",  # not the database's geometry
    "SELECT Distance(Location, (SELECT Shape, name FROM rivers)) FROM cities",  # not one value: not a geometry
    "SELECT Distance(Location, (SELECT name FROM rivers LIMIT 1)) FROM cities",  # a subquery of no geometry
])
def test_left_alone(geo: CheckContext, sql: str) -> None:
    assert ellipsoid_units(geo, sql) is None


def test_not_on_other_engines(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    plain = read_database(make_sqlite("flat", "CREATE TABLE t (Shape BLOB); INSERT INTO t VALUES (NULL);"))
    with CheckContext(plain, "q") as ctx:
        assert ellipsoid_units(ctx, "SELECT GLength(Shape) FROM t") is None


@pytest.mark.parametrize("info,lon_lat", [
    (SpatialInfo("POINT", 4326), True), (SpatialInfo("POINT", 4490), True), (SpatialInfo("POINT", 32650), False),
    (SpatialInfo("POINT", None, [118.2, 31.2, 119.2, 32.6]), True),
    (SpatialInfo("POINT", None, [500000.0, 3.4e6, 700000.0, 3.6e6]), False), (SpatialInfo("POINT"), None),
])
def test_degrees_or_not_from_the_srid_or_the_extent(info: SpatialInfo, lon_lat: bool | None) -> None:
    assert is_lon_lat(info) is lon_lat


def test_the_note_says_the_units_and_the_measure_in_the_databases_dialect() -> None:
    line = Column("Shape", "MULTILINESTRING", spatial=SpatialInfo("MULTILINESTRING", 4326))
    lite, postgis = spatial_forms("sqlite"), spatial_forms("postgres")
    assert measure_note(line, lite) == "lon/lat degrees (SRID 4326); length in metres: GLength(Shape, 1)"
    assert measure_note(line, postgis) == "lon/lat degrees (SRID 4326); length in metres: ST_Length(Shape::geography)"
    area = Column("geom", "POLYGON", spatial=SpatialInfo("POLYGON", 32650))
    assert measure_note(area, lite).endswith("area: Area(geom)") and "projected" in measure_note(area, lite)
    point = Column("Location", "POINT", spatial=SpatialInfo("POINT", 4326))
    assert measure_note(point, postgis).endswith("distance in metres: ST_Distance(Location::geography, other::geography)")
    assert measure_note(Column("Shape", "BLOB", spatial=SpatialInfo("POINT")), lite) == ""  # units unknown
    assert measure_note(Column("name", "TEXT"), lite) == ""
    assert measure_note(line, spatial_forms("duckdb")) == "lon/lat degrees (SRID 4326)"  # no spatial flavour: units only
