"""``python -m kgsql.ingest.verify SOURCE``: check the graph against the files.

For every database under SOURCE it counts tables (``sqlite_master``), columns
(``PRAGMA table_info``) and foreign keys (``PRAGMA foreign_key_list``, minus
those whose target table/column does not exist) straight from SQLite, with
logic independent of the ingest reader, and compares them with the counts of
``Table``/``Column`` nodes and declared ``FOREIGN_KEY`` edges in the graph
(joins discovered in the data are kgsql's own additions, not the file's).
Exit status 1 if any database differs, and 1 with one error line when SOURCE
is missing or holds no SQLite databases (checked before the graph is opened).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgsql.cli_types import OneLineParser, sqlite_path
from kgsql.db.connect import has_geometry_columns, open_database
from kgsql.errors import KgsqlError
from kgsql.ingest.reader import quote_identifier, require_databases, user_tables


def file_counts(path: Path) -> dict[str, int]:
    conn = open_database(path, spatial=False)
    try:
        tables = user_tables(conn, spatial=has_geometry_columns(conn))
        columns = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({quote_identifier(t)})")] for t in tables}
        lower = {t.lower(): {c.lower() for c in cols} for t, cols in columns.items()}
        pks = {t.lower(): [r[1] for r in sorted(conn.execute(f"PRAGMA table_info({quote_identifier(t)})"),
                                                key=lambda r: r[5]) if r[5]] for t in tables}
        fks = set()
        for t in tables:
            for row in conn.execute(f"PRAGMA foreign_key_list({quote_identifier(t)})"):
                seq, ref, src, dst = row[1], str(row[2]).lower(), str(row[3]).lower(), row[4]
                if dst is None:
                    dst = pks.get(ref, [None] * (seq + 1))[seq] if seq < len(pks.get(ref, [])) else None
                if ref in lower and dst is not None and str(dst).lower() in lower[ref] and src in lower[t.lower()]:
                    fks.add((t.lower(), src, ref, str(dst).lower()))
        return {"tables": len(tables), "columns": sum(len(c) for c in columns.values()), "foreign_keys": len(fks)}
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog="python -m kgsql.ingest.verify", description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", type=sqlite_path)
    p.add_argument("--graph", help="Bolt URI (default: embedded)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    from kgsql.graph.store import GraphStore

    try:
        paths = require_databases(args.source)
        mismatches = []
        checked = 0
        with GraphStore.open(args.graph) as store:
            for path in paths:
                expected = file_counts(path)
                counts = store.run("schema_counts", database=path.stem)[0]
                got = {**{k: counts[k] for k in expected}, "foreign_keys": counts["declared_foreign_keys"]}
                checked += 1
                if got != expected:
                    mismatches.append({"database": path.stem, "file": expected, "graph": got})
    except KgsqlError as exc:
        print(f"kgsql.ingest.verify: error: {exc}", file=sys.stderr)
        return 1
    result = {"checked": checked, "mismatches": mismatches}
    print(json.dumps(result, indent=2) if args.json else
          f"checked {checked} database(s): {len(mismatches)} mismatch(es)"
          + "".join(f"\n  {m['database']}: file {m['file']} graph {m['graph']}" for m in mismatches))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
