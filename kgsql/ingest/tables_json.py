"""Spider/BIRD ``tables.json`` -> ``DatabaseSchema`` and empty SQLite databases.

BIRD dev ships schemas and description CSVs but no SQLite files, so
schema-level linking runs on schemas rebuilt from ``dev_tables.json``. The
empty SQLite files (tables, types, primary and foreign keys, no rows) let the
same code paths that read real databases run on them.
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Iterable

from kgsql.schema.model import Column, DatabaseSchema, ForeignKey, Table

_TYPE_MAP = {"text": "TEXT", "number": "REAL", "integer": "INTEGER", "time": "TEXT", "boolean": "INTEGER",
             "others": "TEXT", "real": "REAL", "date": "DATE", "datetime": "DATETIME", "blob": "BLOB"}


def load_tables_json(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Entries of a tables.json file keyed by ``db_id``."""
    with open(path, encoding="utf-8") as fh:
        return {e["db_id"]: e for e in json.load(fh)}


def _pk_indices(entry: dict[str, Any]) -> set[int]:
    out: set[int] = set()
    for pk in entry.get("primary_keys", []):
        out.update(pk if isinstance(pk, list) else [pk])
    return out


def schema_from_entry(entry: dict[str, Any], descriptions: dict[str, dict[str, Any]] | None = None) -> DatabaseSchema:
    """A DatabaseSchema from one tables.json entry, with optional BIRD column descriptions.

    ``descriptions`` is ``load_description_dir``'s shape: lower table name ->
    lower column name -> object with ``readable_name``, ``description``,
    ``value_description`` and ``data_format`` attributes. The readable name is
    folded into the description because the model has no separate field.
    """
    tables = [Table(name=t) for t in entry["table_names_original"]]
    readable_tables = entry.get("table_names", entry["table_names_original"])
    for t, readable in zip(tables, readable_tables):
        if readable and readable.replace(" ", "_").lower() != t.name.lower():
            t.description = readable
    pks = _pk_indices(entry)
    types = entry.get("column_types", [])
    readable_cols = entry.get("column_names", entry["column_names_original"])
    index: dict[int, tuple[Table, Column]] = {}
    for i, (ti, cname) in enumerate(entry["column_names_original"]):
        if ti < 0:
            continue
        ctype = _TYPE_MAP.get(str(types[i]).lower(), str(types[i]).upper()) if i < len(types) else ""
        col = Column(name=cname, type=ctype, is_primary_key=i in pks)
        readable = readable_cols[i][1] if i < len(readable_cols) else ""
        desc = descriptions.get(tables[ti].name.lower(), {}).get(cname.lower()) if descriptions else None
        if desc is not None:
            parts = [getattr(desc, "readable_name", "") or "", getattr(desc, "description", "") or ""]
            seen: list[str] = []
            for p in parts:
                p = " ".join(str(p).split())
                if p and p.lower() != cname.lower() and p.lower() not in (s.lower() for s in seen):
                    seen.append(p)
            col.description = "; ".join(seen)
            col.value_explanation = " ".join(str(getattr(desc, "value_description", "") or "").split())
            col.data_format = " ".join(str(getattr(desc, "data_format", "") or "").split())
        elif readable and readable.replace(" ", "_").lower() != cname.lower().replace(" ", "_"):
            col.description = readable
        tables[ti].columns.append(col)
        index[i] = (tables[ti], col)
    fks: list[ForeignKey] = []
    for a, b in entry.get("foreign_keys", []):
        if a in index and b in index:
            fk = ForeignKey(index[a][0].name, index[a][1].name, index[b][0].name, index[b][1].name)
            if fk not in fks:
                fks.append(fk)
    return DatabaseSchema(name=entry["db_id"], tables=tables, foreign_keys=fks)


# --------------------------------------------------------------------------- descriptions


class _Desc:
    """Minimal stand-in for ingest's ColumnDescription (used only when ingest lacks it)."""

    def __init__(self, original_name: str, readable_name: str, description: str, data_format: str, value_description: str) -> None:
        self.original_name = original_name
        self.readable_name = readable_name
        self.description = description
        self.data_format = data_format
        self.value_description = value_description


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    for enc in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", errors="replace")  # pragma: no cover - latin-1 always decodes


def _minimal_description_dir(directory: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(directory.glob("*.csv")):
        rows = list(csv.DictReader(io.StringIO(_read_text(f))))
        cols: dict[str, Any] = {}
        for r in rows:
            r = {(k or "").strip().lower(): (v or "").strip() for k, v in r.items()}
            name = r.get("original_column_name", "")
            if name:
                cols[name.lower()] = _Desc(name, r.get("column_name", ""), r.get("column_description", ""),
                                           r.get("data_format", ""), r.get("value_description", ""))
        out[f.stem.lower()] = cols
    return out


def load_descriptions(directory: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """BIRD ``database_description`` CSVs: ingest's reader when present, else a minimal one."""
    d = Path(directory)
    if not d.is_dir():
        return {}
    try:
        from kgsql.ingest.descriptions import load_description_dir  # type: ignore[import-not-found]
    except ImportError:
        return _minimal_description_dir(d)
    return load_description_dir(d)


def load_schemas(tables_json: str | os.PathLike[str], descriptions_root: str | os.PathLike[str] | None = None,
                 db_ids: Iterable[str] | None = None) -> dict[str, DatabaseSchema]:
    """All schemas of a tables.json file; BIRD descriptions from ``<root>/<db>/database_description``."""
    entries = load_tables_json(tables_json)
    wanted = set(db_ids) if db_ids is not None else None
    return {db_id: schema_with_descriptions(entry, descriptions_root)
            for db_id, entry in entries.items() if wanted is None or db_id in wanted}


def schema_with_descriptions(entry: dict[str, Any],
                             descriptions_root: str | os.PathLike[str] | None) -> DatabaseSchema:
    """One tables.json entry as a schema, with ``<root>/<db>/database_description`` CSVs where given."""
    db_id = entry["db_id"]
    desc = load_descriptions(Path(descriptions_root) / db_id / "database_description") if descriptions_root else None
    return schema_from_entry(entry, desc or None)


# --------------------------------------------------------------------------- column meanings


def load_column_meanings(path: str | os.PathLike[str]) -> dict[tuple[str, str, str], str]:
    """``{"db|table|column": text}`` files (BIRD's TA-SQL ``column_meaning.json``) keyed by lower names.

    These are question-independent, LLM-written column notes (meaning and
    typical values): the paper's "knowledge completion", available offline.
    """
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    out: dict[tuple[str, str, str], str] = {}
    for key, text in raw.items():
        parts = str(key).split("|")
        if len(parts) != 3:
            continue
        clean = " ".join(str(text).strip().lstrip("#").strip().strip('"').split())
        out[(parts[0].lower(), parts[1].lower(), parts[2].lower())] = clean
    return out


def apply_column_meanings(schema: DatabaseSchema, meanings: dict[tuple[str, str, str], str]) -> int:
    """Append each known meaning to its column's value explanation; returns how many columns got one."""
    n = 0
    for t in schema.tables:
        for c in t.columns:
            text = meanings.get((schema.name.lower(), t.name.lower(), c.name.lower()))
            if text and text not in c.value_explanation:
                c.value_explanation = f"{c.value_explanation} {text}".strip()
                n += 1
    return n


# --------------------------------------------------------------------------- empty SQLite


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_table_sql(schema: DatabaseSchema, table: Table) -> str:
    """``CREATE TABLE`` with column types, the primary key and foreign keys."""
    parts = [f"{_q(c.name)} {c.type}".rstrip() for c in table.columns]
    if table.primary_key:
        parts.append("PRIMARY KEY (" + ", ".join(_q(c) for c in table.primary_key) + ")")
    for fk in schema.foreign_keys:
        if fk.table == table.name:
            parts.append(f"FOREIGN KEY ({_q(fk.column)}) REFERENCES {_q(fk.ref_table)} ({_q(fk.ref_column)})")
    return f"CREATE TABLE {_q(table.name)} (\n  " + ",\n  ".join(parts) + "\n)"


def write_empty_sqlite(schema: DatabaseSchema, path: str | os.PathLike[str]) -> Path:
    """Create an empty SQLite file holding ``schema``'s tables and keys (overwrites)."""
    from kgsql.db.connect import sqlite3

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.exists():
        p.unlink()
    conn = sqlite3.connect(str(p))
    try:
        for t in schema.tables:
            if t.name.lower().startswith("sqlite_"):  # SQLite's own (sqlite_sequence): created by SQLite itself
                continue
            conn.execute(create_table_sql(schema, t))
        conn.commit()
    finally:
        conn.close()
    schema.path = str(p.resolve())
    return p


def build_empty_databases(tables_json: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                          descriptions_root: str | os.PathLike[str] | None = None) -> dict[str, DatabaseSchema]:
    """Write ``<out_dir>/<db>/<db>.sqlite`` for every entry; returns the schemas (with ``path`` set)."""
    schemas = load_schemas(tables_json, descriptions_root)
    for db_id, schema in schemas.items():
        write_empty_sqlite(schema, Path(out_dir) / db_id / f"{db_id}.sqlite")
    return schemas
