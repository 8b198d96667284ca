"""The MCP ``ask`` tool with no database, through the official SDK's client: the question is routed and the
reply's first line names the database, and a close second when there is one."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp package (kgsql[mcp]) is not installed")

from mcp import Client, StdioServerParameters  # noqa: E402

from llm_stub import Reply, StubServer, chat_body  # noqa: E402
from route_databases import CLOSE_CALL, make_databases  # noqa: E402

HONEY = "SELECT hive_id, sum(honey_kg) FROM honey_harvests GROUP BY hive_id"
TELESCOPES = "SELECT count(*) FROM telescopes"


def _model(request: dict[str, Any]) -> Reply:
    text = json.dumps(request["json"].get("messages") or [])
    return Reply(body=chat_body(TELESCOPES if "How many telescopes" in text else HONEY))


async def _asks(params: StdioServerParameters) -> dict[str, tuple[str, bool]]:
    out = {}
    async with Client(params, read_timeout_seconds=240) as client:
        for key, question in (("honey", "How much honey did each hive give?"), ("close", CLOSE_CALL)):
            result = await client.call_tool("ask", {"question": question})
            out[key] = ("\n".join(b.text for b in result.content if getattr(b, "text", None)), result.is_error)
    return out


def test_ask_without_db_through_the_sdk_client(stub_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = make_databases(tmp_path / "warehouse")
    stub = StubServer().always(_model)
    env = stub_env(stub)
    try:
        ingest = subprocess.run([sys.executable, "-m", "kgsql.ingest", str(tmp_path / "warehouse")],
                                capture_output=True, text=True, env=env, timeout=300)
        assert ingest.returncode == 0, ingest.stderr
        params = StdioServerParameters(command=sys.executable, args=["-m", "kgsql.mcp"], env=env, cwd=os.getcwd())
        got = asyncio.run(_asks(params))
    finally:
        stub.close()
    honey, failed = got["honey"]
    assert not failed and honey.splitlines()[0] == f"Database: routed to database '{names['apiary']}'"
    assert f"SQL: {HONEY}" in honey
    close, failed = got["close"]
    first = close.splitlines()[0]
    pair = [names["observatory_north"], names["observatory_south"]]
    assert not failed and "close call" in first and all(f"'{n}'" in first for n in pair)
    lines = close.splitlines()  # the rows, then the flags and the explanation (issue 34)
    assert f"SQL: {TELESCOPES}" in close and lines[lines.index("(1 row)") - 1] == "2"
