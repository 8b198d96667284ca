"""Geometry values as GeoJSON (issue 34's maps): every form SpatiaLite and PostGIS results take, checked
against the database's own GeoJSON (``AsGeoJSON`` / ``ST_AsGeoJSON``) of the same geometry."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgsql.db.guard import execute_query
from kgsql.generate.chart import chart_spec
from kgsql.generate.geojson import readable, to_geojson

GEOMETRIES = [("cities", "Location"), ("rivers", "shape"), ("provinces", "shape")]
#: SpatiaLite SQL that turns a geometry into each form a result may hold
FORMS = ["{g}", "AsBinary({g})", "AsEWKB({g})", "AsText({g})", "AsEWKT({g})", "AsGeoJSON({g})",
         "CastToXYZ({g})", "AsBinary(CastToXYZM({g}))", "hex(AsBinary({g}))"]
#: geometries the example's tables do not hold, made by SpatiaLite
MADE = ["ST_Collect(Location)", "ST_Collect(shape)", "GeomFromText('MULTILINESTRING((1 2, 3 4), (5 6, 7 8))')",
        "GeomFromText('GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(1 2, 3 4))')",
        "GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 1))')"]


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    return execute_query(db, sql).rows


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("table", "column"), GEOMETRIES)
def test_every_form_of_every_example_geometry(example_db: Path, table: str, column: str, form: str) -> None:
    expression = form.format(g=column)
    found = rows(example_db, f"SELECT {expression}, AsGeoJSON({column}) FROM {table}")
    assert found
    for value, geojson in found:
        assert to_geojson(value) == json.loads(geojson), (expression, value)


@pytest.mark.parametrize("made", MADE)
@pytest.mark.parametrize("form", ["{g}", "AsBinary({g})", "AsText({g})"])
def test_multi_geometries_and_collections(example_db: Path, made: str, form: str) -> None:
    table = "provinces" if "shape" in made else "cities"
    [(value, geojson)] = rows(example_db, f"SELECT {form.format(g=made)}, AsGeoJSON({made}) FROM {table} LIMIT 1")
    assert to_geojson(value) == json.loads(geojson)


@pytest.mark.parametrize("value", [None, 3, 2.5, "", "Harbourg", "Point Reyes", "POINT", "POINT(1)", "0123",
                                   b"", b"\x00\x01\x02", "{}", '{"type": "Feature"}', "[1, 2]",
                                   "LINESTRING(1 2, 3 4", "00" * 30, bytes(60)])
def test_other_values_are_not_geometries(value: Any) -> None:
    assert to_geojson(value) is None


def test_a_geometry_reads_as_geojson_text_for_the_api(example_db: Path) -> None:
    [(blob, name)] = rows(example_db, "SELECT Location, name FROM cities WHERE city_id = 1")
    assert json.loads(readable(blob)) == {"type": "Point", "coordinates": [10.9, 53.1]}
    assert readable(name) == name and readable(7) == 7 and readable(b"\x01\x02") == b"\x01\x02"


@pytest.fixture(scope="module")
def postgis(pg_cluster: Any) -> str:
    """A PostGIS database with an area, a line and two points (the session's throwaway server)."""
    if not pg_cluster.postgis:
        pytest.skip(f"PostGIS is not installed for PostgreSQL {pg_cluster.bindir.parent.name}")
    pg_cluster.create_database("chart_shapes", postgis=True)
    pg_cluster.sql(
        "CREATE TABLE places (id int PRIMARY KEY, name text, shape geometry)",
        "INSERT INTO places VALUES "
        "(1, 'park', ST_GeomFromText('POLYGON((10 50, 11 50, 11 51, 10 51, 10 50))', 4326)), "
        "(2, 'river', ST_GeomFromText('LINESTRING(9.5 50.5, 10.5 50.6, 12.5 50.4)', 4326)), "
        "(3, 'town', ST_GeomFromText('POINT(10.5 50.5)', 4326)), "
        "(4, 'village', ST_GeomFromText('POINT Z (11.5 50.5 120)', 4326))",
        database="chart_shapes")
    return pg_cluster.create_reader("chart_shapes", "kg_chart_reader")  # kgsql runs SQL as a reader only


def test_postgis_results_are_read_and_mapped(postgis: str) -> None:
    result = execute_query(postgis, "SELECT name, shape, ST_AsGeoJSON(shape) FROM places ORDER BY id")
    for _name, shape, geojson in result.rows:
        expected = json.loads(geojson)
        expected["coordinates"] = expected["coordinates"][:2] if expected["type"] == "Point" else \
            expected["coordinates"]
        assert to_geojson(shape) == expected
    spec = chart_spec(result.columns[:2], [row[:2] for row in result.rows])
    assert spec is not None and spec["usermeta"]["kgsql"]["chart"] == "map"
    marks = sorted(layer["mark"]["type"] for layer in spec["layer"])
    assert marks == ["circle", "geoshape", "geoshape", "text"]
