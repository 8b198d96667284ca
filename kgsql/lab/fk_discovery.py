"""How well join discovery recovers declared foreign keys: hide them, discover, compare.

    python -m kgsql.lab.fk_discovery --db-dir ../shared/data/spider/database [--json OUT] [--limit N]

Every ``*.sqlite`` under ``--db-dir`` (Spider's layout) is read without its
foreign keys being used; :func:`kgsql.ingest.discover.discover_joins`
proposes joins from the data and names; the declared foreign keys are the
reference. Prints micro precision/recall/F1 over all databases, the time, and
the worst databases; ``--json`` writes every database's hits, misses and
false proposals.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from kgsql.db.connect import open_database
from kgsql.errors import KgsqlError
from kgsql.ingest.discover import DEFAULT_MAX_VALUES, DEFAULT_MIN_COVERAGE, discover_joins
from kgsql.ingest.reader import find_databases, read_database

Edge = tuple[str, str, str, str]


def _key(table: str, column: str, ref_table: str, ref_column: str) -> Edge:
    return (table.lower(), column.lower(), ref_table.lower(), ref_column.lower())


def measure_database(path: Path, *, max_values: int, min_coverage: float) -> dict[str, Any]:
    """Declared vs discovered joins of one database file."""
    schema = read_database(path, with_stats=False)
    declared = {_key(f.table, f.column, f.ref_table, f.ref_column) for f in schema.foreign_keys
                if (f.table, f.column) != (f.ref_table, f.ref_column)}
    t0 = time.perf_counter()
    conn = open_database(path)
    try:
        found = discover_joins(conn, schema, max_values=max_values, min_coverage=min_coverage)
    finally:
        conn.close()
    seconds = time.perf_counter() - t0
    proposed = {_key(j.table, j.column, j.ref_table, j.ref_column) for j in found}
    return {"db": schema.name, "declared": len(declared), "proposed": len(proposed),
            "hits": len(declared & proposed), "seconds": round(seconds, 4),
            "missed": sorted(".".join(e[:2]) + "->" + ".".join(e[2:]) for e in declared - proposed),
            "false": sorted(".".join(e[:2]) + "->" + ".".join(e[2:]) for e in proposed - declared)}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    hits = sum(r["hits"] for r in rows)
    declared = sum(r["declared"] for r in rows)
    proposed = sum(r["proposed"] for r in rows)
    p = hits / proposed if proposed else 0.0
    r = hits / declared if declared else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"databases": len(rows), "declared": declared, "proposed": proposed, "hits": hits,
            "precision": round(p, 4), "recall": round(r, 4), "f1": round(f1, 4),
            "seconds": round(sum(x["seconds"] for x in rows), 2),
            "max_seconds": round(max((x["seconds"] for x in rows), default=0.0), 3)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.fk_discovery", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db-dir", required=True, type=Path, help="folder of SQLite files (Spider: database/)")
    p.add_argument("--limit", type=int, default=None, help="first N databases (sorted by name)")
    p.add_argument("--max-values", type=int, default=DEFAULT_MAX_VALUES)
    p.add_argument("--min-coverage", type=float, default=DEFAULT_MIN_COVERAGE)
    p.add_argument("--json", type=Path, default=None, help="write every database's result here")
    args = p.parse_args(argv)
    try:
        paths = sorted(find_databases(args.db_dir), key=lambda x: x.stem)[: args.limit]
        if not paths:
            raise KgsqlError(f"no SQLite databases under {args.db_dir}")
        rows = [measure_database(x, max_values=args.max_values, min_coverage=args.min_coverage) for x in paths]
    except KgsqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = summarise(rows)
    print(f"{summary['databases']} databases, {summary['declared']} declared foreign keys, "
          f"{summary['proposed']} proposed, {summary['hits']} recovered")
    print(f"precision {summary['precision']:.3f}  recall {summary['recall']:.3f}  F1 {summary['f1']:.3f}  "
          f"time {summary['seconds']:.1f} s (slowest database {summary['max_seconds']:.2f} s)")
    worst = sorted(rows, key=lambda r: -(len(r["missed"]) + len(r["false"])))[:5]
    for r in worst:
        if r["missed"] or r["false"]:
            print(f"  {r['db']}: missed {r['missed'][:3]} false {r['false'][:3]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": summary, "databases": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
