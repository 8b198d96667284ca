"""``kgsql ask "question"`` with no ``--db`` over a folder of databases, as a user runs it: the question is
routed to its database (the answer's ``routing`` says which), and a close call names both (answered on the
first). A scripted model writes the SQL."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from llm_stub import Reply, StubServer, chat_body
from route_databases import CLOSE_CALL, make_databases

HONEY = "SELECT hive_id, sum(honey_kg) FROM honey_harvests GROUP BY hive_id"
TELESCOPES = "SELECT count(*) FROM telescopes"


def _model(request: dict[str, Any]) -> Reply:
    """The SQL of whichever question the prompt carries."""
    text = json.dumps(request["json"].get("messages") or [])
    return Reply(body=chat_body(TELESCOPES if "How many telescopes" in text else HONEY))


def _kgsql(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kgsql", *args], capture_output=True, text=True, env=env,
                          timeout=600)


def test_ask_without_db_routes_and_names_a_close_call(stub_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = make_databases(tmp_path / "warehouse")
    stub = StubServer().always(_model)
    env = stub_env(stub)
    try:
        ingest = _kgsql(env, "ingest", str(tmp_path / "warehouse"))  # a folder of databases, all at once
        honey = _kgsql(env, "ask", "How much honey did each hive give?", "--json")
        close = _kgsql(env, "ask", CLOSE_CALL)
        chat = _kgsql(env, "ask", "How much honey did each hive give?", "--conversation", "c")
    finally:
        stub.close()
    assert ingest.returncode == 0, ingest.stderr
    assert honey.returncode == 0, honey.stderr
    data = json.loads(honey.stdout)
    assert data["db"] == names["apiary"] and data["routing"]["db"] == names["apiary"]
    assert data["routing"]["close"] is False and data["sql"] == HONEY and len(data["rows"]) == 2
    assert close.returncode == 0, close.stderr
    line = next(ln for ln in close.stdout.splitlines() if ln.startswith("Database: "))
    pair = {names["observatory_north"], names["observatory_south"]}
    routed = line.split()[1]
    other = (pair - {routed}).pop()
    assert routed in pair and "close call" in line and f"--db {other}" in line
    assert "count(*)" in close.stdout and "2" in close.stdout.split("count(*)", 1)[1]
    assert chat.returncode == 2 and len(chat.stderr.strip().splitlines()) == 1
    assert "--conversation needs --db: a conversation belongs to one database" in chat.stderr
