"""``python -m kgsql.eval score`` end to end on fixture datasets."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.eval.__main__ import main
from kgsql.eval.records import read_records
from kgsql.eval.score import parse_prediction_line, read_predictions


def make_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE singer (id INTEGER, name TEXT, age INTEGER);
        INSERT INTO singer VALUES (1, 'ann', 30), (2, 'bob', 40), (3, 'cid', 50);
    """)
    conn.commit()
    conn.close()


@pytest.fixture()
def spider_dir(tmp_path: Path) -> Path:
    root = tmp_path / "spider"
    root.mkdir()
    rows = [
        {"db_id": "music", "query": "SELECT count(*) FROM singer", "question": "How many?"},
        {"db_id": "music", "query": "SELECT name FROM singer ORDER BY age DESC",
         "question": "Names by age?"},
        {"db_id": "wta_1", "query": "SELECT 1", "question": "Tennis?"},
        {"db_id": "music", "query": "SELECT name, age FROM singer WHERE age > 35",
         "question": "Older?"},
    ]
    (root / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    make_db(root / "database" / "music" / "music.sqlite")
    return root


def test_parse_prediction_line_forms() -> None:
    assert parse_prediction_line("SELECT 1\tconcert_singer\n") == ("SELECT 1", "concert_singer")
    assert parse_prediction_line("SELECT 1\t----- bird -----\tfinancial") == ("SELECT 1", "financial")
    assert parse_prediction_line("  SELECT 1  ") == ("SELECT 1", None)
    assert parse_prediction_line("SELECT 'a\tb c'") == ("SELECT 'a\tb c'", None)
    assert parse_prediction_line("") == ("", None)


def test_read_predictions_text_and_bird_json(tmp_path: Path) -> None:
    txt = tmp_path / "p.sql"
    txt.write_text("SELECT 1\tdb\n\nSELECT 3\n", encoding="utf-8")
    assert read_predictions(txt) == [("SELECT 1", "db"), ("", None), ("SELECT 3", None)]
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"1": "SELECT 2\t----- bird -----\tdb", "0": "SELECT 1"}))
    assert read_predictions(js) == [("SELECT 1", None), ("SELECT 2", "db")]


def test_score_spider_end_to_end(spider_dir: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    preds = tmp_path / "pred.sql"
    preds.write_text("SELECT count(id) FROM singer\tmusic\n"
                     "SELECT name FROM singer ORDER BY age\tmusic\n"
                     "SELECT 1\twta_1\n"
                     "SELECT age, name FROM singer WHERE age >= 40\tmusic\n", encoding="utf-8")
    out = tmp_path / "score.json"
    rc = main(["score", "--dataset", "spider", "--data-dir", str(spider_dir), "--predictions",
               str(preds), "--json", str(out), "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    recs = data["records"]
    assert [r["id"] for r in recs] == ["0", "1", "2", "3"]
    assert [r["spider_ex"] for r in recs] == [1, 0, None, 1]  # 1: wrong order; 3: permuted cols
    assert [r["bird_ex"] for r in recs] == [1, 1, None, 0]
    assert recs[2]["error"] == "database file missing" and recs[2]["soft_f1"] is None
    assert (data["n"], data["n_scored"], data["n_missing_db"]) == (4, 3, 1)
    assert data["spider_ex"] == pytest.approx(2 / 3)
    assert data["missing_db_ids"] == ["wta_1"]
    assert set(data["by_difficulty"]) <= {"easy", "medium", "hard", "extra"}
    printed = capsys.readouterr().out
    assert "spider_ex" in printed and "missing database: 1" in printed


def test_score_limit_missing_predictions_and_resume(spider_dir: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    preds = tmp_path / "pred.sql"
    preds.write_text("SELECT count(*) FROM singer\n", encoding="utf-8")
    log = tmp_path / "runs" / "records.jsonl"
    args = ["score", "--dataset", "spider", "--data-dir", str(spider_dir), "--predictions",
            str(preds), "--records", str(log), "--no-progress", "--limit", "2"]
    assert main(args) == 0
    assert "only 1 predictions" in capsys.readouterr().err
    first = read_records(log)
    assert [(r.id, r.spider_ex, r.error_kind) for r in first] == [
        ("0", 1, None), ("1", 0, "no_prediction")]
    assert main(args[:-2] + ["--limit", "3"]) == 0  # resumes: only id 2 is new
    assert [r.id for r in read_records(log)] == ["0", "1", "2"]
    assert len(log.read_text().splitlines()) == 3


def test_too_many_predictions_is_an_error(spider_dir: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    preds = tmp_path / "pred.sql"
    preds.write_text("SELECT 1\n" * 5, encoding="utf-8")
    assert main(["score", "--dataset", "spider", "--data-dir", str(spider_dir),
                 "--predictions", str(preds), "--no-progress"]) == 1
    assert "not aligned" in capsys.readouterr().err


def test_db_id_mismatch_warns(spider_dir: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    preds = tmp_path / "pred.sql"
    preds.write_text("SELECT count(*) FROM singer\tother_db\n", encoding="utf-8")
    assert main(["score", "--dataset", "spider", "--data-dir", str(spider_dir),
                 "--predictions", str(preds), "--no-progress", "--limit", "1"]) == 0
    assert "another db_id" in capsys.readouterr().err


def test_score_spatial_matches_any_gold_alternative(tmp_path: Path) -> None:
    folder = tmp_path / "dataset1" / "music"
    make_db(folder / "music.sqlite")
    (folder / "QA-music-2.txt").write_text(
        "label:G S\nquestion:Oldest?\nquestionCHI:最老？\nSQL:Select max(age) from singer\n"
        "Eval:Select max(age) from singer %%% Select name, max(age) from singer\nid: music01\n\n"
        "label:S Region\nquestion:Names?\nSQL:Select name from singer\n"
        "Eval:Select name from singer\nid: music02\n", encoding="utf-8")
    preds = tmp_path / "pred.sql"
    preds.write_text("SELECT max(age), name FROM singer\nSELECT id FROM singer\n")
    out = tmp_path / "out.json"
    assert main(["score", "--dataset", "spatial", "--data-dir", str(tmp_path), "--split",
                 "dataset1", "--predictions", str(preds), "--json", str(out),
                 "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert [(r["id"], r["spider_ex"], r["matched_gold"]) for r in data["records"]] == [
        ("music01", 1, 1), ("music02", 0, None)]
    assert data["by_label"]["G S"]["spider_ex"] == 1.0
    assert data["by_tag"]["S"]["n"] == 2 and data["by_tag"]["Region"]["spider_ex"] == 0.0
