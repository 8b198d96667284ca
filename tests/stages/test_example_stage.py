"""The examples stage picks by database kind: the pool's typical examples on a plain database,
the question's nearest on a spatial one (issue 12: spatial questions turn on functions the
pool's common shapes seldom show)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgsql.errors import UnknownNameError
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.generate.parts import Lasts
from kgsql.text.encoder import HashEncoder
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.stages.examples import PickExamples
from kgsql.stages.state import QuestionState

ROADS = DatabaseSchema("city", [Table("roads", [Column("name", "TEXT"), Column("shape", "LINESTRING")])])
POOL = [  # two count(*) questions: the most common shape, so "typical" leads with one of them
    PoolExample("How many lakes are there?", "SELECT count(*) FROM lakes", "maps", "count1"),
    PoolExample("How many parks are there?", "SELECT count(*) FROM parks", "maps", "count2"),
    PoolExample("What is the total length of the rivers?", "SELECT sum(GLength(shape, 1)) FROM rivers", "maps",
                "length"),
]


@pytest.fixture
def pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ExamplePool:
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    maps = DatabaseSchema("maps", [Table(t, [Column("name", "TEXT"), Column("shape", "GEOMETRY")])
                                   for t in ("lakes", "parks", "rivers")])
    return ExamplePool(list(POOL), name="by-kind", schemas=lambda db: maps)


def picked(stage: PickExamples, *, spatial: bool) -> QuestionState:
    from kgsql.generate.answer import Answer

    schema = DatabaseSchema(ROADS.name, ROADS.tables, is_spatial=spatial)
    state = QuestionState("What is the total length of the roads?", "city", schema, Answer("q", "city"))
    stage.run(state)
    return state


def test_plain_databases_get_the_typical_examples_spatial_ones_the_nearest(pool: ExamplePool) -> None:
    stage = PickExamples(pool, shots=1, selection="typical", spatial_selection="masked-similarity",
                         encoder=HashEncoder())
    plain, spatial = picked(stage, spatial=False), picked(stage, spatial=True)
    assert plain.answer.examples == ["count1"] and plain.lasting["shots"] is Lasts.RUN
    assert spatial.answer.examples == ["length"] and spatial.lasting["shots"] is Lasts.QUESTION
    assert spatial.examples == [("What is the total length of the rivers?",
                                 "SELECT sum(GLength(shape, 1)) FROM rivers")]


def test_no_spatial_selection_means_the_same_examples_everywhere(pool: ExamplePool) -> None:
    stage = PickExamples(pool, shots=1, selection="typical", encoder=HashEncoder())
    assert picked(stage, spatial=True).answer.examples == picked(stage, spatial=False).answer.examples == ["count1"]


def test_lead_examples_keep_their_selection_on_a_spatial_database(pool: ExamplePool) -> None:
    """Lead examples are the same for every question of every database: no spatial choice."""
    stage = PickExamples(pool, shots=1, selection="typical", encoder=HashEncoder(), lead=True)
    state = picked(stage, spatial=True)
    assert state.lead_examples == [("How many lakes are there?", "SELECT count(*) FROM lakes")]
    assert state.examples == [] and "shots" not in state.lasting


@pytest.mark.parametrize("options, refused", [
    ({"spatial_selection": "nearest"}, "unknown spatial example selection 'nearest'"),
    ({"selection": ""}, "unknown example selection ''"),
])
def test_unknown_selections_are_refused_when_the_stage_is_built(pool: ExamplePool, options: dict[str, str],
                                                                refused: str) -> None:
    with pytest.raises(UnknownNameError, match=refused):
        PickExamples(pool, **options)


def test_taught_examples_follow_the_database_kind(pool: ExamplePool) -> None:
    """Without a pool the database's taught pairs are the pool; its selector follows the kind too."""
    taught = [{"question": e.question, "sql": e.sql, "key": e.id} for e in POOL]
    stage = PickExamples(None, shots=1, selection="typical", spatial_selection="masked-similarity",
                         encoder=HashEncoder(), graph_examples=lambda db: taught)
    assert picked(stage, spatial=False).answer.examples == ["count1"]
    assert picked(stage, spatial=True).answer.examples == ["length"]


def test_a_schema_over_the_token_budget_shows_the_selection_not_the_whole_database() -> None:
    """Issue 30, item 4: a 61-table database put 11,280 tokens into every prompt."""
    from kgsql.generate.answer import Answer
    from kgsql.schema.model import Column, DatabaseSchema, Table
    from kgsql.stages.schema import SelectSchema, schema_tokens
    from kgsql.stages.state import QuestionState

    wide = DatabaseSchema("warehouse", [Table(f"table_{i:02d}", [Column("id", "INTEGER", is_primary_key=True)]
                                              + [Column(f"measure_{k}", "REAL") for k in range(12)])
                                        for i in range(61)])

    class Picks:  # the retriever: two tables
        def select(self, schema, question, db_path=None):  # type: ignore[no-untyped-def]
            from kgsql.retrieve.selection import SchemaSelection

            return SchemaSelection(schema.name, question, tables=["table_03", "table_07"])

    def shown(budget: int) -> tuple[list[str], dict]:  # type: ignore[type-arg]
        state = QuestionState("Total of measure_1 in table 3?", "warehouse", wide, Answer("q", "warehouse"))
        SelectSchema(lambda: Picks(), scope="database", max_schema_tokens=budget).run(state)
        return [t.name for t in state.shown.tables], state.answer.selection

    assert schema_tokens(wide) > 3000
    tables, selection = shown(3000)
    assert tables == ["table_03", "table_07"] and selection["shown"].startswith("selected: the whole schema is over")
    everything, selection = shown(10**6)
    assert len(everything) == 61 and "shown" not in selection
