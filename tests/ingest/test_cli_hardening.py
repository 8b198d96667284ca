"""Issue 35's ingest cases, as a user runs them: each ends in one clear line, and nothing in the graph
is created or replaced without saying so.

* a PostgreSQL database ingested under the name of a SQLite one is refused unless ``--replace``;
* a PostgreSQL password from ``--password-env`` / ``--password-file`` instead of the URL (where ``ps`` shows it);
* a file whose header names another engine than its suffix (a SQLite file called ``x.duckdb``).

The parse-time cases (``--graph http://``, ``--sample-rows`` past 64 bits, a blank ``--name``) are in
tests/test_bad_input.py, which also checks that nothing is written.
"""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def run_ingest(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kgsql.ingest", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


# ---------------------------------------------------------------- a file named for another engine


def test_a_sqlite_file_named_duckdb_is_named_for_what_it_is(cli_env, tmp_path):
    path = tmp_path / "sales.duckdb"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER)")
    conn.commit()
    conn.close()
    line = one_error_line(run_ingest([str(path)], cli_env))
    assert f"{path} is a SQLite database, not DuckDB" in line and "rename it to sales.sqlite" in line
    assert "extensions" not in line  # DuckDB's own "loading external extensions is disabled"


def test_a_duckdb_file_named_sqlite_is_named_for_what_it_is(cli_env, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path / "sales.sqlite"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE t (a INTEGER)")
    conn.close()
    line = one_error_line(run_ingest([str(path)], cli_env))
    assert f"{path} is a DuckDB database, not SQLite" in line and f"duckdb://{path}" in line


# ---------------------------------------------------------------- one name, two engines


@pytest.fixture
def pg_reader(pg_cluster, unique_name):  # type: ignore[no-untyped-def]
    """A PostgreSQL database with one table and a read-only role: (URL without the password, password, name)."""
    database = unique_name("pgname")
    pg_cluster.create_database(database)
    pg_cluster.sql("CREATE TABLE item (id INTEGER PRIMARY KEY, label TEXT)",
                   "INSERT INTO item VALUES (1, 'one')", database=database)
    password = "Pw-env-only-4711"
    url = pg_cluster.create_reader(database, "kg_name_reader", password)
    return url.replace(f":{password}@", "@"), password, database


def test_postgresql_under_a_sqlite_name_is_refused_unless_replace(cli_env, schema_graph, make_sqlite, pg_reader,
                                                                  unique_name, tmp_path):
    url, password, _database = pg_reader
    name = unique_name("twice")
    lite = make_sqlite(name, "CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT);")
    first = run_ingest([str(lite), "--name", name], cli_env)
    assert first.returncode == 0, first.stderr
    env = {**cli_env, "KGSQL_CACHE_DIR": str(tmp_path / "cache"), "KG_TEST_PW": password}

    refused = run_ingest([url, "--name", name, "--password-env", "KG_TEST_PW"], env)
    line = one_error_line(refused)
    assert f"already has a database named '{name}'" in line and "SQLite" in line and "--replace" in line
    assert schema_graph.schema(name).dialect == "sqlite"  # not replaced
    assert schema_graph.schema(name).path == str(lite.resolve())

    replaced = run_ingest([url, "--name", name, "--password-env", "KG_TEST_PW", "--replace", "--json"], env)
    assert replaced.returncode == 0, replaced.stderr
    warnings = [ln for ln in replaced.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1 and f"replaced '{name}' (a SQLite database at {lite.resolve()})" in warnings[0]
    assert schema_graph.schema(name).dialect == "postgres"

    again = run_ingest([url, "--name", name, "--password-env", "KG_TEST_PW", "--json"], env)
    assert again.returncode == 0, again.stderr  # the same engine again: the usual re-ingest
    assert json.loads(again.stdout)["unchanged"] == 1
    back = run_ingest([str(lite), "--name", name], env)
    assert "already has a database named" in one_error_line(back) and "PostgreSQL" in one_error_line(back)


def test_password_from_the_environment_or_a_file_is_kept_but_never_on_the_command_line(
        cli_env, schema_graph, pg_reader, unique_name, tmp_path):
    url, password, _database = pg_reader
    cache = tmp_path / "cache"
    env = {**cli_env, "KGSQL_CACHE_DIR": str(cache), "KG_TEST_PW": password}
    env.pop("PGPASSWORD", None)
    name = unique_name("pwenv")
    proc = run_ingest([url, "--name", name, "--password-env", "KG_TEST_PW"], env)
    assert proc.returncode == 0, proc.stderr
    assert password not in proc.stdout + proc.stderr
    stored = schema_graph.schema(name).path
    assert stored.startswith("postgresql://kg_name_reader:***@127.0.0.1") and password not in stored
    kept = cache / "credentials" / "databases.json"
    assert (kept.stat().st_mode & 0o777) == 0o600 and json.loads(kept.read_text()) == {stored: password}

    secret = tmp_path / "pw.txt"
    secret.write_text(password + "\n")
    os.chmod(secret, 0o600)
    by_file = run_ingest([url, "--name", unique_name("pwfile"), "--password-file", str(secret)], env)
    assert by_file.returncode == 0, by_file.stderr

    wrong = run_ingest([url, "--name", unique_name("pwbad"), "--password-env", "KG_TEST_PW_UNSET"], env)
    assert "KG_TEST_PW_UNSET" in one_error_line(wrong) and wrong.returncode == 2
