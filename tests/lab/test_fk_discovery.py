"""The FK-recovery benchmark: hide declared keys, discover, compare (a real SQLite folder in Spider's layout)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kgsql.lab.fk_discovery import main


def test_recovers_declared_keys_and_reports_misses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "database" / "club"
    db.mkdir(parents=True)
    con = sqlite3.connect(db / "club.sqlite")
    con.executescript("""
        CREATE TABLE member (member_id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE event (event_id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE attends (member_id INTEGER REFERENCES member(member_id),
                              event_id INTEGER REFERENCES event(event_id),
                              guest INTEGER REFERENCES member(member_id));
    """)
    con.executemany("INSERT INTO member VALUES (?, ?)", [(i, f"m{i}") for i in range(1, 11)])
    con.executemany("INSERT INTO event VALUES (?, ?)", [(i, f"e{i}") for i in range(1, 6)])
    con.executemany("INSERT INTO attends VALUES (?, ?, ?)", [(1 + i % 10, 1 + i % 5, 1 + i % 3) for i in range(30)])
    con.commit()
    con.close()
    out = tmp_path / "fk.json"
    assert main(["--db-dir", str(tmp_path / "database"), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3 declared foreign keys, 2 proposed, 2 recovered" in printed
    report = json.loads(out.read_text())
    assert report["summary"]["precision"] == 1.0 and report["summary"]["recall"] == pytest.approx(2 / 3, abs=1e-3)
    assert report["databases"][0]["missed"] == ["attends.guest->member.member_id"]  # a role name


def test_empty_folder_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
