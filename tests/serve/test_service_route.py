"""The service's ask with no database: the question is routed, the answer's ``routing`` names the database
(and a close second, answered on the first); the OpenAPI page no longer requires ``db``."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from route_databases import CLOSE_CALL, make_databases
from test_service_api import request

from kgsql.llm.scripted import ScriptedLM

HONEY = "SELECT hive_id, sum(honey_kg) FROM honey_harvests GROUP BY hive_id"
TELESCOPES = "SELECT count(*) FROM telescopes"


def _sql(messages: list[dict[str, Any]], step: str, params: Any) -> str:
    return TELESCOPES if "How many telescopes" in messages[-1]["content"] else HONEY


def test_ask_without_db_is_routed(schema_graph, serve_graph, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = make_databases(tmp_path / "warehouse")
    schema_graph.ingest(tmp_path / "warehouse")
    server = serve_graph(ScriptedLM(_sql))
    status, honey = request(server, "POST", "/api/ask", {"question": "How much honey did each hive give?"})
    assert status == 200, honey
    assert honey["db"] == names["apiary"] and honey["routing"]["db"] == names["apiary"]
    assert honey["routing"]["close"] is False and honey["sql"] == HONEY and len(honey["rows"]) == 2
    status, close = request(server, "POST", "/api/ask", {"question": CLOSE_CALL, "db": None})
    pair = {names["observatory_north"], names["observatory_south"]}
    assert status == 200 and close["routing"]["close"] is True
    assert {close["routing"]["db"], close["routing"]["tied_with"]} == pair and close["db"] == close["routing"]["db"]
    assert close["rows"] == [[2]]
    status, named = request(server, "POST", "/api/ask", {"question": CLOSE_CALL, "db": names["observatory_south"]})
    assert status == 200 and named["db"] == names["observatory_south"] and "routing" not in named
    status, empty = request(server, "POST", "/api/ask", {"question": " "})
    assert status == 400 and empty == {"error": "'question' must be a non-empty string"}
    status, spec = request(server, "GET", "/api/openapi.json")
    ask = spec["paths"]["/api/ask"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert status == 200 and ask["required"] == ["question"]


def test_a_routed_answer_that_says_nothing_is_asked_of_the_next_database(schema_graph, serve_graph,
                                                                         tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The first choice's answer returns no rows (however often the correction loop asks again), so the
    runner-up is asked; its answer is kept and the routing names the database passed over and why."""
    names = make_databases(tmp_path / "warehouse")
    schema_graph.ingest(tmp_path / "warehouse")
    first_sql: list[int] = []

    def sql(messages: list[dict[str, Any]], step: str, params: Any) -> str:
        if step == "sql":
            first_sql.append(1)
        return "SELECT telescope_name FROM telescopes WHERE aperture_mm > 9000" if len(first_sql) == 1 \
            else TELESCOPES

    server = serve_graph(ScriptedLM(sql))
    status, answer = request(server, "POST", "/api/ask", {"question": CLOSE_CALL})
    assert status == 200, answer
    pair = {names["observatory_north"], names["observatory_south"]}
    routing = answer["routing"]
    assert [p["why"] for p in routing["passed_over"]] == ["returned no rows"]
    passed = routing["passed_over"][0]["db"]
    assert passed in pair and routing["db"] == answer["db"] == (pair - {passed}).pop()
    assert answer["rows"] == [[2]] and answer["sql"] == TELESCOPES
    assert routing["tied_with"] is None  # the answer is no longer the first choice's
    # the page sends a conversation id with every question: a thread's first question falls back the same way,
    # and the thread is kept on the database that answered
    first_sql.clear()
    status, threaded = request(server, "POST", "/api/ask", {"question": CLOSE_CALL, "conversation": "page-1"})
    assert status == 200 and threaded["routing"]["passed_over"] and threaded["rows"] == [[2]]
    assert threaded["turns"][0]["question"] == CLOSE_CALL
