"""Copying SQLite files into DuckDB and PostgreSQL/PostGIS: types, keys, rows and geometry come back as meant.

DuckDB runs always; PostgreSQL runs on a throwaway server started here
(skipped only where the server binaries are missing), PostGIS where its
extension is installed.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kgsql.db import engines
from kgsql.db.guard import execute_query
from kgsql.ingest.reader import read_database
from kgsql.lab.load_engine import LoadError, load, main, plan_type, sqlite_affinity
from kgsql.lab.pg_cluster import TempCluster

MESSY = """
CREATE TABLE Dept (dept_id INTEGER PRIMARY KEY, Name varchar(20) UNIQUE, budget number, active bool, founded DATE);
CREATE TABLE emp (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    dept_id INTEGER REFERENCES Dept (dept_id),
    salary REAL REFERENCES Dept (budget),
    code INTEGER REFERENCES Dept (dept_id),
    note,
    hired DATETIME,
    boss INTEGER REFERENCES emp (id),
    mgr varchar(20) REFERENCES Dept (Name)
);
CREATE TABLE project (pid INTEGER PRIMARY KEY, dept_id INTEGER REFERENCES Dept (dept_id), title char(10));
INSERT INTO Dept VALUES (1, 'Sales', 1000, 1, '2001-02-03'), (2, 'Lab', 2500.5, 0, '1999-12-31'),
                        (3, NULL, NULL, NULL, NULL);
INSERT INTO emp VALUES (1, 'Ann', 1, 10.5, 7, 1, '2020-01-02 03:04:05', 2, 'Sales'),
                       (2, 'Bob', 2, 20.0, 'n/a', 'x', NULL, NULL, 'Lab'),
                       (3, 'Cai', NULL, NULL, NULL, NULL, '2021-06-30 00:00:00', 1, NULL);
INSERT INTO project VALUES (1, 1, 'alpha'), (2, 99, 'ghost');
"""

#: emp's rows as both engines return them: code and note fall back to text (SQLite's text of 7 is '7').
EMP_ROWS = [
    (1, "Ann", 1, 10.5, "7", "1", "2020-01-02 03:04:05", 2, "Sales"),
    (2, "Bob", 2, 20.0, "n/a", "x", None, None, "Lab"),
    (3, "Cai", None, None, None, None, "2021-06-30 00:00:00", 1, None),
]


def make_messy(folder: Path) -> Path:
    path = folder / "messy.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(MESSY)
    conn.commit()
    conn.close()
    return path


def _fks(schema: Any) -> set[tuple[str, str, str, str]]:
    return {(f.table.lower(), f.column.lower(), f.ref_table.lower(), f.ref_column.lower()) for f in schema.foreign_keys}


def _types(schema: Any, table: str) -> dict[str, str]:
    t = next(t for t in schema.tables if t.name.lower() == table)
    return {c.name.lower(): c.type.lower() for c in t.columns}


def _rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in execute_query(db, sql, timeout_s=10, max_rows=100).rows]


# --------------------------------------------------------------------------- types


@pytest.mark.parametrize("declared, values, kind, falls_back", [
    ("INTEGER", [1, 2, None], "int", False),
    ("INTEGER", [1, "n/a"], "text", True),  # text in an integer column
    ("int(11)", [1, 2.5], "double", True),
    ("number", [1, 2], "int", False),
    ("number", [1, 2.5], "double", False),
    ("bool", ["T", "F"], "text", True),
    ("bool", [0, 1], "int", False),
    ("", [1, "x"], "text", True),
    ("", [], "text", False),
    ("varchar(255)", ["abc"], "varchar", False),
    ("char(2)", ["abc"], "text", False),  # longer than declared: no length kept
    ("DECIMAL(19,4)", [1, 2], "numeric", False),
    ("DECIMAL(3,1)", [1234], "int", False),  # does not fit: integers stay integers
    ("float(10,2)", [1.5, 2], "double", False),
    ("DATE", ["2020-01-31"], "date", False),
    ("DATETIME", ["2020-01-31 10:00:00"], "timestamp", False),
    ("DATETIME", ["March 2003"], "text", True),
    ("DATE", ["2020-02-30"], "text", True),  # not a real date
    ("blob", [b"\x00\x01"], "blob", False),
    ("STRING", ["a"], "text", True),  # NUMERIC affinity in SQLite
])
def test_plan_type_follows_declared_affinity_and_values(declared: str, values: list[Any], kind: str,
                                                        falls_back: bool) -> None:
    logical, reason = plan_type(declared, values)
    assert logical.kind == kind
    assert bool(reason) == falls_back


def test_sqlite_affinity_rules() -> None:
    assert [sqlite_affinity(t) for t in ("BIGINT", "varchar(255)", "", "DOUBLE", "number", "POINT")] == \
        ["INTEGER", "TEXT", "BLOB", "REAL", "NUMERIC", "INTEGER"]


def test_text_dates_keeps_dates_as_text() -> None:
    assert plan_type("DATE", ["2020-01-31"], text_dates=True)[0].kind == "text"


# --------------------------------------------------------------------------- DuckDB


def test_duckdb_copy_reads_back_the_same_schema_and_rows(tmp_path: Path) -> None:
    source = make_messy(tmp_path)
    url = f"duckdb://{tmp_path / 'messy.duckdb'}"
    try:
        report = load(source, url)
        schema = read_database(url, with_stats=False)
        assert [t.name for t in schema.tables] == ["Dept", "emp", "project"]  # SQLite's spelling
        assert {t.name: t.row_count for t in schema.tables} == {"Dept": 3, "emp": 3, "project": 2}
        types = _types(schema, "emp")
        assert types["id"] == "bigint" and types["salary"] == "double" and types["hired"] == "timestamp"
        assert types["code"] == "varchar" and types["note"] == "varchar"
        assert _types(schema, "dept")["founded"] == "date" and _types(schema, "dept")["budget"] == "double"
        assert {(f["table"], f["column"]) for f in report.fallbacks} == {("emp", "code"), ("emp", "note")}
        emp = next(t for t in schema.tables if t.name == "emp")
        assert [c.name for c in emp.columns if c.is_primary_key] == ["id"]
        assert next(c for c in emp.columns if c.name == "name").not_null
        assert _fks(schema) == {("emp", "dept_id", "dept", "dept_id"), ("emp", "boss", "emp", "id"),
                                ("emp", "mgr", "dept", "name")}
        skipped = {s["fk"]: s["reason"] for s in report.skipped_foreign_keys}
        assert "not a primary key or unique" in skipped["emp(salary) -> Dept(budget)"]
        assert "types differ" in skipped["emp(code) -> Dept(dept_id)"]
        assert "DuckDB checks every row" in skipped["project(dept_id) -> Dept(dept_id)"]
        assert _rows(url, "SELECT * FROM emp ORDER BY id") == EMP_ROWS
        assert _rows(url, "SELECT Name, budget, active, founded FROM dept ORDER BY dept_id") == [
            ("Sales", 1000.0, 1, "2001-02-03"), ("Lab", 2500.5, 0, "1999-12-31"), (None, None, None, None)]
    finally:
        engines.close_all()


def test_duckdb_target_is_not_overwritten_without_replace(tmp_path: Path) -> None:
    source = make_messy(tmp_path)
    target = tmp_path / "x.duckdb"
    load(source, f"duckdb://{target}")
    with pytest.raises(LoadError, match="already exists"):
        load(source, f"duckdb://{target}")
    assert load(source, f"duckdb://{target}", replace=True).rows == 8


def test_bad_input_is_one_line_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_messy(tmp_path)
    cases = [
        [str(tmp_path / "missing.sqlite"), f"duckdb://{tmp_path / 'a.duckdb'}"],
        [str(source), "mysql://u@h/db"],
        [str(source), str(tmp_path / "other.sqlite")],
        [str(source), "postgresql://kg:s3cret-Pw-991@127.0.0.1:1/db"],  # nothing listens on port 1
        [str(source)],
    ]
    for argv in cases:
        assert main(argv) == 1, argv
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1, (argv, err)
        assert err.startswith("kgsql.lab.load_engine: error: ") and "Traceback" not in err
        assert "s3cret-Pw-991" not in err


# --------------------------------------------------------------------------- PostgreSQL


@pytest.fixture
def cluster(pg_cluster: TempCluster) -> TempCluster:
    """The session's throwaway server (tests/conftest.py)."""
    return pg_cluster


def test_postgres_copy_reads_back_the_same_schema_and_rows(cluster: TempCluster, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    source = make_messy(tmp_path)
    url = cluster.create_database("load_messy")
    try:
        assert main([str(source), url]) == 0
        printed = capsys.readouterr().out
        assert cluster.password not in printed and "postgres:***@" in printed
        schema = read_database(url, with_stats=False)
        assert [t.name for t in schema.tables] == ["dept", "emp", "project"]  # folded, as PostgreSQL folds
        assert {t.name: t.row_count for t in schema.tables} == {"dept": 3, "emp": 3, "project": 2}
        types = _types(schema, "emp")
        assert types["id"] == "bigint" and types["salary"] == "double precision"
        assert types["hired"] == "timestamp without time zone" and types["code"] == "text"
        assert types["mgr"] == "character varying(20)"
        assert _types(schema, "dept")["founded"] == "date"
        assert _types(schema, "project")["title"] == "character varying(10)"
        assert [c.name for t in schema.tables for c in t.columns if c.is_primary_key] == ["dept_id", "id", "pid"]
        # the violated one is declared NOT VALID: PostgreSQL keeps it without checking the rows
        assert _fks(schema) == {("emp", "dept_id", "dept", "dept_id"), ("emp", "boss", "emp", "id"),
                                ("emp", "mgr", "dept", "name"), ("project", "dept_id", "dept", "dept_id")}
        assert cluster.sql("SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND NOT convalidated",
                           database="load_messy") == [(1,)]
        # SQL written for SQLite finds the folded names (run as a SELECT-only role, as kgsql requires)
        reader = cluster.create_reader("load_messy", "load_messy_reader")
        assert _rows(reader, "SELECT * FROM Emp ORDER BY ID") == EMP_ROWS
        assert _rows(reader, "SELECT Name, budget, active, founded FROM Dept ORDER BY dept_id") == [
            ("Sales", 1000.0, 1, "2001-02-03"), ("Lab", 2500.5, 0, "1999-12-31"), (None, None, None, None)]
        # an existing table is not dropped silently
        assert main([str(source), url]) == 1
        assert "--replace" in capsys.readouterr().err
        assert main([str(source), url, "--replace", "--keep-case"]) == 0
        engines.close_all()
        # the first, folded copy made dept; the second keeps its case beside it, in the order they were made
        assert [t.name for t in read_database(url, with_stats=False).tables][:2] == ["dept", "Dept"]
    finally:
        engines.close_all()


def _spatialite_file(folder: Path) -> Path:
    from kgsql.db.connect import load_spatialite
    from kgsql.db.connect import sqlite3 as spatial_sqlite
    from kgsql.errors import SpatialExtensionError

    path = folder / "places.sqlite"
    conn = spatial_sqlite.connect(str(path))
    try:
        load_spatialite(conn)
    except SpatialExtensionError as exc:
        conn.close()
        pytest.skip(f"SpatiaLite not loadable: {exc}")
    conn.execute("SELECT InitSpatialMetadata(1, 'WGS84')")
    conn.execute("CREATE TABLE place (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("SELECT AddGeometryColumn('place', 'geom', 4326, 'POINT', 'XY')")
    conn.executemany("INSERT INTO place VALUES (?, ?, MakePoint(?, ?, 4326))",
                     [(1, "Oslo", 10.75, 59.91), (2, "Rome", 12.5, 41.9)])
    conn.execute("INSERT INTO place (id, name) VALUES (3, 'nowhere')")
    conn.commit()
    conn.close()
    return path


def test_spatialite_points_become_postgis_geometry_with_srid(cluster: TempCluster, tmp_path: Path) -> None:
    if not cluster.postgis:
        pytest.skip("PostGIS not installed for this PostgreSQL (Debian: postgresql-15-postgis-3)")
    source = _spatialite_file(tmp_path)
    url = cluster.create_database("load_places", postgis=True)
    try:
        report = load(source, url)
        assert report.geometry == [{"table": "place", "column": "geom", "type": "Point", "srid": 4326,
                                    "stored_as": "geometry"}]
        schema = read_database(url, with_stats=False)
        assert [t.name for t in schema.tables] == ["place"]  # SpatiaLite's metadata stays behind
        geom = next(c for c in schema.tables[0].columns if c.name == "geom")
        assert geom.type == "geometry(Point,4326)"
        assert geom.spatial is not None and (geom.spatial.geometry_type, geom.spatial.srid) == ("POINT", 4326)
        reader = cluster.create_reader("load_places", "load_places_reader")
        assert _rows(reader, "SELECT name, ST_X(geom), ST_Y(geom), ST_SRID(geom) FROM place ORDER BY id") == [
            ("Oslo", 10.75, 59.91, 4326), ("Rome", 12.5, 41.9, 4326), ("nowhere", None, None, None)]
        assert cluster.sql("SELECT count(*) FROM pg_indexes WHERE tablename = 'place' AND indexdef ILIKE '%gist%'",
                           database="load_places") == [(1,)]
    finally:
        engines.close_all()


def test_spatialite_into_duckdb_keeps_wkb(tmp_path: Path) -> None:
    source = _spatialite_file(tmp_path)
    url = f"duckdb://{tmp_path / 'places.duckdb'}"
    try:
        report = load(source, url)
        assert report.geometry[0]["stored_as"] == "WKB BLOB"
        rows = _rows(url, "SELECT id, geom FROM place ORDER BY id")
        assert rows[0][1][:5] == b"\x01\x01\x00\x00\x00" and rows[2][1] is None  # little-endian WKB point
    finally:
        engines.close_all()


# --------------------------------------------------------------------------- the cross-engine check built on it


def test_cross_engine_comparison_rules() -> None:
    from collections import Counter
    from decimal import Decimal

    from kgsql.lab.cross_engine import _parse, _tie_equivalent, compare_rows, error_cause, normalise, unquote_strings

    assert compare_rows([(1, 2.5, "a")], [(Decimal("1.000"), Decimal("2.5000000001"), "a")], ordered=True)
    assert not compare_rows([(1,)], [("1",)], ordered=False)  # text is not a number
    assert compare_rows([(1,), (2,)], [(2,), (1,)], ordered=False)
    assert not compare_rows([(1,), (2,)], [(2,), (1,)], ordered=True)
    blocks = [Counter({(normalise("a"),): 1}), Counter({(normalise("b"),): 1, (normalise("c"),): 1})]
    assert _tie_equivalent([(normalise("a"),), (normalise("c"),)], blocks)  # LIMIT 2 may keep b or c
    assert not _tie_equivalent([(normalise("b"),), (normalise("a"),)], blocks)
    tree = _parse('SELECT name FROM t WHERE name = "Ann" OR "name" = \'x\'')
    assert unquote_strings(tree, {"name"}) == 1
    assert tree.sql(dialect="postgres") == "SELECT name FROM t WHERE name = 'Ann' OR \"name\" = 'x'"
    assert error_cause("operator does not exist: text = bigint").startswith("type mismatch")
    assert error_cause("function avg(text) does not exist").startswith("type mismatch")
    assert error_cause('column "t.x" must appear in the GROUP BY clause').startswith("GROUP BY")
    assert error_cause("function strftime(unknown, text) does not exist") == "function sqlglot did not translate"


def test_cross_engine_run_on_a_tiny_spider_layout(cluster: TempCluster, tmp_path: Path) -> None:
    """run_check starts its own server; ``cluster`` only makes the test skip where there are no binaries."""
    import json

    from kgsql.lab.cross_engine import run_check

    folder = tmp_path / "database" / "messy"
    folder.mkdir(parents=True)
    make_messy(folder)
    questions = [
        {"db_id": "messy", "question": "q1", "query": "SELECT name FROM emp WHERE dept_id = 1"},
        {"db_id": "messy", "question": "q2", "query": 'SELECT count(*) FROM emp WHERE name = "Bob"'},
        {"db_id": "messy", "question": "q3", "query": "SELECT name, max(salary) FROM emp"},  # a bare column
        {"db_id": "messy", "question": "q4", "query": "SELECT count(*) FROM emp WHERE name LIKE 'a%'"},
        {"db_id": "other", "question": "q5", "query": "SELECT 1"},
    ]
    (tmp_path / "dev.json").write_text(json.dumps(questions), encoding="utf-8")
    report = run_check(tmp_path, ["messy", "absent"])
    assert report["missing"] == ["absent"] and report["schemas"]["messy"]["postgres"]["tables"] == 3
    summary = report["summary"]
    assert summary["questions"] == 4 and summary["double_quoted_rewritten"] == 1
    for engine in ("postgres", "duckdb"):
        s = summary[engine]
        assert (s["compared"], s["equal"], s["failed"], s["different"]) == (4, 2, 1, 1), (engine, s)
        assert set(s["causes"]) == {"GROUP BY strictness (a bare column SQLite accepts)",
                                    "LIKE is case-insensitive in SQLite"}
