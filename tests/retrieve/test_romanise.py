"""English questions against Chinese cell values: pinyin forms in the value index, the hint names the stored value."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from kgsql.generate.answer import Answer
from kgsql.retrieve.romanise import romanised_forms
from kgsql.retrieve.values import ValueIndex
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.stages.hints import GraphHints
from kgsql.stages.state import QuestionState


def test_forms_write_the_name_as_one_word_and_its_endings_in_english() -> None:
    assert romanised_forms("东风路") == (("dongfeng road", True), ("dongfeng", False))
    assert romanised_forms("北京市") == (("beijing city", True), ("beijing", False))
    assert [f for f, _ in romanised_forms("岳阳东站")] == ["yueyang east station", "yueyang east", "yueyang"]
    assert romanised_forms("阿克苏/温宿") == (("akesu", True), ("wensu", True))    # each name of a pair
    assert romanised_forms("东湖") == (("donghu", True),)                  # a two-character name keeps its ending
    assert romanised_forms("Berlin") == () and romanised_forms("") == ()


def _places(tmp_path: Path) -> Path:
    path = tmp_path / "places.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE roads (id INTEGER PRIMARY KEY, name TEXT, kind TEXT)")
    conn.executemany("INSERT INTO roads (name, kind) VALUES (?, ?)",
                     [("东风路", "main"), ("中山路", "main"), ("东风大道", "avenue"), ("Ring Road", "main")])
    conn.execute("CREATE TABLE airports (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO airports (name) VALUES (?)", [("阿克苏/温宿",), ("北京首都",)])
    conn.commit()
    conn.close()
    return path


def test_the_index_finds_the_stored_value_from_its_pinyin(tmp_path: Path) -> None:
    index = ValueIndex.for_database(_places(tmp_path), use_cache=False)
    road = index.search("Which roads cross Dongfeng Road?")
    assert [(m.table, m.column, m.value, m.kind) for m in road[:1]] == [("roads", "name", "东风路", "romanised")]
    assert road[0].score == 1.0 and all(m.value != "中山路" for m in road)
    assert [m.value for m in index.search("Which city is Wensu Airport in?")][:1] == ["阿克苏/温宿"]
    assert [m.kind for m in index.search("Where does Ring Road go?")][:1] == ["exact"]


def test_the_hint_names_the_stored_value(tmp_path: Path) -> None:
    question = "Which roads cross Dongfeng Road?"
    schema = DatabaseSchema("places", [Table("roads", [Column("id", "INTEGER"), Column("name", "TEXT")])])
    hits = ValueIndex.for_database(_places(tmp_path), use_cache=False).search(question)
    state = QuestionState(question, "places", schema, Answer(question, "places"), values=hits)
    GraphHints(joins=False, meanings=False).run(state)
    assert state.hints == ["'东风路' is a value of roads.name."]
