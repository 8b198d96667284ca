"""A key declared TEXT that holds numbers, compared with a label, is compared through its lookup table too
(Spider's ``car_makers.country = 'france'``): a real SQLite file, read as ingest reads it."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from kgsql.correct.context import CheckContext
from kgsql.correct.lookup import labels_through_keys
from kgsql.ingest.reader import read_database


def test_a_text_key_holding_numbers_is_compared_through_its_label(tmp_path: Path) -> None:
    path = tmp_path / "cars.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE countries (CountryId INTEGER PRIMARY KEY, CountryName TEXT);
        CREATE TABLE car_makers (Id INTEGER PRIMARY KEY, Maker TEXT,
                                 Country TEXT REFERENCES countries(CountryId));
        INSERT INTO countries VALUES (1, 'usa'), (2, 'france'), (3, 'japan');
        INSERT INTO car_makers VALUES (1, 'ford', '1'), (2, 'citroen', '2'), (3, 'peugeot', '2'), (4, 'honda', '3');
    """)
    conn.commit()
    conn.close()
    with CheckContext(read_database(path), "How many car makers are there in france?") as ctx:
        sql = labels_through_keys(ctx, "SELECT count(*) FROM car_makers WHERE country = 'france'")
        assert sql is not None and "CountryName = 'france'" in sql
        assert sqlite3.connect(path).execute(sql).fetchone() == (2,)
        # a word compared with a text column of words is left alone
        assert labels_through_keys(ctx, "SELECT count(*) FROM car_makers WHERE maker = 'ford'") is None
        # and so is a word the key column does hold, rare as it is (ingest saw only its frequent numbers)
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO car_makers VALUES (5, 'lada', 'ussr')")
        conn.commit()
        conn.close()
        assert labels_through_keys(ctx, "SELECT count(*) FROM car_makers WHERE country = 'ussr'") is None
