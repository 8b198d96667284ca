"""Ingest into the real embedded graph and read back: round trip, idempotency, updates."""
from __future__ import annotations

import sqlite3

import pytest

from kgsql.errors import DatabaseFileError, UnknownNameError
from kgsql.graph.writer import content_hash
from kgsql.ingest.reader import read_database

UNIVERSITY = """
CREATE TABLE student (sid INTEGER PRIMARY KEY, name TEXT, major TEXT);
CREATE TABLE course (cid INTEGER PRIMARY KEY, title TEXT, dept TEXT);
CREATE TABLE enrolled (
    sid INTEGER REFERENCES student(sid),
    cid INTEGER REFERENCES course(cid),
    grade TEXT,
    PRIMARY KEY (sid, cid)
);
CREATE TABLE teacher (tid INTEGER PRIMARY KEY, name TEXT, cid INTEGER REFERENCES course(cid));
INSERT INTO student VALUES (1, 'Ann', 'CS'), (2, 'Bo', 'Math');
INSERT INTO course VALUES (10, 'Databases', 'CS'), (11, 'Algebra', 'Math');
INSERT INTO enrolled VALUES (1, 10, 'A'), (2, 11, 'B');
INSERT INTO teacher VALUES (100, 'Codd', 10);
"""


def node_count(graph, db: str) -> dict:
    """Tables, columns and join edges (declared and discovered) stored for ``db``."""
    counts = graph.store.run("schema_counts", database=db)[0]
    assert counts["declared_foreign_keys"] <= counts["foreign_keys"]
    return {k: counts[k] for k in ("tables", "columns", "foreign_keys")}


def test_round_trip_equals_what_was_read(schema_graph, make_sqlite, unique_name):
    db = unique_name("uni")
    path = make_sqlite(db, UNIVERSITY)
    report = schema_graph.ingest(path)
    assert (report.databases, report.tables, report.columns, report.foreign_keys) == (1, 4, 12, 3)
    stored = schema_graph.schema(db)
    assert stored.to_dict() == read_database(path).to_dict()
    assert db in schema_graph.databases()
    assert [c.name for c in schema_graph.columns(db, "Enrolled")] == ["sid", "cid", "grade"]
    assert {(fk.table, fk.ref_table) for fk in schema_graph.foreign_keys(db, "course")} == {
        ("enrolled", "course"), ("teacher", "course")}


def test_reingest_unchanged_changes_nothing(schema_graph, make_sqlite, unique_name):
    db = unique_name("uni")
    path = make_sqlite(db, UNIVERSITY)
    schema_graph.ingest(path)
    before = schema_graph.database_info(db)
    report = schema_graph.ingest(path)
    assert (report.changed, report.unchanged) == (0, 1)
    after = schema_graph.database_info(db)
    assert after == before  # not even the ingest time moved
    assert node_count(schema_graph, db) == {"tables": 4, "columns": 12, "foreign_keys": 3}


def test_changed_database_updates_graph(schema_graph, make_sqlite, unique_name):
    db = unique_name("uni")
    path = make_sqlite(db, UNIVERSITY)
    schema_graph.ingest(path, discover_joins="off")  # declared keys only: the graph must mirror the file
    conn = sqlite3.connect(path)
    conn.executescript(
        "ALTER TABLE student DROP COLUMN major;"
        "DROP TABLE teacher;"
        "CREATE TABLE dept (name TEXT PRIMARY KEY, building TEXT);"
    )
    conn.close()
    report = schema_graph.ingest(path, discover_joins="off")
    assert report.changed == 1
    stored = schema_graph.schema(db)
    assert [t.name for t in stored.tables] == ["student", "course", "enrolled", "dept"]
    assert [c.name for c in stored.table("student").columns] == ["sid", "name"]
    with pytest.raises(UnknownNameError, match="table 'teacher' not in database"):
        stored.table("teacher")
    with pytest.raises(UnknownNameError, match="did you mean 'student'"):
        stored.table("studnt")
    assert node_count(schema_graph, db) == {"tables": 4, "columns": 10, "foreign_keys": 2}
    assert stored.to_dict() == read_database(path).to_dict()


def test_join_path_uses_shortest_fk_path(schema_graph, make_sqlite, unique_name):
    db = unique_name("uni")
    schema_graph.ingest(make_sqlite(db, UNIVERSITY))
    path = schema_graph.join_path(db, "student", "teacher")
    assert path.tables == ["student", "enrolled", "course", "teacher"]
    assert path.conditions[0] == ["enrolled.sid = student.sid"]
    with pytest.raises(UnknownNameError):
        schema_graph.join_path(db, "student", "nowhere")
    with pytest.raises(UnknownNameError, match="not in the graph"):
        schema_graph.schema("no_such_database_anywhere")


def test_spatial_example_carries_geometry_and_region_descriptions(schema_graph, example_db, unique_name):
    db = unique_name("geo")
    report = schema_graph.ingest(example_db, name=db)
    assert report.spatial_columns == 3
    schema = schema_graph.schema(db)
    assert schema.is_spatial
    loc = schema.table("cities").column("Location")
    assert (loc.spatial.geometry_type, loc.spatial.srid) == ("POINT", 4326)
    assert "rivers of the example country" in schema.table("rivers").geo_description
    assert schema.table("cities").column("is_capital").value_explanation.startswith("1 = capital")
    assert schema_graph.database_info(db)["dialect"] == "spatialite" and schema.dialect == "sqlite"


def test_bad_input_leaves_graph_as_it_was(schema_graph, make_sqlite, unique_name, tmp_path):
    db = unique_name("uni")
    good = make_sqlite(db, UNIVERSITY)
    schema_graph.ingest(good)
    before = schema_graph.schema(db).to_dict()
    folder = tmp_path / "mixed"
    folder.mkdir()
    good.rename(folder / good.name)
    (folder / "broken.sqlite").write_text("not a database at all")
    with pytest.raises(DatabaseFileError, match="broken.sqlite"):
        schema_graph.ingest(folder)
    assert schema_graph.schema(db).to_dict() == before


def test_export_pictures(schema_graph, make_sqlite, unique_name, tmp_path):
    db = unique_name("uni")
    schema_graph.ingest(make_sqlite(db, UNIVERSITY))
    html = schema_graph.export(db, tmp_path / "g.html").read_text()
    assert "<svg" in html and "enrolled.sid -&gt; student.sid" in html
    svg = schema_graph.export(db, tmp_path / "g.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") >= 8
    png = schema_graph.export(db, tmp_path / "g.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_without_matplotlib_is_an_install_hint(schema_graph, make_sqlite, unique_name, tmp_path, monkeypatch):
    import sys

    from kgsql.errors import InputError

    db = unique_name("uni")
    schema_graph.ingest(make_sqlite(db, UNIVERSITY))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(InputError, match=r"needs matplotlib: pip install 'kgsql\[viz\]'"):
        schema_graph.export(db, tmp_path / "g.png")


def test_export_command_draws_the_same_picture(schema_graph, graph_root, make_sqlite, unique_name, tmp_path,
                                               capsys):
    """``python -m kgsql.graph export`` reads the graph itself (the graph package does not use the facade)."""
    import os

    from kgsql.graph.__main__ import main

    if os.environ.get("KGSQL_TEST_GRAPH_URI"):
        pytest.skip("the command is checked against the embedded server")
    db = unique_name("uni")
    schema_graph.ingest(make_sqlite(db, UNIVERSITY))
    out = tmp_path / "cli.svg"
    assert main(["export", "--db", db, "--out", str(out), "--root", str(graph_root)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert out.read_text() == schema_graph.export(db, tmp_path / "api.svg").read_text()
    assert main(["export", "--db", "no_such_db", "--out", str(out), "--root", str(graph_root)]) == 1


def test_drop_removes_everything(schema_graph, make_sqlite, unique_name):
    db = unique_name("uni")
    schema_graph.ingest(make_sqlite(db, UNIVERSITY))
    schema_graph.drop(db)
    assert db not in schema_graph.databases()
    assert schema_graph.store.run_text(
        "MATCH (c:Column) WHERE c.database = $db RETURN count(c) AS n", db=db)[0]["n"] == 0


def test_content_hash_is_stable_and_sensitive(make_sqlite):
    a = read_database(make_sqlite("h", UNIVERSITY))
    b = read_database(make_sqlite("h", UNIVERSITY))
    assert content_hash(a) == content_hash(b)
    b.tables[0].columns[0].description = "changed"
    assert content_hash(a) != content_hash(b)
