"""Question formats and shots: exact prompts (golden files) for DAIL/SSpa, ACT-SQL chat and completion."""
from __future__ import annotations

from pathlib import Path

import pytest

from golden import assert_golden, messages_text
from kgsql.errors import UnknownNameError
from kgsql.fewshot.pool import ExamplePool, PoolExample
from kgsql.generate.formats import ACT_SYSTEM, PromptParts, Shot, available_formats, format_prompt
from kgsql.generate.parts import Lasts
from kgsql.generate.shots import make_shots
from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table

FIXTURES = Path(__file__).parent / "fixtures" / "formats"

SCHEMA = "CREATE TABLE singer (\n  Singer_ID INTEGER,\n  Name TEXT,\n  Age INTEGER,\n  PRIMARY KEY (Singer_ID)\n);"
SHOTS = (
    Shot("How many pilots are older than 40?", "SELECT count(*) FROM pilot WHERE age > 40"),
    Shot("List the titles of all courses.", "SELECT title FROM course"),
)
FULL_SHOTS = (
    Shot("How many pilots are older than 40?", "SELECT count(*) FROM pilot WHERE age > 40",
         "CREATE TABLE pilot (\n  pilot_id INTEGER,\n  age INTEGER\n);"),
)
COT_SHOTS = (
    Shot("How many pilots are older than 40?",
         "Let's think step by step.\nAccording to \"older than 40\", columns [pilot.age] may be used.\n"
         "Values [40] may be used.\nSo the final answer is:\nSELECT count(*) FROM pilot WHERE age > 40",
         "# pilot(pilot_id, age)"),
)
QUESTION = "How many singers are older than 30?"

CASES = {
    "dail-zero-shot": ("dail", PromptParts(QUESTION, SCHEMA)),
    "dail-sql-only": ("dail", PromptParts(QUESTION, SCHEMA, SHOTS)),
    "dail-full": ("dail", PromptParts(QUESTION, SCHEMA, FULL_SHOTS)),
    "sspa": ("dail", PromptParts(
        QUESTION, SCHEMA, SHOTS,
        system="You are an expert in the SpatiaLite spatial database and highly skilled in writing SQL queries.",
        functions="The function GLength(c Curve, 1) returns the length of curve c, measured in meters.",
        geo="The 'singer' table records information about singers in Nanjing.",
        tips="The table 'singers' does not exist in the database and should not be used.")),
    "schema-first": ("schema-first", PromptParts(
        QUESTION, SCHEMA, SHOTS, system="You are an expert in SQLite and highly skilled in writing SQL queries.",
        geo="The 'singer' table records information about singers in Nanjing.",
        hints="'France' is a value of singer.Country.", evidence="old means Age > 30",
        tips="The previous query did not work:\n```sql\nSELECT nme FROM singer\n```\nIt failed: no such column: nme")),
    "shared-first": ("shared-first", PromptParts(
        QUESTION, SCHEMA, SHOTS, system="You are an expert in SQLite and highly skilled in writing SQL queries.",
        hints="'France' is a value of singer.Country.", lasting={"shots": Lasts.RUN},  # the same for every question
        tips="The previous query did not work:\n```sql\nSELECT nme FROM singer\n```\nIt failed: no such column: nme")),
    "schema-first-lead": ("schema-first", PromptParts(QUESTION, SCHEMA, SHOTS[1:], lead_shots=SHOTS[:1],
                                                      hints="'France' is a value of singer.Country.")),
    "schema-first-sql-only-shots": ("schema-first", PromptParts(
        QUESTION, SCHEMA, tuple(Shot("", s.answer) for s in SHOTS))),
    "chat-zero-shot": ("chat", PromptParts(QUESTION, "# singer(Singer_ID, Name, Age)")),
    "chat-cot": ("chat", PromptParts(QUESTION, "# singer(Singer_ID, Name, Age)", COT_SHOTS, cot=True)),
    "chat-extras": ("chat", PromptParts(QUESTION, "# singer(Singer_ID, Name, Age)", evidence="old means Age > 30",
                                        tips="Columns in multiple tables may have the same name, so ambiguity should be avoided.")),
    "act-completion": ("act-completion", PromptParts(QUESTION, "# singer(Singer_ID, Name, Age)", FULL_SHOTS)),
    "act-completion-cot": ("act-completion", PromptParts(QUESTION, "# singer(Singer_ID, Name, Age)", COT_SHOTS, cot=True)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_format_golden(case: str) -> None:
    name, parts = CASES[case]
    prompt = format_prompt(name, parts)
    assert_golden(FIXTURES / f"{case}.txt", f"--- suffix: {prompt.suffix!r}\n" + messages_text(prompt.messages))


def test_dail_ends_with_the_sspa_question() -> None:
    prompt = format_prompt("dail", PromptParts(QUESTION, SCHEMA))
    assert prompt.messages[-1]["content"].endswith(f"Answer the following with no explanation: {QUESTION}\nSELECT")
    assert prompt.suffix == "SELECT" and len(prompt.messages) == 1  # no SDBMS line: no system message


def test_chat_has_act_sql_turns() -> None:
    prompt = format_prompt("chat", PromptParts(QUESTION, "# singer(a)", COT_SHOTS))
    assert [m["role"] for m in prompt.messages] == ["system", "user", "assistant", "user"]
    assert prompt.messages[0]["content"] == ACT_SYSTEM
    assert prompt.messages[-1]["content"] == f"Database schema:\n# singer(a)\n\nQuestion: {QUESTION}"


def test_schema_first_puts_the_stable_schema_first() -> None:
    """A database's schema opens every question's prompt, so a prefix cache serves it across questions."""
    a = format_prompt("schema-first", PromptParts(QUESTION, SCHEMA, SHOTS, hints="h1")).messages[-1]["content"]
    b = format_prompt("schema-first", PromptParts("Who is oldest?", SCHEMA, SHOTS[:1])).messages[-1]["content"]
    common = len(__import__("os").path.commonprefix([a, b]))
    assert SCHEMA in a[:common] and a.index(SCHEMA) < a.index("/* Some SQL examples") < a.index("h1")


def test_shared_first_caches_examples_across_databases() -> None:
    """Fixed examples open every prompt: two databases' prompts share them; one database's questions share its schema too."""
    other = "CREATE TABLE pilot (\n  pilot_id INTEGER\n);"
    def text(question: str, schema: str, hints: str = "") -> str:
        parts = PromptParts(question, schema, SHOTS, hints=hints, lasting={"shots": Lasts.RUN})
        return format_prompt("shared-first", parts).messages[-1]["content"]

    a, b, c = text(QUESTION, SCHEMA, "h1"), text("Who flies?", other), text("Who is oldest?", SCHEMA)
    commonprefix = __import__("os").path.commonprefix
    across_dbs, same_db = commonprefix([a, b]), commonprefix([a, c])
    assert all(s.answer in across_dbs for s in SHOTS) and SCHEMA not in across_dbs
    assert SCHEMA in same_db and "h1" not in same_db and a.index(SCHEMA) < a.index("h1")


def test_shared_first_keeps_examples_chosen_per_question_after_the_schema() -> None:
    """Examples that change with the question would end the cached prefix before the schema:
    ``shared-first`` then lays the prompt out as ``schema-first``."""
    per_question = PromptParts(QUESTION, SCHEMA, SHOTS, hints="h1")  # as declared: chosen per question
    text = format_prompt("shared-first", per_question).messages[-1]["content"]
    assert text == format_prompt("schema-first", per_question).messages[-1]["content"]
    assert text.index(SCHEMA) < text.index("/* Some SQL examples") < text.index("h1")
    shared = format_prompt("shared-first", PromptParts(QUESTION, SCHEMA, SHOTS, lasting={"shots": Lasts.RUN})
                           ).messages[-1]["content"]
    assert shared.index("/* Some SQL examples") < shared.index(SCHEMA)


def test_lead_examples_open_every_layout_and_are_shared_across_databases() -> None:
    """Lead examples come before the schema, the question's own examples after it: one run
    shares the lead examples, one database's questions share its schema too."""
    lead, own = SHOTS[:1], SHOTS[1:]
    a = format_prompt("schema-first", PromptParts(QUESTION, SCHEMA, own, lead_shots=lead)).messages[-1]["content"]
    b = format_prompt("schema-first", PromptParts("Who flies?", "CREATE TABLE pilot (id INTEGER);", (),
                                                  lead_shots=lead)).messages[-1]["content"]
    commonprefix = __import__("os").path.commonprefix
    assert lead[0].answer in commonprefix([a, b]) and SCHEMA not in commonprefix([a, b])
    assert a.index("common kinds of questions") < a.index(lead[0].answer) < a.index(SCHEMA) < a.index(own[0].answer)
    for name in ("dail", "shared-first"):
        text = format_prompt(name, PromptParts(QUESTION, SCHEMA, own, lead_shots=lead)).messages[-1]["content"]
        assert text.startswith("/* Some SQL examples of common kinds of questions: */"), name
    chat = format_prompt("chat", PromptParts(QUESTION, "# singer(a)", own, lead_shots=lead)).messages
    assert [m["content"] for m in chat if m["role"] == "assistant"] == [lead[0].answer, own[0].answer]


def test_unknown_format() -> None:
    with pytest.raises(UnknownNameError, match="act-completion, chat, dail, schema-first, shared-first"):
        format_prompt("markdown", PromptParts("q", "s"))
    assert available_formats() == ["act-completion", "chat", "dail", "schema-first", "shared-first"]


def test_make_shots_organisations_and_cot() -> None:
    schema = DatabaseSchema("flight", [Table("pilot", [Column("pilot_id", "INTEGER", is_primary_key=True),
                                                       Column("age", "INTEGER")]),
                                       Table("plane", [Column("id", "INTEGER"), Column("pilot_id", "INTEGER")])],
                            [ForeignKey("plane", "pilot_id", "pilot", "pilot_id")])
    pool = ExamplePool([PoolExample("How many pilots?", "SELECT  count(*)\nFROM pilot ;", "flight", "a")],
                       schemas=lambda db: schema)
    sql_only = make_shots(pool.examples, pool)
    assert sql_only == (Shot("How many pilots?", "SELECT count(*) FROM pilot", ""),)
    full = make_shots(pool.examples, pool, organisation="full", style="create-eoc")
    assert full[0].schema == ("create table pilot (\n    pilot_id number primary key,\n    age number\n)\n"
                              "create table plane (\n    id number,\n    pilot_id number references pilot(pilot_id)\n)")

    class FixedCoT:
        def cot(self, ex: PoolExample) -> str:
            return f"Let's think step by step.\nSo the final answer is:\n{ex.sql}"

    assert make_shots(pool.examples, pool, cot=FixedCoT())[0].answer.startswith("Let's think step by step.")
    with pytest.raises(UnknownNameError, match="sql-only, full"):
        make_shots(pool.examples, pool, organisation="schema")
