"""``kgsql ask`` on a question the database cannot answer: one "Cannot answer" line naming what is
missing and the closest columns, the query tried, no rows; ``--json`` carries the refusal."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from llm_stub import Reply, StubServer, chat_body

TRIED = "SELECT avg(depth) FROM rivers"
QUESTION = "What is the average depth of the rivers?"  # the example database holds no depth anywhere


def test_a_refusal_instead_of_sql_on_the_cli(stub_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    stub = StubServer().always(Reply(body=chat_body(TRIED)))
    env = stub_env(stub)
    try:
        cli_ingest(env, example_db, "refuse_geo")
        ask = [sys.executable, "-m", "kgsql.ask", QUESTION, "--db", "refuse_geo"]
        plain = subprocess.run(ask, capture_output=True, text=True, env=env, timeout=300)
        as_json = subprocess.run([*ask, "--json"], capture_output=True, text=True, env=env, timeout=300)
    finally:
        stub.close()
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    refusal = next(line for line in lines if line.startswith("Cannot answer:"))
    assert refusal.startswith("Cannot answer: the database has nothing for 'depth' (closest: rivers.")
    assert f"(the query tried: {TRIED})" in lines and not any(line.startswith("SQL:") for line in lines)
    data = json.loads(as_json.stdout)
    assert data["refusal"].startswith("cannot answer: the database has nothing for 'depth'")
    assert data["sql"] == "" and data["rows"] == [] and data["candidates"][0] == TRIED
