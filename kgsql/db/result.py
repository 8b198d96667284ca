"""The rows of one guarded query, whichever engine ran it.

Its own module so that :class:`kgsql.db.engine.Engine` can name it without
importing the SQLite guard (which imports the engine registry).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["QueryResult"]


@dataclass(frozen=True)
class QueryResult:
    """Rows of one guarded query; ``truncated`` means more rows existed.

    ``truncated_by`` says which cap stopped the fetch: ``"rows"`` (more than
    ``max_rows``) or ``"bytes"`` (the next row would pass ``max_bytes``).
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    elapsed_s: float = 0.0
    sql: str = field(default="", compare=False)
    truncated_by: Literal["", "rows", "bytes"] = field(default="", compare=False)

    @property
    def row_count(self) -> int:
        return len(self.rows)
