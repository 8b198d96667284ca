"""kgsql: knowledge-graph-backed schema reasoning for LLM text-to-SQL."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover
    from kgsql.conversation import Conversation
    from kgsql.schema_graph import SchemaGraph

__all__ = ["Conversation", "SchemaGraph", "__version__"]


def __getattr__(name: str) -> Any:
    """Import heavy parts (neo4j, torch) only when used."""
    if name == "SchemaGraph":
        from kgsql.schema_graph import SchemaGraph

        return SchemaGraph
    if name == "Conversation":
        from kgsql.conversation import Conversation

        return Conversation
    raise AttributeError(f"module 'kgsql' has no attribute {name!r}")
