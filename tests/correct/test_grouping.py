"""The grouping a question asks for ("each year", "per continent", "in each city"): exact SQL on a small real
SQLite file shaped like Spider's car_1 and the spatial set's cities, the rows it then answers, and what is left
alone."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.grouping import group_per_question
from kgsql.ingest.reader import read_database

SCRIPT = """
CREATE TABLE continents (ContId INTEGER PRIMARY KEY, Continent TEXT);
CREATE TABLE car_makers (Id INTEGER PRIMARY KEY, Maker TEXT, Country INTEGER REFERENCES continents(ContId));
CREATE TABLE cars_data (Id INTEGER PRIMARY KEY, MPG REAL, Weight INTEGER, Year INTEGER);
CREATE TABLE cities (city_id INTEGER PRIMARY KEY, name TEXT, pyname TEXT, population INTEGER);
CREATE TABLE spots (spot_id INTEGER PRIMARY KEY, name TEXT, level TEXT, city_id INTEGER REFERENCES cities(city_id));
INSERT INTO continents VALUES (1, 'europe'), (2, 'asia');
INSERT INTO car_makers VALUES (1, 'fiat', 1), (2, 'vw', 1), (3, 'honda', 2);
INSERT INTO cars_data VALUES (1, 30, 2000, 1970), (2, 20, 3000, 1970), (3, 25, 2500, 1971);
INSERT INTO cities VALUES (1, 'Hangzhou', 'hangzhou', 9), (2, 'Suzhou', 'suzhou', 7);
INSERT INTO spots VALUES (1, 'West Lake', '5A', 1), (2, 'Lingyin', '5A', 1), (3, 'Humble', '5A', 2);
"""


@pytest.fixture
def ctx_for(make_sqlite) -> Iterator:  # type: ignore[no-untyped-def,type-arg]
    schema = read_database(make_sqlite("groups", SCRIPT))
    opened: list[CheckContext] = []

    def make(question: str) -> CheckContext:
        opened.append(CheckContext(schema, question).__enter__())
        return opened[-1]

    yield make
    for ctx in opened:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("question, sql, grouped, rows", [
    ("What is the average weight of cars each year?", "SELECT AVG(Weight) FROM cars_data",
     "SELECT cars_data.Year, AVG(Weight) FROM cars_data GROUP BY cars_data.Year", [(1970, 2500.0), (1971, 2500.0)]),
    ("How many car makers are there per continent?",
     "SELECT COUNT(*), T2.Continent FROM car_makers AS T1 JOIN continents AS T2 ON T1.Country = T2.ContId",
     "SELECT COUNT(*), T2.Continent FROM car_makers AS T1 JOIN continents AS T2 ON T1.Country = T2.ContId "
     "GROUP BY T2.Continent", [(1, "asia"), (2, "europe")]),
    ("How many 5A spots are there in each city?",  # a table named: its `name` column (not `pyname`)
     "SELECT COUNT(*) FROM spots AS s JOIN cities AS c ON s.city_id = c.city_id WHERE s.level = '5A'",
     "SELECT c.name, COUNT(*) FROM spots AS s JOIN cities AS c ON s.city_id = c.city_id WHERE s.level = '5A' "
     "GROUP BY c.name", [("Hangzhou", 2), ("Suzhou", 1)]),
])
def test_grouped_as_asked(ctx_for, question: str, sql: str, grouped: str, rows: list) -> None:  # type: ignore[no-untyped-def,type-arg]
    ctx = ctx_for(question)
    assert group_per_question(ctx, sql) == grouped
    assert sorted(ctx.execute(grouped).rows) == rows


@pytest.mark.parametrize("question, sql", [
    ("What is the average miles per gallon of the cars?", "SELECT AVG(MPG) FROM cars_data"),  # names nothing
    ("What is the average weight of all cars?", "SELECT AVG(Weight) FROM cars_data"),  # no "each"
    ("What is the average weight each year?", "SELECT Year, AVG(Weight) FROM cars_data GROUP BY Year"),  # grouped
    ("List the weight of each car.", "SELECT Weight FROM cars_data"),  # no aggregate
    ("How many spots are in each city?", "SELECT COUNT(*) FROM spots"),  # cities is not in the query
])
def test_left_alone(ctx_for, question: str, sql: str) -> None:  # type: ignore[no-untyped-def]
    assert group_per_question(ctx_for(question), sql) is None


def test_it_is_one_of_the_loops_rewrites() -> None:
    from kgsql.correct.loop import REWRITES, Rewrites

    assert "group_each" in [name for name, _ in REWRITES] and Rewrites().group_each
