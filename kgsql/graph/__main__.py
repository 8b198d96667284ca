"""``python -m kgsql.graph status|start|stop|export``: manage the embedded graph server."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from kgsql.cli_types import OneLineParser
from kgsql.errors import KgsqlError
from kgsql.graph.embedded import default_graph_dir, ensure_server, running_server, stop_server


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m kgsql.graph", description=__doc__)
    p.add_argument("command", choices=["status", "start", "stop", "export"])
    p.add_argument("--root", type=Path, default=None, help="embedded server folder (default: KGSQL_GRAPH_DIR or ~/.cache/kgsql/graph)")
    p.add_argument("--db", help="export: database name")
    p.add_argument("--out", type=Path, help="export: output file (.html, .svg or .png)")
    p.add_argument("--graph", help="export: Bolt URI (default: embedded)")
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


if __name__ == "__main__":
    sys.exit(main())
