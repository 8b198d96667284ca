"""Schema sources: one seam, ``db_id -> DatabaseSchema``, for every place that needs a schema.

The pipeline reads ingested schemas from the graph; example pools and the
linking benchmark read databases nobody ingested (SQLite files, or Spider/BIRD
``tables.json`` where no file ships). They all take a ``SchemaSource``:

    GraphSchemas(graph)                      # what ingest stored
    SqliteSchemas(db_dir)                    # <db_dir>/<db>/<db>.sqlite or <db_dir>/<db>.sqlite
    SqliteSchemas(files={"geo": path}, enrich=True)   # + statistics and value knowledge, as ingest does
    TablesJsonSchemas("tables.json", descriptions_root)
    FirstOf(GraphSchemas(graph), SqliteSchemas(db_dir))

Each caches what it read (a schema is read once per process and source) and
raises ``UnknownNameError`` for a database it does not have.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Mapping

from kgsql.errors import UnknownNameError
from kgsql.schema.model import DatabaseSchema

SchemaSource = Callable[[str], DatabaseSchema]
"""``db_id -> DatabaseSchema``; raises UnknownNameError for an unknown database."""


class _Cached:
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


class SqliteSchemas(_Cached):
    """Schemas read from SQLite files by ingest's reader, without loading them into a graph.

    ``db_dir``: ``<db_dir>/<db>/<db>.sqlite`` or ``<db_dir>/<db>.sqlite`` (Spider's layout);
    ``files``: an explicit ``{db_id: path}`` (a loaded dataset's files). ``stats``: column
    statistics (slower); ``enrich``: also ingest's value/description knowledge, as the
    graph would hold it.
    """

    def __init__(self, db_dir: str | os.PathLike[str] | None = None, *,
                 files: Mapping[str, str | os.PathLike[str] | None] | None = None,
                 stats: bool = False, enrich: bool = False) -> None:
        super().__init__()
        self.db_dir = Path(db_dir) if db_dir is not None else None
        self.files = {k: Path(v) for k, v in (files or {}).items() if v is not None}
        self.stats = stats or enrich
        self.enrich = enrich

    def path(self, db_id: str) -> Path | None:
        if db_id in self.files:
            return self.files[db_id]
        if self.db_dir is None:
            return None
        for p in (self.db_dir / db_id / f"{db_id}.sqlite", self.db_dir / f"{db_id}.sqlite"):
            if p.is_file():
                return p
        return None

    def _read(self, db_id: str) -> DatabaseSchema:
        from kgsql.ingest.reader import read_database

        p = self.path(db_id)
        if p is None:
            where = f"under {self.db_dir}" if self.db_dir is not None else "among the dataset's files"
            raise UnknownNameError(f"no SQLite file for database '{db_id}' {where}")
        if not self.enrich:
            return read_database(p, name=db_id, with_stats=self.stats)
        from kgsql.ingest.knowledge import enrich

        return enrich(read_database(p), p)


class TablesJsonSchemas(_Cached):
    """Schemas rebuilt from a Spider/BIRD ``tables.json`` (BIRD dev ships no databases),
    with the description CSVs under ``descriptions_root`` where given."""

    def __init__(self, tables_json: str | os.PathLike[str],
                 descriptions_root: str | os.PathLike[str] | None = None) -> None:
        super().__init__()
        self.tables_json = Path(tables_json)
        self.descriptions_root = descriptions_root
        self._entries: dict[str, dict[str, Any]] | None = None

    def entries(self) -> dict[str, dict[str, Any]]:
        """The file's entries by ``db_id`` (read once)."""
        from kgsql.ingest.tables_json import load_tables_json

        if self._entries is None:
            self._entries = load_tables_json(self.tables_json)
        return self._entries

    def __contains__(self, db_id: object) -> bool:
        return db_id in self.entries()

    def _read(self, db_id: str) -> DatabaseSchema:
        from kgsql.ingest.tables_json import schema_with_descriptions

        if db_id not in self:
            raise UnknownNameError(f"database '{db_id}' is not in {self.tables_json}")
        return schema_with_descriptions(self.entries()[db_id], self.descriptions_root)


class GraphSchemas(_Cached):
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
