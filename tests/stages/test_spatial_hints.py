"""Spatial hints: how geometry tables without a shared key relate by location, from their geometry types."""
from __future__ import annotations

from pathlib import Path

from kgsql.db.guard import execute_query
from kgsql.generate.answer import Answer
from kgsql.generate.spatial_relations import relations_between, spatial_relation
from kgsql.ingest.reader import read_database
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, SpatialInfo, Table
from kgsql.stages.hints import GraphHints, spatial_lines
from kgsql.stages.state import QuestionState


def _table(name: str, geometry: str, srid: int | None = 4326, column: str = "Shape") -> Table:
    return Table(name, [Column("id", "INTEGER", is_primary_key=True), Column("name", "TEXT"),
                        Column(column, geometry, spatial=SpatialInfo(geometry, srid))])


AIRPORTS = _table("airports", "POINT", column="Location")
STATIONS = _table("stations", "POINT", column="Location")
CITIES = _table("cities", "MULTIPOLYGON")
SUBWAYS = _table("subways", "LINESTRING")
PLAIN = Table("tours", [Column("city", "TEXT"), Column("year", "INTEGER")])


def test_the_predicate_follows_the_geometry_types_either_way_round() -> None:
    inside = spatial_relation(CITIES, AIRPORTS)
    assert inside is not None and inside.sentence() == \
        "airports inside cities: Within(airports.Location, cities.Shape) = 1"
    assert spatial_relation(SUBWAYS, CITIES).sentence() == "subways crossing cities: Intersects(subways.Shape, cities.Shape) = 1"  # type: ignore[union-attr]
    assert spatial_relation(CITIES, CITIES).condition == "Intersects(cities.Shape, cities.Shape) = 1"  # type: ignore[union-attr]
    near = spatial_relation(AIRPORTS, STATIONS)
    assert near is not None and near.measured and near.sentence() == \
        "distance between airports and stations: Distance(airports.Location, stations.Location, 1)"
    assert spatial_relation(AIRPORTS, PLAIN) is None


def test_units_and_dialect_come_from_the_srid_and_the_engine() -> None:
    projected = _table("wells", "POINT", srid=32633)
    assert spatial_relation(projected, STATIONS).condition == "Distance(wells.Shape, stations.Location)"  # type: ignore[union-attr]
    assert spatial_relation(AIRPORTS, STATIONS, "postgres").condition == \
        "ST_Distance(airports.Location::geography, stations.Location::geography)"  # type: ignore[union-attr]
    assert spatial_relation(AIRPORTS, CITIES, "postgres").condition == "ST_Within(airports.Location, cities.Shape)"  # type: ignore[union-attr]


def test_tables_joined_by_a_key_get_no_spatial_line() -> None:
    schema = DatabaseSchema("t", [AIRPORTS, CITIES, SUBWAYS, PLAIN],
                            foreign_keys=[ForeignKey("airports", "id", "cities", "id")])
    assert [(r.a, r.b) for r in relations_between(schema, ["airports", "cities", "subways", "tours"])] == \
        [("airports", "subways"), ("subways", "cities")]
    assert spatial_lines(schema, ["tours", "cities"]) == []
    assert spatial_lines(schema, ["cities", "subways"]) == [
        "If the query relates these tables by location: subways crossing cities: Intersects(subways.Shape, cities.Shape) = 1."]


def test_every_line_runs_on_the_shipped_spatial_database(example_db: Path) -> None:
    """The conditions are real SpatiaLite on a real file: each joins rows of the example database."""
    schema = read_database(example_db)
    schema.foreign_keys = []
    relations = relations_between(schema, [t.name for t in schema.tables], limit=10)
    assert {(r.a, r.b) for r in relations} == {("cities", "provinces"), ("cities", "rivers"), ("rivers", "provinces")}
    for r in relations:
        where = f"{r.condition} < 50000" if r.measured else r.condition
        result = execute_query(example_db, f"SELECT count(*) FROM {r.a}, {r.b} WHERE {where}")
        assert result.rows[0][0] > 0, r


def test_the_stage_writes_the_line_only_when_switched_on(example_db: Path) -> None:
    schema = read_database(example_db)
    schema.foreign_keys = []
    question = "Which rivers flow through Bavaria?"
    for on in (False, True):
        state = QuestionState(question, "geo", schema, Answer(question, "geo"), focus_tables=["rivers", "provinces"])
        GraphHints(values=False, joins=False, meanings=False, spatial=on).run(state)
        assert state.hints == ([
            "If the query relates these tables by location: rivers crossing provinces: "
            "Intersects(rivers.Shape, provinces.Shape) = 1."] if on else [])


def test_distances_only_when_asked_and_the_named_values_tables_first() -> None:
    from kgsql.retrieve.values import ValueMatch

    schema = DatabaseSchema("t", [AIRPORTS, STATIONS, SUBWAYS, PLAIN, CITIES])
    tables = ["airports", "stations", "subways", "tours", "cities"]
    assert "Distance" not in " ".join(spatial_lines(schema, tables, "Which airports serve the most passengers?"))
    near = spatial_lines(schema, tables, "Which stations are within 5 km of an airport?")
    assert "distance between airports and stations: Distance(airports.Location, stations.Location, 1)" in near[0]
    beijing = [ValueMatch("cities", "name", "北京市", 1.0, "romanised")]
    line = spatial_lines(schema, ["airports", "stations", "subways", "tours"], "What airports are there in Beijing?", beijing)
    assert line == ["If the query relates these tables by location: airports inside cities: "
                    "Within(airports.Location, cities.Shape) = 1; stations inside cities: "
                    "Within(stations.Location, cities.Shape) = 1; subways crossing cities: "
                    "Intersects(subways.Shape, cities.Shape) = 1."]


def test_key_join_hints_only_where_asked_on_a_spatial_database() -> None:
    # on a database with geometry a key join lured answers about other tables; off there unless asked
    keyed = [ForeignKey("airports", "id", "cities", "id")]
    spatial = DatabaseSchema("t", [AIRPORTS, CITIES], foreign_keys=keyed, is_spatial=True)
    plain = DatabaseSchema("p", [Table("airports", [Column("id", "INTEGER")]), Table("cities", [Column("id", "INTEGER")])],
                           foreign_keys=keyed)
    line = "If the query needs several of these tables, join them on airports.id = cities.id."
    for schema, spatial_joins, expected in ((spatial, False, []), (spatial, True, [line]), (plain, False, [line])):
        state = QuestionState("Which airports?", schema.name, schema, Answer("Which airports?", schema.name),
                              focus_tables=["airports", "cities"])
        GraphHints(values=False, meanings=False, spatial_joins=spatial_joins).run(state)
        assert state.hints == expected, (schema.name, spatial_joins)
