"""``kgsql.lab.flag_rate`` on a small records file over a real database: the shares it reports, and bad
input as one line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shop_db import SCRIPT

from kgsql.lab.flag_rate import main


def _records(folder: Path) -> Path:
    import sqlite3

    (folder / "db" / "rate_shop").mkdir(parents=True)
    conn = sqlite3.connect(folder / "db" / "rate_shop" / "rate_shop.sqlite")
    conn.executescript(SCRIPT)
    conn.close()
    rows: list[dict[str, Any]] = [
        {"id": "1", "db_id": "rate_shop", "question": "How many customers are there?",
         "pred": "SELECT count(*) FROM customers", "spider_ex": 1, "error": None, "rounds": 1,
         "extra": {"candidates": ["SELECT count(*) FROM customers"], "selection": {"tables": ["customers"]},
                   # recorded by older code as another answer; read again, the same count
                   "opinions": [{"sql": "SELECT count(customer_id) FROM customers", "agrees": False},
                                {"sql": "SELECT nothing FROM nowhere", "agrees": None}]}},
        {"id": "2", "db_id": "rate_shop", "question": "Which customers placed orders?",
         "pred": "SELECT c.name FROM customers AS c JOIN performers AS p ON c.customer_id = p.performer_id",
         "spider_ex": 0, "error": None, "rounds": 1,
         "extra": {"candidates": [], "selection": {"tables": ["customers", "orders", "performers"]}}},
        {"id": "3", "db_id": "rate_shop", "question": "Who lives in Oslo?",
         "pred": "SELECT name FROM customers WHERE city = 'Oslo'", "spider_ex": 0, "error": None, "rounds": 1,
         "extra": {"opinions": [{"sql": "SELECT name FROM performers WHERE city = 'Oslo'", "agrees": True}]}},
    ]
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_shares_and_each_flag(tmp_path: Path, capsys: Any) -> None:
    records = _records(tmp_path)
    out = tmp_path / "report.json"
    assert main([str(records), "--databases", str(tmp_path / "db"), "--graph-root", str(tmp_path / "graph"),
                 "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert (report["wrong"], report["right"], report["wrong_flagged"], report["right_clean"]) == (2, 1, 1.0, 1.0)
    assert report["by_flag"] == {"empty-result": {"wrong": 1, "right": 0}, "no-edge-join": {"wrong": 1, "right": 0},
                                 "other-reading": {"wrong": 1, "right": 0}, "unused-table": {"wrong": 1, "right": 0}}
    assert [r["flags"] for r in report["per_record"]] == [[], ["no-edge-join", "unused-table", "empty-result"],
                                                          ["other-reading"]]
    printed = capsys.readouterr().out
    assert "wrong answers with >= 1 flag: 100.0 % (goal >= 60 %)" in printed
    from kgsql.graph.embedded import running_server

    assert running_server(tmp_path / "graph") is None  # the throwaway graph's server does not outlive the tool


def test_readings_scored_only_where_the_model_was_unsure(tmp_path: Path, capsys: Any) -> None:
    records = _records(tmp_path)
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    rows[2]["extra"]["opinions"] = [{"sql": "SELECT name FROM customers WHERE city = 'Rome'", "agrees": False}]
    rows[2]["extra"]["least_sure"] = {"name": "city", "probability": 0.9}  # sure: opinions_below=0.6 asks none
    rows[0]["extra"]["least_sure"] = {"name": "customers", "probability": 0.3}
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "report.json"
    args = [str(records), "--databases", str(tmp_path / "db"), "--graph-root", str(tmp_path / "graph"),
            "--out", str(out)]
    assert main(args) == 0
    report = json.loads(out.read_text())
    assert report["with_readings"] == 2 and report["per_record"][2]["flags"] == ["other-reading"]
    assert main([*args, "--opinions-below", "0.6"]) == 0
    report = json.loads(out.read_text())
    assert report["with_readings"] == 1 and report["per_record"][2]["flags"] == []
    assert "answers with readings (opinions): 1" in capsys.readouterr().out


def test_bad_input_is_one_line(tmp_path: Path, capsys: Any) -> None:
    assert main([str(tmp_path / "nope.jsonl"), "--databases", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"kgsql.lab.flag_rate: error: records file not found: {tmp_path / 'nope.jsonl'}\n"
    (tmp_path / "r.jsonl").write_text('{"db_id": "absent", "question": "q", "pred": "SELECT 1"}\n')
    assert main([str(tmp_path / "r.jsonl"), "--databases", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("kgsql.lab.flag_rate: error: no database file for absent under ")
