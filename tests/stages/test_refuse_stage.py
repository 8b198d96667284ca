"""The default method's last stage refuses what the database lacks, from what the earlier stages left:
the same model calls as without it, on an answerable question and on a refused one."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kgsql.llm.scripted import ScriptedLM
from kgsql.methods import build
from kgsql.text.encoder import HashEncoder

SCRIPT = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, net_worth REAL);
INSERT INTO singer VALUES (1, 'Liliane', 'France', 30.0), (2, 'Bo', 'Sweden', 12.5);
"""


def _ask(schema_graph: Any, db: str, replies: list[str], question: str, **options: Any) -> tuple[Any, ScriptedLM]:
    lm = ScriptedLM(replies)
    method = build("kgsql", schema_graph, lm, pool=None, encoder=HashEncoder(), **options)
    return method.ask(question, db=db), lm


def test_refused_without_an_extra_call_and_answerable_questions_untouched(
        schema_graph: Any, make_sqlite: Callable[[str, str], Path], unique_name: Callable[[str], str]) -> None:
    db = unique_name("refuse")
    schema_graph.ingest(make_sqlite("refuse", SCRIPT), name=db)
    # the model reaches for an `age` column, then settles on one that runs: an answer that looks right
    replies = ["SELECT avg(age) FROM singer", "SELECT avg(net_worth) FROM singer"]
    refused, lm_on = _ask(schema_graph, db, list(replies), "What is the average age of the singers?")
    assert refused.sql == "" and refused.rows == [] and refused.error is None
    assert refused.refusal.startswith("cannot answer: the database has nothing for 'age' (closest: singer.")
    assert refused.candidates[0] == "SELECT avg(age) FROM singer"
    kept, lm_off = _ask(schema_graph, db, list(replies), "What is the average age of the singers?", refuse=False)
    assert kept.sql == "SELECT avg(net_worth) FROM singer" and kept.refusal == ""
    assert len(lm_on.calls) == len(lm_off.calls) == 2  # the refusal rode on the calls made anyway

    answered, lm = _ask(schema_graph, db, ["SELECT name FROM singer WHERE country = 'France'"],
                        "Which singers are from France?")
    assert answered.refusal == "" and answered.rows == [("Liliane",)] and len(lm.calls) == 1
