"""The ``distance_units`` rewrite: a distance the question (or its evidence) states in kilometres or miles,
written as the bare number against a measure in metres, is written in metres before the query runs; on the
shipped SpatiaLite example, with the rows it then returns."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.loop import LoopOptions
from kgsql.correct.units import stated_distances_in_metres
from kgsql.ingest.reader import read_database

NEAR = "Which cities lie within 20 km of the Silver River?"
FROM = "SELECT c.name FROM cities AS c CROSS JOIN rivers AS r WHERE r.name = 'Silver River' AND "


@pytest.fixture(scope="module")
def schema(example_db: Path):  # type: ignore[no-untyped-def]
    return read_database(example_db)


@pytest.fixture
def near(schema) -> Iterator[CheckContext]:  # type: ignore[no-untyped-def]
    with CheckContext(schema, NEAR) as ctx:
        yield ctx


def test_a_bare_kilometre_bound_is_written_in_metres_and_finds_the_city_it_missed(near: CheckContext) -> None:
    model = FROM + "Distance(r.Shape, c.Location, 1) <= 20"  # the local 1.5B's bound (session 35)
    fixed = stated_distances_in_metres(near, model)
    assert fixed == FROM + "Distance(r.Shape, c.Location, 1) <= 20 * 1000"
    within = {r[0] for r in near.execute(FROM + "Distance(r.Shape, c.Location, 1) <= 20000").rows}
    assert {r[0] for r in near.execute(fixed).rows} == within
    assert within - {r[0] for r in near.execute(model).rows} == {"Kestrel Bay"}  # what 20 metres missed
    assert LoopOptions().distance_units  # on by default


@pytest.mark.parametrize("question,sql,fixed", [
    ("Which rivers are longer than 40 miles?", "SELECT name FROM rivers WHERE (GLength(Shape, 1)) > 40",
     "SELECT name FROM rivers WHERE (GLength(Shape, 1)) > 40 * 1609.344"),
    ("Which cities lie within one kilometer of the Silver River?", FROM + "PtDistWithin(c.Location, r.Shape, 1)",
     FROM + "PtDistWithin(c.Location, r.Shape, 1 * 1000)"),
    ("Which cities lie within 20 kilometres of the Silver River?", FROM + "20 >= Distance(r.Shape, c.Location, 1)",
     FROM + "20 * 1000 >= Distance(r.Shape, c.Location, 1)"),
])
def test_miles_radii_and_either_side(schema, question: str, sql: str,  # type: ignore[no-untyped-def]
                                     fixed: str) -> None:
    with CheckContext(schema, question) as ctx:
        assert stated_distances_in_metres(ctx, sql) == fixed
        assert ctx.execute(fixed).columns == ["name"]  # it runs


def test_a_distance_the_evidence_states_counts_too(schema) -> None:  # type: ignore[no-untyped-def]
    with CheckContext(schema, "Which cities does the Silver River serve?",
                      evidence="Cities within 20 kilometers are served.") as ctx:
        assert stated_distances_in_metres(ctx, FROM + "Distance(r.Shape, c.Location, 1) < 20") == \
            FROM + "Distance(r.Shape, c.Location, 1) < 20 * 1000"


@pytest.mark.parametrize("question,sql", [
    (NEAR, FROM + "Distance(r.Shape, c.Location, 1) <= 20 * 1000"),
    (NEAR, FROM + "Distance(r.Shape, c.Location, 1) <= 20000"),
    (NEAR, FROM + "Distance(r.Shape, c.Location, 1) / 1000 <= 20"),
    (NEAR, FROM + "Distance(r.Shape, c.Location, 1) <= 15"),  # not the number stated
    ("Which rivers are longer than 40 km?", "SELECT name FROM rivers WHERE length_km > 40"),  # a column in km
    ("Which cities lie within 20 metres of the Silver River?", FROM + "Distance(r.Shape, c.Location, 1) <= 20"),
])
def test_converted_bounds_metres_and_columns_are_left_alone(schema, question: str,  # type: ignore[no-untyped-def]
                                                           sql: str) -> None:
    with CheckContext(schema, question) as ctx:
        assert stated_distances_in_metres(ctx, sql) is None


def test_on_postgis_the_radius_in_metres_is_then_cast_to_geography() -> None:
    """"within 1 km" as ``ST_DWithin(shape, shape, 1)`` on lon/lat geometry: written ``1 * 1000`` first, which
    ``geography_units`` then measures in metres (a bare 1 it reads as one degree, and leaves)."""
    from kgsql.correct.loop import REWRITES
    from kgsql.schema.model import Column, DatabaseSchema, SpatialInfo, Table

    roads = Table("roads", columns=[Column("name", "text"), Column("shape", "geometry(LineString,4326)",
                                                                  spatial=SpatialInfo("LINESTRING", 4326))])
    schema = DatabaseSchema("city", tables=[roads], dialect="postgres", is_spatial=True)
    sql = "SELECT b.name FROM roads AS a, roads AS b WHERE a.name = 'A' AND ST_DWithin(a.shape, b.shape, 1)"
    with CheckContext(schema, "Which roads lie within 1 km of road A?", path="") as ctx:
        for switch, rewrite in REWRITES:
            if getattr(LoopOptions(), switch):
                sql = rewrite(ctx, sql) or sql
    assert sql.endswith("ST_DWithin(CAST(a.shape AS GEOGRAPHY), CAST(b.shape AS GEOGRAPHY), 1 * 1000)")


@pytest.mark.parametrize("text,within", [
    ("Cities within 150 kilometers are considered within the service range.", [(150.0, 1000.0)]),
    ("hotels within 500 meters of the bureau", [(500.0, 1.0)]),
    ("within a radius of 2 miles", [(2.0, 1609.344)]),
    ("within one kilometer of Guangzhou Road", [(1.0, 1000.0)]),
    ("within 5 minutes' walk", []),
    ("Which hotels lie within the district?", []),
])
def test_the_distances_a_text_asks_things_to_lie_within(text: str, within: list[tuple[float, float]]) -> None:
    from kgsql.sql.distance_units import within_distances

    assert [(s.value, s.metres) for s in within_distances(text)] == within
