"""Bad input through the CLIs: one clear line on stderr naming the problem, non-zero exit.

The classes covered elsewhere (missing file, folder without databases,
non-SQLite, corrupt file, unreachable graph, wrong credentials, corrupt file
in a folder, verify of a missing path: tests/ingest/test_cli.py; LLM faults
and malformed endpoint URLs: tests/llm/; hostile SQL: tests/db/) are not
repeated here. Every numeric option of every CLI is refused while parsing,
before any work (``BAD_OPTIONS``).
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from timing import scaled


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


def test_unreadable_description_csv_is_a_warning_and_the_rest_is_ingested(cli_env, example_db, tmp_path):
    """Issue 28: a broken description file is one warning naming it, never a failed ingest."""
    desc = tmp_path / "desc"
    desc.mkdir()
    (desc / "cities.csv").write_bytes(b"\x00\x01\x02 this is not a CSV \xff\xfe\x00")
    (desc / "rivers.csv").write_text("original_column_name,column_name,column_description,data_format,"
                                     "value_description\nlength_km,,length of the river,real,the unit is km\n")
    proc = run("kgsql.ingest", [str(example_db), "--name", "geo_badcsv", "--descriptions", str(desc), "--json"], cli_env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "cities.csv" in warnings[0] and "NUL bytes" in warnings[0]


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


def test_ingest_an_unsupported_database_url_says_what_is_supported_and_hides_the_password(cli_env):
    proc = run("kgsql.ingest", ["mysql://ann:hunter2@db.example:3306/sales"], cli_env)
    line = one_line(proc)
    assert "mysql://ann:***@db.example:3306/sales: unsupported database URL scheme 'mysql'" in line
    assert "postgresql://" in line and "duckdb:///" in line
    assert "hunter2" not in proc.stderr + proc.stdout


def test_a_left_over_url_argument_is_repeated_without_its_password(cli_env):
    proc = run("kgsql.ask", ["--db", "geo", "How many?", "postgresql://ann:hunter2@db.example/sales"], cli_env)
    line = one_line(proc)
    assert "unrecognized arguments" in line and "postgresql://ann:***@db.example/sales" in line
    assert "hunter2" not in proc.stderr + proc.stdout


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
    line = one_line(run("kgsql.ask", ["--db", "geo", "--no-evidence", "Which river is longest?"], env))
    assert f"127.0.0.1:{port}" in line and "sk-secret-test-key-123" not in line


def test_eval_score_missing_predictions_file(cli_env, tmp_path):
    line = one_line(run("kgsql.eval", ["score", "--dataset", "spider", "--data-dir", str(tmp_path),
                                       "--predictions", str(tmp_path / "none.sql")], cli_env))
    assert "none.sql" in line or str(tmp_path) in line


def test_ask_unknown_method(cli_env):
    line = one_line(run("kgsql.ask", ["--db", "geo", "--method", "dail-sq", "How many?"], cli_env))
    assert "unknown method 'dail-sq'" in line and "did you mean 'dail-sql'" in line


# ---------------------------------------------------------------- options refused before any work

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ASK = ["--db", "geo", "How many rivers?"]
SCORE = ["score", "--dataset", "spider", "--data-dir", "{tmp}", "--predictions", "{tmp}/pred.sql"]
RUN = ["run", "--dataset", "spider", "--data-dir", "{tmp}"]
LINKING = ["linking", "--dataset", "spider", "--data-dir", "{tmp}"]
SERVE = ["serve", "--model", "qwen2.5-coder-0.5b"]


def cases(module: str, base: list[str], option: str, *values: str) -> list[tuple[str, list[str], str]]:
    return [(module, [*base, option, value], option) for value in values]


#: (module, arguments, what the error must name): each value is refused while parsing.
BAD_OPTIONS = [
    *cases("kgsql.ask", ASK, "--timeout", "0", "-3", "nan"),
    *cases("kgsql.ask", ASK, "--max-rows", "-1", "0"),
    *cases("kgsql.ask", ASK, "--max-rounds", "0", "two"),
    *cases("kgsql.ingest", ["{db}"], "--sample-rows", "-5", "0", "1e3", "99999999999999999999999"),
    # issue 35: a name nothing could address, a graph URI that is not Bolt, a picture in a folder that is not there
    *cases("kgsql.ingest", ["{db}"], "--name", "   ", ""),
    *cases("kgsql.ingest", ["{db}"], "--graph", "http://127.0.0.1:7474", "bolt://"),
    ("kgsql.graph", ["export", "--db", "geo", "--out", "{tmp}/missing/dir/x.html"], "--out"),
    ("kgsql.graph", ["export", "--db", "geo", "--out", "{tmp}/x.html", "--graph", "https://127.0.0.1:1"], "--graph"),
    *cases("kgsql.llm", SERVE, "--port", "70000", "-1"),
    *cases("kgsql.llm", SERVE, "--ctx", "0"),
    *cases("kgsql.llm", SERVE, "--parallel", "0"),
    *cases("kgsql.eval", SCORE, "--timeout", "0"),
    *cases("kgsql.eval", SCORE, "--limit", "-1"),
    *cases("kgsql.eval", SCORE, "--soft-f1-digits", "-2"),
    *cases("kgsql.eval", RUN, "--limit", "0"),
    *cases("kgsql.eval", RUN, "--timeout", "-5"),
    *cases("kgsql.eval", RUN, "--half-seed", "-1"),
    *cases("kgsql.eval", RUN, "--route-tries", "0", "21"),
    *cases("kgsql.eval", RUN, "--concurrency", "0"),
    *cases("kgsql.eval", RUN, "--n-ctx", "-8192"),
    *cases("kgsql.eval", RUN, "--seed", "-1"),
    *cases("kgsql.eval", LINKING, "--limit", "0"),
    *cases("kgsql.eval", LINKING, "--threads", "0"),
    *cases("kgsql.eval", LINKING, "--table-threshold", "1.5"),
    *cases("kgsql.eval", LINKING, "--column-threshold", "-0.1"),
    *cases("kgsql.mcp", ["--http"], "--port", "abc", "70000"),
    *cases("kgsql.serve", [], "--max-sql", "0", "many"),
    *cases("kgsql.serve", [], "--sql-timeout", "0", "nan"),
    ("kgsql.graph", ["export", "--db", "geo"], "export needs --db and --out"),
    ("kgsql.ingest.verify", ["{db}", "--no-such-option"], "--no-such-option"),
]


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[dict[str, str], dict[str, Path]]:
    """An environment in which any work would be visible: empty cache, graph and model folders,
    an LLM endpoint and a graph that are not there (so nothing can start or be reached)."""
    import os

    dirs = {name: tmp_path / name for name in ("work", "cache", "graph", "models")}
    for d in dirs.values():
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGSQL_", "NEO4J_", "OPENAI_"))}
    env.update(KGSQL_CACHE_DIR=str(dirs["cache"]), KGSQL_GRAPH_DIR=str(dirs["graph"]),
               KGSQL_MODELS_DIR=str(dirs["models"]), KGSQL_GRAPH_URI=f"bolt://127.0.0.1:{closed_port()}",
               KGSQL_LLM_BASE_URL=f"http://127.0.0.1:{closed_port()}/v1", KGSQL_LLM_MODEL="any")
    return env, dirs


@pytest.mark.parametrize("module, args, names", BAD_OPTIONS,
                         ids=[" ".join([m, *(a[:1] if a[0][0].isalpha() else []), *a[-2:]]) for m, a, _n in BAD_OPTIONS])
def test_bad_option_is_refused_before_any_work(sandbox, example_db, module, args, names):
    env, dirs = sandbox
    args = [a.format(tmp=dirs["work"], db=example_db) for a in args]
    before = example_db.stat().st_mtime_ns
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          cwd=dirs["work"], timeout=120)
    line = one_line(proc)
    assert names in line and "error" in line, line
    assert proc.returncode == 2 and proc.stdout == ""
    assert all(not any(d.iterdir()) for d in dirs.values()), "something was written"
    assert example_db.stat().st_mtime_ns == before


def test_every_numeric_option_has_a_validating_type():
    """New numeric options must get a type from kgsql.cli_types (a bare int/float lets -5 or 0 through)."""
    import argparse

    from kgsql.ask import build_parser as ask_parser
    from kgsql.eval.__main__ import SUBCOMMANDS
    from kgsql.eval.__main__ import build_parser as eval_parser
    from kgsql.ingest.cli import build_parser as ingest_parser
    from kgsql.llm.cli import build_parser as llm_parser

    def actions(parser: argparse.ArgumentParser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from actions(sub)
            else:
                yield parser.prog, action

    parsers = [ask_parser(), ingest_parser(), llm_parser()] + [eval_parser([name])[0] for name in SUBCOMMANDS]
    bare = [(prog, a.option_strings or a.dest) for p in parsers for prog, a in actions(p) if a.type in (int, float)]
    assert not bare
    checked = {(prog, a.dest) for p in parsers for prog, a in actions(p) if callable(a.type)
               and getattr(a.type, "__module__", "") == "kgsql.cli_types"}
    covered = {opt for _m, args, _n in BAD_OPTIONS for opt in args if opt.startswith("--")}
    named = {"--" + dest.replace("_", "-") for _prog, dest in checked}
    assert named <= covered, f"add a BAD_OPTIONS case for {sorted(named - covered)}"


@pytest.mark.parametrize("url", ["htp:/x", "http//x", "http:///v1"])
def test_ask_with_a_malformed_llm_url(sandbox, url):
    env, _dirs = sandbox
    env["KGSQL_LLM_BASE_URL"] = url
    t0 = time.monotonic()
    line = one_line(run("kgsql.ask", ["--db", "geo", "How many rivers?"], env))
    assert time.monotonic() - t0 < scaled(15)  # no retries (they took 17.7 s)
    assert f"KGSQL_LLM_BASE_URL '{url}' is not a valid endpoint URL" in line


def test_ask_checks_the_llm_endpoint_before_the_graph_and_retrieval(sandbox):
    """The endpoint is down and so is the graph: the endpoint is named, as it is checked first
    (before opening the graph, loading the sentence encoder or building the prompt)."""
    env, _dirs = sandbox
    proc = run("kgsql.ask", ["--db", "geo", "How many rivers?"], env)
    line = one_line(proc)
    assert "cannot connect to LLM endpoint" in line and env["KGSQL_LLM_BASE_URL"] in line
    assert "graph" not in line


@pytest.mark.parametrize("builder, argv, hint", [
    ("kgsql.ask", ["--db", "geo", "--mehtod", "kgsql", "How many?"], "(did you mean --method?)"),
    ("kgsql.eval.__main__", ["run", "--dataset", "spider", "--data-dir", "x", "--mehtod=kgsql"], "(did you mean --method?)"),
    ("kgsql.ingest.cli", ["a.sqlite", "--descripitons", "d"], "(did you mean --descriptions?)"),
    ("kgsql.ask", ["--db", "geo", "--zzz", "How many?"], ""),  # nothing close: no guess
])
def test_a_mistyped_option_gets_a_suggestion(builder: str, argv: list[str], hint: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    module = importlib.import_module(builder)
    parser = module.build_parser(argv)[0] if builder == "kgsql.eval.__main__" else module.build_parser()
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1 and "unrecognized arguments" in err
    assert err.endswith(f"{hint} (see --help)".strip()) if hint else "did you mean" not in err
