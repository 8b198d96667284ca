"""The spatial failure table: each miss in the first class it fits, counts that add up to the misses."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgsql.lab.spatial_failures import CLASSES, classify, failure_table, main

WITHIN = "SELECT cities.name FROM cities JOIN airports ON Within(airports.Location, cities.Shape) = 1 WHERE airports.name = '阿克苏/温宿'"


@pytest.mark.parametrize("pred, gold, error, expected", [
    ("SELECT x FROM airports", [WITHIN], "no such column: x", "does not run"),
    ("SELECT T2.name FROM airports AS T1 JOIN cities AS T2 ON T1.city = T2.name WHERE T1.name = '阿克苏/温宿'",
     [WITHIN], None, "no spatial relation"),
    ("SELECT Line, GLength(Shape) FROM subways", ["SELECT Line, GLength(Shape, 1) FROM subways"], None, "units"),
    ("SELECT Area(Shape) FROM d", ["SELECT ST_Area(Shape::geography) FROM d"], None, "units"),
    ("SELECT cities.name FROM cities JOIN airports ON Within(airports.Location, cities.Shape) = 1 "
     "WHERE airports.name = 'Wensu'", [WITHIN], None, "value not linked"),
    ("SELECT name FROM roads", ["SELECT name, Centroid(Shape) FROM roads"], None, "wrong function"),
    ("SELECT name FROM rails", ["SELECT name FROM roads"], None, "other tables"),
    ("SELECT name FROM roads ORDER BY name", ["SELECT name FROM roads"], None, "aggregation / other"),
])
def test_classify(pred: str, gold: list[str], error: str | None, expected: str) -> None:
    assert classify(pred, gold, error) == expected


def test_the_table_counts_every_miss_once_per_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [{"pred": "SELECT 1", "gold": ["SELECT 1"], "spider_ex": 1},
               {"pred": "SELECT x FROM t", "gold": ["SELECT y FROM t"], "error": "no such column", "spider_ex": 0},
               {"pred": "SELECT name FROM rails", "gold": ["SELECT name FROM roads"], "spider_ex": 0}]
    table = failure_table({"a": records})
    assert sum(table.counts["a"].values()) == table.misses["a"] == 2 and table.questions["a"] == 3
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    assert main([f"default={path}", "--out", str(tmp_path / "t.md")]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == len(CLASSES) + 3 and "| does not run | 1 |" in out and "**2 / 3**" in out
    assert (tmp_path / "t.md").read_text(encoding="utf-8").strip() == out.strip()
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == f"error: no records file at {tmp_path / 'missing.jsonl'}"
