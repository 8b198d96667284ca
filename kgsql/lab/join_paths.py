"""Does FindShortestPath return the join path people write? Spider's 4+-table joins as the reference.

    python -m kgsql.lab.join_paths --data-dir ../shared/data/spider [--min-tables 4] [--json OUT]

For every question whose gold SQL joins at least ``--min-tables`` distinct
tables, the gold joins (``ON a.x = b.y``, read by the rule miner) form a
graph over the tables; its two most distant tables are the endpoints. The
agent's FindShortestPath between them (over the database's foreign keys) is
compared with the gold path between them: the same tables in the same order,
and the same join conditions. Prints the counts and writes each question's
verdict with ``--json``.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from pathlib import Path
from typing import Any

from kgsql.errors import KgsqlError
from kgsql.schema.joins import join_path
from kgsql.schema.model import DatabaseSchema


def gold_joins(sql: str, schema: DatabaseSchema) -> tuple[set[str], set[frozenset[str]]]:
    """(tables the gold SQL uses, its join conditions as unordered ``table.column`` pairs), lower case."""
    from kgsql.mining.rules import Pair, mine_pair
    from kgsql.sql.gold_schema import gold_schema

    tables = {t.lower() for t in gold_schema(sql, schema).tables}
    facts = mine_pair(Pair("gold", schema.name, "", sql), schema) or []
    joins = {frozenset((f.subject.lower(), f.object.lower())) for f in facts if f.kind == "join"}
    return tables, joins


def _adjacency(joins: set[frozenset[str]]) -> dict[str, dict[str, set[frozenset[str]]]]:
    adj: dict[str, dict[str, set[frozenset[str]]]] = {}
    for pair in joins:
        a, b = sorted(pair)
        ta, tb = a.split(".")[0], b.split(".")[0]
        if ta != tb:
            adj.setdefault(ta, {}).setdefault(tb, set()).add(pair)
            adj.setdefault(tb, {}).setdefault(ta, set()).add(pair)
    return adj


def _bfs(adj: dict[str, dict[str, Any]], start: str) -> dict[str, str | None]:
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for v in sorted(adj.get(u, {})):
            if v not in parent:
                parent[v] = u
                queue.append(v)
    return parent


def _path(parent: dict[str, str | None], end: str) -> list[str]:
    out = [end]
    while parent[out[-1]] is not None:
        out.append(parent[out[-1]])  # type: ignore[arg-type]
    return out[::-1]


def judge(sql: str, schema: DatabaseSchema, min_tables: int = 4) -> dict[str, Any] | None:
    """One question's verdict, or None when its gold SQL joins fewer than ``min_tables`` tables."""
    tables, joins = gold_joins(sql, schema)
    if len(tables) < min_tables:
        return None
    adj = _adjacency(joins)
    verdict: dict[str, Any] = {"tables": sorted(tables)}
    if set(adj) != tables or len(_bfs(adj, min(tables))) != len(tables):
        verdict["status"] = "gold joins not connected by ON conditions"
        return verdict
    # the two most distant tables of the gold join graph (ties: alphabetical)
    best: tuple[int, str, str] = (-1, "", "")
    for a in sorted(tables):
        parent = _bfs(adj, a)
        for b in sorted(tables):
            d = len(_path(parent, b))
            if b > a and d > best[0]:
                best = (d, a, b)
    _, start, end = best
    gold_tables = _path(_bfs(adj, start), end)
    gold_conditions = {pair for x, y in zip(gold_tables, gold_tables[1:]) for pair in adj[x][y]}
    found = join_path(schema, start, end)
    verdict.update(start=start, end=end, gold_path=gold_tables)
    if found is None:
        verdict["status"] = "no path"
        return verdict
    tool_tables = [t.lower() for t in found.tables]
    tool_conditions = {frozenset(side.strip().lower() for side in c.split("=")) for hop in found.conditions
                       for c in hop}
    verdict["tool_path"] = tool_tables
    verdict["status"] = ("same path and conditions" if tool_tables == gold_tables and tool_conditions == gold_conditions
                         else "same tables, other conditions" if tool_tables == gold_tables
                         else "other path")
    return verdict


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kgsql.lab.join_paths", description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, required=True, help="Spider folder (dev.json, database/)")
    p.add_argument("--split", default="dev.json", help="questions file in --data-dir (default dev.json)")
    p.add_argument("--min-tables", type=int, default=4)
    p.add_argument("--json", type=Path, help="write every verdict here")
    args = p.parse_args(argv)
    try:
        from kgsql.ingest.reader import read_database

        questions_file = args.data_dir / args.split
        if not questions_file.is_file():
            raise KgsqlError(f"questions file not found: {questions_file}")
        questions = json.loads(questions_file.read_text(encoding="utf-8"))
        schemas: dict[str, DatabaseSchema | None] = {}
        rows = []
        for i, q in enumerate(questions):
            db = q["db_id"]
            if db not in schemas:
                path = args.data_dir / "database" / db / f"{db}.sqlite"
                schemas[db] = read_database(path, with_stats=False) if path.is_file() else None
            schema = schemas[db]
            if schema is None:
                continue
            verdict = judge(q["query"], schema, args.min_tables)
            if verdict is not None:
                rows.append({"index": i, "db_id": db, "question": q["question"], **verdict})
    except (KgsqlError, OSError, ValueError, KeyError) as exc:
        print(f"kgsql.lab.join_paths: error: {exc}", file=sys.stderr)
        return 1
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"{len(rows)} questions join {args.min_tables}+ tables")
    for status, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"  {status}: {n}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
