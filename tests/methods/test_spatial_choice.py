"""``spatial_choice=database``: a spatial database's function notes and derived examples chosen once for the
database, so its questions share one prompt prefix a caching server reads once (issue 29's cost goal)."""
from __future__ import annotations

from typing import Any

import pytest

from kgsql.errors import InputError
from kgsql.fewshot.spatial_derived import derived_examples
from kgsql.generate.parts import PARTS, Lasts, PromptParts, Shot
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.schema.model import Column, DatabaseSchema, SpatialInfo, Table
from kgsql.sql.spatialite import SpatialKnowledge, spatial_notes
from kgsql.text.encoder import HashEncoder

QUESTIONS = ("Which river is the longest?", "Which city lies closest to the Amber River?")
SELECT = " name FROM rivers ORDER BY length_km DESC LIMIT 1"


@pytest.fixture(scope="module")
def geo_graph(schema_graph, example_db):  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="geo")
    return schema_graph


def first_prompts(graph: Any, **options: Any) -> tuple[list[str], list[Any]]:
    """The first call's prompt and the answer for each of :data:`QUESTIONS`, no pool given."""
    lm = ScriptedLM({"sql": [SELECT] * len(QUESTIONS), "sql_sample": [SELECT] * 9})
    method = build("kgsql", graph, lm, encoder=HashEncoder(), **options)
    answers = [method.ask(q, db="geo") for q in QUESTIONS]
    return [c.messages[-1]["content"] for c in lm.calls if c.step == "sql"], answers


def shared_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def test_per_database_the_questions_share_every_example_and_function(geo_graph) -> None:  # type: ignore[no-untyped-def]
    prompts, answers = first_prompts(geo_graph)  # the default
    schema = geo_graph.schema("geo")
    pairs = derived_examples(schema)
    assert len(pairs) > 5  # more than the per-question five: all of them
    assert all(a.example_source == "derived" and a.examples == [f"derived-{i}" for i in range(len(pairs))]
               for a in answers)
    prefix = shared_prefix(*prompts)
    last_example = " ".join(pairs[-1][1].split())
    assert prefix.index("/* Given the following database schema") < prefix.index("/* Spatial functions")
    assert prefix.index("/* Spatial functions") < prefix.index("/* Some SQL examples") < prefix.index(last_example)
    for function in SpatialKnowledge.load("spatialite").likely(schema):
        assert function.line in prefix
    assert all(q not in prefix for q in QUESTIONS)


def test_per_question_the_examples_and_functions_follow_the_question(geo_graph) -> None:  # type: ignore[no-untyped-def]
    prompts, answers = first_prompts(geo_graph, spatial_choice="question")
    assert answers[0].examples != answers[1].examples and all(len(a.examples) == 5 for a in answers)
    assert "/* Some SQL examples" not in shared_prefix(*prompts)


def test_a_database_s_functions_are_those_its_geometry_types_make_likely() -> None:
    def schema(*types: str) -> DatabaseSchema:
        tables = [Table(f"t{i}", [Column("name", "TEXT"), Column("shape", t, spatial=SpatialInfo(t, 4326))])
                  for i, t in enumerate(types)]
        return DatabaseSchema("d", tables, is_spatial=True)

    points = spatial_notes("What is the area of the park?", schema("POINT"), per_database=True)[1]
    both = spatial_notes("Which stop is nearest?", schema("POINT", "POLYGON"), per_database=True)[1]
    assert "Distance(" in points and "Area(" not in points  # not the question's "area": the geometry's
    assert "Distance(" in both and "Area(" in both
    assert spatial_notes("How long is it?", schema("POLYGON"), per_database=True) == spatial_notes(
        "Which one touches the lake?", schema("POLYGON"), per_database=True)


def test_a_part_chosen_for_the_database_lasts_the_database_and_keeps_its_place() -> None:
    parts = PromptParts("q?", "SCHEMA", (Shot("e?", "SELECT 1"),), functions="F", lasting={"shots": Lasts.DATABASE})
    by_name = {p.name: p for p in PARTS}
    assert parts.lasts(by_name["shots"]) is Lasts.DATABASE and parts.lasts(by_name["functions"]) is Lasts.QUESTION


def test_an_unknown_choice_is_refused_in_one_line(geo_graph) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="spatial_choice 'table': expected one of question, database"):
        build("kgsql", geo_graph, ScriptedLM({}), spatial_choice="table")
