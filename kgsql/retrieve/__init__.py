"""Schema retrieval: pick the tables, columns and values a question needs.

``SchemaRetriever(encoder=...).select(schema, question, db_path=...)`` returns
a ``SchemaSelection`` whose ``to_schema(full)`` is the joinable sub-schema a
prompt renderer shows the LLM. See docs/retrieval.md for the design.
"""
from __future__ import annotations

from typing import Any

__all__ = [
    "SchemaRetriever", "SelectionConfig", "Calibration", "SchemaSelection", "ColumnChoice", "ValueMatch",
    "ValueIndex", "Encoder", "TokenEmbeddings", "get_encoder", "register_encoder", "complete_joins",
    "lazy_retriever",
]

_LAZY = {
    "SchemaRetriever": "kgsql.retrieve.retriever",
    "SelectionConfig": "kgsql.retrieve.retriever",
    "Calibration": "kgsql.retrieve.retriever",
    "SchemaSelection": "kgsql.retrieve.selection",
    "ColumnChoice": "kgsql.retrieve.selection",
    "ValueMatch": "kgsql.retrieve.values",
    "ValueIndex": "kgsql.retrieve.values",
    "Encoder": "kgsql.text.encoder",
    "TokenEmbeddings": "kgsql.text.encoder",
    "get_encoder": "kgsql.text.encoder",
    "register_encoder": "kgsql.text.encoder",
    "complete_joins": "kgsql.schema.joins",
    "lazy_retriever": "kgsql.retrieve.lazy",
}


def __getattr__(name: str) -> Any:
    """Import on first use so ``import kgsql.retrieve`` stays cheap (no bm25s/torch)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kgsql.retrieve' has no attribute {name!r}")
