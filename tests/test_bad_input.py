"""Bad input through the CLIs: one clear line on stderr naming the problem, non-zero exit.

The classes covered elsewhere (missing file, folder without databases,
non-SQLite, corrupt file, unreachable graph, wrong credentials: tests/ingest/
test_cli.py; LLM faults: tests/llm/test_llm_faults.py; hostile SQL:
tests/db/) are not repeated here.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def run(module: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          env=env, timeout=300)


def one_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "Loading weights" not in ln]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_spatialite_database_without_the_extension(cli_env, example_db):
    env = {**cli_env, "KGSQL_SPATIALITE": "/nonexistent/mod_spatialite_missing"}
    line = one_line(run("kgsql.ingest", [str(example_db), "--name", "geo_noext"], env))
    assert "cannot load SpatiaLite" in line and "libsqlite3-mod-spatialite" in line


def test_unreadable_description_csv(cli_env, example_db, tmp_path):
    desc = tmp_path / "desc"
    desc.mkdir()
    (desc / "cities.csv").write_bytes(b"\x00\x01\x02 this is not a CSV \xff\xfe\x00")
    line = one_line(run("kgsql.ingest", [str(example_db), "--name", "geo_badcsv", "--descriptions", str(desc)], cli_env))
    assert "cities.csv" in line


def test_malformed_profile_yaml(cli_env, example_db, tmp_path):
    profile = tmp_path / "geo.yaml"
    profile.write_text("database: geo\ntables:\n  cities: [unclosed\n")
    line = one_line(run("kgsql.ingest", [str(example_db), "--name", "geo", "--profile", str(profile)], cli_env))
    assert "geo.yaml:4" in line and "invalid YAML" in line


def test_profile_naming_an_unknown_table(cli_env, example_db, tmp_path):
    profile = tmp_path / "geo.yaml"
    profile.write_text("database: geo\ntables:\n  citiez:\n    description: typo\n")
    line = one_line(run("kgsql.ingest", [str(example_db), "--name", "geo", "--profile", str(profile)], cli_env))
    assert "citiez" in line and "cities" in line


def test_ask_unknown_database(cli_env):
    line = one_line(run("kgsql.ask", ["--db", "no_such_db_here", "How many?"], cli_env))
    assert "database 'no_such_db_here' is not in the graph" in line


@pytest.mark.parametrize("question, expected", [("   ", "the question is empty"),
                                                ("why " * 1000, "characters long")])
def test_ask_bad_questions(cli_env, question, expected):
    assert expected in one_line(run("kgsql.ask", ["--db", "anything", question], cli_env))


def test_ask_with_llm_endpoint_down(cli_env, schema_graph, example_db):
    schema_graph.ingest(example_db, name="geo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**cli_env, "KGSQL_LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "KGSQL_LLM_MODEL": "any",
           "KGSQL_LLM_API_KEY": "sk-secret-test-key-123", "KGSQL_LLM_CACHE": "0"}
    line = one_line(run("kgsql.ask", ["--db", "geo", "--no-selection", "--no-evidence", "Which river is longest?"], env))
    assert f"127.0.0.1:{port}" in line and "sk-secret-test-key-123" not in line


def test_eval_score_missing_predictions_file(cli_env, tmp_path):
    line = one_line(run("kgsql.eval", ["score", "--dataset", "spider", "--data-dir", str(tmp_path),
                                       "--predictions", str(tmp_path / "none.sql")], cli_env))
    assert "none.sql" in line or str(tmp_path) in line


def test_ask_unknown_method(cli_env):
    line = one_line(run("kgsql.ask", ["--db", "geo", "--method", "dail-sq", "How many?"], cli_env))
    assert "unknown method 'dail-sq'" in line and "did you mean 'dail-sql'" in line
