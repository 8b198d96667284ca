"""Refusals (issue 34): a query that reaches for a column the database lacks, or a question word the
schema holds nowhere, turns the answer into "cannot answer: ... (closest: ...)"; answerable questions
and the model's misspellings of real columns do not."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from kgsql.generate.answer import Answer
from kgsql.generate.refusal import apply_refusal, refusal_for, unsupported_words, schema_words
from kgsql.ingest.reader import read_database

SCRIPT = """
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, net_worth REAL);
CREATE TABLE song (song_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id), title TEXT,
                   sales REAL);
INSERT INTO singer VALUES (1, 'Liliane', 'France', 30.0), (2, 'Bo', 'Sweden', 12.5);
INSERT INTO song VALUES (10, 1, 'Rain', 100.0), (11, 2, 'Snow', 50.0);
"""


@pytest.fixture
def singers(make_sqlite: Callable[[str, str], Path]) -> Any:
    return read_database(make_sqlite("singers", SCRIPT), "singers")


def test_a_query_reaching_for_a_missing_column_the_question_asks_for_is_refused(singers: Any) -> None:
    found = refusal_for("What is the average age of singers?", singers, ["SELECT avg(age) FROM singer"])
    assert found is not None and found.wanted == "age" and found.missing == ("age",)
    assert found.closest and all(c.startswith("singer.") for c in found.closest)  # the table it was sought in
    assert "singer_id" not in " ".join(found.closest)  # keys are not what a user asks for instead
    assert found.text.startswith("cannot answer: the database has nothing for 'age' (closest: singer.")


def test_a_word_spelt_across_question_words_and_a_wrong_qualifier(singers: Any) -> None:
    found = refusal_for("List the life expectancy of each singer.", singers,
                        ["SELECT T1.lifeexpectancy FROM singer AS T1"])
    assert found is not None and found.missing == ("life expectancy",)  # as the question says it
    # the column exists in another table: a wrong qualifier, not a missing notion
    assert refusal_for("What are the song titles?", singers, ["SELECT T1.title FROM singer AS T1"]) is None


def test_no_refusal_for_misspellings_unasked_names_or_answerable_queries(singers: Any) -> None:
    assert refusal_for("What is the total sales?", singers, ["SELECT sum(sale) FROM song"]) is None  # a misspelling
    assert refusal_for("How many songs?", singers, ["SELECT count(bogus_column) FROM song"]) is None  # not asked
    assert refusal_for("Which singers are from France?", singers,
                       ["SELECT name FROM singer WHERE country = 'France'"]) is None
    assert refusal_for("Which singers are from France?", singers, ["SELEC nonsense ((("]) is None  # no parse


def test_the_support_signal_needs_a_weak_word_the_schema_and_its_values_lack(singers: Any) -> None:
    known = schema_words(singers)
    support = {"weight": 0.1, "singers": 0.8, "average": 0.05, "heaviest": 0.1, "liliane": 0.1, "listed": 0.1}
    assert unsupported_words("What is the average weight of singers?", known, support) == ("weight",)
    assert unsupported_words("What is the average weight of singers?", known, {"weight": 0.5}) == ()  # well matched
    assert unsupported_words("Is Liliane listed?", known, support) == ()  # a stored example value; a verb form
    assert unsupported_words("What is the weight?", known, support, values=["Weight Class A"]) == ()
    query = ["SELECT avg(net_worth) FROM singer"]
    assert refusal_for("What is the average weight of singers?", singers, query, word_support=support) is None
    found = refusal_for("What is the average weight of singers?", singers, query, word_support=support,
                        words_signal=True)  # the method's refuse_words
    assert found is not None and found.missing == ("weight",) and found.signal == "words"


def test_units_and_location_words_are_how_a_question_measures_not_a_missing_notion(singers: Any) -> None:
    # the spatial benchmark's "within 10 kilometers of ...": no database stores "kilometers"
    question = "Which singers live within 10 kilometers of Paris?"
    known = schema_words(singers)
    weak = {"singers": 0.9, "live": 0.1, "within": 0.1, "kilometers": 0.1, "paris": 0.1}
    assert unsupported_words(question, known, weak) == ("live", "paris")  # the notion words still count
    assert unsupported_words("How far, in miles or metres, is each song?", known,
                             {"far": 0.1, "miles": 0.1, "metres": 0.1, "song": 0.9}) == ("far",)
    assert refusal_for(question, singers, ["SELECT name FROM singer WHERE kilometers < 10"]) is None


def test_a_word_the_retriever_matches_well_is_a_synonym_not_a_missing_notion(singers: Any) -> None:
    query = ["SELECT count(*) FROM song WHERE cost > 5"]  # the question's word for what the schema calls sales
    question = "How many songs cost more than 5?"
    assert refusal_for(question, singers, query, word_support={"cost": 0.56, "songs": 0.9}) is None
    found = refusal_for(question, singers, query, word_support={"cost": 0.2, "songs": 0.9})
    assert found is not None and found.missing == ("cost",) and found.signal == "query"


def test_apply_refusal_clears_the_answer_but_keeps_what_was_tried(singers: Any) -> None:
    tried = ["SELECT avg(age) FROM singer", "SELECT avg(net_worth) FROM singer"]
    unsure = Answer(question="What is the average age of singers?", db="singers",
                    sql="SELECT avg(net_worth) FROM singer", rows=[(21.25,)], candidates=list(tried))
    assert apply_refusal(unsure, singers) is None  # no retrieval ran: a query that ran stands
    failed = Answer(question="What is the average age of singers?", db="singers", sql=tried[0],
                    error="no such column: age", candidates=tried[:1])
    assert apply_refusal(failed, singers) is not None and failed.error is None and failed.sql == ""
    answer = Answer(question="What is the average age of singers?", db="singers",
                    sql="SELECT avg(net_worth) FROM singer", columns=["avg"], rows=[(21.25,)],
                    candidates=list(tried), selection={"word_support": {"age": 0.3, "singers": 0.9}})
    assert apply_refusal(answer, singers) is not None
    assert (answer.sql, answer.rows, answer.columns) == ("", [], [])
    assert answer.refusal.startswith("cannot answer: the database has nothing for 'age'")
    assert answer.candidates[0] == "SELECT avg(age) FROM singer"
    assert "refusal=" in repr(answer) and "cannot answer" in answer._repr_html_()
    kept = Answer(question="Which singers are from France?", db="singers",
                  sql="SELECT name FROM singer WHERE country = 'France'", rows=[("Liliane",)],
                  candidates=["SELECT name FROM singer WHERE country = 'France'"])
    assert apply_refusal(kept, singers) is None and kept.rows == [("Liliane",)] and kept.refusal == ""


def test_a_word_held_nowhere_refuses_an_unsure_answer_only(singers: Any) -> None:
    support = {"weight": 0.1, "singers": 0.8}
    question = "What is the average weight of singers?"

    def answer(rows: list[tuple[Any, ...]], opinions: list[dict[str, Any]] | None = None) -> Answer:
        sql = "SELECT avg(net_worth) FROM singer WHERE name = 'Nobody'"
        return Answer(question=question, db="singers", sql=sql, rows=rows, candidates=[sql],
                      selection={"word_support": support}, opinions=opinions or [])

    empty = answer([])
    found = apply_refusal(empty, singers, unsure_words=True)
    assert found is not None and found.signal == "words" and empty.refusal.startswith("cannot answer")
    sure = answer([(21.25,)])
    assert apply_refusal(sure, singers, unsure_words=True) is None and sure.rows == [(21.25,)]
    doubted_by_readings = answer([(21.25,)], [{"sql": "SELECT 1", "agrees": False}])
    assert apply_refusal(doubted_by_readings, singers, unsure_words=True) is not None
    assert apply_refusal(answer([]), singers) is None  # the option off: as before session 34
