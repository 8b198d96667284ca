"""GoldQuestion pools from Spider files, query logs and cross-fold splits."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from kgsql.errors import InputError, UnknownNameError
from kgsql.eval.datasets import GoldQuestion
from kgsql.fewshot.pool import ExamplePool, FirstOf, PoolExample, SqliteSchemas


def _db(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.close()
    return path


def test_from_spider_reads_schemas_from_the_database_folder(tmp_path: Path) -> None:
    _db(tmp_path / "database" / "concert" / "concert.sqlite", "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT);")
    (tmp_path / "train.json").write_text(json.dumps([
        {"db_id": "concert", "question": "How many  singers?", "query": "SELECT count(*) FROM singer"},
        {"db_id": "concert", "question": "Names?", "query": "SELECT name FROM singer"},
    ]))
    pool = ExamplePool.from_spider(tmp_path / "train.json")
    assert [(e.id, e.question) for e in pool] == [("0", "How many singers?"), ("1", "Names?")]
    assert pool.name == "train"
    schema = pool.schema("concert")
    assert [t.name for t in schema.tables] == ["singer"] and schema.path.endswith("concert.sqlite")
    with pytest.raises(UnknownNameError, match="no SQLite file for database 'nope'"):
        pool.schema("nope")


def test_from_jsonl_query_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('# my queries\n{"question": "q1", "sql": "SELECT 1", "db_id": "a"}\n\n'
                   '{"question": "q2", "query": "SELECT 2", "db": "b", "id": "x"}\n')
    pool = ExamplePool.from_jsonl(log)
    assert [(e.id, e.db_id, e.sql) for e in pool] == [("0", "a", "SELECT 1"), ("x", "b", "SELECT 2")]
    log.write_text('{"question": "q1"}\n')
    with pytest.raises(InputError, match="needs string fields"):
        ExamplePool.from_jsonl(log)


def test_cross_fold_pool_leaves_out_the_test_databases(tmp_path: Path) -> None:
    f1 = _db(tmp_path / "tourism.sqlite", "CREATE TABLE airports (name TEXT);")
    ds = SimpleNamespace(name="spatial", split="dataset1", db_files={"tourism": f1, "traffic": None}, questions=[
        GoldQuestion("1", "tourism", "Which airports?", ["SELECT name FROM airports"]),
        GoldQuestion("2", "traffic", "Which roads?", ["SELECT name FROM roads", "SELECT 1"]),
    ])
    pool = ExamplePool.from_dataset(ds, exclude_dbs=["traffic"])
    assert [(e.id, e.db_id) for e in pool] == [("tourism:1", "tourism")]
    assert pool.name == "spatial-dataset1-without-traffic"
    assert pool.schema("tourism").tables[0].name == "airports"
    assert len(ExamplePool.from_dataset(ds).without_dbs(["tourism"])) == 1


def test_fingerprint_follows_content() -> None:
    a = ExamplePool([PoolExample("q", "SELECT 1", "d", "1")])
    assert a.fingerprint == ExamplePool([PoolExample("q", "SELECT 1", "d", "1")]).fingerprint
    assert a.fingerprint != ExamplePool([PoolExample("q", "SELECT 2", "d", "1")]).fingerprint


def test_ids_are_made_unique() -> None:
    pool = ExamplePool([PoolExample("a", "SELECT 1", "d"), PoolExample("b", "SELECT 2", "d")])
    assert [e.id for e in pool] == ["0", "1"] and pool.get("1").question == "b"


def test_first_of_schema_sources(tmp_path: Path) -> None:
    _db(tmp_path / "x.sqlite", "CREATE TABLE t (a INTEGER);")

    def graph(db_id: str):  # type: ignore[no-untyped-def]
        raise UnknownNameError(f"database '{db_id}' not in the graph")

    source = FirstOf(graph, SqliteSchemas(tmp_path))
    assert source("x").tables[0].name == "t"
    with pytest.raises(UnknownNameError, match="not in the graph; no SQLite file"):
        source("y")


def test_precompute_cli(tmp_path: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.fewshot.__main__ import main

    _db(tmp_path / "dbs" / "a.sqlite", "CREATE TABLE t (name TEXT, age INTEGER);")
    log = tmp_path / "log.jsonl"
    log.write_text('{"question": "How old is Ann?", "sql": "SELECT age FROM t WHERE name = \'Ann\'", "db_id": "a"}\n')
    assert main(["precompute", str(log), "--db-dir", str(tmp_path / "dbs"), "--encoder", "hash", "--cot"]) == 0
    out = capsys.readouterr().out
    assert "masked: 1 vectors" in out and "plain: 1 vectors" in out and "auto-CoT: 1 new" in out
    assert len(list(cache_dir.glob("*.npy"))) == 2 and len(list(cache_dir.glob("cot-*.json"))) == 1
    assert main(["precompute", str(tmp_path / "missing.json")]) == 1
