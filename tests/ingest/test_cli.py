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


def test_several_sources_in_one_ingest(cli_env, make_sqlite, tmp_path, unique_name):
    """``kgsql ingest a.sqlite b.sqlite`` ingests both; options naming one database are refused with two;
    ``--discover-joins`` alone means on (issue 30, item 8)."""
    from kgsql.ingest.cli import build_parser

    script = "CREATE TABLE a (id INTEGER PRIMARY KEY); CREATE TABLE b (id INTEGER, a_id INTEGER);"
    first, second = (make_sqlite(unique_name("multi"), script) for _ in range(2))
    proc = run_ingest([str(first), str(second), "--discover-joins", "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["databases"] == 2 and summary["tables"] == 4
    assert build_parser().parse_args(["x.sqlite", "--discover-joins"]).discover_joins == "on"
    assert build_parser().parse_args(["x.sqlite"]).discover_joins == "auto"
    line = one_error_line(run_ingest([str(first), str(second), "--name", "both"], cli_env))
    assert "--name applies to one database" in line
    same = one_error_line(run_ingest([str(first), str(first)], cli_env))
    assert "two sources give the database name" in same


def test_regions_file_describes_the_tables(cli_env, make_sqlite, tmp_path, unique_name, schema_graph):
    """``--regions`` gives a database the geographic descriptions a spatial file finds beside it
    (``<db>.table.csv``); a PostgreSQL database has no folder, so this is its only way (issue 29)."""
    db = unique_name("regions")
    path = make_sqlite(db, "CREATE TABLE roads (id INTEGER PRIMARY KEY, name TEXT);")
    regions = tmp_path / "anything.csv"
    regions.write_text("name,description_EN,description_CN\nroads,Roads of Nanjing,南京市道路\n", encoding="utf-8")
    proc = run_ingest([str(path), "--name", db, "--regions", str(regions), "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert schema_graph.table(db, "roads").geo_description == "Roads of Nanjing"
    missing = one_error_line(run_ingest([str(path), "--name", db, "--regions", str(tmp_path / "none.csv")], cli_env))
    assert "none.csv" in missing and "cannot read" in missing
    two = one_error_line(run_ingest([str(path), str(path), "--regions", str(regions)], cli_env))
    assert "--regions applies to one database" in two


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
    assert "no databases (*.sqlite" in one_error_line(run_ingest([str(tmp_path)], cli_env))


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
    env = {**cli_env, "KGSQL_GRAPH_PASSWORD": "pw-123456"}
    line = one_error_line(run_ingest([str(example_db), "--graph", "bolt://127.0.0.1:1",
                                      "--graph-user", "neo4j"], env))
    assert "cannot reach graph server" in line and "pw-123456" not in line


def test_wrong_credentials(cli_env, graph_root, example_db):
    uri = running_server(graph_root).uri
    env = {**cli_env, "KGSQL_GRAPH_PASSWORD": "wrong-password-1"}  # the way --help recommends
    line = one_error_line(run_ingest([str(example_db), "--graph", uri, "--graph-user", "root"], env))
    assert "refused the credentials" in line and "wrong-password-1" not in line


@pytest.mark.parametrize("flag", ["--name"])
def test_name_with_folder_is_rejected(cli_env, make_sqlite, tmp_path, flag):
    for n in ("x1", "x2"):
        make_sqlite(n, "CREATE TABLE t (a INT);").rename(tmp_path / f"{n}.db")
    assert "applies to one database" in one_error_line(run_ingest([str(tmp_path), flag, "z"], cli_env))


# ---------------------------------------------------------------- issue 13: careless input


def run_verify(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgsql.ingest.verify", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def spider_folder(root: Path, make_sqlite, databases: dict[str, str]) -> Path:  # type: ignore[no-untyped-def]
    for name, script in databases.items():
        (root / name).mkdir(parents=True)
        make_sqlite(name, script).rename(root / name / f"{name}.sqlite")
    return root


def test_folder_ingest_goes_on_past_a_corrupt_database(cli_env, make_sqlite, make_corrupt_sqlite, tmp_path,
                                                       unique_name, schema_graph):
    good = unique_name("good")
    root = spider_folder(tmp_path / "database", make_sqlite, {good: "CREATE TABLE a (id INTEGER PRIMARY KEY);"})
    bad = unique_name("bad")
    (root / bad).mkdir()
    make_corrupt_sqlite(bad).rename(root / bad / f"{bad}.sqlite")
    proc = run_ingest([str(root), "--json"], cli_env)
    assert proc.returncode == 1
    line = one_error_line(proc)
    assert line.startswith("kgsql.ingest: error:") and f"{bad}.sqlite" in line and "malformed" in line
    summary = json.loads(proc.stdout)
    assert summary["databases"] == 1 and summary["tables"] == 1
    assert [(e["database"], Path(e["path"]).name) for e in summary["errors"]] == [(bad, f"{bad}.sqlite")]
    assert "malformed" in summary["errors"][0]["error"]
    assert good in schema_graph.databases() and bad not in schema_graph.databases()

    human = run_ingest([str(root), "--no-progress"], cli_env)
    assert human.returncode == 1 and f"{bad}.sqlite" in one_error_line(human)
    assert "not ingested 1" in human.stdout and "Ingested 1 database(s)" in human.stdout


def test_single_database_corrupt_past_its_header(cli_env, make_corrupt_sqlite):
    line = one_error_line(run_ingest([str(make_corrupt_sqlite("deep"))], cli_env))
    assert "corrupt" in line and "deep.sqlite" in line and "malformed" in line


def test_shipped_profile_for_another_database_is_skipped_with_a_warning(cli_env, make_sqlite, tmp_path, unique_name):
    # "tourism" is a shipped profile's name; this tourism is somebody else's database
    other = unique_name("other")
    root = spider_folder(tmp_path / "database", make_sqlite, {
        "tourism": "CREATE TABLE trips (id INTEGER PRIMARY KEY, city TEXT);",
        other: "CREATE TABLE t (x INTEGER);",
    })
    proc = run_ingest([str(root), "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["databases"] == 2 and not summary["errors"]
    assert len(summary["warnings"]) == 1 and "tourism.yaml" in summary["warnings"][0]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("kgsql.ingest: warning: shipped profile tourism.yaml skipped")
    assert "no table 'GDPs'" in lines[0]


def test_verify_missing_path_is_an_error(cli_env, tmp_path):
    line = one_error_line(run_verify([str(tmp_path / "missing_dir")], cli_env))
    assert "path not found" in line and "missing_dir" in line
    (tmp_path / "empty").mkdir()
    assert "no databases (*.sqlite" in one_error_line(run_verify([str(tmp_path / "empty")], cli_env))


def test_ingest_and_verify_through_a_symlinked_folder(cli_env, make_sqlite, tmp_path, unique_name):
    names = [unique_name("ln") for _ in range(2)]
    real = spider_folder(tmp_path / "real", make_sqlite, {n: "CREATE TABLE a (id INTEGER PRIMARY KEY);" for n in names})
    picked = tmp_path / "picked"  # a folder of links to database folders
    picked.mkdir()
    for n in names:
        (picked / n).symlink_to(real / n, target_is_directory=True)
    link = tmp_path / "link"
    link.symlink_to(picked, target_is_directory=True)
    proc = run_ingest([str(link), "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["databases"] == 2
    check = run_verify([str(link), "--json"], cli_env)
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout) == {"checked": 2, "mismatches": []}
