"""OpenAI function calling through the real client and a real HTTP endpoint: parsed, traced, not cached."""
from __future__ import annotations

import json
from pathlib import Path

from llm_stub import Reply, StubServer, chat_body

from kgsql.agent import AgentMethod, AgentOptions
from kgsql.llm.cache import ResponseCache
from kgsql.llm.openai_lm import OpenAIChatLM

LONGEST = "SELECT name FROM rivers ORDER BY length_km DESC LIMIT 1"


def calls_body(*calls: tuple[str, str, dict]) -> dict:
    body = chat_body(None, finish_reason="tool_calls")
    body["choices"][0]["message"]["tool_calls"] = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls]
    return body


def test_tool_calls_are_read_and_never_cached(stub: StubServer, tmp_path: Path) -> None:
    stub.script(Reply(body=calls_body(("call_a", "ExecuteSQL", {"sql": "SELECT 1"}))),
                Reply(body=calls_body(("call_a", "ExecuteSQL", {"sql": "SELECT 1"}))))
    lm = OpenAIChatLM(model="stub-model", base_url=stub.base_url, api_key="k", cache=ResponseCache(tmp_path / "cache.sqlite"))
    first = lm.complete([{"role": "user", "content": "q"}], tools=[{"type": "function", "function": {"name": "x"}}])
    assert first.text == "" and first.finish_reason == "tool_calls"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("call_a", "ExecuteSQL", {"sql": "SELECT 1"})]
    again = lm.complete([{"role": "user", "content": "q"}], tools=[{"type": "function", "function": {"name": "x"}}])
    assert not again.from_cache and stub.hits == 2 and stub.requests[0]["json"]["tools"][0]["function"]["name"] == "x"


def test_an_agent_episode_over_function_calling(stub: StubServer, schema_graph, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    schema_graph.ingest(example_db, name="fc_geo")
    stub.script(Reply(body=calls_body(("c1", "SearchColumn", {"semantic": "river length"}))),
                Reply(body=chat_body(f'Thought: done\nAction: Done("{LONGEST}")')))  # text answers are read too
    lm = OpenAIChatLM(model="stub-model", base_url=stub.base_url, api_key="k", cache=None)
    answer = AgentMethod(schema_graph, lm, AgentOptions(transport="functions")).ask("Longest river?", "fc_geo")
    assert answer.error is None and answer.sql == LONGEST and answer.rows == [("Silver River",)]
    sent = stub.requests[1]["json"]
    assert [t["function"]["name"] for t in sent["tools"]] == [
        "SearchColumn", "SearchValue", "FindShortestPath", "ExecuteSQL", "Done"]
    assert sent["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "SearchColumn", "arguments": json.dumps({"semantic": "river length"})}
    assert sent["messages"][-1]["role"] == "tool" and sent["messages"][-1]["tool_call_id"] == "c1"
    assert sent["messages"][-1]["content"].startswith("1. rivers.length_km (REAL)")
    assert "[call] SearchColumn" in answer.prompts[0]["response"]
