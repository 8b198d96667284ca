"""Schema sources: one seam, ``db_id -> DatabaseSchema``, for every place that needs a schema.

The methods read ingested schemas from the graph; example pools and the
linking benchmark also read databases nobody ingested (SQLite files, or
Spider/BIRD ``tables.json``: ``kgsql.ingest.sources``, which reads them with
ingest's reader). They all take a ``SchemaSource``:

    GraphSchemas(graph)                      # what ingest stored
    FirstOf(GraphSchemas(graph), SqliteSchemas(db_dir))

Each caches what it read (a schema is read once per process and source) and
raises ``UnknownNameError`` for a database it does not have. Reading a schema
is not ingesting, so the graph's source lives here, and no method imports
``ingest``.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from kgsql.errors import UnknownNameError
from kgsql.schema.model import DatabaseSchema

__all__ = ["FirstOf", "GraphSchemas", "SchemaSource", "CachedSource", "no_schemas"]


SchemaSource = Callable[[str], DatabaseSchema]
"""``db_id -> DatabaseSchema``; raises UnknownNameError for an unknown database."""


class CachedSource:
    """Read each database's schema once (thread-safe); subclasses say how in ``_read``."""

    def __init__(self) -> None:
        self._cache: dict[str, DatabaseSchema] = {}
        self._lock = threading.Lock()

    def __call__(self, db_id: str) -> DatabaseSchema:
        with self._lock:
            if db_id in self._cache:
                return self._cache[db_id]
        schema = self._read(db_id)
        with self._lock:
            return self._cache.setdefault(db_id, schema)

    def forget(self, db_id: str) -> None:
        """Read ``db_id`` again next time (its knowledge changed)."""
        with self._lock:
            self._cache.pop(db_id, None)

    def _read(self, db_id: str) -> DatabaseSchema:  # pragma: no cover - abstract
        raise NotImplementedError


class GraphSchemas(CachedSource):
    """Schemas of databases ingested into a graph (anything with ``schema(db_id)``).

    ``follow_ingest``: for long-running processes (the service, the MCP server): each call asks
    the graph for the database's content hash and reads the schema again after a re-ingest; the
    same schema object is returned otherwise, so what was prepared for it stays warm."""

    def __init__(self, graph: Any, *, knowledge: bool = True, follow_ingest: bool = False) -> None:
        super().__init__()
        self.graph = graph
        self.knowledge = knowledge  # False: without what was mined from past questions
        self.follow_ingest = follow_ingest
        self._versions: dict[str, Any] = {}

    def __call__(self, db_id: str) -> DatabaseSchema:
        if self.follow_ingest:
            version = self.graph.database_info(db_id).get("content_hash")  # unknown database: raises
            with self._lock:
                if self._versions.get(db_id) != version:
                    self._cache.pop(db_id, None)
                    self._versions[db_id] = version
        return super().__call__(db_id)

    def _read(self, db_id: str) -> DatabaseSchema:
        return self.graph.schema(db_id) if self.knowledge else self.graph.schema(db_id, knowledge=False)


class FirstOf:
    """Try several schema sources in order (e.g. the graph, then SQLite files)."""

    def __init__(self, *sources: SchemaSource | None) -> None:
        self.sources = [s for s in sources if s is not None]

    def __call__(self, db_id: str) -> DatabaseSchema:
        errors = []
        for source in self.sources:
            try:
                return source(db_id)
            except Exception as exc:  # noqa: BLE001 - any source may fail its own way
                errors.append(str(exc))
        raise UnknownNameError(f"no schema for database '{db_id}': " + "; ".join(errors or ["no sources"]))


def no_schemas(db_id: str) -> DatabaseSchema:
    """The source of a pool built without one: every lookup says so."""
    raise UnknownNameError(f"this example pool has no schema source (asked for '{db_id}')")
