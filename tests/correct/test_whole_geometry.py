"""A place stored as several rows read whole (``whole_geometries``), on a copy of the shipped SpatiaLite example
whose Amber River is given a second segment, as roads and rivers are stored in real spatial databases."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.whole_geometry import whole_geometries
from kgsql.db.connect import open_database
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
