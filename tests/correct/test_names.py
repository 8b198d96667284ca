"""The names rule: SSpa's sentences, did-you-mean hints and the static precheck."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.correct import AMBIGUOUS_TIP, COLUMN_TIP, TABLE_TIP, precheck, tips_from_error
from kgsql.db.guard import execute_query
from kgsql.schema.model import DatabaseSchema
from tip_cases import CASES, read_case, run_error

SSPA_KINDS = ("no_such_table", "no_such_column", "ambiguous_column")


@pytest.mark.parametrize(
    "fixture",
    [p for p in CASES if read_case(p).check.split()[-1] in SSPA_KINDS],
    ids=lambda p: p.stem,
)
def test_precheck_finds_what_sqlite_reports(fixture: Path, dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    """Without running the query, precheck gives the same first tip SQLite's error leads to."""
    case = read_case(fixture)
    path, schema = dbs[case.db]
    err = run_error(path, case.sql)
    first = tips_from_error(err, case.sql, schema)[0]
    assert first.text in [t.text for t in precheck(case.sql, schema)]


def test_sspa_sentences_are_exact() -> None:
    assert TABLE_TIP.format(t="t") == "The table 't' does not exist in the database and should not be used."
    assert COLUMN_TIP.format(c="c", t="t") == "The column 'c' does not exist in the table 't' and should not be used."
    assert AMBIGUOUS_TIP == "Columns in multiple tables may have the same name, so ambiguity should be avoided."


def test_hint_is_a_separate_tip(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    sql = "SELECT nme FROM cities"
    tips = tips_from_error(run_error(path, sql), sql, schema)
    assert [t.kind for t in tips] == ["no_such_column", "suggestion"]
    assert tips[0].text == COLUMN_TIP.format(c="nme", t="cities")
    assert tips[0].name == "nme"
    assert tips[1].name == "cities.name"


def test_precheck_allow_tables(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    schema = dbs["geo"][1]
    assert precheck("SELECT name FROM big_cities", schema)[0].kind == "no_such_table"
    assert precheck("SELECT name FROM big_cities", schema, allow_tables=["BIG_CITIES"]) == []


def test_precheck_is_case_insensitive_like_sqlite(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    schema = dbs["geo"][1]
    sql = 'SELECT NAME, "location" FROM CITIES WHERE Province_ID = 1'
    assert precheck(sql, schema) == []
    execute_query(dbs["geo"][0], sql)  # and SQLite agrees


VALID_QUERIES = [
    "SELECT name FROM cities UNION SELECT name FROM provinces ORDER BY name",
    "SELECT name AS n FROM cities UNION ALL SELECT name FROM rivers ORDER BY n LIMIT 3",
    "SELECT p.name, COUNT(*) AS n FROM provinces p JOIN cities c ON Within(c.Location, p.Shape) "
    "GROUP BY p.name HAVING n > 1 ORDER BY n DESC",
    "SELECT name FROM cities c WHERE EXISTS (SELECT 1 FROM river_cities rc WHERE rc.city_id = c.city_id)",
    "SELECT name FROM cities WHERE population > (SELECT AVG(population) FROM cities)",
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n",
    "WITH big AS (SELECT * FROM cities WHERE population > 100000) "
    "SELECT big.name, p.name FROM big JOIN provinces p ON big.province_id = p.province_id",
    "SELECT t.name FROM (SELECT name, population FROM cities) AS t WHERE t.population > 1",
    "SELECT * FROM cities NATURAL JOIN river_cities",
    "SELECT name, GLength(Shape, 1) / 1000.0 AS km FROM rivers ORDER BY km DESC",
    "SELECT c.name FROM cities c WHERE c.ROWID IN (SELECT ROWID FROM SpatialIndex "
    "WHERE f_table_name = 'cities' AND search_frame = BuildMbr(8, 50, 10, 52))",
    "SELECT name FROM pragma_table_info('cities')",
    "SELECT c1.name, c2.name FROM cities c1, cities c2 "
    "WHERE c1.city_id < c2.city_id AND PtDistWithin(c1.Location, c2.Location, 100000, 1)",
    "SELECT name, row_number() OVER (ORDER BY population DESC) AS r FROM cities",
    "SELECT main.cities.name FROM main.cities",
    "SELECT strftime('%Y', 'now'), date('now'), CURRENT_DATE",
    "SELECT r.name, (SELECT group_concat(c.name) FROM river_cities rc JOIN cities c USING (city_id) "
    "WHERE rc.river_id = r.river_id) FROM rivers r",
]


@pytest.mark.parametrize("sql", VALID_QUERIES)
def test_precheck_has_no_false_positives(sql: str, dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    execute_query(path, sql)  # SQLite runs it
    assert precheck(sql, schema) == []
