"""Conversations through the service (issue 32): ``history`` or a ``conversation`` thread in ``/api/ask``, and
``kgsql ask --conversation`` forwarded to a running ``kgsql serve`` with its history in the request."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conversation_stub import ALONE, FIRST, FOLLOW, SQL, answer, ask, rewrites, sql_prompts
from llm_stub import StubServer
from test_service_api import request

from kgsql.llm.scripted import ScriptedLM
from kgsql.serve.http import ApiServer


@pytest.fixture(scope="module")
def api(schema_graph, serve_graph, example_db: Path) -> tuple[ApiServer, ScriptedLM]:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="thread_geo")
    lm = ScriptedLM({"rewrite": f"1. {FIRST}\n2. {ALONE}"}, default=SQL)
    return serve_graph(lm), lm


def rewrite_prompts(lm: ScriptedLM) -> list[str]:
    return [c.messages[-1]["content"] for c in lm.calls if c.step == "rewrite"]


def test_a_thread_kept_by_the_service(api) -> None:  # type: ignore[no-untyped-def]
    server, lm = api
    body = {"db": "thread_geo", "conversation": "page-1", "sets": {"shots": 0, "context": "rewrite"}}
    status, first = request(server, "POST", "/api/ask", {**body, "question": FIRST})
    assert status == 200 and first["history"] == [] and first["conversation"] == "page-1"
    status, second = request(server, "POST", "/api/ask", {**body, "question": FOLLOW})
    assert status == 200 and second["history"] == [FIRST] and second["standalone"] == ALONE
    assert [(t["question"], t["standalone"]) for t in second["turns"]] == [(FIRST, FIRST), (FOLLOW, ALONE)]
    assert rewrite_prompts(lm)[-1] == f"1. {FIRST}\n2. {FOLLOW}"
    calls = len(lm.calls)
    status, fresh = request(server, "POST", "/api/ask", {**body, "question": FIRST, "reset": True})
    assert status == 200 and fresh["history"] == [] and len(fresh["turns"]) == 1
    assert not [c for c in lm.calls[calls:] if c.step == "rewrite"]
    status, _ = request(server, "POST", "/api/ask", {**body, "db": "api_nowhere", "question": FIRST})
    assert status == 404


def test_history_in_the_request(api) -> None:  # type: ignore[no-untyped-def]
    server, lm = api
    status, data = request(server, "POST", "/api/ask", {"db": "thread_geo", "question": FOLLOW, "history": [FIRST],
                                                        "sets": {"shots": 0, "context": "rewrite"}})
    assert status == 200 and data["history"] == [FIRST] and data["standalone"] == ALONE and "turns" not in data
    assert rewrite_prompts(lm)[-1] == f"1. {FIRST}\n2. {FOLLOW}"


def test_a_thread_under_context_history_shows_its_earlier_sql(api) -> None:  # type: ignore[no-untyped-def]
    """``--set context=history``: the follow-up as asked, after the earlier question and the SQL it got."""
    server, lm = api
    body = {"db": "thread_geo", "conversation": "page-h", "sets": {"shots": 0, "context": "history"}}
    request(server, "POST", "/api/ask", {**body, "question": FIRST})
    calls = len(lm.calls)
    status, second = request(server, "POST", "/api/ask", {**body, "question": FOLLOW})
    assert status == 200 and second["standalone"] == "" and [t["sql"] for t in second["turns"]] == [SQL, SQL]
    assert [c.step for c in lm.calls[calls:]] == ["sql"]
    prompt = lm.calls[-1].prompt
    assert f"Question 1: {FIRST}\nSQL 1: {SQL}" in prompt and f"no explanation: {FOLLOW}" in prompt
    status, data = request(server, "POST", "/api/ask", {"db": "thread_geo", "question": FOLLOW, "history": [FIRST],
                                                        "history_sql": ["SELECT 7"], "sets": body["sets"]})
    assert status == 200 and "SQL 1: SELECT 7" in lm.calls[-1].prompt


@pytest.mark.parametrize("extra,message", [
    ({"history": "q1"}, "'history' must be a list"),
    ({"history": ["q1", ""]}, "'history' must be a list"),
    ({"history": ["q"] * 21}, "at most 20"),
    ({"history": ["q1"], "conversation": "c1"}, "not both"),
    ({"history": ["q1"], "history_sql": ["SELECT 1", "SELECT 2"]}, "as long as 'history'"),
    ({"conversation": "a b"}, "conversation id"),
    ({"conversation": 7}, "'conversation' must be a non-empty string"),
    ({"conversation": "c1", "reset": "yes"}, "'reset' must be true or false"),
])
def test_bad_conversation_fields_are_one_line(api, extra: dict, message: str) -> None:  # type: ignore[no-untyped-def]
    status, payload = request(api[0], "POST", "/api/ask", {"db": "thread_geo", "question": "q?", **extra})
    assert status == 400 and message in payload["error"], payload


def test_ask_forwards_its_conversation_to_the_warm_service(stub_env, cli_ingest, example_db: Path,
                                                            tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from serve_process import serve_process

    stub = StubServer().always(answer)
    env = stub_env(stub)
    env.pop("KGSQL_NO_SERVICE")
    try:
        cli_ingest(env, example_db, "conv_warm")
        with serve_process(["--port", "0", "--lazy"], env, tmp_path / "serve.log"):
            first = ask(env, "conv_warm", FIRST, "--conversation", "warm")
            second = ask(env, "conv_warm", FOLLOW, "--conversation", "warm")
    finally:
        stub.close()
    assert first.returncode == 0 and "starting kgsql serve" not in first.stderr, first.stderr
    assert second.returncode == 0, second.stderr
    assert f"Earlier questions: 1. {FIRST}" in second.stdout and "Understood as" not in second.stdout
    assert rewrites(stub) == []  # the default context=history: the earlier turn rides in the SQL prompt
    assert f"Question 1: {FIRST}\nSQL 1: {SQL}" in [p for p in sql_prompts(stub) if FOLLOW in p][0]
    assert os.path.exists(tmp_path / "cache" / "conversations" / "warm.json")
