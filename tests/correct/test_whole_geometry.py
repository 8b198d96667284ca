"""A place stored as several rows read whole (``whole_geometries``), on a copy of the shipped SpatiaLite example
whose Amber River is given a second segment, as roads and rivers are stored in real spatial databases."""
from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.whole_geometry import whole_geometries
from kgsql.db.connect import open_database
from kgsql.errors import KgsqlError
from kgsql.ingest.reader import read_database
from kgsql.schema.model import DatabaseSchema

NEAR = ("SELECT name FROM cities WHERE Distance(Location, (SELECT Shape FROM rivers WHERE name = '{river}'), 1) "
        "< 20000")


@pytest.fixture(scope="module")
def segmented(example_db: Path, tmp_path_factory: pytest.TempPathFactory) -> DatabaseSchema:
    path = tmp_path_factory.mktemp("segmented") / "geo.sqlite"
    shutil.copy(example_db, path)
    conn = open_database(path, read_only=False)
    try:
        conn.execute("INSERT INTO rivers (river_id, name, length_km, Shape) VALUES "
                     "(4, 'Amber River', 80, GeomFromText('LINESTRING(13.5 52.5, 13.8 53.2)', 4326))")
        conn.commit()
    finally:
        conn.close()
    return read_database(path)


def _rewrite(schema: DatabaseSchema, sql: str) -> str | None:
    with CheckContext(schema, "Which cities lie within 20 km of the river?") as ctx:
        return whole_geometries(ctx, sql)


def _names(schema: DatabaseSchema, sql: str) -> set[str]:
    with CheckContext(schema, "q") as ctx:
        return {row[0] for row in ctx.execute(sql).rows}


def test_a_place_of_several_rows_is_read_as_their_union(segmented: DatabaseSchema) -> None:
    written = NEAR.format(river="Amber River")
    widened = _rewrite(segmented, written)
    assert widened == written.replace("SELECT Shape FROM rivers", "SELECT GUnion(Shape) FROM rivers")
    joined = ("SELECT DISTINCT c.name FROM cities AS c JOIN rivers AS r ON Distance(c.Location, r.Shape, 1) < 20000 "
              "WHERE r.name = 'Amber River'")  # what the question means: near any part of the river
    assert _names(segmented, widened) == _names(segmented, joined)
    assert "Falkenrode" in _names(segmented, widened) - _names(segmented, written)  # beside the second segment


@pytest.mark.parametrize("sql", [
    NEAR.format(river="Silver River"),                                                        # one row: as it is
    "SELECT name FROM cities WHERE Distance(Location, (SELECT Shape FROM rivers WHERE name = 'Amber River' "
    "LIMIT 1), 1) < 20000",                                                                   # one row asked for
    "SELECT name FROM cities WHERE population > (SELECT population FROM cities WHERE name = 'Oster')",  # no geometry
    "SELECT GLength((SELECT GUnion(Shape) FROM rivers WHERE name = 'Amber River'), 1)",      # already whole
])
def test_left_alone(segmented: DatabaseSchema, sql: str) -> None:
    assert _rewrite(segmented, sql) is None


def test_a_plain_sqlite_database_is_left_alone(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    with CheckContext(dbs["school"][1], "q") as ctx:
        assert whole_geometries(ctx, "SELECT name FROM students WHERE class_id = (SELECT class_id FROM classes)") is None


@pytest.fixture(scope="module")
def pg_rivers(pg_cluster) -> str:  # type: ignore[no-untyped-def]
    """A throwaway PostGIS database of a river stored as two segments and a town near each: a reader's URL."""
    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    from kgsql.db.engines.postgres import PostgresEngine  # noqa: F401 - registers the engine

    database = f"rivers_{uuid.uuid4().hex[:8]}"
    pg_cluster.create_database(database, postgis=True)
    pg_cluster.sql(
        "CREATE TABLE rivers (id INTEGER PRIMARY KEY, name TEXT, shape geometry(LineString, 4326))",
        "CREATE TABLE towns (id INTEGER PRIMARY KEY, name TEXT, location geometry(Point, 4326))",
        "INSERT INTO rivers VALUES (1, 'Amber', 'SRID=4326;LINESTRING(10 50, 10.5 50)'), "
        "(2, 'Amber', 'SRID=4326;LINESTRING(12 51, 12.5 51)')",
        "INSERT INTO towns VALUES (1, 'West', 'SRID=4326;POINT(10.2 50.01)'), (2, 'East', 'SRID=4326;POINT(12.2 51.01)')",
        database=database)
    return pg_cluster.create_reader(database, "rivers_reader")


def test_postgis_reads_the_union_too(pg_rivers: str) -> None:
    """The same rewrite in PostGIS's words (ST_Union), on a throwaway PostGIS database, where the query as
    written does not even run."""
    schema = read_database(pg_rivers)
    written = ("SELECT name FROM towns WHERE ST_DWithin(location::geography, "
               "(SELECT shape FROM rivers WHERE name = 'Amber')::geography, 5000)")
    with CheckContext(schema, "Which towns lie within 5 km of the Amber?", path=pg_rivers) as ctx:
        widened = whole_geometries(ctx, written)
        assert widened is not None and "SELECT ST_Union(shape) FROM rivers" in widened
        assert {r[0] for r in ctx.execute(widened).rows} == {"West", "East"}
        with pytest.raises(KgsqlError, match="more than one row"):  # PostgreSQL refuses what SQLite cuts short
            ctx.execute(written)


def test_postgis_a_name_cast_to_a_geometry_is_read_as_the_place(pg_rivers: str) -> None:
    """``'Amber'::geometry`` is PostGIS's form of a name where a geometry belongs ("invalid geometry"): the
    name inside the cast is read as the river's rows, unioned, and the cast stays."""
    from kgsql.correct.whole_geometry import named_geometries

    schema = read_database(pg_rivers)
    written = ("SELECT name, ST_Distance(location::geography, 'Amber'::geometry) AS d FROM towns "
               "ORDER BY d LIMIT 1")
    with CheckContext(schema, "Which town is closest to the Amber, and how far is it?", path=pg_rivers) as ctx:
        with pytest.raises(KgsqlError, match="invalid geometry"):
            ctx.execute(written)
        read = named_geometries(ctx, written)
        place = "CAST((SELECT ST_Union(shape) FROM rivers WHERE name = 'Amber') AS GEOMETRY)"
        assert read is not None and place in read
        rows = ctx.execute(read).rows
        assert rows[0][0] == "West" and 1000 < rows[0][1] < 1200  # 0.01 degree of latitude: about 1.1 km
        assert named_geometries(ctx, "SELECT ST_Distance(location, 'Nowhere'::geometry) FROM towns") is None
        both = named_geometries(ctx, "SELECT ST_Distance('West'::geography, 'East'::geography)")  # no column
        assert both is not None and "SELECT ST_Union(location) FROM towns WHERE name = 'East'" in both
        assert 170_000 < ctx.execute(both).rows[0][0] < 190_000  # (10.2, 50.01) to (12.2, 51.01): ~180 km


def test_a_place_name_where_a_geometry_belongs_is_read_as_the_place(segmented: DatabaseSchema) -> None:
    """``Distance(Location, 'Amber River')`` measures from no geometry; the river's rows, unioned, are meant."""
    from kgsql.correct.whole_geometry import named_geometries

    written = "SELECT name FROM cities WHERE Distance(Location, 'Amber River', 1) < 20000"
    with CheckContext(segmented, "Which cities lie within 20 km of the Amber River?") as ctx:
        read = named_geometries(ctx, written)
        assert read == ("SELECT name FROM cities WHERE Distance(Location, (SELECT GUnion(Shape) FROM rivers "
                        "WHERE name = 'Amber River'), 1) < 20000")
        assert named_geometries(ctx, "SELECT name FROM cities WHERE name = 'Amber River'") is None  # no geometry
        assert named_geometries(ctx, "SELECT Distance(Location, 'Nowhere', 1) FROM cities") is None  # no holder
        # text work on a column that shares a geometry column's name is no place: only spatial calls are read
        assert named_geometries(ctx, "SELECT name FROM cities WHERE instr(Location, 'Amber River') > 0") is None
    with CheckContext(segmented, "Which cities lie within 20 km of the Amber River?", path="") as blind:
        assert named_geometries(blind, written) is None  # a probe that cannot run finds no place to read
    assert "Falkenrode" in _names(segmented, read)
