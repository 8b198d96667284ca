"""``answer_routed``: the runner-up is asked only while an answer says nothing (no rows, one NULL, failed,
refused), the first answer that says something is kept, and the routing says which database was passed
over and why; every answer saying nothing keeps the first choice's."""
from __future__ import annotations

from typing import Any

from kgsql.generate.answer import Answer
from kgsql.route.fallback import answer_routed, says_nothing
from kgsql.route.router import PassedOver, Route, Routing


def _routing() -> Routing:
    return Routing("How many telescopes?", [Route("north", 3.0), Route("south", 2.9), Route("apiary", 0.1)],
                   margin=0.5, mode="fused")


def _answers(**by_db: Answer) -> tuple[Any, list[str]]:
    asked: list[str] = []

    def ask(db: str) -> Answer:
        asked.append(db)
        return by_db[db]

    return ask, asked


def _said(db: str, rows: list[tuple[Any, ...]], **fields: Any) -> Answer:
    return Answer(question="How many telescopes?", db=db, sql="SELECT 1 FROM t", rows=rows, **fields)


def test_why_an_answer_says_nothing() -> None:
    empty = _said("a", [], warnings=[{"code": "empty-result", "text": "the query returned no rows"}])
    null = _said("a", [(None,)], warnings=[{"code": "null-result", "text": "..."}])
    refused = _said("a", [], refusal="cannot answer: no column for 'weight'")
    failed = _said("a", [], error="no such column: weight")
    flagged = _said("a", [(2,)], warnings=[{"code": "unused-table", "text": "..."}])
    assert [says_nothing(a) for a in (empty, null, refused, failed, flagged)] == \
        ["returned no rows", "returned one row of NULL", "was a refusal", "failed", None]


def test_the_runner_up_is_asked_when_the_first_answer_says_nothing() -> None:
    empty = _said("north", [], warnings=[{"code": "empty-result", "text": "the query returned no rows"}])
    ask, asked = _answers(north=empty, south=_said("south", [(2,)]))
    answer, routing = answer_routed(_routing(), ask)
    assert asked == ["north", "south"] and answer.db == "south"
    assert routing.db == "south" and routing.ranked[0].db == "north" and routing.tied_with is None
    assert routing.passed_over == (PassedOver("north", "returned no rows", "SELECT 1 FROM t"),)
    assert routing.to_dict()["passed_over"] == [{"db": "north", "why": "returned no rows", "sql": "SELECT 1 FROM t"}]
    assert "'north' was likelier, and its answer returned no rows" in routing.note()


def test_an_answer_that_says_something_is_kept_without_asking_further() -> None:
    ask, asked = _answers(north=_said("north", [(2,)]))
    routing = _routing()
    answer, kept = answer_routed(routing, ask)
    assert asked == ["north"] and answer.db == "north" and kept is routing and kept.tied_with == "south"


def test_when_every_answer_says_nothing_the_first_choice_stands() -> None:
    refused = _said("north", [], refusal="cannot answer")
    ask, asked = _answers(north=refused, south=_said("south", [], error="no such table"),
                          apiary=_said("apiary", [(1,)]))
    answer, routing = answer_routed(_routing(), ask)  # two tries by default: apiary is not asked
    assert asked == ["north", "south"] and answer is refused and routing.db == "north" and not routing.passed_over
    assert routing.also_tried == (PassedOver("south", "failed", "SELECT 1 FROM t"),) and routing.tied_with is None
    assert "'south' was asked too, and its answer failed" in routing.note()
    ask, asked = _answers(north=refused, south=_said("south", [(1,)]))
    answer, routing = answer_routed(_routing(), ask, tries=1)
    assert asked == ["north"] and answer is refused


def test_no_query_written_is_not_a_reason_to_ask_elsewhere() -> None:
    """An error with no SQL (the model unreachable) would fail on every database: the first answer stands."""
    unreachable = Answer(question="How many telescopes?", db="north", error="model endpoint unreachable")
    ask, asked = _answers(north=unreachable, south=_said("south", [(2,)]))
    answer, routing = answer_routed(_routing(), ask)
    assert says_nothing(unreachable) is None and asked == ["north"] and answer is unreachable


def test_a_runner_up_that_cannot_be_asked_leaves_the_first_answer() -> None:
    from kgsql.errors import InputError

    empty = _said("north", [], warnings=[{"code": "empty-result", "text": "the query returned no rows"}])

    def ask(db: str) -> Answer:
        if db == "south":
            raise InputError("unknown database 'south'")
        return empty

    answer, routing = answer_routed(_routing(), ask)
    assert answer is empty and routing.db == "north" and not routing.passed_over
    unreachable = Answer(question="How many telescopes?", db="south", error="model endpoint unreachable")
    ask, asked = _answers(north=empty, south=unreachable)
    answer, routing = answer_routed(_routing(), ask)
    assert asked == ["north", "south"] and answer is empty and not routing.passed_over
