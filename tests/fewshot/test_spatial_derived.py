"""Few-shot examples a spatial database derives from its own geometry tables (issue 29: a user with a new
spatial database has no examples): written in the engine's forms, every one runs on the shipped example."""
from __future__ import annotations

from pathlib import Path

from kgsql.db.guard import execute_query
from kgsql.fewshot.spatial_derived import derived_examples, naming_column
from kgsql.ingest.reader import read_database


def test_the_example_database_derives_runnable_examples_of_each_kind(example_db: Path) -> None:
    schema = read_database(example_db)
    pairs = derived_examples(schema)
    assert pairs[:3] == [
        ("How many cities are there in each province?",
         "SELECT provinces.name, COUNT(*) FROM provinces JOIN cities ON Within(cities.Location, provinces.Shape) = 1 "
         "GROUP BY provinces.name"),
        ("How many cities are in Eastvale?",
         "SELECT COUNT(*) FROM cities JOIN provinces ON Within(cities.Location, provinces.Shape) = 1 "
         "WHERE provinces.name = 'Eastvale'"),
        ("Which provinces does Amber River pass through?",
         "SELECT DISTINCT provinces.name FROM rivers JOIN provinces ON Intersects(rivers.Shape, provinces.Shape) = 1 "
         "WHERE rivers.name = 'Amber River'"),
    ]
    questions = [q for q, _ in pairs]
    assert "What is the length of Amber River?" in questions and "What is the area of Eastvale?" in questions
    assert any(q.startswith("Which river is closest to") for q in questions)
    for question, sql in pairs:
        rows = execute_query(str(example_db), sql, timeout_s=30).rows  # each runs
        crossing = question == "Which other rivers intersect Amber River?"  # no river crosses another
        assert rows or crossing, sql  # and finds something
    found = dict(pairs)  # a table related to itself, as `a` and `b`
    assert found["How far is Brenna from Cedar Falls?"] == (
        "SELECT Distance(a.Location, b.Location, 1) FROM cities AS a, cities AS b "
        "WHERE a.name = 'Brenna' AND b.name = 'Cedar Falls'")
    assert found["Which other provinces intersect Eastvale?"].endswith("WHERE a.name = 'Eastvale' AND b.name <> a.name")
    assert "ORDER BY distance LIMIT 1" in found["Which other city is closest to Brenna, and how far away is it?"]
    length = dict(pairs)["What is the length of Amber River?"]
    assert "GLength(rivers.Shape, 1)" in length  # metres on lon/lat data, as the engine writes it


def test_postgis_forms_and_a_database_without_geometry(example_db: Path, tmp_path: Path) -> None:
    import sqlite3

    schema = read_database(example_db)
    sql = dict(derived_examples(schema, "postgis"))["How many cities are in Eastvale?"]
    assert "ST_Within(cities.\"Location\", provinces.\"Shape\")" in sql and "= 1" not in sql  # quoted as PostgreSQL needs
    assert derived_examples(schema, "duckdb") == []  # an engine without spatial forms
    plain = tmp_path / "plain.sqlite"
    with sqlite3.connect(plain) as conn:
        conn.execute("CREATE TABLE shop (id INTEGER PRIMARY KEY, label TEXT, city_name TEXT)")
    flat = read_database(plain)
    assert derived_examples(flat) == []
    assert naming_column(flat.tables[0]).name == "city_name"  # a column ending in "name" before other text


def test_on_a_postgis_copy_every_derived_example_runs_as_the_reader(example_db: Path, pg_cluster,  # type: ignore[no-untyped-def]
                                                                    unique_name) -> None:
    """The same code on PostGIS: the example database copied in, read back through the SELECT-only role,
    and every example derived from that schema runs there and finds what SpatiaLite's twin finds."""
    import pytest

    from kgsql.db import engines
    from kgsql.ingest.copy import load

    if not pg_cluster.postgis:
        pytest.skip("PostGIS not installed (Debian: postgresql-15-postgis-3)")
    name = unique_name("derived")
    url = pg_cluster.create_database(name, postgis=True)
    try:
        load(example_db, url)
        reader = pg_cluster.create_reader(name, f"{name}_reader")
        pairs = derived_examples(read_database(reader))  # values read as ingest does
        sqlite_pairs = dict(derived_examples(read_database(example_db)))
        assert len(pairs) == len(sqlite_pairs) >= 6
        for question, sql in pairs:
            assert "ST_" in sql or "COUNT" in sql
            rows = execute_query(reader, sql, timeout_s=30).rows
            twin = execute_query(str(example_db), sqlite_pairs[question], timeout_s=30).rows
            same = [tuple(str(v)[:6] for v in r) for r in twin]
            assert [tuple(str(v)[:6] for v in r) for r in rows] == same, question
    finally:
        engines.close_all()
