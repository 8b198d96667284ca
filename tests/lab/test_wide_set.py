"""Issue 30's wide set on a small Spider-format folder: databases merged into one file (rows and declared keys
as they were, a database whose table name is taken passed over), every gold query answering the same on the
wide file as on its own, the two question files aligned; bad input as one line, nothing half-written."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.lab import wide_set

DATABASES = {
    "music": """CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, age INTEGER);
                CREATE TABLE song (song_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id),
                                   title TEXT);
                INSERT INTO singer VALUES (1, 'Liliane', 31), (2, 'Bo', 45);
                INSERT INTO song VALUES (10, 1, 'Rain'), (11, 2, 'Snow'), (12, 2, 'Hail');""",
    "pets": """CREATE TABLE pet (pet_id INTEGER PRIMARY KEY, kind TEXT, weight REAL);
               INSERT INTO pet VALUES (1, 'dog', 12.5), (2, 'cat', 4.0);""",
    "shows": """CREATE TABLE Singer (id INTEGER PRIMARY KEY, stage TEXT);
                INSERT INTO Singer VALUES (1, 'main');""",  # `singer` in another case: never beside music
}
QUESTIONS = [
    ("music", "How many songs has Bo?",
     "SELECT count(*) FROM singer AS T1 JOIN song AS T2 ON T1.singer_id = T2.singer_id WHERE T1.name = 'Bo'"),
    ("pets", "What is the weight of the dog?", "SELECT weight FROM pet WHERE kind = 'dog'"),
    ("shows", "Which stages are there?", "SELECT stage FROM Singer"),
    ("music", "List the song titles.", "SELECT title FROM song ORDER BY title"),
]


def _spider(folder: Path) -> Path:
    for db, script in DATABASES.items():
        (folder / "database" / db).mkdir(parents=True)
        with sqlite3.connect(folder / "database" / db / f"{db}.sqlite") as conn:
            conn.executescript(script)
    rows = [{"db_id": db, "question": q, "query": g} for db, q, g in QUESTIONS]
    (folder / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    return folder


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_merged_file_answers_every_gold_query_as_its_own_database(tmp_path: Path, seed: int) -> None:
    spider = _spider(tmp_path / "spider")
    out = tmp_path / "wide"
    out.mkdir()
    counts = wide_set.build_wide_set(spider, out, tables=10, questions=10, seed=seed)
    wide = out / "database" / "wide" / "wide.sqlite"
    dev = json.loads((out / "dev.json").read_text(encoding="utf-8"))
    own = json.loads((out / "own.json").read_text(encoding="utf-8"))
    merged = {db for db in DATABASES if any(r["source_db"] == db for r in dev)}
    assert "pets" in merged and len(merged & {"music", "shows"}) == 1  # a taken name (any case) passes one over
    assert counts == {"databases": 2, "tables": 3 if "music" in merged else 2, "questions": len(dev),
                      "gold_not_rewritten": 0}
    assert [r["question"] for r in dev] == [r["question"] for r in own]
    assert {r["db_id"] for r in dev} == {"wide"} and [r["db_id"] for r in own] == [r["source_db"] for r in own]
    for row in own:
        source = spider / "database" / row["db_id"] / f"{row['db_id']}.sqlite"
        assert _rows(wide, row["query"]) == _rows(source, row["query"])
    if "music" in merged:  # declared keys come along with the CREATE statements
        assert _rows(wide, "SELECT \"table\", \"to\" FROM pragma_foreign_key_list('song')") == [("singer", "singer_id")]


def test_prefixed_set_holds_every_database_and_rewritten_gold(tmp_path: Path) -> None:
    """Issue 33's one wide schema: `<db>__<table>` for every table (`singer` and `Singer` both kept), keys
    following the new names, each gold query rewritten and answering as on its own database, and a
    tables.json linking reads for both splits."""
    spider = _spider(tmp_path / "spider")
    (spider / "tables.json").write_text(json.dumps([
        {"db_id": "music", "table_names_original": ["singer", "song"], "table_names": ["singer", "song"],
         "column_names_original": [[-1, "*"], [0, "singer_id"], [0, "name"], [0, "age"], [1, "song_id"],
                                   [1, "singer_id"], [1, "title"]],
         "column_names": [[-1, "*"], [0, "singer id"], [0, "name"], [0, "age"], [1, "song id"], [1, "singer id"],
                          [1, "title"]],
         "column_types": ["text", "number", "text", "number", "number", "number", "text"],
         "primary_keys": [1, 4], "foreign_keys": [[5, 1]]},
        {"db_id": "pets", "table_names_original": ["pet"], "table_names": ["pet"],
         "column_names_original": [[-1, "*"], [0, "pet_id"], [0, "kind"], [0, "weight"]],
         "column_names": [[-1, "*"], [0, "pet id"], [0, "kind"], [0, "weight"]],
         "column_types": ["text", "number", "text", "number"], "primary_keys": [1], "foreign_keys": []},
    ]), encoding="utf-8")
    out = tmp_path / "wide"
    out.mkdir()
    counts = wide_set.build_wide_set(spider, out, tables=100, questions=10, seed=0, prefix=True)
    wide = out / "database" / "wide" / "wide.sqlite"
    assert counts == {"databases": 3, "tables": 4, "questions": 4, "gold_not_rewritten": 0}
    assert {t for (t,) in _rows(wide, "SELECT name FROM sqlite_master WHERE type = 'table'")} == {
        "music__singer", "music__song", "pets__pet", "shows__Singer"}
    assert _rows(wide, "SELECT \"table\", \"to\" FROM pragma_foreign_key_list('music__song')") == [
        ("music__singer", "singer_id")]
    dev = json.loads((out / "dev.json").read_text(encoding="utf-8"))
    own = json.loads((out / "own.json").read_text(encoding="utf-8"))
    for mine, theirs in zip(dev, own):
        source = spider / "database" / theirs["db_id"] / f"{theirs['db_id']}.sqlite"
        assert sorted(_rows(wide, mine["query"])) == sorted(_rows(source, theirs["query"]))
    bo = next(r["query"] for r in dev if "Bo" in r["question"])
    assert "music__singer AS T1" in bo and "music__song AS T2" in bo
    assert "FROM music__song AS song" in next(r["query"] for r in dev if "titles" in r["question"])
    tables = {e["db_id"]: e for e in json.loads((out / "tables.json").read_text(encoding="utf-8"))}
    assert set(tables) == {"wide", "music", "pets"}  # shows has no entry in this tables.json
    assert tables["wide"]["table_names_original"] == ["music__singer", "music__song", "pets__pet"]
    assert tables["wide"]["foreign_keys"] == [[5, 1]] and tables["wide"]["primary_keys"] == [1, 4, 7]
    assert wide_set.prefixed_query("SELECT x FROM (", "music", {"singer"}) is None


def test_questions_are_sampled_and_kept_in_dev_order(tmp_path: Path) -> None:
    spider = _spider(tmp_path / "spider")
    out = tmp_path / "wide"
    out.mkdir()
    wide_set.build_wide_set(spider, out, tables=10, questions=1, seed=0)
    dev = json.loads((out / "dev.json").read_text(encoding="utf-8"))
    assert len(dev) == 1 and QUESTIONS[dev[0]["spider_index"]][1] == dev[0]["question"]


def test_cli_bad_input_is_one_line_and_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spider = _spider(tmp_path / "spider")
    assert wide_set.main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "a")]) == 1
    assert "no Spider dev.json" in capsys.readouterr().err and not (tmp_path / "a").exists()
    assert wide_set.main([str(spider), "--out", str(tmp_path / "b"), "--tables", "0"]) == 1
    assert capsys.readouterr().err.strip().count("\n") == 0 and not (tmp_path / "b").exists()
    assert wide_set.main([str(spider), "--out", str(tmp_path / "c"), "--tables", "2", "--seed", "1"]) == 0
    assert (tmp_path / "c" / "dev.json").is_file() and not (tmp_path / "c.partial").exists()
    assert wide_set.main([str(spider), "--out", str(tmp_path / "c")]) == 1  # never written over
    assert "exists" in capsys.readouterr().err
