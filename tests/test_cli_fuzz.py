"""CLI fuzz (issue 35): random argument vectors through ``kgsql ingest|graph|eval compare|ask`` and the verb
dispatcher, in-process through ``kgsql.__main__.main(argv)`` so 80 of them take seconds, against the
session's embedded graph server (so that ingest, export and friends get to do their work).

Every run ends with exit status 0, 1 or 2; a failing run says so in at most one line on stderr and never
with a traceback (an exception escaping ``main`` fails the test). Nothing is written outside the test's
folder and the session's graph (databases named ``fz_*`` only): every other address is a closed port on
127.0.0.1 (the model endpoint among them, so ``ask`` stops before any model use, and no traffic leaves
the machine), state folders point into the test's folder, and the input databases are unchanged. Seeded, so a failure replays: the assertion message holds the argv.
"""
from __future__ import annotations

import os
import random
import socket
import sqlite3
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEED = 35
RUNS = 80


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, graph_root: Path) -> dict[str, str]:
    """Input files of every kind in ``tmp_path``; the session's graph server (databases named ``fz_*``
    only), state folders under ``tmp_path``, and otherwise closed loopback ports only."""
    from kgsql.graph.embedded import running_server

    server = running_server(graph_root)
    assert server is not None
    work = tmp_path / "work"
    work.mkdir()
    for var in [k for k in os.environ if k.startswith(("KGSQL_", "NEO4J_", "OPENAI_", "PG"))]:
        monkeypatch.delenv(var)
    port = _closed_port()
    monkeypatch.setenv("KGSQL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KGSQL_GRAPH_DIR", str(tmp_path / "graph"))  # `graph stop` must not reach the session's
    monkeypatch.setenv("KGSQL_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("KGSQL_CONFIG", str(tmp_path / "no-config.yaml"))
    monkeypatch.setenv("KGSQL_GRAPH_URI", server.uri)
    monkeypatch.setenv("KGSQL_GRAPH_USER", "root")
    monkeypatch.setenv("KGSQL_GRAPH_PASSWORD", server.password)
    monkeypatch.setenv("KGSQL_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("KGSQL_LLM_MODEL", "any")
    monkeypatch.setenv("KGSQL_LLM_CACHE", "off")
    monkeypatch.setenv("KGSQL_NO_SERVICE", "1")
    monkeypatch.setenv("KG_FUZZ_PW", "fuzz-secret")
    monkeypatch.chdir(work)
    db = work / "fz_shop.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, label TEXT)")
    conn.execute("CREATE TABLE sale (id INTEGER PRIMARY KEY, item_id INTEGER REFERENCES item (id))")
    conn.commit()
    conn.close()
    fake_duck = work / "fz_fake.duckdb"
    fake_duck.write_bytes(db.read_bytes())
    (work / "folder" / "fz_one").mkdir(parents=True)
    (work / "folder" / "fz_one" / "fz_one.sqlite").write_bytes(db.read_bytes())
    (work / "blob.bin").write_bytes(bytes(random.Random(SEED).randrange(256) for _ in range(2048)))
    (work / "run.jsonl").write_text('{"id": "1", "db_id": "fz_shop", "question": "q", "spider_ex": 1, '
                                    '"sql": "SELECT count(*) FROM item"}\n')
    (work / "odd.jsonl").write_text('"a string"\n[1, 2]\n{"id": "1", "spider_ex": "yes"}\n')
    return {"port": str(port), "work": str(work), "db": str(db), "duck": str(fake_duck)}


#: Values any option may get; {names} are filled from the sandbox. Only loopback addresses.
HOSTILE = [
    "", "   ", "0", "-1", "99999999999999999999999", "nan", "1e3", "abc", "é\u202eü", "-", "--x",
    "{work}/missing.sqlite", "blob.bin", "folder", "odd.jsonl", "{work}/no/such/dir/x.html",
    "http://127.0.0.1:{port}", "bolt://", "mysql://a:b@127.0.0.1/x", "postgresql://fuzz:pw@127.0.0.1:{port}/db",
]
FILES = ["{db}", "{duck}", "folder", "blob.bin", "run.jsonl", "odd.jsonl", "{work}/missing.sqlite"]
GRAPHS = ["bolt://127.0.0.1:{port}", "neo4j+s://127.0.0.1:{port}", "http://127.0.0.1:{port}", "bolt://"]
#: Per command: its leading words, the values of its positionals and how many it takes, and per option
#: the values that fit it (None: a flag). One value in eight is drawn from HOSTILE instead, and the
#: counts are mostly right, so that most runs get past parsing into the command.
COMMANDS: dict[str, tuple[list[list[str]], int, list[str], dict[str, list[str] | None]]] = {
    "ingest": ([["ingest"]], 1, FILES + ["postgresql://fuzz@127.0.0.1:{port}/db", "duckdb:///{work}/missing.duckdb"], {
        "--name": ["fz_named", "   ", ""], "--graph": GRAPHS, "--sample-rows": ["10", "99999999999999999999999"],
        "--seed": ["1"], "--history": FILES, "--history-half": ["first"], "--mine": ["rules"],
        "--descriptions": ["folder", "blob.bin"], "--profile": ["blob.bin", "run.jsonl", "{work}/missing.yaml"],
        "--discover-joins": ["on", "off"], "--graph-user": ["neo4j", "root"], "--graph-database": ["kg"],
        "--password-env": ["KG_FUZZ_PW", "KG_FUZZ_UNSET"], "--password-file": ["blob.bin", "run.jsonl"],
        "--graph-password-file": ["run.jsonl", "{work}/missing"], "--model": ["none-such"],
        "--force": None, "--json": None, "--no-progress": None, "--replace": None}),
    "graph": ([["graph", c] for c in ("status", "stop", "export", "knowledge", "examples", "bogus")], 0, [], {
        "--db": ["fz_shop", "fz_named", "fz_none"], "--out": ["{work}/pic.html", "{work}/pic.svg", "{work}/no/dir/x.html", "x.txt"],
        "--graph": GRAPHS, "--kind": ["join"], "--origin": ["rule"], "--remove": ["k1"], "--remove-origin": ["llm"],
        "--root": ["{work}/root", "folder", "blob.bin"], "--json": None}),
    "compare": ([["eval", "compare"]], 2, FILES, {
        "--metric": ["spider_ex", "soft_f1", "bird_ex"], "--json": ["out.json", "{work}/no/dir/out.json", "folder"],
        "--totals-only": None}),
    "ask": ([["ask"]], 1, ["How many items?", "   "], {
        "--db": ["fz_shop", "fz_none"], "--method": ["kgsql", "dail-sql", "dail-sq"], "--timeout": ["5", "0"],
        "--max-rows": ["10", "99999999999999999999999"], "--max-rounds": ["2"], "--set": ["shots=3", "shots"],
        "--graph": GRAPHS, "--user-evidence": ["add"], "--evidence": ["x"], "--examples": FILES,
        "--json": None, "--no-tips": None, "--no-hints": None}),
    "verb": ([["bogus-verb"], []], 0, [], {}),
}

#: How often each command is drawn: the verb dispatcher has little to find.
WEIGHTS = {"ingest": 4, "graph": 3, "compare": 2, "ask": 2, "verb": 1}


def random_argv(rng: random.Random, fill: dict[str, str]) -> list[str]:
    """Words of one command, then a few options, flags and positional values in random order."""
    command = rng.choices(sorted(COMMANDS), weights=[WEIGHTS[c] for c in sorted(COMMANDS)])[0]
    heads, arity, positionals, options = COMMANDS[command]
    argv = list(rng.choice(heads))
    if not argv:
        return argv

    def value(pool: list[str]) -> str:
        return rng.choice(HOSTILE if rng.random() < 0.12 or not pool else pool).format(**fill)

    count = arity if rng.random() < 0.8 else rng.choice((0, 1, 2, 3))
    parts: list[list[str]] = [[value(positionals)] for _ in range(count)]
    chosen = rng.sample(sorted(options), k=min(len(options), rng.randint(0, 3)))
    if "--db" in options and "--db" not in chosen and rng.random() < 0.8:
        chosen.append("--db")  # ask's and graph's required option
    for option in chosen:
        pool = options[option]
        parts.append([option] if pool is None else [option, value(pool)])
    rng.shuffle(parts)
    return argv + [word for part in parts for word in part]


def test_random_command_lines_end_in_one_line_or_success(sandbox: dict[str, str],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from kgsql.__main__ import main

    work = Path(sandbox["work"])
    inputs = {p: p.read_bytes() for p in (Path(sandbox["db"]), Path(sandbox["duck"]))}  # opened read-only
    repo_before = set(os.listdir(REPO))
    rng = random.Random(SEED)
    for _ in range(RUNS):
        argv = random_argv(rng, sandbox)
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            status = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        assert status in (0, 1, 2), (argv, status, captured.err)
        assert "Traceback" not in captured.err, (argv, captured.err)
        if status != 0:  # warnings (a skipped truncated line...) may come before the one error line
            lines = [ln for ln in captured.err.splitlines() if ln.strip() and "warning:" not in ln]
            assert len(lines) <= 1, (argv, captured.err)
        assert "fuzz-secret" not in captured.out + captured.err, argv
    assert {p: p.read_bytes() for p in inputs} == inputs, "a database file changed"
    new = {n for n in set(os.listdir(REPO)) - repo_before if not n.startswith((".", "__pycache__"))}
    assert not new, f"written outside the test folder: {sorted(new)}"
