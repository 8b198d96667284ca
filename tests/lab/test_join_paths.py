"""FindShortestPath against the join path a gold query writes (kgsql.lab.join_paths)."""
from __future__ import annotations

import json
from pathlib import Path

from kgsql.ingest.reader import read_database
from kgsql.lab.join_paths import judge, main

FOUR = ("SELECT p.name FROM rivers r JOIN river_cities rc ON r.river_id = rc.river_id "
        "JOIN cities c ON rc.city_id = c.city_id JOIN provinces p ON c.province_id = p.province_id")


def test_a_four_table_join_is_found_and_a_detour_is_told_apart(example_db: Path) -> None:
    schema = read_database(example_db, with_stats=False)
    v = judge(FOUR, schema)
    assert v is not None and v["status"] == "same path and conditions"
    assert (v["start"], v["end"], v["gold_path"]) == ("provinces", "rivers",
                                                      ["provinces", "cities", "river_cities", "rivers"])
    assert judge("SELECT name FROM cities", schema) is None  # fewer than 4 tables
    detour = ("SELECT p.name FROM rivers r JOIN river_cities rc ON r.river_id = rc.river_id "
              "JOIN cities c ON rc.city_id = c.city_id JOIN provinces p ON c.city_id = p.capital_city_id")
    assert judge(detour, schema)["status"] == "same tables, other conditions"  # capital, not province
    cross = "SELECT 1 FROM rivers, river_cities, cities, provinces"
    assert judge(cross, schema)["status"] == "gold joins not connected by ON conditions"


def test_cli_reports_counts(example_db: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    db_dir = tmp_path / "database" / "geo"
    db_dir.mkdir(parents=True)
    (db_dir / "geo.sqlite").write_bytes(example_db.read_bytes())
    (tmp_path / "dev.json").write_text(json.dumps([{"db_id": "geo", "question": "q", "query": FOUR},
                                                   {"db_id": "gone", "question": "q", "query": "SELECT 1"}]))
    assert main(["--data-dir", str(tmp_path), "--json", str(tmp_path / "out.json")]) == 0
    assert "1 questions join 4+ tables\n  same path and conditions: 1" in capsys.readouterr().out
    assert json.loads((tmp_path / "out.json").read_text())[0]["status"] == "same path and conditions"
    assert main(["--data-dir", str(tmp_path / "missing")]) == 1
