"""Every registered method's exact prompts (golden files), driven by a scripted LM.

Each method answers one question on the shipped example database with a
hand-made example pool over two small databases made here, the hash encoder
(no model) and a retriever stub that selects the whole schema (so the golden
files do not move when retrieval is tuned). Regenerate after an intended
change with ``KGSQL_UPDATE_GOLDEN=1 pytest tests/methods``.
"""
from __future__ import annotations

import sqlite3
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from golden import assert_golden
from kgsql.agent import AgentOptions
from kgsql.errors import UnknownNameError
from kgsql.fewshot.pool import ExamplePool, PoolExample, SqliteSchemas
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import KGSQL_ABLATIONS, available_methods, build, get_method
from kgsql.text.encoder import HashEncoder
from kgsql.stages.method import OneCallOptions, StagedMethod

FIXTURES = Path(__file__).parent / "fixtures"
QUESTION = "Which river is the longest?"
GOOD = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"
BAD = "SELECT nme FROM rivers ORDER BY length_km DESC LIMIT 1"

POOL_DBS = {
    "school": """CREATE TABLE student (student_id INTEGER PRIMARY KEY, name TEXT, home_city TEXT, age INTEGER);
                 CREATE TABLE course (course_id INTEGER PRIMARY KEY, title TEXT, credits INTEGER);
                 INSERT INTO student VALUES (1, 'Ann', 'Springfield', 20), (2, 'Bo', 'Shelbyville', 22);
                 INSERT INTO course VALUES (1, 'Databases', 5);""",
    "shop": """CREATE TABLE product (product_id INTEGER PRIMARY KEY, product_name TEXT, price REAL);
               INSERT INTO product VALUES (1, 'Lamp', 12.5), (2, 'Desk', 80.0);""",
}
POOL = [
    PoolExample("Which student is the oldest?", "SELECT name FROM student ORDER BY age DESC LIMIT 1", "school", "s1"),
    PoolExample("How many courses are there?", "SELECT count(*) FROM course", "school", "s2"),
    PoolExample("List the students from Springfield.", "SELECT name FROM student WHERE home_city = 'Springfield'",
                "school", "s3"),
    PoolExample("What is the most expensive product?", "SELECT product_name FROM product ORDER BY price DESC LIMIT 1",
                "shop", "p1"),
    PoolExample("What is the average price of products?", "SELECT avg(price) FROM product", "shop", "p2"),
    PoolExample("Which courses give more than 4 credits?", "SELECT title FROM course WHERE credits > 4",
                "school", "s4"),
]

SCRIPT: dict[str, Any] = {
    "evidence_terms": "- river\n- longest",
    "evidence_mapping": "- longest refers to MAX(length_km)",
    "evidence_summary": "longest river refers to MAX(length_km) in the table rivers",
    "decompose": "- Which river is the longest?",
}


def sql_replies(method: str) -> list[str]:
    """What the scripted model writes: the format's way, first a wrong column when tips can fix it."""
    opts = get_method(method).options
    if isinstance(opts, OneCallOptions):  # staged: corrections are their own step (see script())
        replies = [" nme FROM rivers ORDER BY length_km DESC LIMIT 1", " name FROM rivers ORDER BY length_km DESC LIMIT 1"]
    elif getattr(opts, "question_format", "") == "dail":
        replies = [" nme FROM rivers ORDER BY length_km DESC LIMIT 1", " name FROM rivers ORDER BY length_km DESC LIMIT 1"]
    elif getattr(opts, "question_format", "") == "chat":
        cot = ("Let's think step by step.\nAccording to \"longest\", columns [rivers.length_km] may be used.\n"
               "So the final answer is:\n")
        replies = [cot + BAD, cot + GOOD]
    else:
        replies = [f"```sql\n{BAD}\n```", f"```sql\n{GOOD}\n```"]
    return replies if opts.correction else replies[1:]


class WholeSchema:
    """A retriever stub: selects every table and column (keeps golden files off retrieval tuning)."""

    class Selection:
        values: list[Any] = []
        tables: list[str] = []

        def to_dict(self) -> dict[str, Any]:
            return {"stub": True}

        def to_schema(self, full):  # type: ignore[no-untyped-def]
            return full

    def select(self, schema, question, *, db_path=None):  # type: ignore[no-untyped-def]
        return self.Selection()


@pytest.fixture(scope="module")
def geo_graph(schema_graph, example_db):  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="geo")
    return schema_graph


@pytest.fixture
def pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ExamplePool:
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    for name, script in POOL_DBS.items():
        conn = sqlite3.connect(tmp_path / f"{name}.sqlite")
        conn.executescript(script)
        conn.close()
    return ExamplePool(list(POOL), name="methods-test", schemas=SqliteSchemas(tmp_path))


def render(lm: ScriptedLM, answer: Any) -> str:
    out = [f"--- answer: {answer.sql}", f"--- examples: {', '.join(answer.examples) or '-'}",
           f"--- rounds: {answer.rounds}; error: {answer.error}"]
    for i, call in enumerate(lm.calls, 1):
        for message in call.messages:
            out.append(f"===== call {i}: {call.step} ({message['role']}) =====\n{message['content']}")
    return "\n".join(out) + "\n"


def script(method: str) -> dict[str, Any]:
    """The scripted model: staged methods' correction rounds are the ``sql_fix`` step; the agent
    runs a wrong column, then finishes."""
    if isinstance(get_method(method).options, AgentOptions):
        return {"agent": ['Thought: try\nAction: ExecuteSQL("SELECT nme FROM rivers ORDER BY length_km DESC LIMIT 1")',
                          'Action: Done("SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1")']}
    replies = sql_replies(method)
    if isinstance(get_method(method).options, OneCallOptions) and len(replies) > 1:
        return {**SCRIPT, "sql": replies[:1], "sql_fix": replies[1:]}
    return {**SCRIPT, "sql": replies}


def run(method: str, graph: Any, pool: ExamplePool | None, **overrides: Any):  # type: ignore[no-untyped-def]
    lm = ScriptedLM(script(method))
    t2s = build(method, graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(), **overrides)
    return lm, t2s.ask(QUESTION, db="geo")


def shown_examples(options: Any, answer: Any, graph: Any) -> int:
    """How many examples ``answer`` should show: the shots (and lead shots) the pool fills, or on geo, a
    spatial database, every example it derives when they are chosen once for the database."""
    if answer.example_source == "derived" and getattr(options, "spatial_choice", "") == "database":
        from kgsql.fewshot.spatial_derived import derived_examples

        return len(derived_examples(graph.schema(answer.db)))
    return min(options.shots + getattr(options, "lead_shots", 0), len(POOL))


@pytest.mark.parametrize("method", available_methods())
def test_method_golden(geo_graph, pool, method: str) -> None:  # type: ignore[no-untyped-def]
    lm, answer = run(method, geo_graph, pool)
    assert answer.error is None and answer.rows == [("Silver River",)], (answer.sql, answer.error)
    assert len(answer.examples) == shown_examples(get_method(method).options, answer, geo_graph)
    assert_golden(FIXTURES / f"{method}.txt", render(lm, answer))


def test_registry_names() -> None:
    assert {"dail-sql", "act-sql", "sspa", "sspa-sdbms", "sspa-geo", "sspa-tips", "kgsql",
            "kgsql-classic"} <= set(available_methods())
    assert {f"kgsql-{s}" for s in KGSQL_ABLATIONS} <= set(available_methods())
    with pytest.raises(UnknownNameError, match="did you mean 'dail-sql'"):
        get_method("dail_sql")


def test_ablations_differ_from_their_method_by_one_component() -> None:
    def diff(a: str, b: str) -> set[str]:
        oa, ob = get_method(a).options, get_method(b).options
        assert type(oa) is type(ob)
        return {f.name for f in fields(oa) if getattr(oa, f.name) != getattr(ob, f.name)}

    assert diff("sspa", "sspa-sdbms") == {"sdbms"}
    assert diff("sspa", "sspa-geo") == {"geo"}
    assert diff("sspa", "sspa-tips") == {"correction", "max_rounds"}
    assert diff("sspa", "dail-sql") == {"sdbms", "geo", "correction", "max_rounds", "spatial_function_list", "tip_kinds"}
    for part, off in KGSQL_ABLATIONS.items():
        assert diff("kgsql", f"kgsql-{part}") == set(off), part


def test_kgsql_is_one_call_when_the_first_query_runs(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"sql": " name FROM rivers ORDER BY length_km DESC LIMIT 1"})
    answer = build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder()).ask(
        QUESTION, db="geo")
    assert lm.steps() == ["sql"] and answer.rows == [("Silver River",)]
    assert len(answer.examples) == shown_examples(OneCallOptions(), answer, geo_graph)


def test_lead_examples_are_the_same_for_every_question_and_never_repeated(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"sql": " name FROM rivers ORDER BY length_km DESC LIMIT 1"})
    t2s = build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(),
                lead_shots=2, shots=2, spatial_choice="question")  # geo's derived examples: the nearest 2
    first, second = t2s.ask(QUESTION, db="geo"), t2s.ask("How many cities are there?", db="geo")
    assert first.examples[:2] == second.examples[:2] and len(set(first.examples)) == 4
    prompts = [c.messages[-1]["content"] for c in lm.calls]
    lead_part = prompts[0].split("/* Given the following database schema")[0]
    assert "common kinds of questions" in lead_part and prompts[1].startswith(lead_part)


def test_examples_as_sql_only_show_no_example_question(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"sql": " name FROM rivers ORDER BY length_km DESC LIMIT 1"})
    build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(),
          example_questions=False, derived_first=False).ask(QUESTION, db="geo")  # the pool's, not geo's own
    prompt = lm.calls[0].messages[-1]["content"]
    assert "/* Answer the following:" not in prompt and "SELECT count(*) FROM course" in prompt


def test_kgsql_examples_on_a_spatial_database_are_the_nearest_after_the_schema(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    """``geo`` is spatial: its examples are the question's nearest, after the schema (the cached
    prefix); ``spatial_example_selection=""`` gives it the typical examples, first, as anywhere (the pool's,
    ``derived_first`` off: the pool holds none of geo's questions)."""
    prompts = {}
    for choice in ("masked-similarity", ""):
        lm = ScriptedLM({"sql": " name FROM rivers ORDER BY length_km DESC LIMIT 1"})
        build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(),
              spatial_example_selection=choice, derived_first=False).ask(QUESTION, db="geo")
        prompts[choice] = lm.calls[0].messages[-1]["content"]
    nearest, typical = prompts["masked-similarity"], prompts[""]
    assert nearest.index("/* Given the following database schema") < nearest.index("/* Some SQL examples")
    assert typical.startswith("/* Some SQL examples")
    first = lambda text: text.split("/* Answer the following: ")[1].split(" */")[0]  # noqa: E731
    assert first(typical) == "Which student is the oldest?"  # the pool's most common shape, shortest question
    assert first(nearest) == "How many courses are there?"  # the nearest under the tests' hash encoder


def test_kgsql_on_a_spatial_database_is_the_measured_nearest_examples_configuration(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    """docs/eval.md measured the spatial default as ``example_selection=masked-similarity
    layout=schema-first`` on every database: on a spatial one the default's prompts are those."""
    prompts = []
    for overrides in ({}, {"example_selection": "masked-similarity", "layout": "schema-first",
                           "spatial_example_selection": ""}):
        lm = ScriptedLM(script("kgsql"))
        build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(),
              **overrides).ask(QUESTION, db="geo")
        prompts.append([c.messages for c in lm.calls])
    assert prompts[0] == prompts[1] and len(prompts[0]) == 2


def test_kgsql_classic_without_a_pool_is_zero_shot(geo_graph) -> None:  # type: ignore[no-untyped-def]
    """The shipped examples are the one-call methods' only: kgsql-classic without a pool shows none."""
    a = ScriptedLM(script("kgsql-classic"))
    answer = build("kgsql-classic", geo_graph, a, retriever=WholeSchema()).ask(QUESTION, db="geo")
    b = ScriptedLM(script("kgsql-classic"))
    build("kgsql-classic", geo_graph, b, pool=None, retriever=WholeSchema()).ask(QUESTION, db="geo")
    assert answer.examples == [] and [c.messages for c in a.calls] == [c.messages for c in b.calls]
    assert "/* Answer the following:" not in a.calls[-1].prompt


@pytest.mark.parametrize("method", [m for m in available_methods() if m != "agent"])
def test_every_method_but_the_agent_is_stages_over_the_one_loop(method: str) -> None:
    """One engine (issue 31): each named method is a list of stages around one SQL stage; after it only the
    refusal check, which calls no model (issue 34)."""
    t2s = build(method, None, ScriptedLM({}))
    names = [s.name for s in t2s.stages]
    assert isinstance(t2s, StagedMethod) and names.count("sql") == 1
    assert hasattr(t2s.stages[names.index("sql")], "loop")
    assert names[names.index("sql") + 1:] in ([], ["refuse"])


def test_shots_override_and_zero_shot(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm, answer = run("dail-sql", geo_graph, pool, shots=1)
    assert len(answer.examples) == 1
    lm, answer = run("dail-sql", geo_graph, pool, shots=0)
    assert answer.examples == [] and "/* Some SQL examples" not in lm.calls[0].prompt
    with pytest.raises(UnknownNameError, match="unknown option"):
        build("dail-sql", geo_graph, ScriptedLM(), shot=1)


def test_sspa_tips_are_sspa_sentences_only(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm, answer = run("sspa", geo_graph, pool)
    assert answer.tips == ["The column 'nme' does not exist in the table 'rivers' and should not be used."]
    assert lm.calls[0].messages[0]["content"].startswith("You are an expert in the SpatiaLite spatial database")


def test_preliminary_sql_steers_dail_selection(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"draft_sql": " product_name FROM product ORDER BY price DESC LIMIT 1", "sql": sql_replies("dail-sql")})
    t2s = build("dail-sql", geo_graph, lm, pool=pool, encoder=HashEncoder(), example_selection="dail",
                preliminary_sql=True, shots=2)
    answer = t2s.ask(QUESTION, db="geo")
    assert lm.steps() == ["draft_sql", "sql"]
    assert "/* Some SQL examples" not in lm.calls[0].prompt  # the draft is zero-shot
    assert set(answer.examples) == {"s1", "p1"}  # the ORDER BY ... LIMIT shape


def test_history_is_rewritten_first(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"rewrite": "1. Which rivers are there?\n2. Which river is the longest?",
                     "sql": sql_replies("dail-sql")})
    t2s = build("dail-sql", geo_graph, lm, pool=pool, encoder=HashEncoder())
    answer = t2s.ask("Which one is the longest?", db="geo", history=["Which rivers are there?"])
    assert lm.steps() == ["rewrite", "sql"]
    assert answer.standalone == "Which river is the longest?" and answer.question == "Which one is the longest?"
    assert "no explanation: Which river is the longest?" in lm.calls[1].prompt


def test_history_without_rewriting_is_concatenated(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"sql": sql_replies("dail-sql")})
    t2s = build("dail-sql", geo_graph, lm, pool=pool, encoder=HashEncoder(), rewrite=False)
    answer = t2s.ask("Which one is the longest?", db="geo", history=["Which rivers are there?"])
    assert answer.standalone == "Which rivers are there? Which one is the longest?"


@pytest.mark.parametrize("option,value", [("question_format", "markdown"), ("schema_style", "yaml"),
                                          ("example_selection", "nearest"), ("example_organisation", "mixed")])
def test_bad_option_names_fail_when_the_method_is_built(geo_graph, option: str, value: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownNameError, match=f"unknown .*'{value}'"):
        build("dail-sql", geo_graph, ScriptedLM(), **{option: value})


def test_a_method_prints_its_stages_model_and_changed_options() -> None:
    """A notebook shows what a method is, not ``<StagedMethod at 0x...>`` (issue 30, item 8)."""
    from kgsql.stages.method import StagedMethod

    default = StagedMethod.one_call(None, ScriptedLM({}))
    assert repr(default) == ("StagedMethod(stages=[select, spatial, render, evidence, lead-examples, examples, "
                             "hints, context, sql, refuse], model='scripted', default options)")
    changed = StagedMethod.one_call(None, ScriptedLM({}), OneCallOptions(shots=0, ratio_cast=True))
    assert repr(changed).endswith("model='scripted', changed: ratio_cast=True, shots=0)")
