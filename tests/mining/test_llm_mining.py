"""LLM mining with a scripted model: names checked, redundancy asked, bad answers survived; through the graph."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgsql.ingest.reader import read_database
from kgsql.llm.errors import LLMConnectionError
from kgsql.llm.scripted import ScriptedLM
from kgsql.mining.llm import LLMMiner
from kgsql.mining.rules import Pair

PAIR = Pair("p1", "geo", "Which cities were founded before 1300?",
            "SELECT name FROM cities WHERE founded < 1300")


@pytest.fixture
def geo(example_db: Path):  # type: ignore[no-untyped-def]
    schema = read_database(example_db, with_stats=False)
    schema.table("cities").column("name").description = "the city's name"
    return schema


def answer(columns: list[dict], dependencies: list[dict] = ()) -> str:  # type: ignore[assignment]
    return "Here it is:\n```json\n" + json.dumps({"columns": columns, "dependencies": list(dependencies)}) + "\n```"


def test_invented_names_are_dropped_and_real_ones_kept(geo) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"mine_knowledge": answer(
        [{"column": "cities.founded", "description": "the year the city was founded"},
         {"column": "cities.mayor", "description": "who runs it"}],           # no such column
        [{"head": "cities.city_id", "tail": "cities.founded", "relation": "each city has one founding year"},
         {"head": "towns.id", "tail": "cities.name", "relation": "invented"}])})  # no such table
    facts, stats = LLMMiner(lm).mine(PAIR, geo, mined_at="2026-12-02")
    got = {(f.kind, f.subject, f.object, f.text, f.origin) for f in facts}
    assert got == {("description", "cities.founded", "", "the year the city was founded", "llm"),
                   ("dependency", "cities.city_id", "cities.founded", "each city has one founding year", "llm")}
    assert stats.invented == 2 and stats.calls == 1 and stats.kept == {"description": 1, "dependency": 1}
    prompt = lm.calls[0].messages[0]["content"]
    assert "cities(" in prompt and "rivers(" not in prompt  # only the tables the SQL uses
    assert PAIR.question in prompt and PAIR.sql in prompt


@pytest.mark.parametrize("verdict,kept", [("Yes, it adds the language.", True), ("no", False)])
def test_redundancy_check_on_a_described_column(geo, verdict: str, kept: bool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"mine_knowledge": answer([{"column": "CITIES.NAME", "description": "name in the local language"}]),
                     "mine_redundancy": verdict})
    facts, stats = LLMMiner(lm).mine(PAIR, geo)
    assert [f.subject for f in facts] == (["cities.name"] if kept else [])
    assert stats.redundant == (0 if kept else 1)
    asked = [c for c in lm.calls if c.step == "mine_redundancy"][0].messages[0]["content"]
    assert "the city's name" in asked and "name in the local language" in asked


def test_repeating_what_is_known_costs_no_call(geo) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"mine_knowledge": answer([{"column": "cities.name", "description": "The city's name"}])})
    facts, stats = LLMMiner(lm).mine(PAIR, geo)
    assert facts == [] and stats.redundant == 1 and [c.step for c in lm.calls] == ["mine_knowledge"]


@pytest.mark.parametrize("reply", ["I cannot help with that.", "{not json", "[1, 2]", '{"columns": "oops"}'])
def test_unusable_answers_cost_the_pair_not_the_run(geo, reply: str) -> None:  # type: ignore[no-untyped-def]
    facts, stats = LLMMiner(ScriptedLM({"mine_knowledge": reply})).mine(PAIR, geo)
    assert facts == []
    assert stats.malformed + stats.invented <= 1


def test_a_model_that_is_down_stops_mining(geo) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LLMConnectionError):
        LLMMiner(ScriptedLM({"mine_knowledge": LLMConnectionError("connection refused")})).mine(PAIR, geo)


def test_both_miners_through_the_graph(schema_graph, example_db: Path, unique_name) -> None:  # type: ignore[no-untyped-def]
    from kgsql.mining.learn import learn

    db = unique_name("geo")
    schema_graph.ingest(example_db, name=db)
    pair = Pair("p9", db, PAIR.question, PAIR.sql)
    lm = ScriptedLM({"mine_knowledge": answer([{"column": "cities.founded", "description": "founding year"}]),
                     "mine_redundancy": "yes"})  # the shipped profile already describes the column
    report = learn(schema_graph.store, [pair], miner="both", lm=lm)
    assert report.mined == 2 and report.facts_by_kind["description"] == 1 and report.llm["calls"] >= 1
    again = learn(schema_graph.store, [pair], miner="both", lm=ScriptedLM({}))  # nothing asked: both mined it
    assert again.already_mined == 2 and again.mined == 0
    assert schema_graph.schema(db).table("cities").column("founded").description.endswith("founding year")
    assert {f.origin for f in schema_graph.knowledge(db)} == {"rule", "llm"}
