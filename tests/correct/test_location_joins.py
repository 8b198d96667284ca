"""Location joins on the shipped SpatiaLite example: a join of two geometry tables that joins nothing gets
their location relation; a join that matches rows, or one a key makes, is kept."""
from __future__ import annotations

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.location_joins import location_joins
from kgsql.ingest.reader import read_database

NORTHMARK_RIVERS = [("Silver River",)]


@pytest.mark.parametrize("sql,rewritten", [
    # a tautology on the joined table: true for every pair
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON p.name = p.name WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    # a condition on the earlier table only
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.river_id = r.river_id WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    # look-alike names that match no pair of rows, either way round
    ("SELECT rivers.name FROM provinces JOIN rivers ON rivers.name = provinces.name WHERE provinces.name = 'Northmark'",
     "SELECT rivers.name FROM provinces JOIN rivers ON Intersects(rivers.Shape, provinces.Shape) = 1 "
     "WHERE provinces.name = 'Northmark'"),
])
def test_rewrites(geo_ctx: CheckContext, sql: str, rewritten: str) -> None:
    assert location_joins(geo_ctx, sql) == rewritten
    assert sorted(geo_ctx.execute(rewritten).rows) == NORTHMARK_RIVERS


@pytest.mark.parametrize("sql", [
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.river_id = p.province_id",   # matches rows: kept
    "SELECT c.name FROM cities AS c JOIN provinces AS p ON c.name = p.name",              # a key links them
    "SELECT c.name FROM cities AS c JOIN rivers AS r ON c.name = r.name",                 # points and lines: a distance
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1",  # already located
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.name = p.name AND p.population > 1",  # not one equality
    "SELECT r.name FROM rivers AS r, provinces AS p",                                     # no condition
])
def test_kept(geo_ctx: CheckContext, sql: str) -> None:
    assert location_joins(geo_ctx, sql) is None


def test_nothing_happens_without_geometry(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    path = make_sqlite("plain", "CREATE TABLE a (x TEXT); CREATE TABLE b (y TEXT);")
    with CheckContext(read_database(path), "q") as plain:
        assert location_joins(plain, "SELECT a.x FROM a JOIN b ON a.x = a.x") is None
