"""Schema sources for databases nobody ingested: SQLite files and Spider/BIRD ``tables.json``.

Read with ingest's reader (and, where asked, its value knowledge), without loading them into a
graph; the seam and the graph's source are ``kgsql.schema.sources``:

    SqliteSchemas(db_dir)                    # <db_dir>/<db>/<db>.sqlite or <db_dir>/<db>.sqlite
    SqliteSchemas(files={"geo": path}, enrich=True)   # + statistics and value knowledge, as ingest does
    TablesJsonSchemas("tables.json", descriptions_root)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from kgsql.errors import UnknownNameError
from kgsql.schema.model import DatabaseSchema
from kgsql.schema.sources import CachedSource

__all__ = ["SqliteSchemas", "TablesJsonSchemas"]


class SqliteSchemas(CachedSource):
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


class TablesJsonSchemas(CachedSource):
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
