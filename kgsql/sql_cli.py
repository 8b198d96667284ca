"""``kgsql sql --db NAME "SELECT ..."``: run a query of your own on an ingested database, through the guard.

The same path as every generated query (read-only connection, the guard's
statement checks, a killable worker with time, row and memory budgets), so a
user can check an answer, or look at the data, with nothing but the name the
graph knows the database by.
"""
from __future__ import annotations

import json
import sys

from kgsql.ask import format_table
from kgsql.cli_types import OneLineParser, bounded_int, positive_float
from kgsql.db.privilege import add_privileged_flag, apply_privileged_flag
from kgsql.errors import KgsqlError
from kgsql.graph.config import graph_uri_argument
from kgsql.secrets import redact

#: Most rows one call prints (the guard's own cap is the bound).
MAX_ROWS = 100_000


def build_parser() -> OneLineParser:
    p = OneLineParser(prog="kgsql sql", description=__doc__)
    p.add_argument("sql", help="one read-only statement (SELECT / WITH ...)")
    p.add_argument("--db", required=True, help="database name in the graph (kgsql graph databases lists them)")
    p.add_argument("--max-rows", type=bounded_int(1, MAX_ROWS), default=50, help="rows to return (default 50)")
    p.add_argument("--timeout", type=positive_float, default=30.0, help="seconds before the query is stopped")
    p.add_argument("--graph", type=graph_uri_argument, help="Bolt URI of the schema graph (default: embedded)")
    p.add_argument("--json", action="store_true", help="print {columns, rows, truncated} as JSON")
    add_privileged_flag(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    apply_privileged_flag(args)
    try:
        from kgsql.db import isolate
        from kgsql.schema_graph import SchemaGraph

        with SchemaGraph.open(args.graph) as graph:
            path = graph.schema(args.db).path
        result = isolate.execute_on(args.db, path, args.sql, timeout_s=args.timeout, max_rows=args.max_rows)
    except KgsqlError as exc:
        print(f"kgsql sql: error: {redact(' '.join(str(exc).split()))}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"columns": result.columns, "rows": [list(r) for r in result.rows],
                          "truncated": result.truncated}, default=str, ensure_ascii=False))
    else:
        print(format_table(result.columns, result.rows, limit=args.max_rows))
        more = f"; stopped at {args.max_rows} (--max-rows)" if result.truncated else ""
        print(f"({len(result.rows)} row(s){more})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
