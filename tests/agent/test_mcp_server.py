"""``python -m kgsql.mcp`` as a subprocess, every tool called through the official SDK's own client."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp package (kgsql[mcp]) is not installed")

from mcp import Client, StdioServerParameters  # noqa: E402

from conversation_stub import ALONE, FIRST, FOLLOW, rewrites, sql_prompts  # noqa: E402
from llm_stub import Reply, StubServer, chat_body  # noqa: E402

from kgsql.generate.rewrite import REWRITE_SYSTEM  # noqa: E402

COUNT = "SELECT count(*) FROM cities"
DEPTH = "What is the average depth of the rivers?"  # the example database holds no depth anywhere


def _model(request: dict[str, Any]) -> Reply:
    """The rewrite call of a follow-up gets the numbered standalone list, every other call COUNT."""
    messages = request["json"].get("messages") or []
    if messages and messages[0]["content"] == REWRITE_SYSTEM:
        return Reply(body=chat_body(f"1. {FIRST}\n2. {ALONE}"))
    if messages and DEPTH in messages[-1]["content"]:
        return Reply(body=chat_body("SELECT avg(depth) FROM rivers"))
    return Reply(body=chat_body(COUNT))


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None) is not None)


def _answer(text: str) -> str:
    """An ask result without its explanation (asserted once, in the flagged answer)."""
    return text.split("\nExplanation:")[0]


async def _session(params: StdioServerParameters) -> dict[str, Any]:
    async with Client(params, read_timeout_seconds=240) as client:
        listed = await client.list_tools()
        calls = {
            "ListDatabases": {},
            "ListTables": {"db": "mcp_geo"},
            "DescribeTable": {"db": "mcp_geo", "table": "rivers"},
            "SearchColumn": {"db": "mcp_geo", "semantic": "length of a river"},
            "SearchValue": {"db": "mcp_geo", "value": "eastvale"},
            "FindShortestPath": {"db": "mcp_geo", "start": "rivers.name", "end": "cities.name"},
            "ExecuteSQL": {"db": "mcp_geo", "sql": "SELECT name FROM rivers ORDER BY name"},
            "ask": {"db": "mcp_geo", "question": "How many cities are there?"},
        }
        out = {"tools": {t.name: t for t in listed.tools}, "failed": set()}
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            out[name] = _text(result)
            if result.is_error:
                out["failed"].add(name)
        limited = await client.call_tool("ExecuteSQL", {"db": "mcp_geo", "sql": "SELECT name FROM rivers ORDER BY name",
                                                        "limit": 2})
        out["limited"] = limited.structured_content
        too_many = await client.call_tool("ExecuteSQL", {"db": "mcp_geo", "sql": "SELECT 1", "limit": 5000})
        out["too_many"], out["too_many_failed"] = _text(too_many), too_many.is_error
        not_a_number = await client.call_tool("ExecuteSQL", {"db": "mcp_geo", "sql": "SELECT 1", "limit": "ten"})
        out["not_a_number"], out["not_a_number_failed"] = _text(not_a_number), not_a_number.is_error
        out["version"] = client.server_info.version
        out["templates"] = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        resource = await client.read_resource("kgsql://mcp_geo/schema")
        out["schema"] = resource.contents[0].text
        out["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        prompt = await client.get_prompt("explore", {"db": "mcp_geo", "question": "Longest river?"})
        out["prompt"] = prompt.messages[0].content.text
        write = await client.call_tool("ExecuteSQL", {"db": "mcp_geo", "sql": "DROP TABLE cities"})
        unknown_db = await client.call_tool("DescribeTable", {"db": "nope", "table": "x"})
        out["write"], out["unknown_db"] = _text(write), _text(unknown_db)
        out["write_failed"], out["unknown_db_failed"] = write.is_error, unknown_db.is_error
        flagged = await client.call_tool("ask", {"db": "mcp_geo", "question": "How many cities lie in 'Narnia'?"})
        out["flagged"] = (_text(flagged), flagged.structured_content, flagged.is_error)
        refused = await client.call_tool("ask", {"db": "mcp_geo", "question": DEPTH})
        out["refused"] = (_text(refused), refused.structured_content, refused.is_error)
        thread = {"db": "mcp_geo", "conversation": "c1"}
        for key, arguments in (("first", {"question": FIRST}), ("follow", {"question": FOLLOW}),
                               ("fresh", {"question": FOLLOW, "reset": True}),
                               ("bad_id", {"question": FIRST, "conversation": "a b"})):
            result = await client.call_tool("ask", {**thread, **arguments})
            out[key] = (_text(result), result.is_error)
        return out


def test_every_tool_through_the_sdk_client(stub_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    stub = StubServer().always(_model)
    env = stub_env(stub)
    try:
        cli_ingest(env, example_db, "mcp_geo")
        before = example_db.stat().st_mtime_ns
        params = StdioServerParameters(command=sys.executable, args=["-m", "kgsql.mcp"], env=env,
                                       cwd=os.getcwd())
        got = asyncio.run(_session(params))
    finally:
        stub.close()
    tools = got["tools"]
    assert set(tools) == {"ListDatabases", "ListTables", "DescribeTable", "SearchColumn", "SearchValue",
                          "FindShortestPath", "ExecuteSQL", "ask"}  # Done is the agent's, not a client's
    assert all(t.annotations.read_only_hint for t in tools.values())
    assert tools["SearchValue"].input_schema["required"] == ["db", "value"]
    assert "mcp_geo (4 tables)" in got["ListDatabases"].splitlines()
    assert got["DescribeTable"].startswith("Table rivers (3 rows)")
    assert got["SearchColumn"].startswith("1. rivers.length_km (REAL)")
    assert got["SearchValue"] == "'Eastvale' in provinces.name (exact)"
    assert got["FindShortestPath"] == ("Path: rivers -> river_cities -> cities\n"
                                       "Join on: river_cities.river_id = rivers.river_id AND "
                                       "river_cities.city_id = cities.city_id")
    assert got["ExecuteSQL"] == "name\nAmber River\nLittle Fen\nSilver River\n(3 rows)"
    assert got["limited"] == {"columns": ["name"], "rows": [["Amber River"], ["Little Fen"]], "truncated": True}
    assert got["too_many_failed"] and "limit must be 1-1000" in got["too_many"]
    assert got["not_a_number_failed"] and got["not_a_number"] == "Error: limit must be a whole number 1-1000, not 'ten'"
    assert any(line.startswith("rivers (3 rows): 4 columns; ") for line in got["ListTables"].splitlines())
    from kgsql import __version__
    assert got["version"] == __version__
    assert got["templates"] == ["kgsql://{db}/schema"]
    assert got["schema"].startswith("CREATE TABLE") and "CREATE TABLE rivers" in got["schema"]
    assert got["prompts"] == ["explore"]
    assert "CREATE TABLE rivers" in got["prompt"] and got["prompt"].endswith("Then answer: Longest river?")
    assert _answer(got["ask"]) == f"SQL: {COUNT}\ncount(*)\n12\n(1 row)"
    # a question whose literal the query leaves out: the flag and the explanation, as text and as structure
    text, structured, failed = got["flagged"]
    flag = "the question's 'Narnia' do(es) not appear in the query"
    assert not failed and text.splitlines()[4] == f"Warning [unused-literal]: {flag}"
    lines = text.splitlines()
    assert lines[5] == "Explanation:" and lines[6].startswith("- Reads cities")
    assert structured["sql"] == COUNT and structured["warnings"] == [{"code": "unused-literal", "text": flag}]
    assert structured["explanation"]["lines"][-1] == "Computes the number of rows"
    # a question the database cannot answer: a refusal naming what is missing, no SQL, not a tool failure
    text, structured, failed = got["refused"]
    assert not failed and text.startswith("Cannot answer: the database has nothing for 'depth' (closest: rivers.")
    assert structured["sql"] == "" and structured["refusal"] == text[0].lower() + text[1:]
    assert got["write"].startswith("Error: SQL rejected: not a read-only query")
    assert got["unknown_db"].startswith("Error:") and "nope" in got["unknown_db"]
    assert got["failed"] == set() and got["write_failed"] and got["unknown_db_failed"]  # MCP's isError
    assert example_db.stat().st_mtime_ns == before
    # a conversation: the same id makes the second question a follow-up; reset starts it over (issue 32)
    assert tools["ask"].input_schema["required"] == ["question"]  # no db: routed (issue 33)
    assert {"conversation", "reset"} <= set(tools["ask"].input_schema["properties"])
    assert (_answer(got["first"][0]), got["first"][1]) == (f"SQL: {COUNT}\ncount(*)\n12\n(1 row)", False)
    assert _answer(got["follow"][0]) == (f"SQL: {COUNT}\ncount(*)\n12\n(1 row)\n"
                                         f"Warning [unused-literal]: the question's '100000' do(es) not appear in "
                                         f"the query")  # the stub's count ignores the follow-up's number
    assert _answer(got["fresh"][0]).split("\nWarning")[0] == _answer(got["first"][0])  # reset: read alone
    # the default context=history: the follow-up's SQL prompt carries the earlier question and its SQL
    follow_prompts = [p for p in sql_prompts(stub) if FOLLOW in p]
    assert rewrites(stub) == [] and follow_prompts and f"Question 1: {FIRST}\nSQL 1: {COUNT}" in follow_prompts[0]
    assert got["bad_id"][1] and got["bad_id"][0].startswith("Error: a conversation id is")


def test_bad_options_are_one_line(cli_env) -> None:  # type: ignore[no-untyped-def]
    for args, message, status in [(["--http", "--host", "0.0.0.0"], "loopback only", 1),
                                  (["--method", "nope"], "nope", 1), (["--http", "--port", "0"], "expected 1-65535", 1),
                                  (["--http", "--port", "abc"], "argument --port: must be a port number", 2),
                                  (["--nope"], "unrecognized arguments: --nope", 2),
                                  (["--set", "nope=1"], "unknown method option", 1),
                                  (["--set", "opinions"], "expected key=value", 1),
                                  (["--method", "dail-sql", "--set", "opinions=3"],
                                   "unknown option(s) opinions for method 'dail-sql'", 1)]:
        run = subprocess.run([sys.executable, "-m", "kgsql.mcp", *args], capture_output=True, text=True,
                             env=cli_env, timeout=120)
        assert run.returncode == status and message in run.stderr and "Traceback" not in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def _sampled_differently(request: dict[str, Any]) -> Reply:
    """COUNT for the answer; a reading (sampled at a temperature) counts the rivers instead."""
    return Reply(body=chat_body("SELECT count(*) FROM rivers" if request["json"].get("temperature") else COUNT))


async def _ask_once(params: StdioServerParameters) -> tuple[str, Any]:
    async with Client(params, read_timeout_seconds=240) as client:
        result = await client.call_tool("ask", {"db": "mcp_geo", "question": "How many cities are there?"})
        return _text(result), result.structured_content


def test_set_gives_the_ask_tool_a_method_option(stub_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    # --set opinions=2: each answer is checked by asking again; readings that return other rows flag it
    stub = StubServer().always(_sampled_differently)
    env = stub_env(stub)
    try:
        cli_ingest(env, example_db, "mcp_geo")
        params = StdioServerParameters(command=sys.executable, args=["-m", "kgsql.mcp", "--set", "opinions=2"],
                                       env=env, cwd=os.getcwd())
        text, structured = asyncio.run(_ask_once(params))
    finally:
        stub.close()
    assert structured["sql"] == COUNT and text.startswith(f"SQL: {COUNT}")
    assert [o["sql"] for o in structured["opinions"]] == ["SELECT count(*) FROM rivers"] * 2
    assert [w["code"] for w in structured["warnings"]] == ["other-reading"]
    assert "Warning [other-reading]: " in text


def test_allow_privileged_is_an_option(cli_env) -> None:  # type: ignore[no-untyped-def]
    run = subprocess.run([sys.executable, "-m", "kgsql.mcp", "--help"], capture_output=True, text=True,
                         env=cli_env, timeout=120)
    assert run.returncode == 0 and "--allow-privileged" in run.stdout


def test_streamable_http_on_loopback(cli_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cli_ingest(cli_env, example_db, "mcp_geo")
    server = subprocess.Popen([sys.executable, "-m", "kgsql.mcp", "--http", "--port", str(port)], env=cli_env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            time.sleep(0.3)

        async def call() -> str:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return _text(await client.call_tool("ExecuteSQL", {"db": "mcp_geo", "sql": "SELECT 40 + 2 AS x"}))

        assert asyncio.run(call()) == "x\n42\n(1 row)"
    finally:
        server.terminate()
        server.wait(timeout=30)
