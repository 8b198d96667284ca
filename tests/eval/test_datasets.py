"""Loaders on small fixture files written here; Spider hardness rules."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.errors import InputError
from kgsql.eval.datasets import load_dataset
from kgsql.eval.datasets.bird import load_bird
from kgsql.eval.datasets.spatial import load_spatial, parse_qa_file, split_gold
from kgsql.eval.datasets.spider import load_spider
from kgsql.eval.datasets.spider_hardness import spider_hardness


def make_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE singer (id INTEGER, name TEXT)")
    conn.commit()
    conn.close()
    return path


def write_spider(root: Path) -> Path:
    rows = [
        {"db_id": "music", "query": "SELECT count(*) FROM singer", "question": "How many?",
         "SpiderSynQuestion": "What number?", "query_toks": [], "sql": {}},
        {"db_id": "gone", "query": "SELECT name FROM singer ORDER BY id", "question": "Names?",
         "SpiderSynQuestion": "Labels?"},
        {"db_id": "music",
         "query": "SELECT name FROM singer WHERE id > 1 INTERSECT SELECT name FROM singer "
                  "WHERE id < 5", "question": "Both?", "SpiderSynQuestion": "Both, syn?"},
    ]
    root.mkdir(parents=True, exist_ok=True)
    (root / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    (root / "tables.json").write_text("[]", encoding="utf-8")
    make_db(root / "database" / "music" / "music.sqlite")
    return root


def test_spider_loader(tmp_path: Path) -> None:
    ds = load_spider(write_spider(tmp_path / "spider"))
    assert [e.id for e in ds.questions] == ["0", "1", "2"]
    first = ds.questions[0]
    assert (first.db_id, first.question, first.gold) == ("music", "How many?",
                                                        ["SELECT count(*) FROM singer"])
    assert [e.difficulty for e in ds.questions] == ["easy", "easy", "hard"]
    assert "sql" not in first.extra and "query" in first.extra
    assert ds.db_path("music") == tmp_path / "spider" / "database" / "music" / "music.sqlite"
    assert ds.db_path("gone") is None
    assert [e.id for e in ds.missing_db] == ["1"] and ds.missing_db_ids == ["gone"]
    assert ds.tables_file == tmp_path / "spider" / "tables.json"


def test_spider_variants_question_field_and_db_dir(tmp_path: Path) -> None:
    spider = write_spider(tmp_path / "spider")
    syn = tmp_path / "syn"
    syn.mkdir()
    (syn / "dev.json").write_text((spider / "dev.json").read_text(), encoding="utf-8")
    ds = load_spider(syn, question_field="SpiderSynQuestion", db_dir=spider / "database")
    assert ds.questions[0].question == "What number?"
    assert ds.db_path("music") is not None
    with pytest.raises(InputError, match="no field 'nope'"):
        load_spider(spider, question_field="nope")
    other = tmp_path / "dk.json"
    other.write_text(json.dumps([{"db_id": "music", "query": "SELECT 1", "question": "q"}]))
    dk = load_spider(spider, questions_file=other)
    assert len(dk) == 1 and dk.db_path("music") is not None


def test_missing_data_dir_or_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_spider(tmp_path / "nowhere")
    with pytest.raises(InputError, match="dev.json"):
        load_spider(tmp_path)
    with pytest.raises(InputError, match="unknown dataset"):
        load_dataset("wikisql", tmp_path)


def test_bird_loader(tmp_path: Path) -> None:
    root = tmp_path / "bird"
    root.mkdir()
    rows = [
        {"question_id": 7, "db_id": "club", "question": "Q1", "evidence": "E1",
         "SQL": "SELECT 1", "difficulty": "simple"},
        {"question_id": 9, "db_id": "shop", "question": "Q2", "evidence": "",
         "SQL": "SELECT 2", "difficulty": "challenging"},
    ]
    (root / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    (root / "dev_tables.json").write_text("[]", encoding="utf-8")
    make_db(root / "dev_databases" / "club" / "club.sqlite")
    ds = load_bird(root)
    assert [e.id for e in ds.questions] == ["7", "9"]
    assert ds.questions[0].evidence == "E1" and ds.questions[0].difficulty == "simple"
    assert ds.questions[0].gold == ["SELECT 1"]
    assert [e.id for e in ds.missing_db] == ["9"]
    assert ds.tables_file == root / "dev_tables.json"
    (root / "mini_dev_sqlite.json").write_text(json.dumps(rows[:1]), encoding="utf-8")
    mini = load_dataset("bird", root, "mini_dev")
    assert len(mini) == 1 and mini.db_path("club") is not None


QA_TEXT = (
    "label:G S \r\n"
    "questionCHI:874路公交线路的全程长度是多少？\r\n"
    "evidenceCHI:\r\n"
    "nameCHI:874路公交线路以'874路'为名称表示。\r\n"
    "question:What is the total length of bus route 874?\r\n"
    "evidence:\r\n"
    "name:The bus route 874 is represented by the name '874路'.\r\n"
    "SQL:Select distance from buslines where name = '874路' %%% Select 2 * distance / 2 from buslines\r\n"
    "Eval:Select distance from buslines where name = '874路' %%% Select distance + 0 from buslines"
    " %%% Select 1\r\n"
    "id: traffic01\r\n"
    "\r\n"
    "label:S Intersection Region\r\n"
    "questionCHI:问题二\r\n"
    "evidenceCHI:证据\r\n"
    "nameCHI:\r\n"
    "question:Second question?\r\n"
    "evidence:Some evidence: with a colon.\r\n"
    "name:\r\n"
    "SQL:Select 2\r\n"
    "Eval:\r\n"
    "id: traffic02\r\n"
)


def write_spatial(root: Path, with_db: bool = True) -> Path:
    folder = root / "traffic"
    folder.mkdir(parents=True)
    (folder / "QA-traffic-2.txt").write_text(QA_TEXT, encoding="utf-8")
    if with_db:
        make_db(folder / "traffic.sqlite")
    return root


def test_parse_qa_file_and_split_gold() -> None:
    recs = parse_qa_file(QA_TEXT)
    assert len(recs) == 2
    assert recs[0]["id"] == "traffic01" and recs[0]["label"] == "G S"
    assert recs[1]["evidence"] == "Some evidence: with a colon."
    assert split_gold(recs[0]["Eval"]) == [
        "Select distance from buslines where name = '874路'",
        "Select distance + 0 from buslines", "Select 1"]
    assert split_gold(" %%% ") == []
    # no blank line between records: a repeated key starts the next one
    assert len(parse_qa_file("id: a\nquestion: q1\nid: b\nquestion: q2\n")) == 2


def test_spatial_loader_english_and_chinese(tmp_path: Path) -> None:
    root = write_spatial(tmp_path / "dataset1")
    ds = load_spatial(root)
    first, second = ds.questions
    assert (first.id, first.db_id, first.label, first.tags) == (
        "traffic01", "traffic", "G S", ["G", "S"])
    assert first.question == "What is the total length of bus route 874?"
    assert len(first.gold) == 3  # from Eval
    assert first.extra["sql"][1] == "Select 2 * distance / 2 from buslines"
    assert first.hints.startswith("The bus route 874")
    assert second.gold == ["Select 2"]  # empty Eval falls back to SQL
    assert second.label == "S Intersection Region" and second.difficulty is None
    zh = load_spatial(root, lang="zh")
    assert zh.questions[0].question == "874路公交线路的全程长度是多少？"
    assert zh.questions[1].evidence == "证据"
    assert zh.questions[0].hints.startswith("874路公交线路")
    assert ds.db_path("traffic") == root / "traffic" / "traffic.sqlite"
    with pytest.raises(InputError, match="lang"):
        load_spatial(root, lang="fr")


def test_spatial_splits_and_missing_db(tmp_path: Path) -> None:
    root = tmp_path / "spatial"
    write_spatial(root / "dataset1")
    write_spatial(root / "dataset2", with_db=False)
    with pytest.raises(InputError, match="--split dataset1\\|dataset2"):
        load_spatial(root)
    assert len(load_dataset("spatial", root, "dataset1").missing_db) == 0
    ds2 = load_spatial(root, "dataset2")
    assert ds2.split == "dataset2" and len(ds2.missing_db) == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no QA"):
        load_spatial(tmp_path / "empty")


@pytest.mark.parametrize(("sql", "hardness"), [
    ("SELECT count(*) FROM singer", "easy"),
    ("SELECT name FROM singer WHERE age > 20", "easy"),
    ("SELECT name, country, age FROM singer ORDER BY age DESC", "medium"),
    ("SELECT T2.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T1.x = 1", "medium"),
    # a nested query alone makes it hard (component2 = 1)
    ("SELECT name FROM a WHERE id NOT IN (SELECT id FROM b)", "hard"),
    ("SELECT name FROM a WHERE x = 1 OR y LIKE '%z%' ORDER BY name LIMIT 1", "extra"),
    ("SELECT name FROM a INTERSECT SELECT name FROM b", "hard"),
    ("SELECT a, b FROM t WHERE c = 1 AND d = 2 GROUP BY a, b ORDER BY count(*) DESC LIMIT 3",
     "extra"),
    ("SELECT avg(x), max(x) FROM t", "medium"),
    ("NOT SQL AT ALL (", None),
])
def test_spider_hardness(sql: str, hardness: str | None) -> None:
    assert spider_hardness(sql) == hardness
