"""Charts for answers (issue 34): the Vega-Lite spec each result shape gets, on real query results.

The rows come from real files through kgsql's read-only guard: the shipped
SpatiaLite example (cities, rivers, provinces) and a small plain SQLite shop
with dates. Every spec is checked against Vega-Lite's own v5 JSON schema (from
the npm package the page draws with).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from kgsql.db.guard import execute_query
from kgsql.generate.chart import MAX_CHART_ROWS, SCHEMA, chart_spec, column_kinds

REPO = Path(__file__).resolve().parents[2]
VL_SCHEMA = REPO / "tools" / "web" / "node_modules" / "vega-lite" / "build" / "vega-lite-schema.json"

SHOP = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name TEXT, lon REAL, lat REAL);
CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(customer_id),
                     order_date TEXT, region TEXT, amount REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600)
INSERT INTO customers SELECT i, 'customer ' || i, 8 + (i % 60) / 10.0, 50 + (i % 35) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 90)
INSERT INTO orders SELECT i, 1 + i % 7, date('2024-01-01', '+' || (i % 30) || ' days'),
                          CASE i % 3 WHEN 0 THEN 'north' WHEN 1 THEN 'south' ELSE 'west' END, 10 + i * 1.5 FROM n;
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import sqlite3

    path = tmp_path_factory.mktemp("chart") / "shop.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(SHOP)
    conn.close()
    return path


def run(db: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    result = execute_query(db, sql)
    return result.columns, result.rows


def chart_of(db: Path, sql: str) -> dict[str, Any] | None:
    return chart_spec(*run(db, sql))


def kind(spec: dict[str, Any] | None) -> str | None:
    return spec["usermeta"]["kgsql"]["chart"] if spec else None


@pytest.fixture(scope="module")
def vega_lite_v5() -> Callable[[dict[str, Any]], None]:
    """Validate a spec against Vega-Lite's v5 JSON schema (shipped in the npm package the page uses)."""
    if not VL_SCHEMA.is_file():
        pytest.skip("tools/web/node_modules not installed (./run install runs npm ci)")
    import jsonschema

    schema = json.loads(VL_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return lambda spec: validator.validate(json.loads(json.dumps(spec)))


# ---------------------------------------------------------------------------- each shape


def test_a_category_and_a_number_are_bars(example_db: Path) -> None:
    columns, rows = run(example_db, "SELECT name, population FROM cities ORDER BY population DESC")
    spec = chart_spec(columns, rows)
    assert spec is not None and spec["$schema"] == SCHEMA and kind(spec) == "bar" and spec["mark"] == "bar"
    assert spec["encoding"]["y"] == {"field": "c0", "type": "nominal", "title": "name", "sort": "-x"}
    assert spec["encoding"]["x"] == {"field": "c1", "type": "quantitative", "title": "population"}
    assert spec["data"]["values"] == [{"c0": name, "c1": population} for name, population in rows]
    assert spec["usermeta"]["kgsql"] == {"chart": "bar", "rows": 12, "truncated": False}


def test_a_date_and_a_number_are_a_line(shop: Path) -> None:
    columns, rows = run(shop, "SELECT order_date, SUM(amount) AS total FROM orders GROUP BY order_date")
    spec = chart_spec(columns, rows)
    assert kind(spec) == "line" and spec is not None and spec["mark"] == {"type": "line", "point": True}
    assert spec["encoding"]["x"] == {"field": "c0", "type": "temporal", "title": "order_date"}
    assert spec["encoding"]["y"]["title"] == "total" and len(spec["data"]["values"]) == 30
    assert "color" not in spec["encoding"]


def test_a_date_a_category_and_a_number_are_a_line_per_category(shop: Path) -> None:
    spec = chart_of(shop, "SELECT order_date, region, SUM(amount) FROM orders GROUP BY 1, 2")
    assert kind(spec) == "line" and spec is not None
    assert spec["encoding"]["color"] == {"field": "c1", "type": "nominal", "title": "region"}


def test_a_year_and_a_number_are_a_line_over_years(example_db: Path) -> None:
    spec = chart_of(example_db, "SELECT founded AS founded_year, population FROM cities ORDER BY founded")
    assert kind(spec) == "line" and spec is not None and spec["encoding"]["x"]["type"] == "ordinal"


def test_two_numbers_are_a_scatter(example_db: Path) -> None:
    columns, rows = run(example_db, "SELECT founded, population FROM cities")
    spec = chart_spec(columns, rows)
    assert kind(spec) == "scatter" and spec is not None
    assert (spec["encoding"]["x"]["title"], spec["encoding"]["y"]["title"]) == ("founded", "population")
    assert [(v["c0"], v["c1"]) for v in spec["data"]["values"]] == rows


def layers(spec: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """A map's layers by what they draw: areas, lines, points, names."""
    assert spec is not None and kind(spec) == "map"
    out = {}
    for layer in spec["layer"]:
        mark = layer["mark"]
        out[{"circle": "points", "text": "names"}.get(mark["type"]) or
            ("areas" if mark.get("filled", True) else "lines")] = layer
    return out


def test_spatialite_points_are_points_on_a_map(example_db: Path) -> None:
    spec = chart_of(example_db, "SELECT name, Location FROM cities ORDER BY city_id")
    expected = run(example_db, "SELECT name, X(Location), Y(Location) FROM cities ORDER BY city_id")[1]
    drawn = layers(spec)
    assert set(drawn) == {"points", "names"} and spec["projection"] == {"type": "mercator"}  # type: ignore[index]
    assert [(p["c0"], p["lon"], p["lat"]) for p in drawn["points"]["data"]["values"]] == expected
    assert drawn["points"]["encoding"]["longitude"] == {"field": "lon", "type": "quantitative"}
    assert drawn["names"]["encoding"]["text"]["field"] == "c0"


def test_longitude_and_latitude_columns_are_points_on_a_map(shop: Path, example_db: Path) -> None:
    spec = chart_of(shop, "SELECT name, lon, lat FROM customers WHERE customer_id <= 20")
    points = layers(spec)["points"]["data"]["values"]
    assert len(points) == 20 and points[0] == {"lon": 8.1, "lat": 50.1, "c0": "customer 1"}
    assert kind(chart_of(example_db, "SELECT name, ST_X(Location), ST_Y(Location) FROM cities")) == "map"


def signed_area(ring: list[list[float]]) -> float:
    """Twice the ring's area, positive when it runs counter-clockwise (x east, y north)."""
    return sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(ring, ring[1:] + ring[:1]))


def test_holes_are_wound_against_their_outer_ring(example_db: Path) -> None:
    spec = chart_of(example_db, "SELECT 'park', GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), "
                                "(1 1, 1 2, 2 2, 2 1, 1 1))')")
    outer, hole = layers(spec)["areas"]["data"]["values"][0]["geometry"]["coordinates"]
    assert signed_area(outer) < 0 < signed_area(hole)


def test_spatialite_areas_and_lines_are_shapes_on_a_map(example_db: Path) -> None:
    spec = chart_of(example_db, "SELECT name, shape FROM provinces UNION ALL SELECT name, shape FROM rivers")
    drawn = layers(spec)
    assert set(drawn) == {"areas", "lines"}
    areas, lines = drawn["areas"]["data"]["values"], drawn["lines"]["data"]["values"]
    geojson = dict(run(example_db, "SELECT name, AsGeoJSON(shape) FROM provinces UNION ALL "
                                   "SELECT name, AsGeoJSON(shape) FROM rivers")[1])
    assert len(areas) == 4 and len(lines) == 3
    for feature in lines:
        assert feature["type"] == "Feature"
        assert feature["geometry"] == json.loads(geojson[feature["properties"]["c0"]])
    for feature in areas:  # the same ring, wound clockwise as Vega's (d3's) projections read an outer ring
        [ring] = feature["geometry"]["coordinates"]
        [stored] = json.loads(geojson[feature["properties"]["c0"]])["coordinates"]
        assert ring in (stored, stored[::-1]) and signed_area(ring) < 0
    assert drawn["areas"]["mark"]["type"] == "geoshape" and drawn["lines"]["mark"]["filled"] is False
    assert drawn["areas"]["encoding"]["tooltip"] == [{"field": "properties.c0", "type": "nominal", "title": "name"}]


def test_a_projected_srid_is_drawn_as_a_plane(example_db: Path) -> None:
    spec = chart_of(example_db, "SELECT name, Transform(shape, 32632) FROM provinces")
    assert layers(spec) and spec["projection"] == {"type": "identity", "reflectY": True}  # type: ignore[index]


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM cities",  # one value
    "SELECT name FROM cities",  # text only
    "SELECT name, population FROM cities WHERE city_id = 1",  # one bar is not a chart
    "SELECT name, population FROM cities WHERE city_id < 0",  # no rows
    "SELECT NULL, NULL FROM cities",  # nothing but NULL
])
def test_no_chart_where_none_fits(example_db: Path, sql: str) -> None:
    assert chart_of(example_db, sql) is None


def test_too_many_categories_are_left_to_the_table(shop: Path) -> None:
    assert chart_of(shop, "SELECT name, customer_id FROM customers WHERE customer_id <= 50") is not None
    assert chart_of(shop, "SELECT name, customer_id FROM customers WHERE customer_id <= 51") is None


def test_a_long_result_is_capped(shop: Path) -> None:
    columns, rows = run(shop, "SELECT lon, lat FROM customers")
    assert len(rows) == 600
    spec = chart_spec(columns, rows, truncated=False)
    assert spec is not None and len(layers(spec)["points"]["data"]["values"]) == MAX_CHART_ROWS
    assert spec["usermeta"]["kgsql"] == {"chart": "map", "rows": MAX_CHART_ROWS, "truncated": True}


def test_column_kinds(example_db: Path, shop: Path) -> None:
    assert column_kinds(*run(example_db, "SELECT cities.name, population, Location, AsText(shape), founded AS year, "
                                         "X(Location), Y(Location), NULL FROM cities, rivers")) == \
        ["category", "number", "geometry", "geometry", "year", "lon", "lat", "empty"]
    assert column_kinds(*run(shop, "SELECT order_date, datetime(order_date), lon, lat FROM orders, customers "
                                   "LIMIT 3")) == ["temporal", "temporal", "lon", "lat"]
    assert column_kinds(["d"], [("2024-01-01",)], ["DATE"]) == ["temporal"]


@pytest.mark.parametrize("sql", [
    "SELECT name, population FROM cities",
    "SELECT founded AS founded_year, population FROM cities",
    "SELECT founded, population FROM cities",
    "SELECT name, Location FROM cities",
    "SELECT name, shape FROM provinces UNION ALL SELECT name, shape FROM rivers",
    "SELECT name, Transform(shape, 32632) FROM provinces",
])
def test_every_spec_is_valid_vega_lite_v5(example_db: Path, sql: str, vega_lite_v5: Any) -> None:
    spec = chart_of(example_db, sql)
    assert spec is not None
    vega_lite_v5(spec)


def test_shop_specs_are_valid_vega_lite_v5(shop: Path, vega_lite_v5: Any) -> None:
    for sql in ("SELECT order_date, region, SUM(amount) FROM orders GROUP BY 1, 2",
                "SELECT name, lon, lat FROM customers"):
        spec = chart_of(shop, sql)
        assert spec is not None
        vega_lite_v5(spec)
