"""Build a wide database out of Spider's: several databases in one file, their questions asked of it.

    python -m kgsql.lab.wide_set SPIDER_DIR --out DIR [--tables 60] [--questions 100] [--seed 0]

Every Spider database fits the default's prompt budget whole, so none of them shows what a user's
warehouse-size schema gets: the graph's selection instead of the whole schema (issue 30, "scope by size").
Databases with dev questions, in a seeded order, are copied (tables, declared keys and rows as they are)
into ``DIR/database/wide/wide.sqlite`` until it holds ``--tables`` tables; a database is passed over when
one of its table names (any case) is already taken, so every gold query runs on the wide file unchanged.
``DIR/dev.json`` asks ``--questions`` of their dev questions of ``wide``; ``DIR/own.json`` asks the same
questions, in the same order, of their own databases, so the two runs pair by id::

    python -m kgsql.eval run --dataset spider --data-dir DIR --split dev ...
    python -m kgsql.eval run --dataset spider --data-dir DIR --split own --db-dir SPIDER_DIR/database ...
"""
from __future__ import annotations

import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

from kgsql.errors import KgsqlError
from kgsql.lab.folders import spider_set_parser, write_spider_set

__all__ = ["WIDE_DB", "build_wide_set", "choose_databases", "merge_databases"]

#: The merged database's name (its folder, file and every question's ``db_id``).
WIDE_DB = "wide"


def _tables(path: Path) -> list[str]:
    """The user tables of a SQLite file (SQLite's own ``sqlite_*`` tables left out)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                            "ESCAPE '\\' ORDER BY rowid").fetchall()
    finally:
        conn.close()
    return [name for (name,) in rows]


def choose_databases(db_files: dict[str, Path], tables: int, seed: int) -> list[str]:
    """Databases in a seeded order whose table names are all still free (any case), until ``tables`` are held."""
    order = sorted(db_files)
    random.Random(seed).shuffle(order)
    chosen: list[str] = []
    taken: set[str] = set()
    for db in order:
        if len(taken) >= tables:
            break
        names = {t.lower() for t in _tables(db_files[db])}
        if names and not names & taken:
            chosen.append(db)
            taken |= names
    return chosen


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def merge_databases(sources: list[Path], target: Path) -> int:
    """Copy every user table of ``sources`` (their CREATE statements, so keys stay declared) into ``target``."""
    conn = sqlite3.connect(target)
    n = 0
    try:
        for source in sources:
            conn.execute("ATTACH DATABASE ? AS src", (str(source),))
            statements = conn.execute(
                "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                "ESCAPE '\\' ORDER BY rowid").fetchall()
            for name, create in statements:
                conn.execute(create)
                conn.execute(f"INSERT INTO main.{_quote(name)} SELECT * FROM src.{_quote(name)}")
                n += 1
            conn.commit()
            conn.execute("DETACH DATABASE src")
    finally:
        conn.close()
    return n


def build_wide_set(spider_dir: Path, out: Path, *, tables: int = 60, questions: int = 100,
                   seed: int = 0) -> dict[str, int]:
    """Write ``out/database/wide/wide.sqlite``, ``out/dev.json`` (asked of it) and ``out/own.json``."""
    rows = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    db_dir = spider_dir / "database"
    files = {db: db_dir / db / f"{db}.sqlite" for db in {r["db_id"] for r in rows}}
    files = {db: path for db, path in files.items() if path.is_file()}
    chosen = choose_databases(files, tables, seed)
    if not chosen:
        raise KgsqlError(f"no Spider database with dev questions in {db_dir}")
    target = out / "database" / WIDE_DB / f"{WIDE_DB}.sqlite"
    target.parent.mkdir(parents=True)
    n_tables = merge_databases([files[db] for db in chosen], target)
    asked = [i for i, r in enumerate(rows) if r["db_id"] in chosen]
    if questions < len(asked):
        asked = sorted(random.Random(seed).sample(asked, questions))
    own = [_row(rows[i], i, rows[i]["db_id"]) for i in asked]
    wide = [_row(rows[i], i, WIDE_DB) for i in asked]
    for name, content in (("dev.json", wide), ("own.json", own)):
        (out / name).write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"databases": len(chosen), "tables": n_tables, "questions": len(asked)}


def _row(row: dict[str, Any], index: int, db_id: str) -> dict[str, Any]:
    return {"db_id": db_id, "question": row["question"], "query": row["query"], "spider_index": index,
            "source_db": row["db_id"]}


def main(argv: list[str] | None = None) -> int:
    parser = spider_set_parser("python -m kgsql.lab.wide_set", __doc__)
    parser.add_argument("--tables", type=int, default=60, help="tables the wide database holds at least (default 60)")
    parser.add_argument("--questions", type=int, default=100, help="questions sampled (default 100)")
    args = parser.parse_args(argv)

    def build(folder: Path) -> str:
        counts = build_wide_set(args.spider_dir, folder, tables=args.tables, questions=args.questions, seed=args.seed)
        return (f"{counts['tables']} tables of {counts['databases']} databases, {counts['questions']} questions "
                f"in {args.out}")

    return write_spider_set("kgsql.lab.wide_set", args.spider_dir, args.out, build, tables=args.tables,
                            questions=args.questions)

if __name__ == "__main__":
    sys.exit(main())
