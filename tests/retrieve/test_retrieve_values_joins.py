"""Value index (exact, partial, misspelt, bounded) and join-path completion."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from kgsql.schema.joins import complete_joins
from kgsql.retrieve.values import ValueIndex, ValueLimits, extract_values
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table


def test_value_search_exact_partial_fuzzy(school_db: Path, tmp_path: Path) -> None:
    vi = ValueIndex.for_database(school_db, cache_dir=tmp_path)
    exact = vi.search("students living in Capital City")
    assert exact[0].value == "Capital City" and exact[0].kind == "exact" and exact[0].score == 1.0
    fuzzy = vi.search("courses on Organik Chemestry")
    assert fuzzy and fuzzy[0].value == "Organic Chemistry" and fuzzy[0].kind == "fuzzy"
    partial = vi.search("the Medieval course", min_score=0.4)  # partial mentions score lower
    assert any(m.value == "Medieval History" and m.kind == "partial" for m in partial)
    assert vi.search("how many rows are there") == []


def test_value_extraction_is_bounded_and_cached(tmp_path: Path) -> None:
    db = tmp_path / "big.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, tag TEXT, note TEXT, n INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?)",
                     [(i, f"tag{i % 50}" if i % 3 else "common", "x" * 200, i) for i in range(5000)])
    conn.commit()
    conn.close()
    limits = ValueLimits(per_column=10, scan_rows=1000, max_chars=80)
    entries = extract_values(db, limits=limits)
    tags = [v for t, c, v in entries if c == "tag"]
    assert len(tags) == 10 and tags[0] == "common"  # most frequent first, capped
    assert not any(c in ("note", "n") for _t, c, _v in entries)  # long text and numbers skipped
    ValueIndex.for_database(db, limits=limits, cache_dir=tmp_path)
    cached = list(tmp_path.glob("values-big-*.json.gz"))
    assert len(cached) == 1
    again = ValueIndex.for_database(db, limits=limits, cache_dir=tmp_path)
    assert len(again) == len(entries)


def _schema(tables: dict[str, list[str]], fks: list[tuple[str, str, str, str]]) -> DatabaseSchema:
    return DatabaseSchema(
        name="s",
        tables=[Table(t, [Column(c, is_primary_key=(i == 0)) for i, c in enumerate(cols)]) for t, cols in tables.items()],
        foreign_keys=[ForeignKey(*fk) for fk in fks],
    )


def test_a_server_that_is_down_is_asked_once_and_its_missing_values_are_not_cached(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    import pytest

    from kgsql.db import engines
    from kgsql.errors import QueryExecutionError

    url = "postgresql://kg:secret@127.0.0.1:1/down"
    columns = [Column(f"c{i}", "TEXT") for i in range(6)]
    schema = DatabaseSchema("down", tables=[Table("t", columns), Table("u", columns)], path=url, dialect="postgres")
    asked: list[str] = []
    real = engines.engine_for

    def counted(db):  # type: ignore[no-untyped-def]
        asked.append(str(db))
        return real(db)

    monkeypatch.setattr(engines, "engine_for", counted)
    with pytest.raises(QueryExecutionError, match="cannot read the values of") as caught:
        extract_values(url, schema)
    assert "secret" not in str(caught.value) and len(asked) == 1  # one attempt, not one per column (12)
    index = ValueIndex.for_database(url, schema, cache_dir=tmp_path)
    assert len(index) == 0 and not index.reachable
    assert not list(tmp_path.glob("values-*"))  # a later run, the server up, reads them


def test_a_retriever_keeps_nothing_of_a_database_whose_server_was_down(retriever, monkeypatch) -> None:
    url = "postgresql://kg@127.0.0.1:1/down"
    schema = DatabaseSchema("down", tables=[Table("t", [Column("name", "TEXT")])], path=url, dialect="postgres")
    built: list[str] = []
    real = ValueIndex.for_database

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        built.append("values")
        return real(*args, **kwargs)

    monkeypatch.setattr(ValueIndex, "for_database", counted)
    first = retriever.prepare(schema)
    assert first.values is not None and not first.values.reachable
    retriever.prepare(schema)  # the same schema object, asked again: its values are read again
    assert built == ["values", "values"]


def test_join_completion_many_to_many(school) -> None:  # type: ignore[no-untyped-def]
    jc = complete_joins(school, ["students", "courses"])
    assert jc.added_tables == ["enrollments"]
    assert set(jc.key_columns) == {("enrollments", "student_id"), ("students", "student_id"),
                                   ("enrollments", "course_id"), ("courses", "course_id")}
    assert not jc.disconnected


def test_join_completion_steiner_three_tables() -> None:
    s = _schema(
        {"a": ["a_id"], "b": ["b_id", "a_id"], "hub": ["hub_id", "b_id"], "c": ["c_id", "hub_id"],
         "d": ["d_id", "hub_id"], "far": ["far_id", "a_id"]},
        [("b", "a_id", "a", "a_id"), ("hub", "b_id", "b", "b_id"), ("c", "hub_id", "hub", "hub_id"),
         ("d", "hub_id", "hub", "hub_id"), ("far", "a_id", "a", "a_id")],
    )
    jc = complete_joins(s, ["a", "c", "d"])
    assert jc.added_tables == ["b", "hub"]  # the tree, not the unrelated 'far'
    again = complete_joins(s, ["d", "c", "a"])
    assert again.added_tables == jc.added_tables and again.key_columns == jc.key_columns


def test_join_completion_disconnected() -> None:
    s = _schema({"a": ["id"], "b": ["id"]}, [])
    jc = complete_joins(s, ["a", "b"])
    assert jc.disconnected and jc.added_tables == []
