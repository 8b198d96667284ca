"""``python -m kgsql.ingest postgresql://...`` / ``duckdb:///...`` and ``kgsql.ask --db`` on them, as a user runs them.

The model is the scripted HTTP stub; the database, the graph and the CLIs are
real. No password may appear in any output, the graph, or kgsql's state
other than its 0600 credentials file.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine_shop import PgShop
from llm_stub import Reply, StubServer, chat_body


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env, timeout=300)


def _ask_on(stub_env, db_url: str, name: str, tmp_path: Path) -> tuple[list[subprocess.CompletedProcess[str]], StubServer]:  # type: ignore[no-untyped-def]
    stub = StubServer().always(Reply(body=chat_body(
        "SELECT c.name FROM customer c JOIN orders o ON o.customer_id = c.id WHERE o.quantity > 1 ORDER BY c.name")))
    env = stub_env(stub)
    try:
        runs = [
            _run(env, "kgsql.ingest", db_url, "--name", name, "--json"),
            _run(env, "kgsql.ask", "Who ordered more than one item?", "--db", name, "--json"),
        ]
    finally:
        stub.close()
    return runs, stub


def _state_text(tmp_path: Path) -> str:
    """Every file kgsql wrote under the test's cache folder except the credentials store."""
    out = []
    for f in (tmp_path / "cache").rglob("*"):
        if f.is_file() and "credentials" not in f.parts:
            out.append(f.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_ingest_and_ask_on_postgresql_never_show_the_password(stub_env, schema_graph, pg_shop: PgShop,
                                                              tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (ingest, ask), stub = _ask_on(stub_env, pg_shop.reader_url, "pg_shop_cli", tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer["rows"] == [["Ann Lee"], ["Bob Stone"]]
    prompt = json.dumps(stub.requests[0]["json"]["messages"])
    assert "expert in PostgreSQL" in prompt and "CREATE TABLE customer" in prompt
    stored = schema_graph.schema("pg_shop_cli")
    assert stored.path.startswith("postgresql://kg_reader:***@127.0.0.1") and stored.dialect == "postgres"
    everything = "\n".join([ingest.stdout, ingest.stderr, ask.stdout, ask.stderr, prompt, _state_text(tmp_path),
                            json.dumps(schema_graph.database_info("pg_shop_cli"), default=str), repr(stored)])
    assert pg_shop.reader_password not in everything


def test_ingest_and_ask_on_duckdb(stub_env, duck_shop: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (ingest, ask), stub = _ask_on(stub_env, f"duckdb://{duck_shop}", "duck_shop_cli", tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    assert ask.returncode == 0, ask.stderr
    assert json.loads(ask.stdout)["rows"] == [["Ann Lee"], ["Bob Stone"]]
    assert "expert in DuckDB" in json.dumps(stub.requests[0]["json"]["messages"])


@pytest.mark.parametrize(("url", "says"), [
    ("postgresql://kg_reader:Wrong-Pass-1234@127.0.0.1:{port}/shop", "password authentication failed"),
    ("postgresql://postgres:{pw}@127.0.0.1:{port}/nodb", "does not exist"),
    ("duckdb:///nowhere/Wrong-Pass-1234.duckdb", "DuckDB file not found"),
])
def test_bad_targets_are_one_line_without_a_traceback(cli_env: dict[str, str], pg_shop: PgShop, url: str,
                                                      says: str) -> None:
    run = _run(cli_env, "kgsql.ingest", url.format(port=pg_shop.cluster.port, pw=pg_shop.cluster.password))
    assert run.returncode == 1 and says in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    if url.startswith("postgresql"):
        assert "Wrong-Pass-1234" not in run.stderr + run.stdout and pg_shop.cluster.password not in run.stderr


def test_sqlite_only_commands_refuse_a_url_in_one_line(cli_env: dict[str, str]) -> None:
    run = _run(cli_env, "kgsql.ingest.verify", "postgresql://kg:Hidden-Pw-42@db.example/sales")
    assert run.returncode == 2 and "reads SQLite files only" in run.stderr and "postgresql://kg:***@" in run.stderr
    assert "Hidden-Pw-42" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
