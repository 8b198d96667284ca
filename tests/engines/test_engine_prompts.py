"""The default method on a PostGIS database: the prompt speaks PostGIS, tips name PostGIS functions.

A real PostGIS server and graph; the model is scripted. A SpatiaLite call
the model writes out of habit (``GLength(geom, 1)``) fails on PostGIS; the
tip names the PostGIS call, and the second query runs.
"""
from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from kgsql.lab.pg_cluster import TempCluster
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.text.encoder import HashEncoder
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.dialects import dialect_of, engine_of_dialect, expert_line, label, spatial_forms, sqlglot_name
from kgsql.sql.to_postgis import to_postgis


class WholeSchema:
    def select(self, schema, question, db_path=None):  # type: ignore[no-untyped-def]
        from kgsql.retrieve.selection import SchemaSelection

        return SchemaSelection(schema.name, question, tables=[t.name for t in schema.tables])


@pytest.mark.parametrize(("engine", "spatial", "dialect", "name", "reader"), [
    ("sqlite", False, "sqlite", "SQLite", "sqlite"), ("sqlite", True, "spatialite", "SpatiaLite", "sqlite"),
    ("postgres", False, "postgres", "PostgreSQL", "postgres"), ("postgres", True, "postgis", "PostGIS", "postgres"),
    ("duckdb", False, "duckdb", "DuckDB", "duckdb"),
])
def test_dialects(engine: str, spatial: bool, dialect: str, name: str, reader: str) -> None:
    schema = DatabaseSchema(name="x", dialect=engine, is_spatial=spatial)
    assert (dialect_of(schema), label(dialect), sqlglot_name(dialect)) == (dialect, name, reader)
    assert engine_of_dialect(dialect).name == engine  # the graph stores the dialect and reads the engine back
    assert (spatial_forms(dialect) is None) == (engine == "duckdb")  # no spatial flavour, no spatial forms
    assert expert_line("sqlite") == "You are an expert in SQLite and highly skilled in writing SQL queries."
    assert "PostgreSQL" in expert_line("postgis") and "DuckDB" in expert_line("duckdb")


@pytest.mark.parametrize(("spatialite", "postgis"), [
    ("SELECT GLength(r.geom, 1) FROM roads AS r", "SELECT ST_Length(CAST(r.geom AS GEOGRAPHY)) FROM roads AS r"),
    ("SELECT Area(geom) FROM parks", "SELECT ST_Area(geom) FROM parks"),
    ("SELECT a.name FROM a, b WHERE Within(a.g, b.g) = 1 AND Touches(a.g, b.g) = 0",
     "SELECT a.name FROM a CROSS JOIN b WHERE ST_Within(a.g, b.g) AND NOT ST_Touches(a.g, b.g)"),
    ("SELECT X(Centroid(g)) FROM t WHERE PtDistWithin(g, MakePoint(1, 2, 4326), 500)",
     "SELECT ST_X(ST_Centroid(g)) FROM t WHERE ST_DWithin(CAST(g AS GEOGRAPHY), "
     "CAST(ST_Point(1, 2, 4326) AS GEOGRAPHY), 500)"),
    ("SELECT Distance(a.g, b.g, 1) AS d FROM a, b ORDER BY d",
     "SELECT ST_Distance(CAST(a.g AS GEOGRAPHY), CAST(b.g AS GEOGRAPHY)) AS d FROM a CROSS JOIN b ORDER BY d NULLS FIRST"),
    # sqlglot reads CONTAINS as its own function; MbrMaxY is the bounding box's top (session 22's leftovers)
    ("SELECT a.name FROM a, b WHERE CONTAINS(a.g, b.g) = 1",
     "SELECT a.name FROM a CROSS JOIN b WHERE ST_Contains(a.g, b.g)"),
    ("SELECT name FROM t ORDER BY MbrMaxY(g) DESC, MbrMinX(g)",
     "SELECT name FROM t ORDER BY ST_YMax(g) DESC NULLS LAST, ST_XMin(g) NULLS FIRST"),
    ("not sql at all (", "not sql at all ("),
])
def test_spatialite_sql_rewritten_for_postgis(spatialite: str, postgis: str) -> None:
    assert to_postgis(spatialite) == postgis


def test_the_default_method_on_postgis(schema_graph, pg_cluster: TempCluster, unique_name) -> None:  # type: ignore[no-untyped-def]
    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    database = unique_name("roads")
    pg_cluster.create_database(database, postgis=True)
    pg_cluster.sql(
        'CREATE TABLE "Roads" (id INTEGER PRIMARY KEY, "Name" TEXT, geom geometry(LineString, 4326))',
        """INSERT INTO "Roads" VALUES (1, 'Ring 3', 'SRID=4326;LINESTRING(10 59, 10.2 59)'), """
        """(2, 'E6', 'SRID=4326;LINESTRING(10 59, 10 60)')""", database=database)
    reader = pg_cluster.create_reader(database, "roads_reader")  # generated SQL runs only as a SELECT-only role
    schema_graph.ingest(reader, name=database)
    habit = 'SELECT "Name" FROM "Roads" ORDER BY GLength(geom, 1) DESC LIMIT 1'
    fixed = 'SELECT "Name" FROM "Roads" ORDER BY ST_Length(geom::geography) DESC LIMIT 1'
    lm = ScriptedLM([habit, fixed])
    method = build("kgsql", schema_graph, lm, encoder=HashEncoder(), retriever=WholeSchema(), samples=0)
    answer = method.ask("Which road is the longest in kilometres?", db=database)
    first, second = lm.calls[0].prompt, lm.calls[1].prompt
    assert "PostgreSQL with the PostGIS extension" in first and "ST_Length" in first and "geography" in first
    assert 'CREATE TABLE "Roads"' in first and '"Name" text' in first  # quoted as PostgreSQL reads them
    assert "GLength" in second and "ST_Length" in second  # the tip names the PostGIS call
    assert answer.sql == fixed and answer.rows == [("E6",)] and answer.error is None


def _lonlat_schema() -> DatabaseSchema:
    from kgsql.schema.model import Column, SpatialInfo, Table

    roads = Table("roads", columns=[Column("name", "text"),
                                    Column("shape", "geometry(LineString,4326)", spatial=SpatialInfo("LINESTRING", 4326))])
    parks = Table("parks", columns=[Column("area_m2", "double precision"),
                                    Column("geom", "geometry(Polygon,3857)", spatial=SpatialInfo("POLYGON", 3857))])
    return DatabaseSchema("city", tables=[roads, parks], dialect="postgres", is_spatial=True)


@pytest.mark.parametrize(("sql", "fixed"), [
    ("SELECT name FROM roads ORDER BY ST_Length(shape) DESC",
     "SELECT name FROM roads ORDER BY ST_Length(CAST(shape AS GEOGRAPHY)) DESC"),
    ("SELECT ST_Distance(a.shape, ST_Centroid(b.shape)) FROM roads AS a, roads AS b",
     "SELECT ST_DISTANCE(CAST(a.shape AS GEOGRAPHY), CAST(ST_Centroid(b.shape) AS GEOGRAPHY)) "
     "FROM roads AS a, roads AS b"),
    ("SELECT name FROM roads AS a WHERE ST_DWithin(a.shape, a.shape, 500)",
     "SELECT name FROM roads AS a WHERE ST_DWithin(CAST(a.shape AS GEOGRAPHY), CAST(a.shape AS GEOGRAPHY), 500)"),
    ("SELECT name FROM roads WHERE ST_Distance(shape, (SELECT shape FROM roads WHERE name = 'A')) < 500",
     "SELECT name FROM roads WHERE ST_DISTANCE(CAST(shape AS GEOGRAPHY), "
     "CAST((SELECT shape FROM roads WHERE name = 'A') AS GEOGRAPHY)) < 500"),               # a scalar subquery's
    ("SELECT ST_Distance((SELECT shape FROM roads WHERE name = 'A')::geometry, shape) FROM roads",   # a place read
     "SELECT ST_DISTANCE(CAST(CAST((SELECT shape FROM roads WHERE name = 'A') AS GEOMETRY) AS GEOGRAPHY), "
     "CAST(shape AS GEOGRAPHY)) FROM roads"),                                         # as named_geometry writes it
    ("SELECT name FROM roads AS a WHERE ST_DWithin(a.shape, a.shape, 0.01)", None),   # degrees, as written
    ("SELECT name FROM roads AS a WHERE ST_DWithin(a.shape, a.shape, (1 * 1000))",  # "1 km" as distance_units
     "SELECT name FROM roads AS a WHERE ST_DWithin(CAST(a.shape AS GEOGRAPHY), CAST(a.shape AS GEOGRAPHY), "
     "(1 * 1000))"),                                                                   # writes it: metres
    ("SELECT ST_Length(shape::geography) FROM roads", None),                          # already metres
    ("SELECT ST_Area(geom) FROM parks", None),                                        # 3857 is in metres
    ("SELECT count(*) FROM roads", None),
    ("SELECT count(*) FROM parks AS p JOIN roads AS r ON ST_Intersects(p.geom, r.shape) = 1",
     "SELECT COUNT(*) FROM parks AS p JOIN roads AS r ON ST_Intersects(p.geom, r.shape)"),
    ("SELECT r.name FROM roads AS r JOIN parks AS p ON ST_Within(r.shape::geography, p.geom)",  # no geography form
     "SELECT r.name FROM roads AS r JOIN parks AS p ON ST_Within(r.shape, p.geom)"),
    ("SELECT name FROM roads ORDER BY ST_X(ST_Centroid(shape)::geography) DESC",
     "SELECT name FROM roads ORDER BY ST_X(ST_Centroid(shape)) DESC"),
    ("SELECT count(*) FROM parks AS p JOIN roads AS r ON ST_Intersects(p.geom::geography, r.shape::geography)",
     None),                                                                            # has one: as written
])
def test_lengths_of_lon_lat_geometry_come_in_metres(sql: str, fixed: str | None) -> None:
    from kgsql.correct.context import CheckContext
    from kgsql.correct.units import geography_units

    assert geography_units(CheckContext(_lonlat_schema(), path=""), sql) == fixed
    sqlite = replace(_lonlat_schema(), dialect="sqlite")
    assert geography_units(CheckContext(sqlite, path=""), sql) is None  # SpatiaLite: its own metre forms


def test_the_functions_given_no_geography_have_no_geography_form_in_postgis(pg_cluster: TempCluster) -> None:
    """``GEOMETRY_ONLY`` (the casts the rewrite drops) is what a real PostGIS says: none of them takes a
    geography argument, while the measures the rewrite casts do."""
    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    from kgsql.correct.units import GEOMETRY_ONLY

    database = f"geography_forms_{uuid.uuid4().hex[:8]}"
    pg_cluster.create_database(database, postgis=True)
    rows = pg_cluster.sql("SELECT DISTINCT lower(proname) FROM pg_proc "
                          "WHERE 'geography'::regtype::oid = ANY(proargtypes::oid[])", database=database)
    with_geography = {r[0] for r in rows}
    assert {"st_length", "st_area", "st_distance", "st_dwithin"} <= with_geography
    assert not GEOMETRY_ONLY & with_geography


def test_postgresql_errors_get_the_tips_of_what_went_wrong(pg_cluster: TempCluster) -> None:
    """PostgreSQL words two mistakes unlike SQLite: a qualifier no FROM item has is a "missing FROM-clause
    entry for table", and a function given the wrong types "does not exist". Their tips say what is wrong
    (join the table, or the alias meant; the types the function takes), not that the table does not exist
    or that PostGIS is not loaded."""
    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    from kgsql.correct import tips_from_error
    from kgsql.db.engines.postgres import PostgresEngine  # noqa: F401 - registers the engine
    from kgsql.db.guard import execute_query
    from kgsql.errors import KgsqlError
    from kgsql.ingest.reader import read_database

    database = f"tips_towns_{uuid.uuid4().hex[:8]}"
    pg_cluster.create_database(database, postgis=True)
    pg_cluster.sql("CREATE TABLE regions (name TEXT PRIMARY KEY, shape geometry(Polygon, 4326))",
                   "CREATE TABLE towns (name TEXT PRIMARY KEY, region TEXT REFERENCES regions(name), "
                   "location geometry(Point, 4326))", database=database)
    reader = pg_cluster.create_reader(database, "tips_reader")
    schema = read_database(reader)

    def tips(sql: str) -> list[str]:
        with pytest.raises(KgsqlError) as failed:
            execute_query(reader, sql)
        return [t.text for t in tips_from_error(failed.value, sql, schema)]

    assert tips("SELECT name FROM towns ORDER BY regions.name") == [
        "The table 'regions' is not in the FROM clause; join it before using 'regions.name'."]
    assert tips("SELECT town.name FROM towns")[0].startswith(
        "The table or alias 'town' is not defined in the query (defined: 'towns').")
    wrong_types = tips("SELECT t.name FROM towns AS t, regions AS r WHERE ST_Within(t.location::geography, r.shape)")
    assert wrong_types[0].startswith("The function 'st_within' does not take arguments of types (geography, "
                                     "geometry); ST_Within(g1 geometry, g2 geometry)")
    text = tips("SELECT name FROM towns WHERE ST_DWithin(location::geography, 'Lakeside', 1000)")
    assert "invalid geometry" in text[0] and "a place's name is no geometry" in text[1]
