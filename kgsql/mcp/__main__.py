"""``python -m kgsql.mcp``: serve the schema graph's tools to MCP clients (stdio, or HTTP on loopback)."""
from __future__ import annotations

import argparse
import sys

from kgsql.cli_types import OneLineParser, port_number
from kgsql.db.privilege import add_privileged_flag, apply_privileged_flag
from kgsql.errors import KgsqlError
from kgsql.mcp.server import LOOPBACK, GraphTools, build_server
from kgsql.secrets import redact


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m kgsql.mcp", description=__doc__)
    p.add_argument("--graph", help="Bolt URI of the schema graph (default: KGSQL_GRAPH_URI or embedded)")
    p.add_argument("--method", default="kgsql", help="method of the ask tool (default kgsql)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a method option of the ask tool, e.g. --set opinions=3 to check each answer by asking "
                        "again (repeatable; docs/methods.md lists them)")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="--http: loopback address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=8765, help="--http: port (default 8765); path /mcp")
    add_privileged_flag(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    apply_privileged_flag(args)
    try:
        if args.http and args.host not in LOOPBACK:
            raise KgsqlError(f"--host {args.host}: the MCP server listens on loopback only "
                             f"({', '.join(LOOPBACK)}); put a proxy with authentication in front to share it")
        if not 0 < args.port < 65536:
            raise KgsqlError(f"--port {args.port}: expected 1-65535")
        from kgsql.methods import checked_overrides, parse_sets
        from kgsql.schema_graph import SchemaGraph

        overrides = checked_overrides(args.method, parse_sets(args.sets))  # unknown method or option: fail now
        tools = GraphTools(lambda: SchemaGraph.open(args.graph), method=args.method, overrides=overrides)
        server = build_server(tools)
    except KgsqlError as exc:
        print(f"kgsql.mcp: error: {redact(str(exc))}", file=sys.stderr)
        return 1
    try:
        if args.http:
            server.run("streamable-http", host=args.host, port=args.port)
        else:
            from kgsql.mcp.stdio import serve_stdio

            serve_stdio(server)
    except KeyboardInterrupt:
        pass
    finally:
        tools.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
