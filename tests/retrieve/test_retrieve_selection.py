"""End-to-end selection on a small real SQLite database with known answers."""
from __future__ import annotations

from pathlib import Path

from kgsql.retrieve.selection import (
    REASON_DESCRIPTION, REASON_JOIN, REASON_PRIMARY_KEY, REASON_VALUE, SchemaSelection,
)


def _choice(sel: SchemaSelection, table: str, column: str):  # type: ignore[no-untyped-def]
    for c in sel.columns:
        if (c.table, c.column) == (table, column):
            return c
    raise AssertionError(f"{table}.{column} not selected; got {sorted(sel.column_keys())}")


def test_column_found_by_description(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    sel = retriever.select(school, "Which students have a grade point average above 3.5?", db_path=school_db)
    c = _choice(sel, "students", "sc_avg")
    assert REASON_DESCRIPTION in c.reasons or "name" in c.reasons
    assert "rooms" not in sel.tables


def test_column_found_by_value(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    sel = retriever.select(school, "How many students live in Shelbyville?", db_path=school_db)
    c = _choice(sel, "students", "home_city")
    assert REASON_VALUE in c.reasons
    assert any(v.value == "Shelbyville" and v.kind == "exact" for v in sel.values)


def test_synonym_like_wording(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    sel = retriever.select(school, "When was each pupil born?", db_path=school_db)
    _choice(sel, "students", "dob")


def test_misspelt_value(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    sel = retriever.select(school, "List the students from Sprinfield", db_path=school_db)
    matches = [v for v in sel.values if v.value == "Springfield"]
    assert matches and matches[0].kind in {"fuzzy", "partial"}
    _choice(sel, "students", "home_city")


def test_join_completion_adds_bridge_table(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    retr = retriever.with_config(table_threshold=0.5, column_threshold=0.5, top_k_floor=2)
    sel = retr.select(school, "List the course titles of the student named Student Number3", db_path=school_db)
    assert {"students", "courses"} <= set(sel.tables)
    assert "enrollments" in sel.tables
    assert REASON_JOIN in _choice(sel, "enrollments", "student_id").reasons
    assert REASON_JOIN in _choice(sel, "enrollments", "course_id").reasons
    assert REASON_PRIMARY_KEY in _choice(sel, "courses", "course_id").reasons


def test_selection_is_deterministic(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    q = "What is the average number of credits of courses in the CHEM department?"
    a = retriever.select(school, q, db_path=school_db).to_dict()
    b = retriever.select(school, q, db_path=school_db).to_dict()
    assert a == b


def test_to_schema_is_joinable_sub_schema(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    sel = retriever.select(school, "Which courses did students from Springfield take?", db_path=school_db)
    sub = sel.to_schema(school)
    assert [t.name for t in sub.tables] == sel.tables
    assert {(t.name, c.name) for t in sub.tables for c in t.columns} == sel.column_keys()
    for fk in sub.foreign_keys:
        assert (fk.table, fk.column) in sel.column_keys() and (fk.ref_table, fk.ref_column) in sel.column_keys()
    assert school.table("students").column("sc_avg").description  # the full schema is untouched
    assert sub is not school


def test_without_database_file(retriever, school) -> None:  # type: ignore[no-untyped-def]
    school.path = ""
    sel = retriever.select(school, "What is the capacity of each room?")
    _choice(sel, "rooms", "capacity")
    assert sel.values == []


def test_empty_inputs(retriever, school) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from kgsql.errors import InputError
    from kgsql.schema.model import DatabaseSchema

    with pytest.raises(InputError):
        retriever.select(school, "   ")
    assert retriever.select(DatabaseSchema("empty"), "anything").columns == []


def test_fresh_schema_objects_reuse_indexes(retriever, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    from retrieve_school import school_schema  # type: ignore[import-not-found]

    a = retriever.prepare(school_schema(school_db), db_path=school_db)
    b = retriever.prepare(school_schema(school_db), db_path=school_db)  # e.g. re-read from the graph per call
    assert a is not b
    assert a.index is b.index and a.values is b.values  # no re-encoding, no value re-indexing


def test_choose_on_evidence_is_what_select_returns(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    """The public selection step, as calibration and threshold sweeps call it."""
    q = "Which courses did students from Springfield take?"
    prep = retriever.prepare(school, db_path=school_db)
    chosen = retriever.choose(prep, q, retriever.scores(school, q, prepared=prep))
    selected = retriever.select(school, q, db_path=school_db)
    assert chosen.tables == selected.tables and chosen.column_keys() == selected.column_keys()
    strict = retriever.with_config(table_threshold=1.0, column_threshold=1.0)
    assert len(strict.choose(prep, q, retriever.scores(school, q, prepared=prep)).columns) <= len(chosen.columns)


def test_calibration_file_from_the_environment(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from kgsql.errors import InputError
    from kgsql.retrieve.retriever import CALIBRATION_FILE, ENV_CALIBRATION, Calibration, calibration_file

    monkeypatch.delenv(ENV_CALIBRATION, raising=False)
    assert calibration_file() == CALIBRATION_FILE  # the shipped default
    shipped = Calibration.load()
    other = tmp_path / "other.json"
    Calibration(shipped.column_model, shipped.table_model, shipped.config, {"trained_on": "elsewhere"}).save(other)
    monkeypatch.setenv(ENV_CALIBRATION, str(other))
    assert calibration_file() == other and Calibration.load().info == {"trained_on": "elsewhere"}
    assert Calibration.load(CALIBRATION_FILE).info == shipped.info  # an explicit path still wins
    monkeypatch.setenv(ENV_CALIBRATION, str(tmp_path / "missing.json"))
    with pytest.raises(InputError, match="missing.json"):
        Calibration.load()


def test_every_chosen_table_brings_its_name_column(retriever, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A table chosen to connect others, or for one key, still brings its name: "which publisher published
    the one with the lowest Intelligence" needs superhero, and a question about a hero asks for its name
    (BIRD superhero: superhero_name was the column most often missed)."""
    import sqlite3

    from kgsql.ingest.reader import read_database

    path = tmp_path / "heroes.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE publisher (id INTEGER PRIMARY KEY, publisher_name TEXT);
        CREATE TABLE superhero (id INTEGER PRIMARY KEY, superhero_name TEXT, height_cm INTEGER,
                                publisher_id INTEGER REFERENCES publisher(id));
        CREATE TABLE attribute (id INTEGER PRIMARY KEY, attribute_name TEXT);
        CREATE TABLE hero_attribute (hero_id INTEGER REFERENCES superhero(id),
                                     attribute_id INTEGER REFERENCES attribute(id), attribute_value INTEGER);
        INSERT INTO publisher VALUES (1, 'Marvel Comics'), (2, 'DC Comics');
        INSERT INTO superhero VALUES (1, 'A-Bomb', 203, 1), (2, 'Abe Sapien', 191, 2);
        INSERT INTO attribute VALUES (1, 'Intelligence'), (2, 'Strength');
        INSERT INTO hero_attribute VALUES (1, 1, 35), (2, 1, 80), (1, 2, 100), (2, 2, 30);""")
    conn.commit()
    conn.close()
    schema = read_database(path)
    sel = retriever.with_config(table_threshold=0.5).select(
        schema, "Which publisher published the one with the lowest Intelligence attribute value?", db_path=path)
    assert "superhero" in sel.tables
    assert ("superhero", "superhero_name") in {(c.table, c.column) for c in sel.columns}


def test_a_table_the_question_names_is_chosen(retriever, school, school_db: Path) -> None:  # type: ignore[no-untyped-def]
    """A table the question names (its words in a row, any ending) is chosen, whatever its calibrated score:
    "list the name of the event they were spent on" needs `event` (BIRD student_club, missed before)."""
    q = "How many students are there, and in which buildings are the rooms?"
    strict = retriever.with_config(table_threshold=1.0, column_threshold=1.0, top_k_floor=0, value_threshold=9.0,
                                   complete_joins=False)
    named = strict.select(school, q, db_path=school_db)
    assert {"students", "buildings", "rooms"} <= set(named.tables)
    assert "courses" not in named.tables and "enrollments" not in named.tables
    unnamed = strict.with_config(include_named_tables=False).select(school, q, db_path=school_db)
    assert not {"students", "buildings", "rooms"} <= set(unnamed.tables)  # the rule, not the scores, chose them
