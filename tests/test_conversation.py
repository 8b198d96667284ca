"""Conversations (issue 32): the earlier questions go with a follow-up in order, the cap drops the oldest,
reset starts over, the rewrite call sees the numbered conversation; the servers' store and the CLI's files."""
from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from kgsql import Conversation
from kgsql.conversation import saved
from kgsql.conversation.store import ConversationStore
from kgsql.errors import InputError
from kgsql.generate.answer import Answer
from kgsql.generate.rewrite import REWRITE_SYSTEM
from kgsql.llm.scripted import ScriptedLM


class RecordingMethod:
    """A method that answers every question with its own SQL and keeps what it was asked with."""

    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail_on = fail_on

    def ask(self, question: str, db: str, evidence: str | None = None, history: Any = None) -> Answer:
        self.calls.append({"question": question, "db": db, "history": history})
        answer = Answer(question=question, db=db, standalone=f"alone: {question}" if history else "",
                        sql=f"SELECT '{question}'")
        if question == self.fail_on:
            answer.sql, answer.error = "", "the model is down"
        return answer


def test_earlier_questions_go_in_order_and_the_cap_drops_the_oldest() -> None:
    method = RecordingMethod()
    conv = Conversation(method, "geo", max_turns=3)
    for q in ("q1", "q2", "q3", "q4"):
        conv.ask(q)
    assert [c["history"] for c in method.calls] == [None, ["q1"], ["q1", "q2"], ["q1", "q2", "q3"]]
    assert conv.history == ["q2", "q3", "q4"] and len(conv) == 3  # q1 dropped: the oldest goes first
    assert conv.turns[-1].standalone == "alone: q4" and conv.turns[-1].sql == "SELECT 'q4'"
    conv.reset()
    conv.ask("q5")
    assert method.calls[-1]["history"] is None and conv.history == ["q5"]
    assert repr(conv) == "Conversation(db='geo', turns=1, last='q5')"


def test_a_failed_turn_is_kept_and_a_refused_question_is_not() -> None:
    method = RecordingMethod(fail_on="q2")
    conv = Conversation(method, "geo")
    conv.ask("q1")
    assert conv.ask("q2").error == "the model is down"
    conv.ask("q3")
    assert method.calls[-1]["history"] == ["q1", "q2"] and conv.turns[1].error == "the model is down"
    with pytest.raises(InputError):
        Conversation(method, "geo", max_turns=0)
    with pytest.raises(InputError, match="no method"):
        Conversation(None, "geo").ask("q")


def test_the_rewrite_call_sees_the_numbered_conversation(schema_graph, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="conv_geo")
    lm = ScriptedLM({"rewrite": "1. Which cities are in Eastvale?\n"
                                "2. Which cities in Eastvale have more than 100000 people?"},
                    default="SELECT name FROM cities WHERE population > 100000")
    conv = Conversation.start(schema_graph, "conv_geo", lm=lm, shots=0, context="rewrite")
    first = conv.ask("Which cities are in Eastvale?")
    assert first.standalone == "" and not [c for c in lm.calls if c.step == "rewrite"]
    second = conv.ask("Only those with more than 100000 people")
    rewrites = [c for c in lm.calls if c.step == "rewrite"]
    assert len(rewrites) == 1 and rewrites[0].messages[0]["content"] == REWRITE_SYSTEM
    assert rewrites[0].messages[-1]["content"] == \
        "1. Which cities are in Eastvale?\n2. Only those with more than 100000 people"
    assert second.standalone == "Which cities in Eastvale have more than 100000 people?"
    assert "Which cities in Eastvale have more than 100000 people?" in lm.calls[-1].prompt  # the SQL call
    assert [t.question for t in conv.turns] == ["Which cities are in Eastvale?",
                                                "Only those with more than 100000 people"]
    with pytest.raises(Exception, match="nope"):
        Conversation.start(schema_graph, "nope", lm=lm)


def test_the_store_keeps_threads_by_database_and_id_least_recently_used_first() -> None:
    store = ConversationStore(max_conversations=2)
    a = store.get("geo", "a")
    a.record("q1", {"sql": "SELECT 1"})
    assert store.get("geo", "a") is a and store.get("other", "a") is not a  # another database: another thread
    store.get("geo", "b")  # a was used before other: a goes
    assert len(store) == 2 and store.get("geo", "a").history == []
    store.get("geo", "a").record("q1", {})
    assert store.get("geo", "a", reset=True).history == []
    for bad in ("", "-x", "a b", "x" * 101, 3):
        with pytest.raises(InputError, match="conversation id"):
            store.get("geo", bad)  # type: ignore[arg-type]


def test_saved_conversations_are_private_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    conv = saved.load("trip", "geo")
    assert conv.history == []
    conv.record("q1", {"standalone": "", "sql": "SELECT 1", "error": None, "rows": [(1,)]})
    conv.record("q2", {"standalone": "", "sql": "SELECT x", "error": "no such column: x", "rows": []})
    path = saved.save("trip", conv)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.parent.name == "conversations"
    assert json.loads(path.read_text())["turns"] == [  # each turn's rows summary: how many rows it showed
        {"question": "q1", "standalone": "q1", "sql": "SELECT 1", "error": None, "rows": 1},
        {"question": "q2", "standalone": "q2", "sql": "SELECT x", "error": "no such column: x", "rows": None}]
    assert saved.load("trip", "geo").turns == conv.turns and saved.load("trip", "geo").history == ["q1", "q2"]
    assert saved.saved_conversations() == [("trip", "geo", conv.turns)]
    assert saved.load("trip", "geo", new=True).history == []
    with pytest.raises(InputError, match="about database 'geo', not 'other'"):
        saved.load("trip", "other")
    for bad in ("../x", "", ".hidden", "a/b"):
        with pytest.raises(InputError, match="a name is 1-64"):
            saved.load(bad, "geo")
    path.write_text("{not json")
    with pytest.raises(InputError, match="cannot be read"):
        saved.load("trip", "geo")
    assert saved.saved_conversations() == [("trip", "?", [])]  # listed, never a traceback
