"""On a spatial database the default samples candidates when the first query returns nothing; elsewhere
it does not (sessions 21 and 26: 200 spatial questions, docs/eval.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.text.encoder import HashEncoder

PLAIN = """
CREATE TABLE cities (city_id INTEGER PRIMARY KEY, name TEXT, population INTEGER);
INSERT INTO cities VALUES (1, 'Harbourg', 120000), (2, 'Oster', 80000);
"""
EMPTY = "SELECT name FROM cities WHERE population > 1000000000"
SAMPLED = ["SELECT name FROM cities WHERE population > 100000",
           "SELECT name FROM cities WHERE population > 100000 ORDER BY name",
           "SELECT name FROM cities WHERE population > 90000"]


def _ask(schema_graph: Any, db: str, **options: Any) -> tuple[Any, ScriptedLM]:
    # a retry told of the empty result writes the same query again, which ends the greedy rounds
    lm = ScriptedLM({"sql": [EMPTY], "sql_fix": [EMPTY], "sql_sample": SAMPLED})
    method = build("kgsql", schema_graph, lm, pool=None, encoder=HashEncoder(), refuse=False, **options)
    return method.ask("Which cities have over a hundred thousand people?", db=db), lm


def test_an_empty_first_answer_is_sampled_on_a_spatial_database_only(
        schema_graph: Any, example_db: Path, make_sqlite: Callable[[str, str], Path],
        unique_name: Callable[[str], str]) -> None:
    spatial, plain = unique_name("samples_geo"), unique_name("samples_plain")
    schema_graph.ingest(example_db, name=spatial)
    schema_graph.ingest(make_sqlite("samples_plain", PLAIN), name=plain)

    answer, lm = _ask(schema_graph, spatial)
    assert [c.step for c in lm.calls if c.step == "sql_sample"] == ["sql_sample"]  # one (session 26)
    assert answer.candidates[0] == EMPTY and answer.rows  # a sampled candidate with rows beat the empty one
    assert answer.sql in SAMPLED

    for db, options in ((plain, {}), (spatial, {"spatial_samples": 0})):
        answer, lm = _ask(schema_graph, db, **options)
        assert "sql_sample" not in [c.step for c in lm.calls], (db, options)
        assert answer.sql == EMPTY and answer.rows == []
