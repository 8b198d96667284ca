"""``python -m kgsql.ingest``: build or update the schema knowledge graph.

A folder ingest goes on past a database it cannot ingest: each such database
is one ``kgsql.ingest: error:`` line on stderr (and an ``errors`` entry with
``--json``), the others are ingested, and the exit status is 1. Warnings (a
shipped profile that does not match its database) are ``kgsql.ingest:
warning:`` lines and the ``warnings`` list.

Every option is checked while parsing (one ``prog: error:`` line, exit 2,
nothing opened): an empty SOURCE, a blank ``--name``, a ``--graph`` URI
that is not Bolt, a ``--sample-rows`` past what SQL can take. A PostgreSQL
password can come from ``--password-env NAME`` or ``--password-file PATH``
instead of the URL, where the process list would show it; either way it is
kept like a URL's password (0600, :mod:`kgsql.db.credentials`). The
databases are read before the graph is connected to (or its embedded server
started), so bad input is one line that leaves the graph untouched.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from kgsql.cli_types import OneLineParser, bounded_int, non_negative_int
from kgsql.errors import InputError, KgsqlError
from kgsql.graph.config import graph_uri_argument
from kgsql.secrets import add_graph_password_arguments, read_secret_file, redact

#: The most rows per table --sample-rows takes: past any real table, and inside SQL's 64-bit LIMIT.
MAX_SAMPLE_ROWS = 10**12


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m kgsql.ingest",
        description="Ingest a SQLite/SpatiaLite file, a folder of them (e.g. Spider's database/), a DuckDB file "
        "or a PostgreSQL/PostGIS database (postgresql://user@host/db) into the schema knowledge graph.",
    )
    p.add_argument("source", type=source_path, nargs="*",
                   help="a .sqlite/.duckdb file, a folder holding them, postgresql://user@host[:port]/db or "
                   "duckdb:///path.duckdb; several may be given (optional with --history: mine already ingested "
                   "databases)")
    password = p.add_mutually_exclusive_group()
    password.add_argument("--password-env", metavar="NAME",
                          help="PostgreSQL: read the password from environment variable NAME (not shown by ps, "
                          "unlike a password in the URL); kept 0600 for later commands")
    password.add_argument("--password-file", metavar="PATH",
                          help="PostgreSQL: read the password from the first line of PATH, a file only you can "
                          "read (chmod 600); kept 0600 for later commands")
    p.add_argument("--history", type=Path,
                   help="a query log to learn from: Spider/BIRD JSON or JSONL of {question, sql, db_id[, evidence]}")
    p.add_argument("--history-half", choices=("first", "second"),
                   help="learn from one half of each database's pairs only (fixed by --seed); test on the other")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of --history-half (default 0)")
    p.add_argument("--mine", choices=("rules", "llm", "both"), default="rules",
                   help="how to mine --history: rules (sqlglot, exact, fast; default), llm (the model writes column "
                   "knowledge and dependencies, every name checked), or both")
    p.add_argument("--model", help="--mine llm|both: local model name (default KGSQL_LOCAL_MODEL or "
                   "qwen2.5-coder-1.5b); with KGSQL_LLM_BASE_URL set, that endpoint is used")
    p.add_argument("--name", type=database_name, help="database name in the graph (default: file stem); one database only")
    p.add_argument("--replace", action="store_true",
                   help="replace a database of another engine that has the same name in the graph "
                   "(without it such an ingest is refused; the same engine's database is always updated)")
    p.add_argument("--descriptions", type=Path, help="folder of BIRD-style <table>.csv column descriptions")
    p.add_argument("--regions", type=Path, help="CSV of tables' geographic descriptions (name,description_EN,"
                   "description_CN; read beside a file as <db>.table.csv, so a PostgreSQL database needs it here)")
    p.add_argument("--profile", type=Path, help="YAML ingestion profile (see profiles/README.md)")
    p.add_argument("--no-shipped-profiles", action="store_true",
                   help="use no profile shipped with kgsql (the database and the files beside it only)")
    p.add_argument("--graph", type=graph_uri_argument,
                   help="Bolt URI of a Neo4j-compatible server (bolt://, bolt+s://, neo4j://...; "
                   "default: KGSQL_GRAPH_URI or embedded)")
    p.add_argument("--graph-user", help="graph user (default: KGSQL_GRAPH_USER / NEO4J_USERNAME)")
    add_graph_password_arguments(p)
    p.add_argument("--graph-database", help="graph database name on a multi-database server")
    p.add_argument("--sample-rows", type=bounded_int(1, MAX_SAMPLE_ROWS), default=100_000,
                   help="rows per table scanned for statistics")
    p.add_argument("--discover-joins", choices=("auto", "on", "off"), default="auto", nargs="?", const="on",
                   help="add joins found in the data (inclusion dependencies) as discovered join edges; "
                   "auto: only where the declared foreign keys cannot connect the tables (default); "
                   "the flag alone means on")
    p.add_argument("--force", action="store_true", help="rewrite even if the database is unchanged")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def source_path(text: str) -> Path | str:
    """A file or folder path, or a database URL (checked here, so a bad one is one line, password masked)."""
    from kgsql.db.target import is_url, parse_target

    if not text.strip():
        raise argparse.ArgumentTypeError("the SOURCE is empty; give a database file, a folder or a database URL")
    if is_url(text):
        try:
            parse_target(text)
        except KgsqlError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc
        return text
    return Path(text)


def database_name(text: str) -> str:
    """A --name a later ``--db NAME`` can address (:func:`kgsql.ingest.pipeline.check_name`)."""
    from kgsql.ingest.pipeline import check_name

    try:
        return check_name(text)
    except KgsqlError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _sources(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[Path | str]:
    """The SOURCEs, checked against the options that name one database; a URL's password put in."""
    sources: list[Path | str] = list(args.source)
    if len(sources) > 1:
        for option, given in (("--name", args.name), ("--descriptions", args.descriptions),
                              ("--regions", args.regions), ("--profile", args.profile),
                              ("--password-env", args.password_env),
                              ("--password-file", args.password_file)):
            if given is not None:
                parser.error(f"{option} applies to one database; give one SOURCE with it")
        return sources
    return [_source_with_password(parser, args, sources[0])] if sources else []


def _source_with_password(parser: argparse.ArgumentParser, args: argparse.Namespace,
                          source: Path | str) -> Path | str:
    """``source`` with the password of --password-env / --password-file put in (in this process only)."""
    if args.password_env is None and args.password_file is None:
        return source
    option = "--password-env" if args.password_env is not None else "--password-file"
    if not isinstance(source, str):
        parser.error(f"{option} needs a postgresql:// SOURCE")
    if args.password_env is not None:
        secret = os.environ.get(args.password_env, "")
        if not secret:
            parser.error(f"--password-env {args.password_env}: that environment variable is not set or empty")
    else:
        try:
            secret = read_secret_file(args.password_file)
        except KgsqlError as exc:
            parser.error(str(exc))
    from kgsql.db.target import parse_target, with_password

    try:
        return with_password(parse_target(source), secret).url
    except KgsqlError as exc:
        parser.error(f"{option}: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.source and args.history is None:
        parser.error("give a SOURCE to ingest, a --history to learn from, or both")
    sources = _sources(parser, args)
    from kgsql.graph.store import GraphStore
    from kgsql.ingest.pipeline import IngestReport, read_sources, write_schemas

    progress = not args.no_progress and not args.json
    keep_going = len(sources) > 1 or any(isinstance(s, Path) and s.is_dir() for s in sources)
    report = IngestReport()
    try:
        pairs = _history_pairs(args) if args.history else None  # a bad log fails before any write
        t_read = time.perf_counter()
        schemas = []
        for source in sources:  # bad input fails before a graph server is touched
            schemas += read_sources(
                source,
                name=args.name,
                descriptions_dir=args.descriptions,
                region_csv=args.regions,
                profile_path=args.profile,
                sample_rows=args.sample_rows,
                progress=progress,
                report=report,
                keep_going=keep_going,
                discover_joins=args.discover_joins,
                shipped_profiles=not args.no_shipped_profiles,
            )
        _refuse_same_names(schemas)
        report.read_seconds = time.perf_counter() - t_read
        t0 = time.perf_counter()
        with GraphStore.open(
            args.graph, user=args.graph_user, password=args.graph_password, database=args.graph_database
        ) as store:
            connect_s = time.perf_counter() - t0
            write_schemas(store, schemas, report, force=args.force, progress=progress, keep_going=keep_going,
                          replace=args.replace)
            report.seconds = report.read_seconds + report.write_seconds
            mining = _mine(store, pairs, args, progress=progress) if pairs else None
            graph = {
                "uri": store.uri,
                "server": store.capabilities.server,
                "embedded": store.embedded is not None,
                "server_reused": bool(store.embedded and store.embedded.reused),
                "server_start_seconds": store.embedded.started_in_s if store.embedded else None,
                "connect_seconds": round(connect_s, 3),
            }
    except KgsqlError as exc:
        print(f"kgsql.ingest: error: {redact(str(exc), [args.graph_password] if args.graph_password else None)}", file=sys.stderr)
        return 1
    summary = report.to_dict()
    summary["graph"] = graph
    if mining is not None:
        summary["mining"] = mining
    for text in report.warnings:
        print(f"kgsql.ingest: warning: {_one_line(text)}", file=sys.stderr)
    for entry in report.errors:
        print(f"kgsql.ingest: error: {_one_line(entry['error'])}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print(_human_summary(summary))
    return 1 if report.errors else 0


def _refuse_same_names(schemas: list) -> None:
    """Two SOURCEs giving one database name would overwrite each other in the graph."""
    seen: dict[str, str] = {}
    for schema in schemas:
        key = schema.name.lower()
        if key in seen:
            raise InputError(f"two sources give the database name '{schema.name}' ({seen[key]} and {schema.path}); "
                             "ingest one of them on its own with --name")
        seen[key] = str(schema.path)


def _history_pairs(args: argparse.Namespace) -> list:
    from kgsql.mining.history import load_history, select_half

    return select_half(load_history(args.history), args.history_half, args.seed)


def _mine(store, pairs: list, args: argparse.Namespace, *, progress: bool) -> dict:  # type: ignore[no-untyped-def]
    from kgsql.mining.learn import learn

    lm = None
    if args.mine != "rules":
        import os

        from kgsql.llm.config import ENV_BASE_URL
        from kgsql.llm.factory import default_lm, local_server
        from kgsql.llm.openai_lm import OpenAIChatLM

        if args.model and not os.environ.get(ENV_BASE_URL):
            srv = local_server(args.model)
            lm = OpenAIChatLM(model=srv.model, base_url=srv.base_url, timeout_s=600.0)
        else:
            lm = default_lm()
    return learn(store, pairs, miner=args.mine, lm=lm, progress=progress).to_dict()


def _one_line(text: str) -> str:
    return redact(" ".join(str(text).split()))


def _human_summary(s: dict) -> str:
    lines = [
        f"Ingested {s['databases']} database(s) into {s['graph']['uri']} ({s['graph']['server']})",
        f"  tables {s['tables']}, columns {s['columns']}, foreign keys {s['foreign_keys']}, "
        f"spatial columns {s['spatial_columns']}",
        f"  changed {s['changed']}, unchanged {s['unchanged']}; {s['seconds']:.2f}s "
        f"(read {s['read_seconds']:.2f}s, write {s['write_seconds']:.2f}s)",
    ]
    if s["errors"]:
        lines.append(f"  not ingested {len(s['errors'])}: {', '.join(e['database'] for e in s['errors'])}")
    for db, joins in s["discovered_joins"].items():
        lines.append(f"  {db}: {len(joins)} join(s) discovered in the data: "
                     + "; ".join(f"{j['from']} -> {j['to']}" for j in joins))
    for db, fks in s["dangling_foreign_keys"].items():
        lines.append(f"  {db}: {len(fks)} foreign key(s) reference missing tables/columns: {'; '.join(fks)}")
    m = s.get("mining")
    if m:
        kinds = ", ".join(f"{k} {n}" for k, n in m["facts_by_kind"].items()) or "none"
        lines.append(f"Mined {m['mined']} of {m['pairs']} pair(s) ({m['already_mined']} already mined, "
                     f"{sum(m['unknown_database'].values())} of databases not in the graph): "
                     f"{m['new_facts']} new fact(s); seen: {kinds}; {m['seconds']:.2f}s")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
