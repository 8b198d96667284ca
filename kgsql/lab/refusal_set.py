"""Build issue 34's refusal set: Spider questions made unanswerable by hiding a column their gold query needs.

    python -m kgsql.lab.refusal_set SPIDER_DIR --out DIR [--n 100] [--seed 0]

For ``n`` sampled dev questions a column the gold query reads is dropped from a copy of the database
(``DIR/database/<db>__no_<table>_<column>/``): a column that is no key (declared or referenced), whose
name no other table repeats (else the notion would still be there), in a table that keeps another column;
the copy is kept only when the gold query then fails on it. Another ``n`` questions (none of the first)
stay untouched on a copy of their own database. ``DIR/dev.json`` is Spider-format, so the set runs as
``eval run --dataset spider --data-dir DIR``; each row's ``refusal_case`` says which column it lacks
(``null``: answerable). Scored by :mod:`kgsql.lab.refusal_score`.
"""
from __future__ import annotations

import json
import random
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from kgsql.errors import KgsqlError
from kgsql.lab.folders import spider_set_parser, write_spider_set

__all__ = ["HiddenColumn", "build_refusal_set", "hideable_columns", "hide_column"]


@dataclass(frozen=True)
class HiddenColumn:
    """The column a question loses: ``table.column`` in database ``db``, in the copy ``copy_id``."""

    db: str
    table: str
    column: str

    @property
    def copy_id(self) -> str:
        return f"{self.db}__no_{self.table}_{self.column}".replace(" ", "_")

    def to_dict(self) -> dict[str, str]:
        return {"db": self.db, "table": self.table, "column": self.column}


def _keys(schema: Any) -> set[tuple[str, str]]:
    """Every (table, column) that is a primary key or either end of a foreign key, lower-case."""
    keys = {(t.name.lower(), c.name.lower()) for t in schema.tables for c in t.columns if c.is_primary_key}
    for fk in schema.foreign_keys:
        keys.add((fk.table.lower(), fk.column.lower()))
        keys.add((fk.ref_table.lower(), fk.ref_column.lower()))
    return keys


def hideable_columns(gold: str, schema: Any) -> list[tuple[str, str]]:
    """The (table, column) pairs the gold query reads that can be hidden to make it unanswerable."""
    from kgsql.sql.names import SchemaNames, parse_sqlite, resolved_columns

    tree = parse_sqlite(gold)
    if tree is None:
        return []
    keys = _keys(schema)
    names_seen: dict[str, int] = {}
    for table in schema.tables:
        for col in table.columns:
            names_seen[col.name.lower()] = names_seen.get(col.name.lower(), 0) + 1
    width = {t.name.lower(): len(t.columns) for t in schema.tables}
    out: list[tuple[str, str]] = []
    for table, col in resolved_columns(tree, SchemaNames(schema)).values():
        pair = (table, col.name)
        if pair in out or (table.lower(), col.name.lower()) in keys:
            continue
        if names_seen.get(col.name.lower(), 0) > 1 or width.get(table.lower(), 0) < 2:
            continue
        out.append(pair)
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def hide_column(source: Path, target: Path, table: str, column: str) -> bool:
    """Copy ``source`` to ``target`` without ``table.column``; False (and no file left) when SQLite refuses
    the drop (an indexed, unique or constrained column)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    conn = sqlite3.connect(target)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute(f"ALTER TABLE {_quote(table)} DROP COLUMN {_quote(column)}")
        conn.commit()
        conn.execute("VACUUM")
    except sqlite3.DatabaseError:
        conn.close()
        target.unlink(missing_ok=True)
        return False
    conn.close()
    return True


def _gold_fails(path: Path, gold: str) -> bool:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            conn.execute(gold).fetchmany(1)
    except sqlite3.DatabaseError:
        return True
    return False


def _try_hide(row: dict[str, Any], db_path: Path, schema: Any, db_root: Path, rng: random.Random,
              kept: set[str]) -> HiddenColumn | None:
    """Hide one of the gold query's hideable columns (a random order); None when none can be hidden.
    ``kept``: the copies other questions already use (shared, never removed)."""
    choices = hideable_columns(row["query"], schema)
    rng.shuffle(choices)
    for table, column in choices:
        hidden = HiddenColumn(row["db_id"], table, column)
        target = db_root / hidden.copy_id / f"{hidden.copy_id}.sqlite"
        made = target.exists() or hide_column(db_path, target, table, column)
        if made and _gold_fails(target, row["query"]):
            return hidden
        if made and hidden.copy_id not in kept:
            shutil.rmtree(target.parent, ignore_errors=True)
    return None


def build_refusal_set(spider_dir: Path, out: Path, *, n: int = 100, seed: int = 0,
                      exclude: Collection[int] = ()) -> dict[str, int]:
    """Write ``out/dev.json`` and ``out/database/``: ``n`` hidden-column questions and ``n`` untouched ones;
    ``exclude``: dev positions another set already used (a held-out set shares none)."""
    from kgsql.ingest.reader import read_database

    questions = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    db_dir = spider_dir / "database"
    skip = set(exclude)
    order = [i for i in range(len(questions)) if i not in skip and
             (db_dir / questions[i]["db_id"] / f"{questions[i]['db_id']}.sqlite").is_file()]
    rng = random.Random(seed)
    rng.shuffle(order)
    db_root = out / "database"
    schemas: dict[str, Any] = {}
    hidden_rows: list[dict[str, Any]] = []
    used: set[int] = set()
    for i in order:
        if len(hidden_rows) >= n:
            break
        row = questions[i]
        db = row["db_id"]
        db_path = db_dir / db / f"{db}.sqlite"
        if db not in schemas:
            schemas[db] = read_database(db_path, db, with_stats=False)
        hidden = _try_hide(row, db_path, schemas[db], db_root, rng, {r["db_id"] for r in hidden_rows})
        if hidden is not None:
            used.add(i)
            hidden_rows.append(_row(row, i, hidden.copy_id, hidden.to_dict()))
    plain_rows = [_row(questions[i], i, questions[i]["db_id"], None) for i in order if i not in used][:n]
    for db in sorted({r["db_id"] for r in plain_rows}):
        (db_root / db).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(db_dir / db / f"{db}.sqlite", db_root / db / f"{db}.sqlite")
    rows = hidden_rows + plain_rows
    (out / "dev.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"hidden": len(hidden_rows), "untouched": len(plain_rows), "databases": len(list(db_root.iterdir()))}


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """A refusal set's rows (to exclude their questions); one line when it is not one."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KgsqlError(f"cannot read {path}: {exc}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "spider_index" in r for r in rows):
        raise KgsqlError(f"{path} is not a refusal set's dev.json (no 'spider_index')")
    return rows


def _row(row: dict[str, Any], index: int, db_id: str, case: dict[str, str] | None) -> dict[str, Any]:
    return {"db_id": db_id, "question": row["question"], "query": row["query"], "spider_index": index,
            "refusal_case": case}


def main(argv: list[str] | None = None) -> int:
    parser = spider_set_parser("python -m kgsql.lab.refusal_set", __doc__)
    parser.add_argument("--n", type=int, default=100, help="questions in each half (default 100)")
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="another refusal set's dev.json: none of its questions is used (a held-out set)")
    args = parser.parse_args(argv)

    def build(folder: Path) -> str:
        exclude = {int(r["spider_index"]) for path in args.exclude for r in _read_rows(path)}
        counts = build_refusal_set(args.spider_dir, folder, n=args.n, seed=args.seed, exclude=exclude)
        return (f"{counts['hidden']} hidden-column questions, {counts['untouched']} untouched, "
                f"{counts['databases']} databases in {args.out}")

    return write_spider_set("kgsql.lab.refusal_set", args.spider_dir, args.out, build, n=args.n)


if __name__ == "__main__":
    sys.exit(main())
