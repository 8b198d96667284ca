"""Calibration CLI: fitting a calibration file, and the leave-one-database-out protocol.

A generated Spider-format dataset with three small databases (real SQLite
files) and questions whose gold columns are named in words.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.retrieve.retriever import Calibration

DATABASES = {
    "music": {
        "singer": ["singer_id", "name", "country", "age"],
        "concert": ["concert_id", "singer_id", "year", "stadium"],
    },
    "school": {
        "student": ["student_id", "name", "grade", "city"],
        "course": ["course_id", "student_id", "title", "credits"],
    },
    "shop": {
        "product": ["product_id", "name", "price", "color"],
        "sale": ["sale_id", "product_id", "quantity", "day"],
    },
}
QUESTIONS = {
    "music": [("What is the age of each singer?", "SELECT name, age FROM singer"),
              ("Which country is each singer from?", "SELECT name, country FROM singer"),
              ("List the stadium of every concert.", "SELECT stadium FROM concert"),
              ("In which year was each concert held?", "SELECT year FROM concert")],
    "school": [("What grade is each student in?", "SELECT name, grade FROM student"),
               ("Which city does each student live in?", "SELECT name, city FROM student"),
               ("Show the title of every course.", "SELECT title FROM course"),
               ("How many credits does each course give?", "SELECT title, credits FROM course")],
    "shop": [("What is the price of each product?", "SELECT name, price FROM product"),
             ("What color is each product?", "SELECT name, color FROM product"),
             ("Show the quantity of every sale.", "SELECT quantity FROM sale"),
             ("On which day was each sale made?", "SELECT day FROM sale")],
}


def _make_dataset(root: Path) -> Path:
    tables_json, train = [], []
    for db, tables in DATABASES.items():
        path = root / "database" / db / f"{db}.sqlite"
        path.parent.mkdir(parents=True)
        with sqlite3.connect(path) as conn:
            for t, cols in tables.items():
                conn.execute(f"CREATE TABLE {t} ({', '.join(cols)})")
        names = list(tables)
        columns = [[-1, "*"]] + [[i, c] for i, t in enumerate(names) for c in tables[t]]
        tables_json.append({
            "db_id": db, "table_names_original": names, "table_names": names,
            "column_names_original": columns, "column_names": [[i, c.replace("_", " ")] for i, c in columns],
            "column_types": ["text"] * len(columns), "primary_keys": [1, 5], "foreign_keys": [[6, 1]],
        })
        train += [{"db_id": db, "question": q, "query": sql} for q, sql in QUESTIONS[db]]
    (root / "tables.json").write_text(json.dumps(tables_json))
    (root / "train_7000.json").write_text(json.dumps(train))
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _make_dataset(tmp_path_factory.mktemp("calib") / "spider")


def test_calibrate_writes_a_loadable_calibration(dataset: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.lab.calibrate import main

    out = tmp_path / "calibration.json"
    assert main(["--data-dir", str(dataset), "--out", str(out), "--cache-dir", str(tmp_path / "cache"),
                 "--budget", "1.0"]) == 0
    calib = Calibration.load(out)
    assert "spider train_7000, 12 questions" in calib.info["trained_on"]
    assert 0.0 <= calib.info["validation_perfect_recall"] <= 1.0
    assert "chosen:" in capsys.readouterr().out


def test_calibrate_writes_to_the_current_directory_never_the_package(dataset: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from kgsql.lab.calibrate import main
    from kgsql.retrieve.retriever import CALIBRATION_FILE

    shipped = CALIBRATION_FILE.read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["--data-dir", str(dataset), "--cache-dir", str(tmp_path / "cache"), "--budget", "1.0"]) == 0
    assert CALIBRATION_FILE.read_bytes() == shipped
    written = tmp_path / "calibration.json"
    monkeypatch.setenv("KGSQL_CALIBRATION", str(written))  # how a run uses it without touching the package
    assert "12 questions" in Calibration.load().info["trained_on"]


def test_leave_one_database_out_reports_every_database_held_out(dataset: Path, tmp_path: Path) -> None:
    from kgsql.lab.calibrate import main

    res_path = tmp_path / "lodo.json"
    assert main(["--data-dir", str(dataset), "--cache-dir", str(tmp_path / "cache"), "--budget", "1.0",
                 "--pooled-ratio", "--leave-one-database-out", "--json", str(res_path)]) == 0
    res = json.loads(res_path.read_text())
    assert set(res["per_database"]) == set(DATABASES)
    assert res["questions"] == 12 and all(d["questions"] == 4 for d in res["per_database"].values())
    assert 0.0 < res["token_ratio"] <= 1.0
    # Every gold column is named in its question: held-out models still find them all.
    assert res["perfect_recall_rate"] == 1.0
    assert not (tmp_path / "calibration.json").exists()


def test_a_tight_budget_trades_recall_for_tokens(dataset: Path, tmp_path: Path) -> None:
    from kgsql.lab.calibrate import _with_models, choose_thresholds, fit_models, uncalibrated_retriever
    from kgsql.lab.linking import load_bench
    from kgsql.lab.stats import TokenMeter, collect

    bench = load_bench("spider", str(dataset), "train_7000", None, tmp_path / "cache")
    retriever = uncalibrated_retriever(tmp_path / "cache")
    rows = collect(bench, bench.items, retriever)
    scored = _with_models(rows, *fit_models(rows))
    meter = TokenMeter()
    loose = choose_thresholds(retriever, scored, 1.0, meter, pooled=True)
    tight = choose_thresholds(retriever, scored, 0.6, meter, pooled=True)
    assert loose is not None and tight is not None
    assert tight[1] <= 0.6 and loose[1] >= tight[1]
    assert loose[0] >= tight[0]
