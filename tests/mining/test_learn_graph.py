"""Learning from a query log as a user does it: ingest --history, graph knowledge, removal, drop."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LOG = [
    {"db_id": "{db}", "question": "What is the capital of Eastvale?",
     "sql": "SELECT c.name FROM provinces p JOIN cities c ON p.capital_city_id = c.city_id WHERE p.name = 'Eastvale'"},
    {"db_id": "{db}", "question": "Which cities are capitals?",
     "sql": "SELECT c.name FROM cities c JOIN provinces p ON c.city_id = p.capital_city_id"},
    {"db_id": "elsewhere", "question": "x?", "sql": "SELECT 1"},
]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def test_ingest_history_mines_once_lists_and_removes(cli_env, example_db: Path, tmp_path: Path, unique_name) -> None:
    db = unique_name("geo")
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({**r, "db_id": r["db_id"].format(db=db)}) + "\n" for r in LOG))
    first = run(["-m", "kgsql.ingest", str(example_db), "--name", db, "--history", str(log), "--json"], cli_env)
    assert first.returncode == 0, first.stderr
    mining = json.loads(first.stdout)["mining"]
    assert (mining["pairs"], mining["mined"], mining["unknown_database"]) == (3, 2, {"elsewhere": 1})
    assert mining["facts_by_kind"]["join"] == 2 and mining["new_facts"] >= 3

    again = run(["-m", "kgsql.ingest", "--history", str(log), "--json"], cli_env)  # no SOURCE: mine only
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["mining"]["already_mined"], json.loads(again.stdout)["mining"]["mined"]) == (2, 0)

    listed = run(["-m", "kgsql.graph", "knowledge", "--db", db, "--json"], cli_env)
    assert listed.returncode == 0, listed.stderr
    facts = json.loads(listed.stdout)
    join = [f for f in facts if f["kind"] == "join"]
    assert len(join) == 1 and join[0]["count"] == 2 and len(join[0]["sources"]) == 2
    assert (join[0]["subject"], join[0]["object"], join[0]["origin"]) == (
        "cities.city_id", "provinces.capital_city_id", "rule")

    schema = run(["-c", "import json; from kgsql import SchemaGraph\n"
                  f"with SchemaGraph.open() as g: print(json.dumps([[vars(f) for f in g.schema({db!r}, knowledge=k)"
                  ".foreign_keys] for k in (True, False)]))"],
                 cli_env)
    assert schema.returncode == 0, schema.stderr
    fks, plain_fks = json.loads(schema.stdout)
    mined_fk = {"table": "cities", "column": "city_id", "ref_table": "provinces", "ref_column": "capital_city_id",
                "origin": "mined", "coverage": None}
    assert mined_fk in fks and mined_fk not in plain_fks  # knowledge=False: the graph as ingested

    human = run(["-m", "kgsql.graph", "knowledge", "--db", db, "--kind", "join"], cli_env)
    assert "cities.city_id = provinces.capital_city_id" in human.stdout and "x2" in human.stdout

    examples = run(["-m", "kgsql.graph", "examples", "--db", db, "--json"], cli_env)
    assert examples.returncode == 0, examples.stderr
    taught = json.loads(examples.stdout)
    assert sorted(e["question"] for e in taught) == ["What is the capital of Eastvale?", "Which cities are capitals?"]
    assert {e["source"] for e in taught} == {"history"}
    dropped = run(["-m", "kgsql.graph", "examples", "--db", db, "--remove", taught[0]["key"]], cli_env)
    assert dropped.returncode == 0 and "removed 1 example(s)" in dropped.stdout
    listed_text = run(["-m", "kgsql.graph", "examples", "--db", db], cli_env).stdout
    assert "1 example(s) taught to" in listed_text

    removed = run(["-m", "kgsql.graph", "knowledge", "--db", db, "--remove", join[0]["key"]], cli_env)
    assert removed.returncode == 0 and "removed 1 fact" in removed.stdout
    gone = run(["-m", "kgsql.graph", "knowledge", "--db", db, "--remove-origin", "rule"], cli_env)
    assert gone.returncode == 0, gone.stderr
    relearn = json.loads(run(["-m", "kgsql.ingest", "--history", str(log), "--json"], cli_env).stdout)["mining"]
    assert relearn["mined"] == 2  # forgetting an origin forgets its mined pairs too


def test_learn_one_pair_and_drop_clears_knowledge(cli_env, example_db: Path, unique_name) -> None:
    db = unique_name("geo")
    code = (
        "import json; from kgsql import SchemaGraph\n"
        "with SchemaGraph.open() as g:\n"
        f"    g.ingest({str(example_db)!r}, name={db!r})\n"
        f"    r = g.learn('Rivers through Brenna?', \"SELECT r.name FROM rivers r JOIN river_cities rc ON "
        f"r.river_id = rc.river_id JOIN cities c ON c.city_id = rc.city_id WHERE c.name = 'Brenna'\", db={db!r})\n"
        f"    n = len(g.knowledge({db!r}))\n"
        f"    g.drop({db!r}); g.ingest({str(example_db)!r}, name={db!r})\n"
        f"    print(json.dumps([r['mined'], n, len(g.knowledge({db!r}))]))\n"
    )
    proc = run(["-c", code], cli_env)
    assert proc.returncode == 0, proc.stderr
    mined, before, after = json.loads(proc.stdout.strip().splitlines()[-1])
    assert mined == 1 and before > 0 and after == 0


def test_bad_history_fails_before_any_write(cli_env, example_db: Path, tmp_path: Path, unique_name) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    db = unique_name("geo")
    proc = run(["-m", "kgsql.ingest", str(example_db), "--name", db, "--history", str(bad)], cli_env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("kgsql.ingest: error:") and "not JSON" in proc.stderr
    listed = run(["-m", "kgsql.graph", "knowledge", "--db", db], cli_env)
    assert listed.returncode == 1 and db in listed.stderr  # nothing was ingested
    assert len(listed.stderr.strip().splitlines()) == 1 and "Traceback" not in listed.stderr
