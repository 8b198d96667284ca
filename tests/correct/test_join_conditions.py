"""Join conditions on the shipped SpatiaLite example: a join condition that joins nothing gets the tables' key,
else their location relation; a condition that matches rows, or a keyed pair's own condition, is kept."""
from __future__ import annotations

import pytest
from fixed_model import FixedQuery

from kgsql.correct import CheckContext
from kgsql.correct.join_conditions import fix_join_conditions
from kgsql.correct.loop import CorrectionLoop, LoopOptions
from kgsql.ingest.reader import read_database
from kgsql.llm.trace import Trace

NORTHMARK_RIVERS = [("Silver River",)]


@pytest.mark.parametrize("sql,rewritten", [
    # a tautology on the joined table: true for every pair
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON p.name = p.name WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    # a tautology on the earlier table
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.river_id = r.river_id WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    # a geometry related to itself (true for every pair), on either table, with or without "= 1"
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(p.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    ("SELECT r.name FROM rivers AS r JOIN provinces AS p ON ST_Intersects(r.Shape, r.Shape) WHERE p.name = 'Northmark'",
     "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1 WHERE p.name = 'Northmark'"),
    # look-alike names that match no pair of rows, either way round
    ("SELECT rivers.name FROM provinces JOIN rivers ON rivers.name = provinces.name WHERE provinces.name = 'Northmark'",
     "SELECT rivers.name FROM provinces JOIN rivers ON Intersects(rivers.Shape, provinces.Shape) = 1 "
     "WHERE provinces.name = 'Northmark'"),
])
def test_located(geo_ctx: CheckContext, sql: str, rewritten: str) -> None:
    assert fix_join_conditions(geo_ctx, sql) == rewritten
    assert sorted(geo_ctx.execute(rewritten).rows) == NORTHMARK_RIVERS


def test_a_distance_from_itself_measures_from_the_other_geometry(geo_ctx: CheckContext) -> None:
    sql = ("SELECT c.name FROM cities AS c JOIN rivers AS r ON r.name = 'Silver River' "
           "ORDER BY Distance(r.Shape, r.Shape, 1) LIMIT 1")
    rewritten = fix_join_conditions(geo_ctx, sql)
    assert rewritten == ("SELECT c.name FROM cities AS c JOIN rivers AS r ON r.name = 'Silver River' "
                         "ORDER BY Distance(r.Shape, c.Location, 1) LIMIT 1")
    nearest = geo_ctx.execute("SELECT c.name FROM cities AS c, rivers AS r WHERE r.name = 'Silver River' "
                              "ORDER BY Distance(c.Location, r.Shape, 1) LIMIT 1")
    assert geo_ctx.execute(rewritten).rows == nearest.rows
    # more than one other geometry: which one is meant is not known
    assert fix_join_conditions(geo_ctx, "SELECT Distance(r.Shape, r.Shape) FROM rivers AS r, cities AS c, "
                                        "provinces AS p WHERE c.province_id = p.province_id") is None


def test_a_keyed_pair_gets_its_key(geo_ctx: CheckContext) -> None:
    sql = "SELECT c.name FROM cities AS c JOIN provinces AS p ON p.name = p.name WHERE p.name = 'Eastvale'"
    rewritten = fix_join_conditions(geo_ctx, sql)
    assert rewritten == ("SELECT c.name FROM cities AS c JOIN provinces AS p ON c.province_id = p.province_id "
                         "WHERE p.name = 'Eastvale'")
    by_key = geo_ctx.execute("SELECT name FROM cities WHERE province_id = 2")
    assert sorted(geo_ctx.execute(rewritten).rows) == sorted(by_key.rows) and by_key.rows


def test_a_repair_s_tautology_is_rewritten_before_it_runs(geo_ctx: CheckContext) -> None:
    """The FK repair moves T1.population (rivers have none) to T2: ``T2.population = T2.population``, true for
    every pair; the rewrite turns it into the location join before it runs."""
    model = FixedQuery("SELECT T1.name FROM rivers AS T1 JOIN provinces AS T2 ON T1.population = T2.population "
                       "WHERE T2.name = 'Northmark'")
    result = CorrectionLoop(model, LoopOptions(max_rounds=1, samples=0)).run(None, "q", geo_ctx, Trace())
    assert result.best is not None and result.best.result is not None
    assert "Intersects(T1.Shape, T2.Shape) = 1" in result.best.sql
    assert sorted(result.best.result.rows) == NORTHMARK_RIVERS


@pytest.mark.parametrize("sql", [
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.river_id = p.province_id",   # matches rows: kept
    "SELECT c.name FROM cities AS c JOIN provinces AS p ON c.name = p.name",              # a key links them
    "SELECT c.name FROM cities AS c JOIN rivers AS r ON c.name = r.name",                 # points and lines: a distance
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON Intersects(r.Shape, p.Shape) = 1",  # already located
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON r.name = p.name AND p.population > 1",  # not one equality
    "SELECT r.name FROM rivers AS r, provinces AS p",                                     # no condition
    "SELECT r.name FROM rivers AS r JOIN provinces AS p ON p.province_id = p.capital_city_id",  # a filter in ON
])
def test_kept(geo_ctx: CheckContext, sql: str) -> None:
    assert fix_join_conditions(geo_ctx, sql) is None


def test_nothing_happens_without_geometry(make_sqlite) -> None:  # type: ignore[no-untyped-def]
    path = make_sqlite("plain", "CREATE TABLE a (x TEXT); CREATE TABLE b (y TEXT);")
    with CheckContext(read_database(path), "q") as plain:
        assert fix_join_conditions(plain, "SELECT a.x FROM a JOIN b ON a.x = a.x") is None
