"""``python -m kgsql.graph status|start|stop|databases|export|knowledge|examples``: the embedded graph server,
the ingested databases (``databases``), exports,
what was mined from query logs (``knowledge --db NAME``: list; ``--remove KEY`` / ``--remove-origin rule``),
and the (question, SQL) examples a database was taught (``examples --db NAME``; ``--remove KEY``)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgsql.cli_types import OneLineParser
from kgsql.errors import KgsqlError
from kgsql.graph.config import graph_uri_argument
from kgsql.graph.embedded import default_graph_dir, ensure_server, running_server, stop_server

#: What ``export --out`` can draw, by suffix (kgsql.graph.visualize).
EXPORT_SUFFIXES = (".html", ".htm", ".svg", ".png")


def export_path(text: str) -> Path:
    """An ``--out`` file kgsql can write without creating folders: a known suffix, in an existing folder."""
    path = Path(text).expanduser()
    if path.suffix.lower() not in EXPORT_SUFFIXES:
        raise argparse.ArgumentTypeError(f"cannot export to '{text}': use a .html, .svg or .png file")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"the folder of '{text}' ({folder}) {what}; create it first")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a folder; name a file in it")
    return path


def root_folder(text: str) -> Path:
    """A ``--root`` that is a folder or not there yet (the server creates it, private); never a file."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder; --root names the embedded server's folder")
    return path


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m kgsql.graph", description=__doc__)
    p.add_argument("command", choices=["status", "start", "stop", "databases", "export", "knowledge", "examples"])
    p.add_argument("--root", type=root_folder, default=None, help="embedded server folder (default: KGSQL_GRAPH_DIR or ~/.cache/kgsql/graph)")
    p.add_argument("--db", help="export: database name")
    p.add_argument("--out", type=export_path, help="export: output file (.html, .svg or .png) in an existing folder")
    p.add_argument("--graph", type=graph_uri_argument,
                   help="databases, export, knowledge, examples: Bolt URI (default: embedded)")
    p.add_argument("--kind", help="knowledge: only facts of this kind (join, expression, value, usage, description)")
    p.add_argument("--origin", help="knowledge: only facts found by this miner (rule, llm)")
    p.add_argument("--remove", action="append", default=[], metavar="KEY",
                   help="knowledge, examples: remove the fact / example with this key")
    p.add_argument("--remove-origin", metavar="ORIGIN", help="knowledge: remove every fact of this miner (rule, llm)")
    p.add_argument("--json", action="store_true", help="databases, knowledge, examples: print JSON")
    args = p.parse_args(argv)
    root = args.root or default_graph_dir()
    try:
        if args.command == "status":
            info = running_server(root)
            print(json.dumps({"running": info is not None, "root": str(root),
                              "uri": info.uri if info else None, "pid": info.pid if info else None}))
        elif args.command == "start":
            info = ensure_server(root)
            state = "reused" if info.reused else f"started in {info.started_in_s:.1f}s"
            print(f"embedded graph server at {info.uri} ({state})")
        elif args.command == "stop":
            print("stopped" if stop_server(root) else "not running")
        elif args.command == "databases":
            return _databases(args, root)
        elif args.command == "knowledge":
            if not args.db:
                p.error("knowledge needs --db")
            return _knowledge(args, root)
        elif args.command == "examples":
            if not args.db:
                p.error("examples needs --db")
            return _examples(args, root)
        else:
            if not args.db or not args.out:
                p.error("export needs --db and --out")
            from kgsql.graph.queries import load_schema
            from kgsql.graph.store import GraphStore
            from kgsql.graph.visualize import export_schema

            store = GraphStore.open(args.graph, embedded_root=root)
            try:
                print(export_schema(load_schema(store, args.db), args.out))
            finally:
                store.close()
    except KgsqlError as exc:
        print(f"kgsql.graph: error: {exc}", file=sys.stderr)
        return 1
    return 0


def _databases(args, root: Path) -> int:  # type: ignore[no-untyped-def]
    """The ingested databases: name, engine, size, where (a URL's password masked)."""
    from kgsql.graph.queries import list_databases
    from kgsql.graph.store import GraphStore
    from kgsql.secrets import redact_uri

    with GraphStore.open(args.graph, embedded_root=root) as store:
        rows = [{**row, "path": redact_uri(row["path"]) if row.get("path") else None}
                for row in list_databases(store)]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        print(f"{row['name']}  [{row.get('dialect') or 'sqlite'}] {row.get('table_count') or 0} tables, "
              f"{row.get('column_count') or 0} columns  {row.get('path') or ''}".rstrip())
    print(f"{len(rows)} database(s)")
    return 0


def _knowledge(args, root: Path) -> int:  # type: ignore[no-untyped-def]
    """List, or remove, what was mined about one database."""
    from kgsql.graph.facts import list_facts, remove_facts
    from kgsql.graph.queries import require_database
    from kgsql.graph.store import GraphStore

    with GraphStore.open(args.graph, embedded_root=root) as store:
        require_database(store, args.db)
        if args.remove or args.remove_origin:
            n = remove_facts(store, args.db, keys=args.remove, origin=args.remove_origin)
            print(f"removed {n} fact(s) from {args.db}")
            return 0
        facts = list_facts(store, args.db, kind=args.kind, origin=args.origin)
    if args.json:
        print(json.dumps([f.to_dict() for f in facts], indent=1))
        return 0
    for f in sorted(facts, key=lambda f: (f.kind, -f.count, f.subject)):
        what = f"{f.subject} = {f.object}" if f.kind == "join" else f"{f.subject}: {f.object}".rstrip(": ")
        said = f'  "{f.text}"' if f.text else ""
        print(f"{f.kind:<11} {what}{said}  x{f.count}  [{f.origin}, {len(f.sources)} pair(s), {f.mined_at}]")
    print(f"{len(facts)} fact(s) about {args.db}")
    return 0


def _examples(args, root: Path) -> int:  # type: ignore[no-untyped-def]
    """List, or remove, the (question, SQL) examples one database was taught."""
    from kgsql.graph.examples import list_examples, remove_examples
    from kgsql.graph.queries import require_database
    from kgsql.graph.store import GraphStore

    with GraphStore.open(args.graph, embedded_root=root) as store:
        require_database(store, args.db)
        if args.remove:
            print(f"removed {remove_examples(store, args.db, args.remove)} example(s) from {args.db}")
            return 0
        examples = list_examples(store, args.db)
    if args.json:
        print(json.dumps(examples, indent=1, ensure_ascii=False))
        return 0
    for e in examples:
        print(f"{e['key']}  [{e['source']}, {e['added']}]\n  Q: {e['question']}\n  SQL: {e['sql']}")
    print(f"{len(examples)} example(s) taught to {args.db}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
