"""Rewrites of queries that run and answer wrongly: integer ratios divided as reals
(kgsql.correct.ratios), rankings that skip unknown values (kgsql.correct.ranking) and literals in
their stored spelling (kgsql.correct.literals). Exact SQL, and the answers the rewritten queries give
on a real SQLite file."""
from __future__ import annotations

import pytest

from kgsql.correct import CheckContext
from kgsql.correct.literals import match_literals
from kgsql.correct.loop import REWRITES, LoopOptions
from kgsql.correct.ranking import rank_known_values
from kgsql.correct.ratios import cast_ratios
from kgsql.ingest.reader import read_database

SCRIPT = """
CREATE TABLE hero (id INTEGER PRIMARY KEY, name TEXT, height_cm INTEGER, weight REAL, gender TEXT, race TEXT);
INSERT INTO hero VALUES (1, 'A', 180, 80.5, 'F', 'Human'), (2, 'B', NULL, 70.0, 'M', 'God '),
                        (3, 'C', 0, NULL, 'M', 'Mutant'), (4, 'D', 150, 60.0, 'F', 'mutant'),
                        (5, 'E', 170, 90.0, 'M', 'Human'), (6, 'G', 161, 65.0, 'M', NULL);
"""


@pytest.fixture
def schema(make_sqlite):  # type: ignore[no-untyped-def]
    schema = read_database(make_sqlite("heroes", SCRIPT))
    schema.table("hero").column("height_cm").value_explanation = (
        "The unit of height is centimeter. If the height_cm is NULL or 0, it means the height is missing.")
    return schema


@pytest.fixture
def ctx(schema):  # type: ignore[no-untyped-def]
    with CheckContext(schema, "q") as c:
        yield c


@pytest.mark.parametrize("sql, cast, truncated, answer", [
    ("SELECT SUM(CASE WHEN gender = 'F' THEN 1 ELSE 0 END) * 100 / COUNT(*) FROM hero",
     "SELECT CAST(SUM(CASE WHEN gender = 'F' THEN 1 ELSE 0 END) * 100 AS REAL) / COUNT(*) FROM hero", 33, 100 / 3),
    ("SELECT COUNT(CASE WHEN gender = 'F' THEN id ELSE NULL END) / COUNT(id) FROM hero",
     "SELECT CAST(COUNT(CASE WHEN gender = 'F' THEN id ELSE NULL END) AS REAL) / COUNT(id) FROM hero", 0, 1 / 3),
    ("SELECT SUM(height_cm) / COUNT(height_cm) FROM hero",  # integer column: an average, truncated
     "SELECT CAST(SUM(height_cm) AS REAL) / COUNT(height_cm) FROM hero", 132, 132.2),
])
def test_integer_ratios_are_divided_as_reals(ctx: CheckContext, sql: str, cast: str, truncated: int,
                                             answer: float) -> None:
    assert cast_ratios(ctx, sql) == cast
    assert ctx.execute(sql).rows[0][0] == truncated  # what the model's query says
    assert ctx.execute(cast).rows[0][0] == pytest.approx(answer)  # what the question asked


def test_scalar_subqueries_are_not_guessed(ctx: CheckContext) -> None:
    """Their type is not followed, so nothing is cast that might not need it."""
    assert cast_ratios(ctx, "SELECT (SELECT COUNT(*) FROM hero WHERE gender = 'F') / (SELECT COUNT(*) FROM hero)") is None


@pytest.mark.parametrize("sql", [
    "SELECT SUM(weight) / COUNT(*) FROM hero",         # a REAL column already divides as real
    "SELECT CAST(COUNT(*) AS REAL) / 4 FROM hero",     # already cast
    "SELECT COUNT(*) / 2.0 FROM hero",                 # a real literal
    "SELECT name FROM hero WHERE id / 2 = 1",          # no division of integers? yes, but a key: still cast
])
def test_divisions_that_are_already_real_are_left_alone(ctx: CheckContext, sql: str) -> None:
    rewritten = cast_ratios(ctx, sql)
    if "id / 2" in sql:
        assert rewritten == "SELECT name FROM hero WHERE CAST(id AS REAL) / 2 = 1"
    else:
        assert rewritten is None


def test_duckdb_divides_as_real_already(schema) -> None:  # type: ignore[no-untyped-def]
    with CheckContext(schema, "q", dialect="duckdb") as duck:
        assert cast_ratios(duck, "SELECT COUNT(*) / COUNT(id) FROM hero") is None
        assert rank_known_values(duck, "SELECT name FROM hero ORDER BY weight LIMIT 1") is None  # NULLs last


@pytest.mark.parametrize("sql, ranked, before, after", [
    ("SELECT name FROM hero ORDER BY height_cm LIMIT 1",
     "SELECT name FROM hero WHERE NOT height_cm IS NULL AND height_cm <> 0 ORDER BY height_cm LIMIT 1", "B", "D"),
    ("SELECT name FROM hero WHERE gender = 'M' ORDER BY height_cm ASC LIMIT 1",
     "SELECT name FROM hero WHERE gender = 'M' AND NOT height_cm IS NULL AND height_cm <> 0 "
     "ORDER BY height_cm ASC LIMIT 1", "B", "G"),
    ("SELECT name FROM hero ORDER BY weight LIMIT 1",   # no documented missing 0: the NULLs only
     "SELECT name FROM hero WHERE NOT weight IS NULL ORDER BY weight LIMIT 1", "C", "D"),
])
def test_ascending_rankings_skip_unknown_values(ctx: CheckContext, sql: str, ranked: str, before: str,
                                                after: str) -> None:
    assert ctx.execute(sql).rows == [(before,)]  # SQLite sorts NULL first
    assert rank_known_values(ctx, sql) == ranked
    assert ctx.execute(ranked).rows == [(after,)]


@pytest.mark.parametrize("sql", [
    "SELECT name FROM hero ORDER BY height_cm DESC LIMIT 1",                 # SQLite puts NULLs last
    "SELECT name FROM hero ORDER BY height_cm",                              # no LIMIT: nothing ranked away
    "SELECT name FROM hero WHERE height_cm > 0 ORDER BY height_cm LIMIT 1",  # the model filtered already
    "SELECT name FROM hero ORDER BY gender, name LIMIT 1",                   # two keys
    "SELECT name FROM hero ORDER BY id LIMIT 1",                             # no NULLs in the column
])
def test_rankings_left_alone(ctx: CheckContext, sql: str) -> None:
    assert rank_known_values(ctx, sql) is None


def test_postgres_puts_nulls_first_when_descending(schema) -> None:  # type: ignore[no-untyped-def]
    with CheckContext(schema, "q", dialect="postgres") as pg:
        assert rank_known_values(pg, "SELECT name FROM hero ORDER BY weight DESC LIMIT 1") == (
            "SELECT name FROM hero WHERE NOT weight IS NULL ORDER BY weight DESC LIMIT 1")
        assert rank_known_values(pg, "SELECT name FROM hero ORDER BY weight LIMIT 1") is None


def test_the_loop_tries_each_rewrite_under_its_switch() -> None:
    switches = [switch for switch, _ in REWRITES]
    assert switches == ["named_geometry", "whole_geometry", "within_distance", "distance_units", "geography_units",
                        "metre_units", "join_conditions", "bounded_relations", "located_values", "lookup_repair",
                        "key_labels", "ratio_cast", "rank_known", "match_literals", "date_forms", "group_each",
                        "rank_nearest", "compass_extremes"]
    assert all(hasattr(LoopOptions(), s) for s in switches)
    on = {s for s in switches if getattr(LoopOptions(), s)}
    assert on == {"named_geometry", "geography_units", "metre_units", "within_distance", "distance_units",
                  "join_conditions", "bounded_relations", "lookup_repair", "key_labels", "date_forms", "group_each",
                  "rank_nearest", "compass_extremes"}  # docs/eval.md


@pytest.mark.parametrize("sql, matched", [
    ("SELECT name FROM hero WHERE race = 'human'", "SELECT name FROM hero WHERE race = 'Human'"),
    ("SELECT name FROM hero WHERE race IN ('god', 'Human')", "SELECT name FROM hero WHERE race IN ('God ', 'Human')"),
    ("SELECT T1.name FROM hero AS T1 WHERE T1.race = 'HUMAN' AND T1.gender = 'F'",
     "SELECT T1.name FROM hero AS T1 WHERE T1.race = 'Human' AND T1.gender = 'F'"),
])
def test_literals_take_the_stored_spelling(ctx: CheckContext, sql: str, matched: str) -> None:
    assert not ctx.execute(sql).rows or "IN" in sql
    assert match_literals(ctx, sql) == matched
    assert ctx.execute(matched).rows


@pytest.mark.parametrize("sql", [
    "SELECT name FROM hero WHERE race = 'Human'",       # stored as written
    "SELECT name FROM hero WHERE race = 'mutant'",      # two stored spellings: the value tips ask the model
    "SELECT name FROM hero WHERE race = 'Martian'",     # none
    "SELECT name FROM hero WHERE race LIKE '%human%'",  # LIKE is not an exact comparison
])
def test_literals_left_alone(ctx: CheckContext, sql: str) -> None:
    assert match_literals(ctx, sql) is None


@pytest.fixture
def club(make_sqlite):  # type: ignore[no-untyped-def]
    path = make_sqlite("club", """
        CREATE TABLE event (event_id TEXT PRIMARY KEY, event_name TEXT, event_date TEXT);
        CREATE TABLE expense (expense_id TEXT PRIMARY KEY, cost REAL, expense_date TEXT);
        INSERT INTO event VALUES ('e1', 'October Meeting', '2019-10-08T12:00:00'), ('e2', 'Kickoff', '2020-09-01T18:00:00');
        INSERT INTO expense VALUES ('x1', 10.5, '2019-10-08'), ('x2', 4.0, '2020-09-02');""")
    with CheckContext(read_database(path), "q") as c:
        yield c


@pytest.mark.parametrize("sql, rewritten, answer", [
    ("SELECT event_name FROM event WHERE strftime('%Y', event_date) = 2019",
     "SELECT event_name FROM event WHERE STRFTIME('%Y', event_date) = '2019'", [("October Meeting",)]),
    ("SELECT event_name FROM event WHERE strftime('%m', event_date) = 9",
     "SELECT event_name FROM event WHERE STRFTIME('%m', event_date) = '09'", [("Kickoff",)]),
    ("SELECT COUNT(*) FROM event WHERE SUBSTR(event_date, 1, 4) = 2020",
     "SELECT COUNT(*) FROM event WHERE SUBSTRING(event_date, 1, 4) = '2020'", [(1,)]),
    ("SELECT event_name FROM event WHERE YEAR(event_date) = 2019",
     "SELECT event_name FROM event WHERE CAST(STRFTIME('%Y', event_date) AS INTEGER) = 2019", [("October Meeting",)]),
    ("SELECT event_name FROM event WHERE event_date = '2019-10-08'",
     "SELECT event_name FROM event WHERE event_date LIKE '2019-10-08%'", [("October Meeting",)]),
])
def test_dates_are_compared_as_sqlite_stores_them(club: CheckContext, sql: str, rewritten: str, answer: list) -> None:  # type: ignore[type-arg]
    from kgsql.correct.dates import sqlite_dates

    assert sqlite_dates(club, sql) == rewritten
    assert club.execute(rewritten).rows == answer


@pytest.mark.parametrize("sql", [
    "SELECT cost FROM expense WHERE expense_date = '2019-10-08'",                 # stored as a plain date
    "SELECT cost FROM expense WHERE strftime('%Y', expense_date) = '2019'",       # already text
    "SELECT event_name FROM event WHERE event_date = '2019-10-08T12:00:00'",      # the full stored value
    "SELECT cost FROM expense WHERE cost > 3",
])
def test_dates_already_right_are_left_alone(club: CheckContext, sql: str) -> None:
    from kgsql.correct.dates import sqlite_dates

    assert sqlite_dates(club, sql) is None


def test_other_engines_have_date_types(schema) -> None:  # type: ignore[no-untyped-def]
    from kgsql.correct.dates import sqlite_dates

    with CheckContext(schema, "q", dialect="postgres") as pg:
        assert sqlite_dates(pg, "SELECT name FROM hero WHERE EXTRACT(YEAR FROM d) = 2019") is None
