"""What a database was taught (SchemaGraph.learn) becomes the default method's few-shot examples."""
from __future__ import annotations

from pathlib import Path

from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.text.encoder import HashEncoder

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"


class WholeSchema:
    """No retrieval: the tests look at the examples block only."""

    def select(self, schema, question, db_path=None):  # type: ignore[no-untyped-def]
        from kgsql.retrieve.selection import SchemaSelection

        return SchemaSelection(schema.name, question, tables=[t.name for t in schema.tables])


def test_learnt_pairs_are_shown_as_examples_and_dropped_with_the_database(schema_graph, example_db: Path,
                                                                         unique_name) -> None:  # type: ignore[no-untyped-def]
    db = unique_name("taught")
    schema_graph.ingest(example_db, name=db)
    lm = ScriptedLM(default=LONGEST)
    method = build("kgsql", schema_graph, lm, encoder=HashEncoder(), retriever=WholeSchema(),
                   value_hints=False, join_hints=False)
    first = method.ask("Which river is the longest?", db=db)
    assert "How many provinces" not in lm.calls[-1].prompt  # nothing taught yet: a spatial database's own
    assert first.example_source == "derived" and "Who directed Avatar?" not in lm.calls[-1].prompt
    assert "What is the length of Amber River?" in lm.calls[-1].prompt  # derived from its geometry tables
    zero_shot = build("kgsql", schema_graph, lm, pool=None, encoder=HashEncoder(), retriever=WholeSchema(),
                      value_hints=False, join_hints=False)
    assert zero_shot.ask("Which river is the longest?", db=db).examples == []
    assert "Who directed Avatar?" not in lm.calls[-1].prompt

    schema_graph.learn("How many provinces are there?", "SELECT count(*) FROM provinces", db=db)
    schema_graph.learn("Name the cities founded before 1500.", "SELECT name FROM cities WHERE founded < 1500", db=db)
    taught = schema_graph.examples(db)
    assert sorted((e["question"], e["source"]) for e in taught) == [
        ("How many provinces are there?", "learn"), ("Name the cities founded before 1500.", "learn")]
    answer = method.ask("Which river is the longest?", db=db)
    prompt = lm.calls[-1].prompt
    assert "How many provinces are there?" in prompt and "SELECT count(*) FROM provinces" in prompt
    assert len(answer.examples) == 2 and answer.rows == [("Silver River",)]
    assert answer.example_source == "taught" and "Amber River?" not in prompt  # taught replace derived

    schema_graph.learn("How many provinces are there?", "SELECT count(*) FROM provinces", db=db)  # again
    assert len(schema_graph.examples(db)) == 2
    # one removed, another taught: the same count, other examples; the method sees the change
    from kgsql.graph.examples import remove_examples

    gone = next(e for e in schema_graph.examples(db) if e["question"].startswith("How many provinces"))
    assert remove_examples(schema_graph.store, db, [gone["key"]]) == 1
    schema_graph.learn("What is the longest river?", LONGEST, db=db)
    method.ask("Which river is the longest one?", db=db)
    assert "What is the longest river?" in lm.calls[-1].prompt and "How many provinces" not in lm.calls[-1].prompt
    schema_graph.drop(db)
    schema_graph.ingest(example_db, name=db)
    assert schema_graph.examples(db) == []


def test_removing_an_example_takes_back_what_only_it_taught(schema_graph, example_db: Path,
                                                            unique_name) -> None:  # type: ignore[no-untyped-def]
    """Issue 30, item 2: a wrong example's mined join outlived the example and misled hints and join paths."""
    from kgsql.graph.examples import remove_examples
    from kgsql.graph.facts import list_facts

    db = unique_name("untaught")
    schema_graph.ingest(example_db, name=db)
    wrong = "SELECT c.name FROM cities AS c JOIN rivers AS r ON c.city_id = r.river_id"  # a join no key states
    schema_graph.learn("Which cities lie on a river?", wrong, db=db)
    joins = [f for f in list_facts(schema_graph.store, db, kind="join") if "river_id" in f.subject + f.object]
    assert len(joins) == 1
    other = "SELECT r.name FROM rivers AS r JOIN cities AS c ON r.river_id = c.city_id WHERE c.population > 1000"
    schema_graph.learn("Which rivers pass big cities?", other, db=db)  # the same join, taught twice
    both = {f.key: f for f in list_facts(schema_graph.store, db, kind="join")}[joins[0].key]
    assert len(both.sources) == 2

    first = next(e for e in schema_graph.examples(db) if e["question"] == "Which cities lie on a river?")
    assert remove_examples(schema_graph.store, db, [first["key"]]) == 1
    left = {f.key: f for f in list_facts(schema_graph.store, db, kind="join")}[joins[0].key]
    assert len(left.sources) == 1  # still taught by the other example

    second = next(e for e in schema_graph.examples(db) if e["question"] == "Which rivers pass big cities?")
    remove_examples(schema_graph.store, db, [second["key"]])
    assert joins[0].key not in {f.key for f in list_facts(schema_graph.store, db)}  # taught by none: gone
    schema_graph.learn("Which cities lie on a river?", wrong, db=db)  # teaching it again mines it again
    assert joins[0].key in {f.key for f in list_facts(schema_graph.store, db)}


def test_derived_examples_can_join_a_given_pool(schema_graph, example_db: Path, unique_name) -> None:  # type: ignore[no-untyped-def]
    """``derived_examples=True``: on a spatial database the derived examples are candidates beside the given
    pool's (the question's nearest of both are shown); off, the pool's alone (``derived_first`` off: the pool
    holds only another database's question)."""
    from kgsql.fewshot.pool import ExamplePool

    db = unique_name("beside")
    schema_graph.ingest(example_db, name=db)
    pool = ExamplePool.from_records([{"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer",
                                      "db_id": "concert_singer"}], schemas=lambda _d: schema_graph.schema(db))
    for on in (True, False):
        lm = ScriptedLM(default=LONGEST)
        method = build("kgsql", schema_graph, lm, pool=pool, encoder=HashEncoder(), retriever=WholeSchema(),
                       value_hints=False, join_hints=False, derived_examples=on, derived_first=False)
        answer = method.ask("How long is the Amber River in metres?", db=db)
        prompt = lm.calls[-1].prompt
        assert answer.example_source == "pool" and len(answer.examples) == (5 if on else 1)
        assert ("GLength(rivers.Shape, 1)" in prompt) is on  # the derived length question is near
        assert ("How many singers are there?" in prompt) is not on


def test_derived_examples_can_replace_a_pool_of_other_databases(schema_graph, example_db: Path,  # type: ignore[no-untyped-def]
                                                                unique_name) -> None:
    """``derived_first`` (the default): on a spatial database a pool holding none of its questions (SSpa's cross-fold
    pool: other databases' questions) gives way to its derived examples; a pool holding one of its own
    questions is shown as it is."""
    from kgsql.fewshot.pool import ExamplePool

    db = unique_name("first")
    schema_graph.ingest(example_db, name=db)
    others = [{"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer", "db_id": "concert_singer"}]
    mine = [{"question": "How many rivers are there?", "sql": "SELECT count(*) FROM rivers", "db_id": db}]
    for records, source in ((others, "derived"), (others + mine, "pool")):
        pool = ExamplePool.from_records(records, schemas=lambda _d: schema_graph.schema(db))
        lm = ScriptedLM(default=LONGEST)
        method = build("kgsql", schema_graph, lm, pool=pool, encoder=HashEncoder(), retriever=WholeSchema(),
                       value_hints=False, join_hints=False)
        answer = method.ask("How long is the Amber River in metres?", db=db)
        prompt = lm.calls[-1].prompt
        assert answer.example_source == source
        assert ("GLength(rivers.Shape, 1)" in prompt) is (source == "derived")
        assert ("How many singers are there?" in prompt) is (source == "pool")
