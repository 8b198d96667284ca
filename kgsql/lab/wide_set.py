"""Build a wide database out of Spider's: several databases in one file, their questions asked of it.

    python -m kgsql.lab.wide_set SPIDER_DIR --out DIR [--tables 60] [--questions 100] [--seed 0] [--prefix]

Every Spider database fits the default's prompt budget whole, so none of them shows what a user's
warehouse-size schema gets: the graph's selection instead of the whole schema (issue 30, "scope by size").
Databases with dev questions, in a seeded order, are copied (tables, declared keys and rows as they are)
into ``DIR/database/wide/wide.sqlite`` until it holds ``--tables`` tables; a database is passed over when
one of its table names (any case) is already taken, so every gold query runs on the wide file unchanged.
``DIR/dev.json`` asks ``--questions`` of their dev questions of ``wide``; ``DIR/own.json`` asks the same
questions, in the same order, of their own databases, so the two runs pair by id::

    python -m kgsql.eval run --dataset spider --data-dir DIR --split dev ...
    python -m kgsql.eval run --dataset spider --data-dir DIR --split own --db-dir SPIDER_DIR/database ...

``--prefix`` (issue 33's "one wide schema"): every table is renamed ``<db>__<table>``, so no database is
passed over, and every database of the folder may join, with dev questions or not (``--tables 100000``
merges them all); declared keys follow the new names, each gold query is
rewritten to them with sqlglot (a table keeps its old name as its alias, so qualified columns still
read), and a question is kept only when its rewritten query returns on the merged file what the original
returns on its own database. ``DIR/tables.json`` describes both splits' databases, so ``eval linking``
runs on either.
"""
from __future__ import annotations

import json
import random
import sqlite3
import sys
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kgsql.errors import KgsqlError
from kgsql.lab.folders import spider_set_parser, write_spider_set
from kgsql.sql.names import prefixed_name

__all__ = ["WIDE_DB", "build_wide_set", "choose_databases", "merge_databases", "prefixed_query"]

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


def choose_databases(db_files: dict[str, Path], tables: int, seed: int, *, prefix: bool = False) -> list[str]:
    """Databases in a seeded order whose table names are all still free (any case; with ``prefix`` every
    name is, as ``<db>__<table>``), until ``tables`` are held."""
    order = sorted(db_files)
    random.Random(seed).shuffle(order)
    chosen: list[str] = []
    taken: set[str] = set()
    for db in order:
        if len(taken) >= tables:
            break
        names = {(prefixed_name(db, t) if prefix else t).lower() for t in _tables(db_files[db])}
        if names and not names & taken:
            chosen.append(db)
            taken |= names
    return chosen


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _prefixed_create(conn: sqlite3.Connection, db: str, table: str, names: dict[str, str]) -> str:
    """``table`` of the attached ``src`` as ``<db>__<table>``: its columns, primary key and foreign keys, the
    keys pointing at the other tables' new names (``names``: lower-case table -> its name in the file)."""
    columns = conn.execute(f"SELECT name, type, \"notnull\", pk FROM pragma_table_info(?, 'src')", (table,)).fetchall()
    parts = [f"{_quote(c)} {t or ''}".rstrip() + (" NOT NULL" if nn else "") for c, t, nn, _pk in columns]
    keys = [c for c, _t, _nn, pk in sorted(columns, key=lambda r: r[3]) if pk]
    if keys:
        parts.append(f"PRIMARY KEY ({', '.join(_quote(k) for k in keys)})")
    links: dict[int, list[tuple[str, str, str | None]]] = {}
    for fk_id, _seq, ref, source, target in conn.execute(
            "SELECT id, seq, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?, 'src') ORDER BY id, seq",
            (table,)):
        links.setdefault(fk_id, []).append((ref, source, target))
    for link in links.values():
        ref = prefixed_name(db, names.get(link[0][0].lower(), link[0][0]))
        targets = "" if any(t is None for _r, _s, t in link) else \
            "(" + ", ".join(_quote(t) for _r, _s, t in link) + ")"  # type: ignore[arg-type]
        parts.append(f"FOREIGN KEY ({', '.join(_quote(s) for _r, s, _t in link)}) REFERENCES {_quote(ref)}{targets}")
    return f"CREATE TABLE {_quote(prefixed_name(db, table))} ({', '.join(parts)})"


def merge_databases(sources: dict[str, Path], target: Path, *, prefix: bool = False) -> int:
    """Copy every user table of ``sources`` (database name -> file) into ``target``: by its own CREATE
    statement (so keys stay declared) or, with ``prefix``, as ``<db>__<table>`` (:func:`_prefixed_create`)."""
    conn = sqlite3.connect(target)
    n = 0
    try:
        for db, source in sources.items():
            conn.execute("ATTACH DATABASE ? AS src", (str(source),))
            statements = conn.execute(
                "SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                "ESCAPE '\\' ORDER BY rowid").fetchall()
            names = {name.lower(): name for name, _sql in statements}
            for name, create in statements:
                conn.execute(_prefixed_create(conn, db, name, names) if prefix else create)
                copy = prefixed_name(db, name) if prefix else name
                conn.execute(f"INSERT INTO main.{_quote(copy)} SELECT * FROM src.{_quote(name)}")
                n += 1
            conn.commit()
            conn.execute("DETACH DATABASE src")
    finally:
        conn.close()
    return n


def prefixed_query(sql: str, db: str, tables: set[str]) -> str | None:
    """``sql`` with each of ``db``'s tables (``tables``: lower-case names) renamed ``<db>__<table>``; a table
    without an alias keeps its old name as one, so ``singer.name`` still reads. None when sqlglot cannot."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError, ValueError):
        return None
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for node in tree.find_all(exp.Table):
        name = node.name
        if node.db or name.lower() not in tables or name.lower() in ctes:
            continue
        if not node.alias:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
        node.set("this", exp.to_identifier(prefixed_name(db, name)))
    return tree.sql(dialect="sqlite")


def _same_answer(wide: Path, sql: str, own: Path, gold: str) -> bool:
    """Does ``sql`` return on the merged file what ``gold`` returns on its own database (as multisets)?"""
    try:
        with closing(sqlite3.connect(f"file:{wide}?mode=ro", uri=True)) as a, \
                closing(sqlite3.connect(f"file:{own}?mode=ro", uri=True)) as b:
            a.text_factory = b.text_factory = lambda raw: raw.decode("utf-8", "replace")
            return Counter(a.execute(sql).fetchall()) == Counter(b.execute(gold).fetchall())
    except sqlite3.Error:
        return False


def _tables_json(entries: dict[str, dict[str, Any]], chosen: list[str], files: dict[str, Path],
                 prefix: bool) -> list[dict[str, Any]]:
    """Spider's ``tables.json`` for the set: the chosen databases' own entries and, with ``prefix``, the wide
    database's, its tables renamed as in the file (natural names led by the database's words)."""
    out = [entries[db] for db in chosen if db in entries]
    if not prefix:
        return out
    wide: dict[str, Any] = {"db_id": WIDE_DB, "table_names_original": [], "table_names": [],
                            "column_names_original": [[-1, "*"]], "column_names": [[-1, "*"]],
                            "column_types": ["text"], "primary_keys": [], "foreign_keys": []}
    for db in (d for d in chosen if d in entries):
        entry, in_file = entries[db], {t.lower(): t for t in _tables(files[db])}
        table_at, column_at = len(wide["table_names_original"]), len(wide["column_names_original"]) - 1
        wide["table_names_original"] += [prefixed_name(db, in_file.get(t.lower(), t))
                                         for t in entry["table_names_original"]]
        wide["table_names"] += [f"{db.replace('_', ' ')} {t}" for t in entry["table_names"]]
        for key in ("column_names_original", "column_names"):
            wide[key] += [[t + table_at, c] for t, c in entry[key][1:]]
        wide["column_types"] += entry["column_types"][1:]
        wide["primary_keys"] += [_shift(k, column_at) for k in entry["primary_keys"]]
        wide["foreign_keys"] += [[c + column_at, r + column_at] for c, r in entry["foreign_keys"]]
    return [wide, *out]


def _shift(key: int | list[int], by: int) -> int | list[int]:
    return [k + by for k in key] if isinstance(key, list) else key + by


def build_wide_set(spider_dir: Path, out: Path, *, tables: int = 60, questions: int = 100,
                   seed: int = 0, prefix: bool = False) -> dict[str, int]:
    """Write ``out/database/wide/wide.sqlite``, ``out/dev.json`` (asked of it), ``out/own.json`` and
    ``out/tables.json`` (when the Spider folder has one)."""
    rows = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    db_dir = spider_dir / "database"
    # with prefix every database may join (the others are the warehouse around the questions' databases)
    with_questions = {r["db_id"] for r in rows}
    candidates = {p.name for p in db_dir.iterdir() if p.is_dir()} if prefix and db_dir.is_dir() else with_questions
    files = {db: db_dir / db / f"{db}.sqlite" for db in candidates}
    files = {db: path for db, path in files.items() if path.is_file()}
    chosen = choose_databases(files, tables, seed, prefix=prefix)
    if not chosen:
        raise KgsqlError(f"no Spider database with dev questions in {db_dir}")
    target = out / "database" / WIDE_DB / f"{WIDE_DB}.sqlite"
    target.parent.mkdir(parents=True)
    n_tables = merge_databases({db: files[db] for db in chosen}, target, prefix=prefix)
    asked = [i for i, r in enumerate(rows) if r["db_id"] in chosen]
    if questions < len(asked):
        asked = sorted(random.Random(seed).sample(asked, questions))
    queries = {i: rows[i]["query"] for i in asked}
    if prefix:
        names = {db: {t.lower() for t in _tables(files[db])} for db in chosen}
        rewritten = {i: prefixed_query(rows[i]["query"], rows[i]["db_id"], names[rows[i]["db_id"]]) for i in asked}
        queries = {i: q for i, q in rewritten.items()
                   if q is not None and _same_answer(target, q, files[rows[i]["db_id"]], rows[i]["query"])}
    kept = [i for i in asked if i in queries]
    own = [_row(rows[i], i, rows[i]["db_id"], rows[i]["query"]) for i in kept]
    wide = [_row(rows[i], i, WIDE_DB, queries[i]) for i in kept]
    for name, content in (("dev.json", wide), ("own.json", own)):
        (out / name).write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    source_tables = spider_dir / "tables.json"
    if source_tables.is_file():
        entries = {e["db_id"]: e for e in json.loads(source_tables.read_text(encoding="utf-8"))}
        (out / "tables.json").write_text(json.dumps(_tables_json(entries, chosen, files, prefix)) + "\n",
                                         encoding="utf-8")
    return {"databases": len(chosen), "tables": n_tables, "questions": len(kept),
            "gold_not_rewritten": len(asked) - len(kept)}


def _row(row: dict[str, Any], index: int, db_id: str, query: str) -> dict[str, Any]:
    return {"db_id": db_id, "question": row["question"], "query": query, "spider_index": index,
            "source_db": row["db_id"]}


def main(argv: list[str] | None = None) -> int:
    parser = spider_set_parser("python -m kgsql.lab.wide_set", __doc__)
    parser.add_argument("--tables", type=int, default=60, help="tables the wide database holds at least (default 60)")
    parser.add_argument("--questions", type=int, default=100, help="questions sampled (default 100)")
    parser.add_argument("--prefix", action="store_true",
                        help="name every table <db>__<table> (no database passed over) and rewrite the gold SQL")
    args = parser.parse_args(argv)

    def build(folder: Path) -> str:
        counts = build_wide_set(args.spider_dir, folder, tables=args.tables, questions=args.questions, seed=args.seed,
                                prefix=args.prefix)
        dropped = f" ({counts['gold_not_rewritten']} left out: gold SQL not rewritten)" \
            if counts["gold_not_rewritten"] else ""
        return (f"{counts['tables']} tables of {counts['databases']} databases, {counts['questions']} questions "
                f"in {args.out}{dropped}")

    return write_spider_set("kgsql.lab.wide_set", args.spider_dir, args.out, build, tables=args.tables,
                            questions=args.questions)

if __name__ == "__main__":
    sys.exit(main())
