"""Issue 34's refusal set on a small Spider-format folder: which column each question loses, the copies
without it (the gold query fails there, the source is untouched), and the scorer's shares, recorded and
replayed; bad input as one line."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from kgsql.lab import refusal_score, refusal_set

SCRIPT = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
CREATE TABLE song (song_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id), title TEXT);
INSERT INTO singer VALUES (1, 'Liliane', 'France', 31), (2, 'Bo', 'Sweden', 45);
INSERT INTO song VALUES (10, 1, 'Rain'), (11, 2, 'Snow');
"""
QUESTIONS = [
    ("What is the average age of singers?", "SELECT avg(age) FROM singer"),
    ("How many singers are there?", "SELECT count(*) FROM singer"),  # no column to hide
    ("What are the titles of songs by French singers?",
     "SELECT T2.title FROM singer AS T1 JOIN song AS T2 ON T1.singer_id = T2.singer_id WHERE T1.country = 'France'"),
    ("How many songs are there?", "SELECT count(*) FROM song"),
]


def _spider(folder: Path) -> Path:
    (folder / "database" / "music").mkdir(parents=True)
    conn = sqlite3.connect(folder / "database" / "music" / "music.sqlite")
    conn.executescript(SCRIPT)
    conn.close()
    rows = [{"db_id": "music", "question": q, "query": g} for q, g in QUESTIONS]
    (folder / "dev.json").write_text(json.dumps(rows), encoding="utf-8")
    return folder


def _columns(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_the_set_hides_a_needed_column_and_keeps_the_rest(tmp_path: Path, capsys: Any) -> None:
    spider = _spider(tmp_path / "spider")
    out = tmp_path / "set"
    assert refusal_set.main([str(spider), "--out", str(out), "--n", "2", "--seed", "0"]) == 0
    assert "2 hidden-column questions, 2 untouched" in capsys.readouterr().out
    rows = json.loads((out / "dev.json").read_text())
    hidden = [r for r in rows if r["refusal_case"]]
    assert {r["question"] for r in hidden} == {QUESTIONS[0][0], QUESTIONS[2][0]}
    for row in hidden:
        case = row["refusal_case"]
        copy = out / "database" / row["db_id"] / f"{row['db_id']}.sqlite"
        assert case["column"] not in _columns(copy, case["table"])  # gone from the copy...
        assert case["column"] in _columns(spider / "database" / "music" / "music.sqlite", case["table"])  # not here
        assert case["column"] not in ("singer_id", "song_id")  # keys are never hidden
        with sqlite3.connect(copy) as conn:
            try:
                conn.execute(row["query"])
                raise AssertionError("the gold query still runs without its column")
            except sqlite3.OperationalError as exc:
                assert "no such column" in str(exc)
    by_question = {r["question"]: r["db_id"] for r in hidden}
    assert by_question[QUESTIONS[0][0]] == "music__no_singer_age"  # the only column that question reads
    untouched = [r for r in rows if r["refusal_case"] is None]
    assert len(untouched) == 2 and all(r["db_id"] == "music" for r in untouched)
    assert (out / "database" / "music" / "music.sqlite").is_file()
    assert not (tmp_path / "set.partial").exists()


def test_scores_recorded_and_replayed(tmp_path: Path, capsys: Any) -> None:
    spider = _spider(tmp_path / "spider")
    out = tmp_path / "set"
    refusal_set.main([str(spider), "--out", str(out), "--n", "1", "--seed", "0"])
    rows = json.loads((out / "dev.json").read_text())
    hidden = next(r for r in rows if r["refusal_case"])
    plain = next(r for r in rows if r["refusal_case"] is None)
    records = [
        {"id": "0", "db_id": hidden["db_id"], "question": hidden["question"], "pred": "", "spider_ex": 0,
         "extra": {"candidates": [hidden["query"]], "refusal": "cannot answer: it"}},  # the gold, column gone
        {"id": "1", "db_id": plain["db_id"], "question": plain["question"], "pred": plain["query"], "spider_ex": 1,
         "extra": {"candidates": [plain["query"]], "refusal": ""}},
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    report = tmp_path / "report.json"
    assert refusal_score.main([str(path), "--set", str(out), "--out", str(report)]) == 0
    data = json.loads(report.read_text())
    assert (data["hidden_refused"], data["hidden"], data["untouched_refused"], data["untouched_ex"]) == (1, 1, 0, 1.0)
    assert "hidden   : 1/1 refused (1.0; goal >= 0.8)" in capsys.readouterr().out
    assert refusal_score.main([str(path), "--set", str(out), "--replay", "--out", str(report)]) == 0
    replayed = json.loads(report.read_text())
    assert (replayed["hidden_refused"], replayed["untouched_refused"]) == (1, 0)
    assert f"nothing for '{hidden['refusal_case']['column']}" in replayed["refusals"][0]["refusal"]  # "titles"


def test_bad_input_is_one_line(tmp_path: Path, capsys: Any) -> None:
    assert refusal_set.main([str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err == f"kgsql.lab.refusal_set: error: no Spider dev.json in {tmp_path}\n"
    assert not (tmp_path / "x").exists()
    spider = _spider(tmp_path / "spider")
    (tmp_path / "taken").mkdir()
    assert refusal_set.main([str(spider), "--out", str(tmp_path / "taken")]) == 1
    assert "exists: give a new folder" in capsys.readouterr().err
    assert refusal_score.main([str(tmp_path / "none.jsonl"), "--set", str(spider)]) == 1
    assert capsys.readouterr().err.startswith("kgsql.lab.refusal_score: error: ")
    (tmp_path / "r.jsonl").write_text('{"db_id": "music", "question": "q"}\n')
    assert refusal_score.main([str(tmp_path / "r.jsonl"), "--set", str(tmp_path / "spider")]) == 1
    assert "is not a refusal set" in capsys.readouterr().err
