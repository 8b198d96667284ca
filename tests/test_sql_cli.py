"""``kgsql sql`` and ``kgsql graph databases``: a user's own query on an ingested database through the guard,
and the list of what the graph holds (issue 30, item 10). Real subprocesses, a real graph, a real file."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def kgsql(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgsql", *args], capture_output=True, text=True, env=env, timeout=300)


def test_databases_and_a_query_of_ones_own(cli_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    cli_ingest(cli_env, example_db, "geo_sqlcli")
    listed = kgsql(["graph", "databases", "--json"], cli_env)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "geo_sqlcli")
    assert row["table_count"] == 4 and row["dialect"] == "spatialite" and row["path"].endswith("geo.sqlite")

    top = kgsql(["sql", "--db", "geo_sqlcli", "--json", "--max-rows", "2",
                 "SELECT name FROM rivers ORDER BY length_km DESC"], cli_env)
    assert top.returncode == 0, top.stderr
    assert json.loads(top.stdout) == {"columns": ["name"], "rows": [["Silver River"], ["Amber River"]], "truncated": True}
    shown = kgsql(["sql", "--db", "geo_sqlcli", "SELECT count(*) AS n FROM rivers"], cli_env)
    assert shown.returncode == 0 and shown.stdout.splitlines()[0].strip() == "n" and "(1 row(s))" in shown.stdout


def test_writes_and_unknown_names_are_one_line(cli_env, cli_ingest, example_db: Path) -> None:  # type: ignore[no-untyped-def]
    cli_ingest(cli_env, example_db, "geo_sqlcli")
    before = example_db.stat().st_mtime_ns
    for args, words in ((["DROP TABLE rivers"], "not a read-only query"),
                        (["--maxrows", "3", "SELECT 1"], "did you mean --max-rows?"),):
        proc = kgsql(["sql", "--db", "geo_sqlcli", *args], cli_env)
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert proc.returncode != 0 and len(lines) == 1 and words in lines[0], proc.stderr
    unknown = kgsql(["sql", "--db", "geo_sqlcl", "SELECT 1"], cli_env)
    assert unknown.returncode == 1 and "not in the graph" in unknown.stderr and "did you mean 'geo_sqlcli'" in unknown.stderr
    assert example_db.stat().st_mtime_ns == before
