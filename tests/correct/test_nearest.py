""""The closest X" ranked by its one distance (``rank_by_distance``), on the shipped SpatiaLite example."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.nearest import rank_by_distance
from kgsql.schema.model import DatabaseSchema

MEASURED = ("SELECT c.name, Distance(c.Location, (SELECT Shape FROM rivers WHERE name = 'Silver River'), 1) AS d "
            "FROM cities AS c")


def _rank(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str, sql: str) -> str | None:
    with CheckContext(dbs["geo"][1], question) as ctx:
        return rank_by_distance(ctx, sql)


@pytest.mark.parametrize("question,tail", [
    ("Which city is closest to the Silver River, and how far is it?", " ORDER BY d LIMIT 1"),
    ("Which city is the farthest from the Silver River?", " ORDER BY d DESC LIMIT 1"),
    ("What are the two nearest cities to the Silver River?", " ORDER BY d LIMIT 2"),
    ("List the 3 closest cities to the Silver River.", " ORDER BY d LIMIT 3"),
    ("离银河最近的城市是哪个？", " ORDER BY d LIMIT 1"),
])
def test_the_distance_is_ranked_as_asked(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str,
                                         tail: str) -> None:
    assert _rank(dbs, question, MEASURED) == MEASURED + tail


def test_the_ranked_query_answers_the_nearest_city(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    ranked = _rank(dbs, "Which city is closest to the Silver River?", MEASURED)
    with CheckContext(dbs["geo"][1], "q") as ctx:
        every = ctx.execute(MEASURED).rows
        assert len(every) > 1
        assert ctx.execute(ranked).rows == [min(every, key=lambda row: row[1])]


def test_an_unaliased_distance_is_ordered_by_itself(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    sql = "SELECT name, Distance(Location, MakePoint(0, 0)) FROM cities"
    ranked = sql + " ORDER BY Distance(Location, MakePoint(0, 0)) LIMIT 1"
    assert _rank(dbs, "Which city is nearest to the origin?", sql) == ranked


@pytest.mark.parametrize("question,sql", [
    ("How far is each city from the Silver River?", MEASURED),                          # no ranking asked
    ("Which city is closest to the Silver River?", MEASURED + " ORDER BY d LIMIT 1"),   # already ranked
    ("Which city is closest to the Silver River?", "SELECT name FROM cities"),          # no distance shown
    ("Which city is closest to the Silver River?",
     "SELECT MIN(Distance(Location, MakePoint(0, 0))) FROM cities"),                     # an aggregate
    ("Which city is closest to the Silver River?",
     "SELECT Distance(a.Location, b.Location), Distance(a.Location, MakePoint(0, 0)) "
     "FROM cities AS a, cities AS b"),                                                  # two distances: which?
])
def test_left_alone(dbs: dict[str, tuple[Path, DatabaseSchema]], question: str, sql: str) -> None:
    assert _rank(dbs, question, sql) is None
