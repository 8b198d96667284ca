"""``python -m kgsql.ingest`` as a user runs it: JSON summary, bad input, exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgsql.graph.embedded import running_server


def run_ingest(args: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kgsql.ingest", *args],
        capture_output=True, text=True, env=env, timeout=300, cwd=cwd,
    )


def test_json_summary_for_example(cli_env, example_db, unique_name):
    db = unique_name("geo")
    proc = run_ingest([str(example_db), "--name", db, "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    for key in ("databases", "tables", "columns", "foreign_keys", "spatial_columns", "seconds"):
        assert key in summary
    assert (summary["databases"], summary["tables"], summary["spatial_columns"]) == (1, 4, 3)
    assert summary["foreign_keys"] == 3
    assert summary["graph"]["embedded"] and summary["graph"]["server_reused"]
    again = json.loads(run_ingest([str(example_db), "--name", db, "--json"], cli_env).stdout)
    assert (again["changed"], again["unchanged"]) == (0, 1)


def test_folder_ingest_spider_layout(cli_env, make_sqlite, tmp_path, unique_name):
    root = tmp_path / "database"
    names = [unique_name("db") for _ in range(3)]
    for name in names:
        (root / name).mkdir(parents=True)
        make_sqlite(name, "CREATE TABLE a (id INTEGER PRIMARY KEY); "
                          "CREATE TABLE b (id INTEGER, a_id INTEGER REFERENCES a(id));").rename(
            root / name / f"{name}.sqlite")
    proc = run_ingest([str(root), "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["databases"], summary["tables"], summary["columns"], summary["foreign_keys"]) == (3, 6, 9, 3)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_missing_path(cli_env, tmp_path):
    line = one_error_line(run_ingest([str(tmp_path / "nowhere.sqlite")], cli_env))
    assert "path not found" in line and "nowhere.sqlite" in line


def test_directory_without_databases(cli_env, tmp_path):
    (tmp_path / "readme.txt").write_text("nothing here")
    assert "no SQLite databases" in one_error_line(run_ingest([str(tmp_path)], cli_env))


def test_non_sqlite_file(cli_env, tmp_path):
    bad = tmp_path / "photo.sqlite"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 100)
    assert "not a SQLite database" in one_error_line(run_ingest([str(bad)], cli_env))


def test_corrupt_database(cli_env, make_sqlite):
    path = make_sqlite("corrupt", "CREATE TABLE t (a TEXT);" + "".join(
        f"INSERT INTO t VALUES ('{'y' * 300}{i}');" for i in range(300)))
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # smash the schema page
    path.write_bytes(bytes(data))
    line = one_error_line(run_ingest([str(path)], cli_env))
    assert "corrupt" in line and "corrupt.sqlite" in line


def test_unreachable_graph(cli_env, example_db):
    line = one_error_line(run_ingest([str(example_db), "--graph", "bolt://127.0.0.1:1",
                                      "--graph-user", "neo4j", "--graph-password", "pw-123456"], cli_env))
    assert "cannot reach graph server" in line and "pw-123456" not in line


def test_wrong_credentials(cli_env, graph_root, example_db):
    uri = running_server(graph_root).uri
    line = one_error_line(run_ingest([str(example_db), "--graph", uri, "--graph-user", "root",
                                      "--graph-password", "wrong-password-1"], cli_env))
    assert "refused the credentials" in line and "wrong-password-1" not in line


@pytest.mark.parametrize("flag", ["--name"])
def test_name_with_folder_is_rejected(cli_env, make_sqlite, tmp_path, flag):
    for n in ("x1", "x2"):
        make_sqlite(n, "CREATE TABLE t (a INT);").rename(tmp_path / f"{n}.db")
    assert "applies to one database" in one_error_line(run_ingest([str(tmp_path), flag, "z"], cli_env))
