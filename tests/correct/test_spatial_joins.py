"""Spatial join repair on the shipped SpatiaLite example: columns of the table a row lies in, joined by location."""
from __future__ import annotations

import pytest
from fixed_model import FixedQuery

from kgsql.correct import CheckContext
from kgsql.correct.loop import REPAIRS, CorrectionLoop, LoopOptions
from kgsql.correct.spatial_joins import repair_spatial_joins
from kgsql.ingest.reader import read_database
from kgsql.llm.trace import Trace


@pytest.mark.parametrize("sql,repaired,rows", [
    # a column named after a table of polygons: that table's name, joined by location (rivers cross provinces)
    ("SELECT name FROM rivers WHERE province = 'Southreach'",
     "SELECT rivers.name FROM rivers JOIN provinces ON Intersects(rivers.Shape, provinces.Shape) = 1 "
     "WHERE provinces.name = 'Southreach'",
     [("Amber River",), ("Little Fen",)]),
    # a column only a related table has, under an alias
    ("SELECT T1.name FROM rivers AS T1 WHERE T1.population > 2000000",
     "SELECT T1.name FROM rivers AS T1 JOIN provinces ON Intersects(T1.Shape, provinces.Shape) = 1 "
     "WHERE provinces.population > 2000000",
     [("Amber River",), ("Little Fen",)]),
    # a table the query names but never put in FROM: joined under its name by location
    ("SELECT name FROM rivers WHERE provinces.name = 'Southreach'",
     "SELECT rivers.name FROM rivers JOIN provinces ON Intersects(rivers.Shape, provinces.Shape) = 1 "
     "WHERE provinces.name = 'Southreach'",
     [("Amber River",), ("Little Fen",)]),
    # every geometry called Shape: the table's own geometry column (cities store Location)
    ("SELECT name FROM cities WHERE Within(Shape, (SELECT Shape FROM provinces WHERE name = 'Eastvale')) = 1",
     "SELECT name FROM cities WHERE Within(Location, (SELECT Shape FROM provinces WHERE name = 'Eastvale')) = 1",
     None),
    ("SELECT c.name FROM cities AS c JOIN provinces AS p ON Within(c.Shape, p.Shape) = 1 WHERE p.name = 'Eastvale'",
     "SELECT c.name FROM cities AS c JOIN provinces AS p ON Within(c.Location, p.Shape) = 1 "
     "WHERE p.name = 'Eastvale'",
     None),
    # a length the table of lines does not store: measured, in metres on lon/lat data
    ("SELECT name, length FROM rivers ORDER BY length DESC LIMIT 1",
     "SELECT name, GLength(Shape, 1) FROM rivers ORDER BY GLength(Shape, 1) DESC LIMIT 1",
     [("Silver River", pytest.approx(298_000, rel=0.2))]),
    ("SELECT p.name FROM provinces AS p ORDER BY p.area DESC LIMIT 1",
     "SELECT p.name FROM provinces AS p ORDER BY Area(p.Shape, 1) DESC LIMIT 1",
     [("Westmoor",)]),
])
def test_repairs(geo_ctx: CheckContext, sql: str, repaired: str, rows: list[tuple[object, ...]] | None) -> None:
    assert repair_spatial_joins(geo_ctx, sql) == repaired
    result = geo_ctx.execute(repaired)  # and it runs
    if rows is not None:
        assert sorted(result.rows) == rows


def test_the_relation_is_the_database_s_own(geo_ctx: CheckContext) -> None:
    """The repaired query answers as the hand-written spatial join does."""
    repaired = repair_spatial_joins(geo_ctx, "SELECT name FROM rivers WHERE province = 'Northmark'")
    assert repaired is not None
    by_hand = geo_ctx.execute("SELECT r.name FROM rivers r, provinces p WHERE p.name = 'Northmark' "
                          "AND Intersects(r.Shape, p.Shape) = 1")
    assert sorted(geo_ctx.execute(repaired).rows) == sorted(by_hand.rows) == [("Silver River",)]


@pytest.mark.parametrize("sql", [
    "SELECT name FROM rivers",                                        # nothing wrong
    "SELECT name FROM cities WHERE capital_city_id = 1",              # cities and provinces share a key: FK repair's
    "SELECT name FROM rivers WHERE city = 'x'",                       # cities are points: a distance, not a place
    "SELECT name FROM rivers WHERE cities.name = 'x'",                # ... named but not in FROM: the same
    "SELECT name FROM rivers AS r WHERE EXISTS (SELECT 1 FROM provinces WHERE r.name = provinces.name)",
    "SELECT name FROM rivers WHERE nope = 1",                         # no owner anywhere
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON 1 = 1 WHERE Shape IS NULL",  # Shape: whose? ambiguous
    "SELECT name FROM provinces WHERE EXISTS (SELECT 1 FROM cities WHERE Within(cities.Location, Shape) = 1)",
    "SELEC name FROM rivers",                                         # does not parse
    "SELECT GLength(Shape, 1) AS length FROM rivers ORDER BY length",  # an output's name
    "SELECT name FROM cities ORDER BY length",                        # points have no length
    "SELECT name FROM rivers ORDER BY area",                          # lines have no area
])
def test_left_alone(geo_ctx: CheckContext, sql: str) -> None:
    assert repair_spatial_joins(geo_ctx, sql) is None


def test_nothing_happens_on_a_database_without_geometry(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    path = make_sqlite("plain", "CREATE TABLE t (name TEXT); CREATE TABLE districts (name TEXT);")
    with CheckContext(read_database(path), "q") as plain:
        assert repair_spatial_joins(plain, "SELECT name FROM t WHERE district = 'x'") is None


@pytest.mark.parametrize("on", [True, False])
def test_the_loop_tries_it_after_the_key_repairs(geo_ctx: CheckContext, on: bool) -> None:
    assert [name for name, _ in REPAIRS] == ["table_names", "join_repair", "lookup_repair", "spatial_repair"]
    model = FixedQuery("```sql\nSELECT name FROM rivers WHERE province = 'Southreach'\n```")
    loop = CorrectionLoop(model, LoopOptions(spatial_repair=on, max_rounds=1, samples=0))
    result = loop.run(None, "q", geo_ctx, Trace())
    assert result.best is not None
    assert (result.best.result is not None) is on
    assert result.repaired == (1 if on else 0) and model.calls == 1
