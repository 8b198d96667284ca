"""Write a ``DatabaseSchema`` into the graph: batched, idempotent and atomic.

One database is written in one transaction: nodes are MERGEd by key and
their properties replaced, nodes that vanished from the database are
deleted, link edges are rewritten, and the result is counted and checked
against the schema *before* commit. An error or a crash at any point leaves
the previous version of that database untouched.

A content hash on the ``Database`` node makes re-ingesting an unchanged
database a no-op, and a lock node serialises concurrent ingests of one
database (a second one fails at once with ``IngestInProgressError``).
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import uuid
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from kgsql.errors import GraphError, GraphUnavailableError, IngestInProgressError
from kgsql.graph.keys import column_key, table_key
from kgsql.graph.store import GraphStore, Tx, iter_batches
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.sql.dialects import dialect_of

#: Bump when the stored layout changes so old graphs are rewritten.
LAYOUT_VERSION = 1
BATCH_SIZE = 500
LOCK_STALE_AFTER_S = 3600.0
#: Lock tokens of ingests running in this process right now.
_ACTIVE_TOKENS: set[str] = set()


@dataclass(frozen=True)
class WriteResult:
    database: str
    changed: bool
    tables: int
    columns: int
    foreign_keys: int
    spatial_columns: int


def content_hash(schema: DatabaseSchema) -> str:
    """A stable digest of everything the graph would store for ``schema``."""
    payload = json.dumps([LAYOUT_VERSION, schema.to_dict()], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _clean(props: dict[str, Any]) -> dict[str, Any]:
    """Drop nulls and empty lists: Neo4j cannot store either as a property."""
    return {k: v for k, v in props.items() if v is not None and v != []}


def table_props(db: str, table: Table, position: int) -> dict[str, Any]:
    return _clean(
        {
            "key": table_key(db, table.name),
            "database": db,
            "name": table.name,
            "position": position,
            "description": table.description or None,
            "geo_description": table.geo_description or None,
            "row_count": table.row_count,
        }
    )


def _meaning_props(col: Column) -> dict[str, Any]:
    """The structured value meaning as node properties (Cypher can filter on a unit or a code)."""
    meaning = col.value_meaning
    return {
        "value_codes": [f"{code} = {text}" for code, text in meaning.codes] or None,
        "value_list": list(meaning.values) or None,
        "unit": meaning.unit or None,
        "missing_values": list(meaning.missing) or None,
        "value_format": meaning.format or None,
    }


def column_props(db: str, table: Table, col: Column, position: int) -> dict[str, Any]:
    stats = col.stats
    spatial = col.spatial
    return _clean(
        {
            "key": column_key(db, table.name, col.name),
            "database": db,
            "table": table.name,
            "name": col.name,
            "readable_name": col.readable_name or None,
            "qualified_name": f"{table.name}.{col.name}",
            "position": position,
            "type": col.type,
            "is_primary_key": col.is_primary_key,
            "not_null": col.not_null,
            "description": col.description or None,
            "value_examples": list(col.value_examples),
            "value_explanation": col.value_explanation or None,
            "data_format": col.data_format or None,
            **_meaning_props(col),
            "distinct_count": stats.distinct_count,
            "null_fraction": stats.null_fraction,
            "min": stats.min,
            "max": stats.max,
            "sample": list(stats.sample),
            "is_spatial": spatial is not None,
            "geometry_type": spatial.geometry_type if spatial else None,
            "srid": spatial.srid if spatial else None,
            "extent": list(spatial.extent) if spatial and spatial.extent else None,
        }
    )


def database_props(schema: DatabaseSchema, digest: str) -> dict[str, Any]:
    return _clean(
        {
            "name": schema.name,
            "path": schema.path or None,
            "dialect": dialect_of(schema),  # spatialite, postgis, duckdb...: the engine and its spatial flavour
            "is_spatial": schema.is_spatial,
            "description": schema.description or None,
            # Neo4j properties cannot hold maps: derived expressions travel as parallel lists.
            "derived_names": [d.name for d in schema.derived],
            "derived_expressions": [d.expression for d in schema.derived],
            "derived_descriptions": [d.description for d in schema.derived],
            "content_hash": digest,
            "table_count": len(schema.tables),
            "column_count": schema.column_count,
            "foreign_key_count": len(schema.foreign_keys),
            "dangling_foreign_keys": [
                f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}"
                for fk in schema.dangling_foreign_keys
            ],
            "ingested_at": time.time(),
        }
    )


#: Tries of the lock statement when its MERGE races another ingest creating the same lock node.
LOCK_ATTEMPTS = 5


def _take_lock(store: GraphStore, database: str, token: str) -> dict[str, Any]:
    """The lock's holder after trying to take it. Two ingests that MERGE the same new lock node at
    once can make the server refuse one statement (ArcadeDB reports it without a reason); run it
    again, when it finds the other's node; if it keeps failing, another ingest holds the database."""
    for attempt in range(LOCK_ATTEMPTS):
        now = time.time()
        try:
            rows = store.run(
                "lock_acquire", database=database, token=token, now=now,
                stale_before=now - LOCK_STALE_AFTER_S, host=socket.gethostname(), pid=os.getpid(),
            )
        except (IngestInProgressError, GraphUnavailableError):
            raise
        except GraphError:
            time.sleep(0.05 * 2 ** attempt)
            continue
        return rows[0] if rows else {}
    raise IngestInProgressError(f"another ingest of database '{database}' is taking its lock; "
                                "retry when it finishes")


@contextmanager
def ingest_lock(store: GraphStore, database: str) -> Iterator[None]:
    """Hold the ingest lock of ``database`` for the duration of the block.

    A lock left by a crashed ingest on this host (its process is gone) is
    broken at once; any other lock is honoured until it is an hour old.
    """
    token = uuid.uuid4().hex
    holder = _take_lock(store, database, token)
    if holder.get("token") != token and _abandoned(holder):
        store.run("lock_release", database=database, token=holder["token"])
        holder = _take_lock(store, database, token)
    if holder.get("token") != token:
        raise IngestInProgressError(
            f"another ingest of database '{database}' is running (pid {holder.get('pid')} on "
            f"{holder.get('host')}); retry when it finishes"
        )
    _ACTIVE_TOKENS.add(token)
    try:
        yield
    finally:
        _ACTIVE_TOKENS.discard(token)
        try:
            store.run("lock_release", database=database, token=token)
        except GraphError:  # server gone: the lock is broken by the next ingest
            pass


def _abandoned(holder: dict[str, Any]) -> bool:
    """True for a lock whose ingest is known dead: its process on this host is gone,
    or it is this process's own lock from an ingest that already ended."""
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return False
    if holder["pid"] == os.getpid():
        return holder.get("token") not in _ACTIVE_TOKENS
    return not _process_alive(holder["pid"])


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stored_hash(store: GraphStore, database: str) -> str | None:
    rows = store.run("database_get", name=database)
    return rows[0]["props"].get("content_hash") if rows else None


def write_schema(store: GraphStore, schema: DatabaseSchema, *, force: bool = False) -> WriteResult:
    """Make the graph's copy of ``schema.name`` equal to ``schema``, atomically."""
    digest = content_hash(schema)
    spatial_columns = sum(1 for t in schema.tables for c in t.columns if c.is_spatial)
    result = WriteResult(
        database=schema.name,
        changed=False,
        tables=len(schema.tables),
        columns=schema.column_count,
        foreign_keys=len(schema.foreign_keys),
        spatial_columns=spatial_columns,
    )
    with ingest_lock(store, schema.name):
        if not force and stored_hash(store, schema.name) == digest:
            return result
        store.write(lambda tx: _write_all(tx, schema, digest))
    return WriteResult(**{**result.__dict__, "changed": True})


def _write_all(tx: Tx, schema: DatabaseSchema, digest: str) -> None:
    db = schema.name
    tables = [{"key": table_key(db, t.name), "props": table_props(db, t, i)} for i, t in enumerate(schema.tables)]
    columns = [
        {
            "key": column_key(db, t.name, c.name),
            "table_key": table_key(db, t.name),
            "props": column_props(db, t, c, j),
        }
        for t in schema.tables
        for j, c in enumerate(t.columns)
    ]
    tx.run("database_upsert", name=db, props=database_props(schema, digest))
    for batch in iter_batches(tables, BATCH_SIZE):
        tx.run("tables_upsert", database=db, tables=batch)
    for batch in iter_batches(columns, BATCH_SIZE):
        tx.run("columns_upsert", columns=batch)
    tx.run("columns_prune", database=db, keep=[c["key"] for c in columns])
    tx.run("tables_prune", database=db, keep=[t["key"] for t in tables])
    tx.run("links_clear", database=db)
    fks = [
        {"from_key": column_key(db, fk.table, fk.column), "to_key": column_key(db, fk.ref_table, fk.ref_column),
         "origin": fk.origin, "coverage": fk.coverage}
        for fk in schema.foreign_keys
    ]
    for batch in iter_batches(fks, BATCH_SIZE):
        tx.run("foreign_keys_create", foreign_keys=batch)
    via: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fk in schema.foreign_keys:
        via[(fk.table, fk.ref_table)].append(f"{fk.table}.{fk.column} = {fk.ref_table}.{fk.ref_column}")
    relations = [
        {"from_key": table_key(db, a), "to_key": table_key(db, b), "via": conditions}
        for (a, b), conditions in via.items()
    ]
    for batch in iter_batches(relations, BATCH_SIZE):
        tx.run("relates_to_create", relations=batch)
    counts = tx.run("schema_counts", database=db)[0]
    expected = {"tables": len(tables), "columns": len(columns), "foreign_keys": len(fks)}
    if {k: counts[k] for k in expected} != expected:
        raise GraphError(
            f"ingest of '{db}' did not verify (graph {counts} vs database {expected}); nothing was changed"
        )
