"""A place name compared with a column that never holds it, read from the geometry table that does, joined by
location (``locate_values``), on the shipped SpatiaLite example."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.located_values import locate_values
from kgsql.ingest.reader import read_database
from kgsql.schema.model import DatabaseSchema


@pytest.fixture
def geo(dbs: dict[str, tuple[Path, DatabaseSchema]]):  # type: ignore[no-untyped-def]
    path, schema = dbs["geo"]
    with CheckContext(schema, "q", path=str(path)) as ctx:
        yield ctx


@pytest.mark.parametrize("sql,located,rows", [
    # a city's name asked of the provinces: the province the city lies in
    ("SELECT name FROM provinces WHERE name = 'Oster'",
     "SELECT provinces.name FROM provinces JOIN cities ON Within(cities.Location, provinces.Shape) = 1 "
     "WHERE cities.name = 'Oster'", [("Eastvale",)]),
    # a river's name: the provinces it crosses
    ("SELECT p.name FROM provinces AS p WHERE p.name = 'Silver River'",
     "SELECT p.name FROM provinces AS p JOIN rivers ON Intersects(rivers.Shape, p.Shape) = 1 "
     "WHERE rivers.name = 'Silver River'", [("Northmark",), ("Westmoor",)]),
    # a province's name asked of the cities: the cities inside it
    ("SELECT COUNT(*) FROM cities WHERE name = 'Northmark'",
     "SELECT COUNT(*) FROM cities JOIN provinces ON Within(cities.Location, provinces.Shape) = 1 "
     "WHERE provinces.name = 'Northmark'", [(3,)]),
])
def test_the_name_is_read_where_it_lives(geo: CheckContext, sql: str, located: str, rows: list[tuple]) -> None:
    assert geo.execute(sql).rows in ([], [(0,)])  # as written: nothing
    assert locate_values(geo, sql) == located
    assert sorted(geo.execute(located).rows) == rows


@pytest.mark.parametrize("sql", [
    "SELECT name FROM provinces WHERE name = 'Eastvale'",        # found where it is compared
    "SELECT name FROM provinces WHERE name = 'Nowhere'",         # held nowhere
    "SELECT c.name FROM cities AS c JOIN provinces AS p ON c.province_id = p.province_id "
    "WHERE c.name = 'Northmark'",                                # the holder is already joined
])
def test_left_alone(geo: CheckContext, sql: str) -> None:
    assert locate_values(geo, sql) is None


def test_nothing_happens_without_geometry(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    path = make_sqlite("plain", "CREATE TABLE a (x TEXT); CREATE TABLE b (y TEXT); INSERT INTO b VALUES ('v');")
    with CheckContext(read_database(path), "q", path=str(path)) as plain:
        assert locate_values(plain, "SELECT x FROM a WHERE x = 'v'") is None
