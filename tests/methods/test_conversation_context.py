"""How a follow-up is read with its conversation (``--set context=rewrite|history|none``, issue 32).

``history`` is the standard in-context baseline: the question as asked after a
"Previous questions and queries" section holding the earlier questions and
the SQL answered for them; golden files show the default's and DAIL-SQL's
prompt on a two-turn conversation. A question without earlier turns gets the
same prompt under every context (the single-turn golden files are unchanged).
"""
from __future__ import annotations

from typing import Any

import pytest

from golden import assert_golden
from kgsql.conversation import Conversation
from kgsql.errors import InputError
from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build, parse_sets
from kgsql.stages.context import earlier_turns, previous_text
from kgsql.text.encoder import HashEncoder
from tests.methods.test_methods import (  # noqa: F401 - fixtures
    FIXTURES, GOOD, QUESTION, WholeSchema, geo_graph, pool, render, script,
)

EARLIER = "Which rivers are there?"
EARLIER_SQL = "SELECT name FROM rivers"
FOLLOW = "Which one is the longest?"


def ask(method: str, graph: Any, pool: Any, question: str = FOLLOW, retriever: Any = None,
        **overrides: Any) -> tuple[ScriptedLM, Any]:
    lm = ScriptedLM(script(method))
    t2s = build(method, graph, lm, pool=pool, retriever=retriever or WholeSchema(), encoder=HashEncoder(), **overrides)
    more = {"history": [EARLIER], "history_sql": [EARLIER_SQL]} if question == FOLLOW else {}
    return lm, t2s.ask(question, db="geo", **more)


@pytest.mark.parametrize("method", ["kgsql", "dail-sql"])
def test_history_prompt_golden(geo_graph, pool, method: str) -> None:  # type: ignore[no-untyped-def]
    lm, answer = ask(method, geo_graph, pool, context="history")
    assert answer.error is None and answer.rows == [("Silver River",)]
    assert "rewrite" not in lm.steps() and answer.standalone == ""  # no rewrite call: the question as asked
    prompt = lm.calls[0].messages[-1]["content"]
    section = ("/* Previous questions and queries: */\nQuestion 1: Which rivers are there?\n"
               "SQL 1: SELECT name FROM rivers")
    assert section in prompt and prompt.index(section) < prompt.index(f"no explanation: {FOLLOW}")
    assert_golden(FIXTURES / f"history-{method}.txt", render(lm, answer))


@pytest.mark.parametrize("method", ["kgsql", "dail-sql", "act-sql"])
def test_a_first_question_is_asked_alike_under_every_context(geo_graph, pool,  # type: ignore[no-untyped-def]
                                                              method: str) -> None:
    prompts = {}
    for context in ("rewrite", "history", "none"):
        lm, answer = ask(method, geo_graph, pool, QUESTION, context=context)
        assert answer.sql == GOOD
        prompts[context] = [c.messages for c in lm.calls]
    assert prompts["rewrite"] == prompts["history"] == prompts["none"]


def test_none_asks_the_follow_up_alone_and_rewrite_rewrites_it(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    alone, _ = ask("dail-sql", geo_graph, pool, QUESTION.replace("river is", "one is"), context="none")
    lm, _ = ask("dail-sql", geo_graph, pool, context="none")
    assert lm.steps() == ["sql"] and [c.messages for c in lm.calls] == [c.messages for c in alone.calls]
    rewritten = ScriptedLM({"rewrite": f"1. {EARLIER}\n2. {QUESTION}", "sql": script("dail-sql")["sql"]})
    answer = build("dail-sql", geo_graph, rewritten, pool=pool, encoder=HashEncoder()).ask(
        FOLLOW, db="geo", history=[EARLIER], history_sql=[EARLIER_SQL])
    assert rewritten.steps() == ["rewrite", "sql"] and answer.standalone == QUESTION
    assert "Previous questions" not in rewritten.calls[1].prompt  # rewrite is the default: no SQL shown


class Recording(WholeSchema):
    """The whole-schema retriever stub, keeping what it was asked to select for."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def select(self, schema, question, *, db_path=None):  # type: ignore[no-untyped-def]
        self.queries.append(question)
        return super().select(schema, question, db_path=db_path)


def test_retrieval_reads_the_earlier_questions_under_history(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    for context, expected in (("history", f"{EARLIER} {FOLLOW}"), ("none", FOLLOW)):
        retriever = Recording()
        ask("kgsql", geo_graph, pool, retriever=retriever, context=context)
        assert retriever.queries == [expected], context


def test_a_conversation_shows_the_sql_of_its_earlier_turns(geo_graph, pool) -> None:  # type: ignore[no-untyped-def]
    lm = ScriptedLM({"sql": " name FROM rivers ORDER BY length_km DESC LIMIT 1"})
    method = build("kgsql", geo_graph, lm, pool=pool, retriever=WholeSchema(), encoder=HashEncoder(),
                   context="history")
    conversation = Conversation(method, "geo")
    conversation.ask(EARLIER)
    conversation.ask(FOLLOW)
    assert conversation.history_sql == [GOOD, GOOD] and lm.steps() == ["sql", "sql"]
    assert f"Question 1: {EARLIER}\nSQL 1: {GOOD}" in lm.calls[1].prompt
    assert "Previous questions" not in lm.calls[0].prompt


def test_the_section_and_a_bad_context() -> None:
    turns = earlier_turns(["a?", "b?", "c?"], [" SELECT 1 ", None])
    assert turns == [("a?", "SELECT 1"), ("b?", ""), ("c?", "")]
    assert previous_text(turns) == "Question 1: a?\nSQL 1: SELECT 1\nQuestion 2: b?\nQuestion 3: c?"
    assert parse_sets(["context=history"]) == {"context": "history"}
    with pytest.raises(InputError, match="context 'rewritten': expected one of"):
        parse_sets(["context=rewritten"])
    with pytest.raises(InputError, match="context 'chat': expected one of rewrite, history, none"):
        build("dail-sql", None, ScriptedLM({}), context="chat")
    assert build("kgsql", None, ScriptedLM({})).wants_history_sql  # the default since session 19 (docs/eval.md)
    assert not build("kgsql", None, ScriptedLM({}), context="rewrite").wants_history_sql


def test_the_previous_turns_part_keeps_the_newest_turns_that_fit() -> None:
    """A conversation's long earlier SQL cannot push the schema out of the model's context: the oldest turns
    go first, the latest always stays, numbering starts at the oldest kept."""
    from kgsql.stages.context import MAX_HISTORY_TOKENS

    long_sql = "SELECT " + ", ".join(f"column_{i}" for i in range(600)) + " FROM t"  # ~2,000 tokens alone
    turns = [("a?", long_sql), ("b?", "SELECT 2"), ("c?", "SELECT 3")]
    assert previous_text(turns) == "Question 1: b?\nSQL 1: SELECT 2\nQuestion 2: c?\nSQL 2: SELECT 3"
    assert previous_text(turns[:1]).startswith("Question 1: a?\nSQL 1: SELECT column_0")  # the latest stays
    assert previous_text(turns, max_tokens=10 * MAX_HISTORY_TOKENS).startswith("Question 1: a?")
