"""Schema tips from real SQLite/SpatiaLite failures, static prechecks and value checks.

Golden cases live in fixtures/tips/*.txt:

    -- db: geo | school          examples/geo/geo.sqlite, or the small plain SQLite DB below
    -- check: error KIND | precheck | values
    -- dialect: sqlite           optional (default: spatialite for geo, sqlite for school)
    -- timeout: 0.3              optional, seconds (for the timeout case)
    -- sql
    <the query>
    -- tips
    <expected render_tips output, one sentence per line; nothing when no tips>

``error KIND`` cases run the query through the guard, check SQLite's error
kind, then compare tips_from_error's tips.
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kgsql.db.guard import QueryResult, SQLQueryError, execute_query
from kgsql.errors import UnsafeSQLError
from kgsql.generate.tips import (
    AMBIGUOUS_TIP,
    COLUMN_TIP,
    TABLE_TIP,
    Tip,
    empty_result_tip,
    precheck,
    render_tips,
    tips_from_error,
    value_tips,
)
from kgsql.ingest.reader import read_database
from kgsql.schema.model import DatabaseSchema

FIXTURES = Path(__file__).parent / "fixtures" / "tips"
CASES = sorted(FIXTURES.glob("*.txt"))

SCHOOL = """
CREATE TABLE classes (class_id INTEGER PRIMARY KEY, name TEXT NOT NULL, teacher TEXT);
CREATE TABLE students (
    student_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
    class_id INTEGER REFERENCES classes(class_id), enrolled TEXT
);
INSERT INTO classes VALUES (1, 'Maths', 'Ada Byron'), (2, 'History', 'Herodotus');
INSERT INTO students VALUES (1, 'Alice', 1, '2020-09-01'), (2, 'Bob', 2, '2021-09-01'), (3, 'Carol', 1, '2020-09-01');
"""


@dataclass
class Case:
    db: str
    check: str
    sql: str
    tips: str
    dialect: str | None = None
    timeout: float | None = None


def read_case(path: Path) -> Case:
    header: dict[str, str] = {}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text(encoding="utf-8").removesuffix("\n").split("\n"):
        m = re.match(r"^-- (\w+): (.*)$", line)
        if m and current is None:
            header[m.group(1)] = m.group(2).strip()
        elif line in ("-- sql", "-- tips"):
            current = sections.setdefault(line[3:], [])
        elif current is not None:
            current.append(line)
    return Case(
        db=header["db"], check=header["check"], sql="\n".join(sections["sql"]),
        tips="\n".join(sections.get("tips", [])), dialect=header.get("dialect"),
        timeout=float(header["timeout"]) if "timeout" in header else None,
    )


@pytest.fixture(scope="module")
def dbs(example_db: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, DatabaseSchema]]:
    school = tmp_path_factory.mktemp("tips") / "school.sqlite"
    conn = sqlite3.connect(school)
    conn.executescript(SCHOOL)
    conn.commit()
    conn.close()
    return {name: (path, read_database(path)) for name, path in (("geo", example_db), ("school", school))}


def run_error(path: Path, sql: str, timeout: float | None = None) -> SQLQueryError:
    with pytest.raises(SQLQueryError) as info:
        execute_query(path, sql, timeout_s=timeout or 10.0)
    return info.value


def test_fixture_count() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("fixture", CASES, ids=[p.stem for p in CASES])
def test_golden(fixture: Path, dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    case = read_case(fixture)
    path, schema = dbs[case.db]
    dialect = case.dialect or ("spatialite" if case.db == "geo" else "sqlite")
    if case.check.startswith("error "):
        err = run_error(path, case.sql, case.timeout)
        assert err.kind == case.check.split()[1], err.sqlite_message
        tips = tips_from_error(err, case.sql, schema, dialect=dialect)
    elif case.check == "precheck":
        tips = precheck(case.sql, schema)
    elif case.check == "values":
        result = execute_query(path, case.sql)  # the query itself runs fine
        assert isinstance(result, QueryResult)
        tips = value_tips(case.sql, schema, path)
    else:  # pragma: no cover - a malformed fixture
        raise AssertionError(f"unknown check {case.check!r}")
    assert render_tips(tips) == case.tips
    assert all(isinstance(t, Tip) and t.kind and t.text for t in tips)


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


def test_unsafe_sql(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    with pytest.raises(UnsafeSQLError) as info:
        execute_query(path, "DELETE FROM cities")
    tips = tips_from_error(info.value, "DELETE FROM cities", schema)
    assert [t.kind for t in tips] == ["unsafe"]
    assert "read-only SQLite SELECT" in tips[0].text


def test_any_other_exception(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    tips = tips_from_error(RuntimeError("disk I/O error"), "SELECT 1", dbs["geo"][1])
    assert tips == [Tip("other", "SQLite reported an error: disk I/O error; fix the query so that it runs.")]


def test_timeout_tip_for_plain_sqlite(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT count(*) FROM students a, students b, students c, classes d"
    err = SQLQueryError("timeout", "interrupted", sql=sql)
    tips = tips_from_error(err, sql, schema, dialect="sqlite")
    assert tips[0].kind == "timeout" and "spatial" not in tips[0].text
    assert tips[1].text == ("The tables 'students a', 'students b', 'students c' and 'classes d' are combined "
                            "without any join condition (a cross join).")


def test_no_cross_join_reported_when_tables_are_joined(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    _path, schema = dbs["geo"]
    sql = ("SELECT count(*) FROM cities a JOIN river_cities rc ON rc.city_id = a.city_id, rivers r, provinces p "
           "WHERE r.river_id = rc.river_id AND Within(a.Location, p.Shape)")
    tips = tips_from_error(SQLQueryError("timeout", "interrupted", sql=sql), sql, schema)
    assert [t.kind for t in tips] == ["timeout"]


def test_render_tips_dedupes_in_order() -> None:
    tips = [Tip("a", "One."), Tip("b", "Two."), Tip("a", "One."), Tip("c", "  "), Tip("d", "Three.")]
    assert render_tips(tips) == "One.\nTwo.\nThree."
    assert render_tips([]) == ""


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


# ---------------------------------------------------------------------------- values


@dataclass(frozen=True)
class FakeMatch:
    table: str
    column: str
    value: str
    score: float = 0.9


class FakeIndex:
    def __init__(self, matches: list[FakeMatch]) -> None:
        self.matches = matches
        self.queries: list[str] = []

    def search(self, question: str, *, top_k: int = 20, min_score: float = 0.75) -> list[FakeMatch]:
        self.queries.append(question)
        return self.matches


def test_value_tips_use_the_value_index(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]
    index = FakeIndex([FakeMatch("cities", "name", "Silver Town"), FakeMatch("rivers", "name", "Silver River")])
    tips = value_tips("SELECT * FROM rivers WHERE name = 'Silvr'", schema, path, value_index=index)
    assert index.queries == ["Silvr"]
    assert render_tips(tips) == ("The value 'Silvr' does not occur in the column 'rivers.name'; "
                                 "the closest value is 'Silver River'.")


def test_value_tips_fall_back_when_the_index_fails(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["geo"]

    class Broken:
        def search(self, *a: Any, **k: Any) -> list[Any]:
            raise RuntimeError("index gone")

    tips = value_tips("SELECT * FROM rivers WHERE name = 'Amber'", schema, path, value_index=Broken())
    assert tips[0].text.endswith("the closest value is 'Amber River'.")


def test_value_tips_with_the_real_value_index(dbs: dict[str, tuple[Path, DatabaseSchema]], tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    from kgsql.retrieve.values import ValueIndex

    path, schema = dbs["geo"]
    index = ValueIndex.for_database(path, schema, cache_dir=tmp_path)
    tips = value_tips("SELECT name FROM cities WHERE name = 'Kestrel'", schema, path, value_index=index)
    assert render_tips(tips) == ("The value 'Kestrel' does not occur in the column 'cities.name'; "
                                 "the closest value is 'Kestrel Bay'.")


def test_value_tips_skip_what_they_cannot_check(dbs: dict[str, tuple[Path, DatabaseSchema]], tmp_path: Path) -> None:
    path, schema = dbs["geo"]
    assert value_tips("SELECT name FROM cities WHERE name = 'Nowhere'", schema, None) == []
    assert value_tips("SELECT name FROM cities WHERE name = 'Nowhere'", schema, tmp_path / "missing.sqlite") == []
    assert value_tips("SELEC name FROM", schema, path) == []
    assert value_tips("SELECT name FROM cities WHERE population = 5", schema, path) == []  # not a string literal
    assert value_tips("SELECT name FROM nowhere WHERE name = 'x'", schema, path) == []  # unknown table
    many = " OR ".join(f"name = 'Nowhere{i}'" for i in range(20))
    assert len(value_tips(f"SELECT name FROM cities WHERE {many}", schema, path, max_checks=3)) == 3


def test_value_tips_plain_sqlite(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, schema = dbs["school"]
    sql = "SELECT s.name FROM students s JOIN classes c ON s.class_id = c.class_id WHERE c.name = 'Math'"
    assert execute_query(path, sql).rows == []
    tips = value_tips(sql, schema, path)
    assert render_tips(tips) == ("The value 'Math' does not occur in the column 'classes.name'; "
                                 "the closest value is 'Maths'.")


# ---------------------------------------------------------------------------- empty results


@pytest.mark.parametrize(
    ("question", "expects_tip"),
    [
        ("Which cities lie in Northmark?", True),
        ("List the rivers longer than 100 km.", True),
        ("What is the total length of the Silver River in metres?", True),
        ("Is there a city called Oster?", False),
        ("Are there rivers in Westmoor?", False),
        ("Does the Silver River flow through Oster?", False),
        ("Tell me whether any city was founded before 1200.", False),
    ],
)
def test_empty_result_tip(question: str, expects_tip: bool) -> None:
    tip = empty_result_tip(question, "SELECT name FROM cities WHERE 0")
    assert (tip is not None) == expects_tip
    if tip is not None:
        assert tip.kind == "empty_result"
        assert tip.text.startswith("The query returned no rows; check the filter values against the value examples")


def test_empty_result_tip_looks_at_the_result(dbs: dict[str, tuple[Path, DatabaseSchema]]) -> None:
    path, _schema = dbs["geo"]
    question = "What is the total length of the Nordland river?"
    null_sum = execute_query(path, "SELECT SUM(length_km) FROM rivers WHERE name = 'Nordland'")
    assert null_sum.rows == [(None,)]
    assert empty_result_tip(question, result=null_sum) is not None  # an aggregate over no rows
    rows = execute_query(path, "SELECT SUM(length_km) FROM rivers")
    assert empty_result_tip(question, result=rows) is None
    assert empty_result_tip(question, result=[]) is not None
